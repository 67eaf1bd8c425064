//! The analysis engine behind a trait, so the job loop does not depend on which engine version
//! runs. Every engine reports with the anomaly codes of `domain::catalogue`.

pub mod builtin;
pub mod capabilities;
pub mod datamatrix;
pub mod engine;
pub mod external;
pub mod face;
pub mod forensics;
pub mod grey;
pub mod issuer;
pub mod mrz;
pub mod orientation;
pub mod pdf_tree;
pub mod perspective;
pub mod quick_look;
pub mod sandboxed;
pub mod text;
pub mod twoddoc;

pub use builtin::{BuiltinEngine, EngineOptions};
pub use engine::{Engine, EngineError};
pub use sandboxed::SandboxedEngine;

use domain::analysis::AnalysisReport;
use domain::vocabulary::{Anomaly, AnomalyCode, ItemError, Verdict};

/// The report of a document the engine could not analyse: `analyse_impossible`, with the
/// catalogue's anomaly for the reason.
pub fn unanalysable(error: ItemError, detail: &str) -> AnalysisReport {
    let code = match error {
        ItemError::UnreadableDocument => AnomalyCode::DocumentUnreadable,
        ItemError::UnsupportedDocument => AnomalyCode::DocumentUnsupported,
        ItemError::EngineFailure => AnomalyCode::AnalysisFailed,
        ItemError::IaDesactivee => AnomalyCode::AiDisabled,
    };
    let mut anomaly = Anomaly::new(code);
    anomaly.message = format!("{} ({detail})", anomaly.message);
    let anomalies = vec![anomaly];
    AnalysisReport {
        verdict: Verdict::AnalyseImpossible,
        document_type: domain::vocabulary::DocumentType::Inconnu,
        document_country: None,
        anomalies,
        two_d_doc: None,
        holder_age: None,
        pages: 0,
        checks: Vec::new(),
        face_match: None,
    }
}
