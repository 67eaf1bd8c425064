//! The faces of an identity document: its portrait looked for on the front (every identity
//! document, journeys and batch deposits alike), and the journey's selfie compared with it when
//! the customer consented. The pixel work runs with the rest of the reading, in the analysis
//! child; only the outcome and the similarity come out of it.

use common::document::{decode_image_checked, sniff};
use domain::analysis::Check;
use domain::face_match::{carries_portrait, similarity_detail, FaceBox, FaceComparison, FaceMatch, NotCheckedReason};
use domain::vocabulary::{Anomaly, AnomalyCode};
use image::{DynamicImage, RgbImage};

use super::file::OpenedFile;
use super::findings::Findings;
use super::front_turn::{self, FrontTurn};
use crate::analysis::face::{self, FaceModels};

/// Images are looked at no larger than this (longest side, in pixels): a phone's 12 MP photo
/// shrunk to it keeps a card's portrait well above the quality gates, at a fraction of the cost.
const WORKING_SIDE: u32 = 1600;

/// What the faces of one document showed.
#[derive(Debug, Clone, Copy, Default)]
pub struct FaceReading {
    /// Whether a face was found on the front; `None` when not looked for.
    portrait_found: Option<bool>,
    /// The comparison with the selfie, when one came with the document.
    outcome: Option<FaceComparison>,
    selfie_faces: usize,
}

/// Looks at the front and, when there is one, the selfie; a front whose portrait does not show
/// upright is searched at the turn its zone is read at (`front_turn`).
pub fn read(enabled: bool, front: &OpenedFile<'_>, selfie: Option<&[u8]>, consent: bool, front_turn: &FrontTurn) -> FaceReading {
    let not_checked = |reason| FaceReading {
        outcome: selfie.map(|_| FaceMatch::NotChecked { reason }.into()),
        ..FaceReading::default()
    };
    if !enabled {
        return not_checked(NotCheckedReason::TurnedOff);
    }
    let models = match FaceModels::shared() {
        Ok(models) => models,
        Err(_) => return not_checked(NotCheckedReason::ModelsUnavailable),
    };
    let Some(front_image) = front.image.as_ref() else {
        // A PDF identity document: its portrait is not looked for.
        return not_checked(NotCheckedReason::NoFaceOnDocument);
    };
    let front_working = working(front_image);
    // The selfie is decoded only with the customer's consent; both images are then examined at
    // once, each on its own thread.
    let selfie_image = selfie.filter(|_| consent).and_then(decoded);
    let selfie_working = selfie_image.as_ref().map(working);
    let (document, on_selfie) = std::thread::scope(|scope| {
        let on_selfie = selfie_working
            .as_ref()
            .map(|image| scope.spawn(move || face::examine(models, image)));
        let document = face::examine_knowing(models, &front_working, || front_turn.wait().map(front_turn::quarter_turns));
        let on_selfie = on_selfie.map(|examining| examining.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
        (document, on_selfie)
    });
    let document = match document {
        Ok(examined) => examined,
        Err(error) => {
            tracing::warn!(%error, "the face models failed on a document");
            return not_checked(NotCheckedReason::ModelsUnavailable);
        }
    };
    let mut reading = FaceReading {
        portrait_found: Some(document.main.is_some()),
        ..FaceReading::default()
    };
    if selfie.is_none() {
        return reading;
    }
    let not_compared = |reason| FaceMatch::NotChecked { reason }.into();
    let (Some(on_selfie), Some(selfie_image), Some(selfie_working)) = (on_selfie, &selfie_image, &selfie_working) else {
        let reason = if consent {
            NotCheckedReason::NoFaceOnSelfie
        } else {
            NotCheckedReason::NoConsent
        };
        reading.outcome = Some(not_compared(reason));
        return reading;
    };
    match on_selfie {
        Ok(on_selfie) => {
            let comparison = face::compare(&document, &on_selfie);
            reading.outcome = Some(FaceComparison {
                outcome: comparison.outcome,
                document_face: located(&document, front_image, &front_working),
                selfie_face: located(&on_selfie, selfie_image, selfie_working),
            });
            reading.selfie_faces = comparison.selfie_faces;
        }
        Err(error) => {
            tracing::warn!(%error, "the face models failed on a selfie");
            reading.outcome = Some(not_compared(NotCheckedReason::ModelsUnavailable));
        }
    }
    reading
}

/// Where the main face of `examined` is on the image as stored and shown (`shown`), from where
/// it was found on its working copy.
fn located(examined: &face::Examined, shown: &DynamicImage, working: &RgbImage) -> Option<FaceBox> {
    let face = examined.main?;
    let scale = shown.width() as f32 / working.width().max(1) as f32;
    Some(FaceBox {
        left: face.bounds.x * scale,
        top: face.bounds.y * scale,
        width: face.bounds.width * scale,
        height: face.bounds.height * scale,
        turns: examined.turns,
        image_width: shown.width(),
        image_height: shown.height(),
    })
}

/// Adds what the faces showed to the document's findings, once its type is known.
pub fn weigh(findings: &mut Findings, reading: FaceReading) {
    if reading.portrait_found == Some(false) && carries_portrait(findings.document_type) {
        findings.add_code(AnomalyCode::PortraitMissing);
    }
    let Some(comparison) = reading.outcome else {
        return;
    };
    let outcome = comparison.outcome;
    match outcome {
        FaceMatch::Match { .. } => findings.checked(Check::FaceMatch, true),
        FaceMatch::Uncertain { similarity } => {
            findings.checked(Check::FaceMatch, false);
            findings.add([Anomaly::with_detail(AnomalyCode::SelfieUncertain, &similarity_detail(similarity))]);
        }
        FaceMatch::Mismatch { similarity } => {
            findings.checked(Check::FaceMatch, false);
            findings.add_distinct([Anomaly::with_detail(AnomalyCode::SelfieMismatch, &similarity_detail(similarity))]);
        }
        FaceMatch::NotChecked { reason } => {
            findings.add_distinct([Anomaly::with_detail(AnomalyCode::SelfieNotChecked, reason.detail())]);
        }
    }
    if outcome.similarity().is_some() {
        findings.add_code(AnomalyCode::LivenessNotChecked);
    }
    if reading.selfie_faces > 1 {
        findings.add_code(AnomalyCode::SelfieMultipleFaces);
    }
    findings.face_match = Some(comparison);
}

/// The selfie's pixels, EXIF orientation applied, within the decoding limits of every file.
fn decoded(bytes: &[u8]) -> Option<DynamicImage> {
    let kind = sniff(bytes).filter(|kind| kind.is_image())?;
    decode_image_checked(kind, bytes).ok()
}

fn working(image: &DynamicImage) -> RgbImage {
    if image.width().max(image.height()) <= WORKING_SIDE {
        image.to_rgb8()
    } else {
        image.thumbnail(WORKING_SIDE, WORKING_SIDE).to_rgb8()
    }
}
