//! The comparison itself: the portrait found on the document's front, the face found on the
//! selfie, each aligned and past the quality gates, then the cosine of their embeddings weighed
//! against two thresholds (`docs/face-match.md` has the calibration behind them).

use std::borrow::Cow;

use domain::face_match::{FaceMatch, NotCheckedReason};
use image::RgbImage;

use super::align::{align, Aligned};
use super::detect::{faces, Face};
use super::embed::{embed, Embedding};
use super::onnx::Plan;
use super::quality::{self, Flaw};
use super::{FaceError, FaceModels};

/// A detector score at which a face found on the upright image is believed without trying the
/// other quarter turns.
const STRONG: f32 = 0.85;
/// A second face on the selfie counts when it is this sure and big enough to compare.
const OTHER_FACE_SCORE: f32 = 0.8;

/// What one image shows of faces: the main one (the document's portrait, the selfie's face),
/// ready to compare or too poor to, and how many faces worth counting there are.
pub struct Examined {
    /// Faces counted (the main one included); 0 when none was found.
    pub faces: usize,
    /// The main face, when one was found, in the image turned by `turns` quarter turns clockwise.
    pub main: Option<Face>,
    pub turns: u8,
    embedding: Option<Result<Embedding, Flaw>>,
}

/// The comparison of one selfie with one document.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    /// The outcome as it is recorded.
    pub outcome: FaceMatch,
    /// What kept a face from being compared, when one was too poor to.
    pub flaw: Option<Flaw>,
    /// Faces counted on the selfie.
    pub selfie_faces: usize,
}

/// The main face of an image, found over the quarter turns, with the image turned as it was found.
pub struct Found<'a> {
    pub face: Face,
    /// Faces counted (the main one included).
    pub faces: usize,
    pub turns: u8,
    pub turned: Cow<'a, RgbImage>,
}

/// Looks for the main face of `image`: the largest (an identity card's small "ghost" portrait is
/// the smaller one, a selfie's passer-by too), the image turned by quarter turns when no strong
/// face shows as it is; then aligns it, passes it through the quality gates and embeds it.
pub fn examine(models: &FaceModels, image: &RgbImage) -> Result<Examined, FaceError> {
    examine_knowing(models, image, || None)
}

/// [`examine`], told how the image is turned once no strong face shows upright: `known_turns`
/// gives the quarter turns clockwise that bring the document upright, when its zone said so; then
/// only that turn is tried, not the three others (which a document without a face pays for).
pub fn examine_knowing(models: &FaceModels, image: &RgbImage, known_turns: impl FnOnce() -> Option<u8>) -> Result<Examined, FaceError> {
    let Some(best) = find(&models.detector, image, known_turns)? else {
        return Ok(Examined {
            faces: 0,
            main: None,
            turns: 0,
            embedding: None,
        });
    };
    let embedding = match gated(&best.turned, &best.face) {
        Ok(aligned) => Ok(embed(&models.embedder, &aligned.crop)?),
        Err(flaw) => Err(flaw),
    };
    Ok(Examined {
        faces: best.faces,
        main: Some(best.face),
        turns: best.turns,
        embedding: Some(embedding),
    })
}

/// The main face of `image` and how many count, by the detector alone (no embedding is made):
/// the largest face upright, or at the quarter turn where it shows surest when none is strong
/// upright (`known_turns` as in [`examine_knowing`]).
pub fn find<'a>(detector: &Plan, image: &'a RgbImage, known_turns: impl FnOnce() -> Option<u8>) -> Result<Option<Found<'a>>, FaceError> {
    let mut best = look(detector, image, 0, None)?;
    if !best.as_ref().is_some_and(|b| b.face.score >= STRONG) {
        let others = match known_turns() {
            Some(turns) => vec![turns % 4],
            None => vec![1, 2, 3],
        };
        for turns in others.into_iter().filter(|&turns| turns != 0) {
            best = look(detector, image, turns, best)?;
            if best.as_ref().is_some_and(|b| b.face.score >= STRONG) {
                break;
            }
        }
    }
    Ok(best)
}

/// The faces of `image` turned by `turns`: the largest kept when it is surer than `best`.
fn look<'a>(detector: &Plan, image: &'a RgbImage, turns: u8, best: Option<Found<'a>>) -> Result<Option<Found<'a>>, FaceError> {
    let turned = quarter_turns(image, turns);
    let found = faces(detector, &turned)?;
    Ok(match largest(&found) {
        Some(main) if best.as_ref().is_none_or(|b| found[main].score > b.face.score) => Some(Found {
            face: found[main],
            faces: counted(&found, main),
            turns,
            turned,
        }),
        _ => best,
    })
}

/// Compares the selfie's main face with the document's portrait.
pub fn compare(document: &Examined, selfie: &Examined) -> Comparison {
    let not_checked = |reason, flaw| (FaceMatch::NotChecked { reason }, flaw);
    let (outcome, flaw) = match (&selfie.embedding, &document.embedding) {
        (None, _) => not_checked(NotCheckedReason::NoFaceOnSelfie, None),
        (_, None) => not_checked(NotCheckedReason::NoFaceOnDocument, None),
        (Some(Err(flaw)), _) => not_checked(NotCheckedReason::SelfieTooPoor, Some(*flaw)),
        (_, Some(Err(flaw))) => not_checked(NotCheckedReason::PortraitTooPoor, Some(*flaw)),
        (Some(Ok(on_selfie)), Some(Ok(on_document))) => (FaceMatch::of_similarity(on_selfie.similarity(on_document)), None),
    };
    Comparison {
        outcome,
        flaw,
        selfie_faces: selfie.faces,
    }
}

/// The face aligned, if it passes the quality gates.
fn gated(image: &RgbImage, face: &Face) -> Result<Aligned, Flaw> {
    let aligned = align(image, face).ok_or(Flaw::Turned)?;
    quality::assess(face, &aligned)?;
    Ok(aligned)
}

/// The index of the largest face.
fn largest(found: &[Face]) -> Option<usize> {
    (0..found.len()).max_by(|&a, &b| found[a].bounds.area().total_cmp(&found[b].bounds.area()))
}

/// The main face and every other one sure and large enough to be a second person.
fn counted(found: &[Face], main: usize) -> usize {
    let others = found
        .iter()
        .enumerate()
        .filter(|&(index, face)| index != main && face.score >= OTHER_FACE_SCORE && face.eye_distance() >= quality::MIN_EYE_DISTANCE)
        .count();
    1 + others
}

/// `image` turned clockwise by `turns` quarter turns.
pub fn quarter_turns(image: &RgbImage, turns: u8) -> Cow<'_, RgbImage> {
    match turns % 4 {
        0 => Cow::Borrowed(image),
        1 => Cow::Owned(image::imageops::rotate90(image)),
        2 => Cow::Owned(image::imageops::rotate180(image)),
        _ => Cow::Owned(image::imageops::rotate270(image)),
    }
}

#[cfg(test)]
mod tests;
