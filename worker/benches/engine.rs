//! Per-document time of the built-in engine on the reference samples: a 2D-Doc PDF (text layer), a
//! 2D-Doc photo (DataMatrix search and OCR) and MRZ images. Run on one core by `scripts/bench --engine`
//! (`taskset -c 0`), so the figures are single-core times.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::analysis::AnalysisInput;
use common::domain::DocumentCategory;
use worker::analysis::{BuiltinEngine, Engine, EngineOptions};

const RUNS: usize = 10;

const SAMPLES: &[(&str, &str, DocumentCategory)] = &[
    (
        "2D-Doc PDF",
        "administratif/sample-facture-v04.pdf",
        DocumentCategory::Administratif,
    ),
    (
        "2D-Doc photo (JPEG)",
        "administratif/sample-domicile-v03-photo.jpg",
        DocumentCategory::Administratif,
    ),
    (
        "PDF without seal",
        "administratif/sample-facture-sans-2ddoc.pdf",
        DocumentCategory::Administratif,
    ),
    (
        "MRZ passport (JPEG)",
        "identite/sample-passeport-td3-valide.jpg",
        DocumentCategory::Identite,
    ),
    (
        "MRZ identity card (PNG)",
        "identite/sample-cni-td1-valide.png",
        DocumentCategory::Identite,
    ),
];

fn main() {
    let samples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/samples");
    assert!(samples.is_dir(), "the reference samples are missing: {}", samples.display());
    let config = common::config::Config {
        accept_test_ca: true,
        ..Default::default()
    };
    let engine = BuiltinEngine::build(EngineOptions::from_config(&config)).expect("engine");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    println!("{:<26} {:>9} {:>9} {:>9}  verdict", "document", "min ms", "median", "max");
    for (label, path, category) in SAMPLES {
        let bytes = std::fs::read(samples.join(path)).expect("sample");
        let input = || AnalysisInput {
            category: *category,
            front: bytes.clone(),
            back: None,
            selfie: None,
            biometric_consent: false,
        };
        let verdict = runtime.block_on(engine.analyse(input())).map(|r| r.verdict.as_str().to_owned());
        let mut times: Vec<Duration> = (0..RUNS)
            .map(|_| {
                let start = Instant::now();
                let _ = runtime.block_on(engine.analyse(input()));
                start.elapsed()
            })
            .collect();
        times.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        println!(
            "{label:<26} {:>9.1} {:>9.1} {:>9.1}  {}",
            ms(times[0]),
            ms(times[RUNS / 2]),
            ms(times[RUNS - 1]),
            verdict.unwrap_or_else(|e| format!("error: {e}"))
        );
    }
}
