//! The analysis engine behind a trait, so the job loop does not depend on which engine version
//! runs, plus the catalogue of anomaly codes every engine reports with.

pub mod catalogue;
pub mod engine;
pub mod provisional;

pub use catalogue::{anomaly, AnomalyKind, CATALOGUE};
pub use engine::{Engine, EngineError};
pub use provisional::ProvisionalEngine;
