//! Workers: take analysis jobs off the queue, run the engine, report results; and the deadline
//! reaper that turns due batch deadlines into expiry messages for the recorder.
pub mod analysis;
pub mod flags;
pub mod jobs;
mod magic;
pub mod reaper;
mod share;
pub mod trust_sync;
