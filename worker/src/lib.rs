//! Workers: take analysis jobs off the queue, run the engine, report results.
pub mod analysis;
