//! Client files are parsed in a child process: a hostile PDF or image that makes a parser ask for
//! gigabytes or spin forever kills a child with an address-space limit, or is killed at its
//! deadline, never the gateway or the worker that asked.
//!
//! The parent keeps a few children alive ([`Sandbox`]) and hands each one request at a time over
//! its stdin and stdout ([`protocol`]); the child ([`child::serve`]) is the same `sceau` binary run
//! as `sceau sandbox`, which isolates itself ([`isolation`]) before it reads a byte.

pub mod child;
mod cpu_time;
pub mod environment;
pub mod escape;
pub mod isolation;
mod pause;
mod pool;
pub mod protocol;
mod scratch;

pub use pause::{Paused, MAX_PAUSE};
pub use pool::{DeadlineClock, Sandbox, SandboxCommand, SandboxError};

use serde::de::DeserializeOwned;
use serde::Serialize;

/// One kind of work a child does on client bytes. The task travels as JSON, the files as raw bytes.
pub trait Task: Serialize + DeserializeOwned {
    /// The name the child dispatches on.
    const NAME: &'static str;
    /// What the child answers; also JSON.
    type Output: Serialize + DeserializeOwned;
}

/// Address space of a child that analyses documents: a 40-megapixel page decoded and searched
/// fits with room to spare; the PDF bombs this guards against ask for tens of gigabytes.
pub const ANALYSIS_ADDRESS_SPACE_MB: u64 = 2048;
/// Address space of a child that only counts a PDF's pages.
pub const PAGE_COUNT_ADDRESS_SPACE_MB: u64 = 1024;
