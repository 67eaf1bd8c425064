//! Embedding an aligned face with SFace: 128 numbers, normalised, whose cosine with another
//! face's says how alike the two are. An embedding is biometric data: it lives in memory for one
//! comparison, is never stored, logged or sent, and its `Debug` shows nothing of it.

use image::RgbImage;
use tract_onnx::prelude::*;

use super::align::SIDE;
use super::onnx::Plan;
use super::FaceError;

/// A face's embedding, of unit length.
pub struct Embedding(Vec<f32>);

impl std::fmt::Debug for Embedding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Embedding(withheld)")
    }
}

impl Embedding {
    /// From the model's raw output; `None` when it is all zeros (nothing to compare).
    fn normalised(raw: &[f32]) -> Option<Embedding> {
        let norm = raw.iter().map(|v| v * v).sum::<f32>().sqrt();
        (norm > f32::EPSILON && norm.is_finite()).then(|| Embedding(raw.iter().map(|v| v / norm).collect()))
    }

    /// The cosine similarity: 1 for the same face, around 0 for strangers.
    pub fn similarity(&self, other: &Embedding) -> f32 {
        self.0.iter().zip(&other.0).map(|(a, b)| a * b).sum()
    }
}

/// The embedding of a 112×112 aligned crop.
pub fn embed(plan: &Plan, crop: &RgbImage) -> Result<Embedding, FaceError> {
    let side = SIDE as usize;
    let mut planes = vec![0f32; 3 * side * side];
    // Planes of red, green and blue, 0 to 255: the model normalises its input itself.
    for (x, y, pixel) in crop.enumerate_pixels() {
        let at = y as usize * side + x as usize;
        for channel in 0..3 {
            planes[channel * side * side + at] = f32::from(pixel[channel]);
        }
    }
    let input = Tensor::from_shape(&[1, 3, side, side], &planes).map_err(FaceError::run)?;
    let outputs = plan.run(tvec!(input.into_tvalue())).map_err(FaceError::run)?;
    let output = outputs
        .first()
        .ok_or_else(|| FaceError::Model("the embedder gave no output".to_owned()))?;
    Embedding::normalised(&super::floats(output)?).ok_or_else(|| FaceError::Model("the embedder gave an empty embedding".to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similarity_is_the_cosine_of_unit_vectors() {
        let a = Embedding::normalised(&[3.0, 4.0]).unwrap();
        let b = Embedding::normalised(&[4.0, 3.0]).unwrap();
        assert!((a.similarity(&a) - 1.0).abs() < 1e-6);
        assert!((a.similarity(&b) - 0.96).abs() < 1e-6);
        let c = Embedding::normalised(&[-4.0, 3.0]).unwrap();
        assert!(a.similarity(&c).abs() < 1e-6);
        assert!(Embedding::normalised(&[0.0, 0.0]).is_none());
    }

    #[test]
    fn an_embedding_never_prints_its_numbers() {
        let a = Embedding::normalised(&[0.123_456, 0.5]).unwrap();
        assert_eq!(format!("{a:?}"), "Embedding(withheld)");
    }
}
