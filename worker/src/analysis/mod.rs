//! The analysis engine behind a trait, so the job loop does not depend on which engine version
//! runs. Every engine reports with the anomaly codes of `common::catalogue`.

pub mod builtin;
pub mod datamatrix;
pub mod engine;
pub mod external;
pub mod forensics;
pub mod issuer;
pub mod mrz;
pub mod pdf_tree;
pub mod sandboxed;
pub mod text;
pub mod twoddoc;

pub use builtin::{BuiltinEngine, EngineOptions};
pub use engine::{Engine, EngineError};
pub use sandboxed::SandboxedEngine;

use common::analysis::AnalysisReport;
use common::catalogue::anomaly;
use common::domain::{ItemError, Verdict};

/// The report of a document the engine could not analyse: `analyse_impossible`, with the
/// catalogue's anomaly for the reason.
pub fn unanalysable(error: ItemError, detail: &str) -> AnalysisReport {
    let code = match error {
        ItemError::UnreadableDocument => "document_unreadable",
        ItemError::UnsupportedDocument => "document_unsupported",
        ItemError::EngineFailure => "analysis_failed",
        ItemError::IaDesactivee => "ai_disabled",
    };
    let mut anomalies: Vec<_> = anomaly(code).into_iter().collect();
    if let Some(a) = anomalies.first_mut() {
        a.message = format!("{} ({detail})", a.message);
    }
    AnalysisReport {
        verdict: Verdict::AnalyseImpossible,
        document_type: "inconnu".into(),
        document_country: None,
        anomalies,
        two_d_doc: None,
        holder_age: None,
        pages: 0,
        checks: Vec::new(),
    }
}
