//! (formatter: being written)
