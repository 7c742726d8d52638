pub mod cli;
pub mod fake_llm;
pub mod real_llm;
pub mod serve;
pub mod tls;
