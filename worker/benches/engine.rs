//! Per-document time of the built-in engine on the reference samples: a 2D-Doc PDF (text layer), a
//! 2D-Doc photo (DataMatrix search and OCR) and MRZ images. Run on one core by `scripts/bench --engine`
//! (`taskset -c 0`), so the figures are single-core times. Then the face comparison's steps.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use domain::analysis::AnalysisInput;
use domain::vocabulary::DocumentCategory;
use worker::analysis::face::{self, FaceModels};
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
        let verdict = verdict.unwrap_or_else(|e| format!("error: {e}"));
        row(label, RUNS, || drop(runtime.block_on(engine.analyse(input()))), &verdict);
    }
    face_rows();
}

/// The face comparison's steps on the test set (a card photographed on a table, a selfie), on one
/// core: detection on each, one embedding, the whole pair; the models' loading apart.
fn face_rows() {
    let faces = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/faces");
    let open = |path: &str| image::open(faces.join(path)).expect("a test-set photograph").to_rgb8();
    let (card, selfie) = (open("cards/obama-obama-yaw20.jpg"), open("selfies/obama2.jpg"));
    let models = FaceModels::load().expect("the face models");
    let found = models.faces(&selfie).expect("detection");
    let face = found.first().copied().expect("a face on the selfie");
    let crop = face::align::align(&selfie, &face).expect("aligned").crop;
    let outcome = face::compare(
        &face::examine(&models, &card).expect("card"),
        &face::examine(&models, &selfie).expect("selfie"),
    )
    .outcome;
    println!();
    println!("{:<26} {:>9} {:>9} {:>9}  outcome", "face match", "min ms", "median", "max");
    row("models' loading", 3, || drop(FaceModels::load().expect("the face models")), "");
    row(
        &format!("detection, card {}x{}", card.width(), card.height()),
        RUNS,
        || drop(std::hint::black_box(models.faces(&card))),
        "",
    );
    row(
        &format!("detection, selfie {}x{}", selfie.width(), selfie.height()),
        RUNS,
        || drop(std::hint::black_box(models.faces(&selfie))),
        "",
    );
    row(
        "embedding (112x112)",
        RUNS,
        || drop(std::hint::black_box(models.embedding(&crop))),
        "",
    );
    row(
        "whole pair",
        RUNS,
        || {
            let (on_card, on_selfie) = (face::examine(&models, &card), face::examine(&models, &selfie));
            if let (Ok(on_card), Ok(on_selfie)) = (on_card, on_selfie) {
                std::hint::black_box(face::compare(&on_card, &on_selfie));
            }
        },
        &format!("{outcome:?}"),
    );
}

/// Times `work` `runs` times and prints its minimum, median and maximum.
fn row(label: &str, runs: usize, mut work: impl FnMut(), note: &str) {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            work();
            start.elapsed()
        })
        .collect();
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{label:<26} {:>9.1} {:>9.1} {:>9.1}  {note}",
        ms(times[0]),
        ms(times[runs / 2]),
        ms(times[runs - 1])
    );
}
