//! The real-Legion side of mapwright, in Rust: everything mapwright's Legion
//! mapper (`runtime/legion/mapper/`, a thin C++ shell) decides comes from
//! here, through the C ABI of `runtime/legion/abi`.
//!
//! Module map:
//! - [`host`]    the machine Legion reports (processors, memories,
//!   affinities) turned into a mapwright machine description, so that
//!   `explain` and the simulator describe this exact host.
//! - [`launch`]  a task launch as the mapper sees it (name, launch kind,
//!   domain, variants, region requirements with their names) and the
//!   application description it grows into.
//! - [`session`] one mapper per process: the mapper file checked at start-up
//!   (diagnostics rendered as `mapwright check` renders them), then every
//!   launch resolved with the same code that `explain` and the simulator use
//!   (`resolve_mapping`), cached per launch shape.
//! - [`log`]     the decision log (JSON lines) the mapper writes: what it
//!   realised for every task, region argument and launch point, and how to
//!   hold such a log against `explain`.
//! - [`recorder`] the program's application description as it ran
//!   (`-mapwright:app`): launches, regions, fields and measured work.
//! - [`measured`] a real run's metrics from the log's measurements (task
//!   and copy timelines), keyed as the simulator keys them.
//! - [`timeline`] a real run's task runs per processor and copies, in
//!   seconds, from its log (the optimizer report's picture).
//! - [`bench`]   mapwright's mapper against Legion's `DefaultMapper` (and
//!   any other build of the mapper library) on the same program: elapsed
//!   times and the cost of each mapper call (`mapwright bench mapper`).

pub mod bench;
pub mod host;
pub mod launch;
pub mod log;
pub mod measured;
pub mod recorder;
pub mod session;
pub mod timeline;

pub use host::{HostFacts, HostMemory, HostProcessors};
pub use launch::{LaunchInfo, RegionInfo};
pub use session::{LaunchDecision, MapperSession, SessionOptions};
