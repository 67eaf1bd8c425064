//! The comparison itself: the portrait found on the document's front, the face found on the
//! selfie, each aligned and past the quality gates, then the cosine of their embeddings weighed
//! against two thresholds (`docs/face-match.md` has the calibration behind them).

use image::RgbImage;

use super::align::{align, Aligned};
use super::detect::{faces, Face};
use super::embed::{embed, Embedding};
use super::quality::{self, Flaw};
use super::{FaceError, FaceModels};

/// At or above: the same person; below `MISMATCH`: confidently not; between, a person decides.
pub use domain::face_match::{MATCH_THRESHOLD as MATCH, MISMATCH_THRESHOLD as MISMATCH};
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

/// Why a selfie was not compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotChecked {
    NoConsent,
    ModelsUnavailable,
    NoFaceOnSelfie,
    NoFaceOnDocument,
    SelfieTooPoor(Flaw),
    PortraitTooPoor(Flaw),
}

/// What the comparison concluded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    Match { similarity: f32 },
    Uncertain { similarity: f32 },
    Mismatch { similarity: f32 },
    NotChecked(NotChecked),
}

impl Outcome {
    pub fn of_similarity(similarity: f32) -> Outcome {
        if similarity >= MATCH {
            Outcome::Match { similarity }
        } else if similarity >= MISMATCH {
            Outcome::Uncertain { similarity }
        } else {
            Outcome::Mismatch { similarity }
        }
    }
}

/// The comparison of one selfie with one document.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    pub outcome: Outcome,
    /// Faces counted on the selfie.
    pub selfie_faces: usize,
}

/// Looks for the main face of `image`: the largest (an identity card's small "ghost" portrait is
/// the smaller one, a selfie's passer-by too), the image turned by quarter turns when no strong
/// face shows as it is; then aligns it, passes it through the quality gates and embeds it.
pub fn examine(models: &FaceModels, image: &RgbImage) -> Result<Examined, FaceError> {
    let mut best: Option<(Face, usize, u8)> = None;
    for turns in 0..4u8 {
        let found = faces(&models.detector, &quarter_turns(image, turns))?;
        if let Some(face) = largest(&found) {
            if best.is_none_or(|(b, _, _)| face.score > b.score) {
                best = Some((face, counted(&found), turns));
            }
        }
        if best.is_some_and(|(b, _, _)| b.score >= STRONG) {
            break;
        }
    }
    let Some((face, faces, turns)) = best else {
        return Ok(Examined {
            faces: 0,
            main: None,
            turns: 0,
            embedding: None,
        });
    };
    let upright = quarter_turns(image, turns);
    let embedding = match gated(&upright, &face) {
        Ok(aligned) => Ok(embed(&models.embedder, &aligned.crop)?),
        Err(flaw) => Err(flaw),
    };
    Ok(Examined {
        faces,
        main: Some(face),
        turns,
        embedding: Some(embedding),
    })
}

/// Compares the selfie's main face with the document's portrait.
pub fn compare(document: &Examined, selfie: &Examined) -> Comparison {
    let outcome = match (&selfie.embedding, &document.embedding) {
        (None, _) => Outcome::NotChecked(NotChecked::NoFaceOnSelfie),
        (_, None) => Outcome::NotChecked(NotChecked::NoFaceOnDocument),
        (Some(Err(flaw)), _) => Outcome::NotChecked(NotChecked::SelfieTooPoor(*flaw)),
        (_, Some(Err(flaw))) => Outcome::NotChecked(NotChecked::PortraitTooPoor(*flaw)),
        (Some(Ok(on_selfie)), Some(Ok(on_document))) => Outcome::of_similarity(on_selfie.similarity(on_document)),
    };
    Comparison {
        outcome,
        selfie_faces: selfie.faces,
    }
}

/// The face aligned, if it passes the quality gates.
fn gated(image: &RgbImage, face: &Face) -> Result<Aligned, Flaw> {
    let aligned = align(image, face).ok_or(Flaw::Turned)?;
    quality::assess(face, &aligned)?;
    Ok(aligned)
}

fn largest(found: &[Face]) -> Option<Face> {
    found.iter().copied().max_by(|a, b| a.bounds.area().total_cmp(&b.bounds.area()))
}

fn counted(found: &[Face]) -> usize {
    found
        .iter()
        .filter(|f| f.score >= OTHER_FACE_SCORE && f.eye_distance() >= quality::MIN_EYE_DISTANCE)
        .count()
        .max(usize::from(!found.is_empty()))
}

/// `image` turned clockwise by `turns` quarter turns.
fn quarter_turns(image: &RgbImage, turns: u8) -> std::borrow::Cow<'_, RgbImage> {
    use std::borrow::Cow;
    match turns % 4 {
        0 => Cow::Borrowed(image),
        1 => Cow::Owned(image::imageops::rotate90(image)),
        2 => Cow::Owned(image::imageops::rotate180(image)),
        _ => Cow::Owned(image::imageops::rotate270(image)),
    }
}

#[cfg(test)]
mod tests;
