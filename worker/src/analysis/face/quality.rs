//! The gates a face passes before its comparison is believed: big enough, sharp enough, surely a
//! face, and shaped like one once aligned. A face that fails is "not checked", never a mismatch:
//! a poor photo must not accuse anyone. The figures come from the calibration set
//! (`docs/face-match.md`): past them, genuine pairs of that set kept a similarity above 0.75.

use image::RgbImage;

use super::align::Aligned;
use super::detect::Face;

/// Fewer pixels between the eyes and the crop is mostly made up by upscaling.
pub const MIN_EYE_DISTANCE: f32 = 12.0;
/// The variance of the Laplacian of the aligned crop's grey levels; below it, features are gone.
pub const MIN_SHARPNESS: f32 = 6.0;
/// The detector's score below which the "face" may be a pattern of the background.
pub const MIN_SCORE: f32 = 0.7;
/// How far an aligned landmark may stray from the template (in eye distances): a face turned
/// away or landmarks put on something else stray further.
pub const MAX_STRAY: f32 = 0.35;

/// Why a face is too poor to compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flaw {
    TooSmall,
    Blurred,
    Unsure,
    Turned,
}

/// Whether `face`, aligned as `aligned`, may be compared.
pub fn assess(face: &Face, aligned: &Aligned) -> Result<(), Flaw> {
    if face.eye_distance() < MIN_EYE_DISTANCE {
        return Err(Flaw::TooSmall);
    }
    if face.score < MIN_SCORE {
        return Err(Flaw::Unsure);
    }
    if aligned.stray > MAX_STRAY {
        return Err(Flaw::Turned);
    }
    if sharpness(&aligned.crop) < MIN_SHARPNESS {
        return Err(Flaw::Blurred);
    }
    Ok(())
}

/// The variance of the 4-neighbour Laplacian of the crop's luma.
pub fn sharpness(crop: &RgbImage) -> f32 {
    let (width, height) = crop.dimensions();
    if width < 3 || height < 3 {
        return 0.0;
    }
    let luma = |x: u32, y: u32| {
        let p = crop.get_pixel(x, y);
        0.299 * f32::from(p[0]) + 0.587 * f32::from(p[1]) + 0.114 * f32::from(p[2])
    };
    let (mut sum, mut squares, mut n) = (0.0f64, 0.0f64, 0.0f64);
    for y in 1..height - 1 {
        for x in 1..width - 1 {
            let l = f64::from(luma(x - 1, y) + luma(x + 1, y) + luma(x, y - 1) + luma(x, y + 1) - 4.0 * luma(x, y));
            sum += l;
            squares += l * l;
            n += 1.0;
        }
    }
    let mean = sum / n;
    (squares / n - mean * mean) as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::face::geometry::{Point, Rect};

    fn face(eyes: f32, score: f32) -> Face {
        Face {
            bounds: Rect::new(0.0, 0.0, 100.0, 100.0),
            landmarks: [
                Point::new(0.0, 0.0),
                Point::new(eyes, 0.0),
                Point::new(eyes / 2.0, eyes / 2.0),
                Point::new(0.0, eyes),
                Point::new(eyes, eyes),
            ],
            score,
        }
    }

    fn aligned(crop: RgbImage, stray: f32) -> Aligned {
        Aligned { crop, stray }
    }

    fn checkerboard() -> RgbImage {
        RgbImage::from_fn(112, 112, |x, y| {
            if (x / 2 + y / 2) % 2 == 0 {
                image::Rgb([0; 3])
            } else {
                image::Rgb([255; 3])
            }
        })
    }

    #[test]
    fn each_gate_names_its_flaw() {
        let sharp = || aligned(checkerboard(), 0.1);
        assert_eq!(assess(&face(30.0, 0.9), &sharp()), Ok(()));
        assert_eq!(assess(&face(8.0, 0.9), &sharp()), Err(Flaw::TooSmall));
        assert_eq!(assess(&face(30.0, 0.62), &sharp()), Err(Flaw::Unsure));
        assert_eq!(assess(&face(30.0, 0.9), &aligned(checkerboard(), 0.6)), Err(Flaw::Turned));
        let flat = aligned(RgbImage::from_pixel(112, 112, image::Rgb([128; 3])), 0.1);
        assert_eq!(assess(&face(30.0, 0.9), &flat), Err(Flaw::Blurred));
    }

    #[test]
    fn sharpness_is_zero_on_a_flat_grey_and_large_on_edges() {
        assert_eq!(sharpness(&RgbImage::from_pixel(20, 20, image::Rgb([90; 3]))), 0.0);
        assert!(sharpness(&checkerboard()) > 1000.0);
    }
}
