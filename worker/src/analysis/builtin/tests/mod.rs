//! The built-in engine end to end, on the bytes a job would hand it: the reference samples with their
//! manifest's findings, the files it must refuse, a corpus of seals these tests sign, render and
//! tamper with themselves, and a document of every type of the 2D-Doc specification.

mod corpus;
mod doc_types;
mod faces;
mod files;
mod rotation;
mod samples;
mod tilt;

use std::path::PathBuf;
use std::time::Duration;

use chrono::NaiveDate;
use domain::analysis::{AnalysisInput, AnalysisReport};
use domain::vocabulary::DocumentCategory;

use super::{BuiltinEngine, EngineOptions};
use crate::analysis::engine::{Engine, EngineError};
use crate::analysis::issuer::RegisterOptions;
use crate::analysis::text::ocr::OcrOptions;
use crate::analysis::twoddoc::TrustOptions;

/// The samples manifest's reference date: expiry and ages are judged on it.
pub fn reference_date() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 22).expect("date")
}

/// The fictitious issuers of the samples, which the shipped register rightly does not know.
const DEMO_ISSUERS: &str = "\
# siren\tname\tkind\tsource
789012341\tEAUX DE DEMONSTRATION\twater\ttest fixture
890123458\tDEMO CONSEIL SAS\tpayroll\ttest fixture
901234567\tELECTRICITE DEMO\tenergy\ttest fixture
";

fn demo_register_file() -> PathBuf {
    let path = std::env::temp_dir().join(format!("sceau-demo-issuers-{}.tsv", std::process::id()));
    std::fs::write(&path, DEMO_ISSUERS).expect("write the demo register");
    path
}

/// The engine as the acceptance tests configure it: the test authority accepted, the demo issuers
/// registered, the date pinned; face match off, as the shared specimens carry no face (see
/// `faces` for the engine with it).
pub fn engine() -> BuiltinEngine {
    engine_with(false)
}

pub fn engine_with(face_match: bool) -> BuiltinEngine {
    engine_calling(face_match, None)
}

/// [`engine_with`], with an external analysis service.
pub fn engine_calling(face_match: bool, external: Option<crate::analysis::external::ExternalOptions>) -> BuiltinEngine {
    BuiltinEngine::build(EngineOptions {
        trust: TrustOptions {
            accept_test_ca: true,
            extra_dir: None,
        },
        data_dir: None,
        register: RegisterOptions {
            extra_file: Some(demo_register_file()),
            online_url: None,
            online_timeout: Duration::from_secs(1),
        },
        ocr: OcrOptions::default(),
        external,
        timeout: Duration::from_secs(120),
        reference_date: Some(reference_date()),
        face_match,
    })
    .expect("the engine builds")
}

pub fn input(category: DocumentCategory, front: Vec<u8>) -> AnalysisInput {
    AnalysisInput {
        category,
        front,
        back: None,
        selfie: None,
        biometric_consent: true,
    }
}

pub async fn analyse(engine: &BuiltinEngine, input: AnalysisInput) -> Result<AnalysisReport, EngineError> {
    engine.analyse(input).await
}

/// The reference data directory; the tests that need it fail loudly without it.
pub fn shared_data() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data");
    assert!(dir.is_dir(), "the reference data are missing: {} must exist", dir.display());
    dir
}

pub fn codes(report: &AnalysisReport) -> Vec<&str> {
    report.anomalies.iter().map(|a| a.code.as_str()).collect()
}
