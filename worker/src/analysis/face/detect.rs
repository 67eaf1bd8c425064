//! Finding faces with YuNet: the image is scaled into the model's 640×640 square (padded, never
//! stretched), the model scores every cell of three grids (strides 8, 16 and 32), and the cells
//! sure enough of a face become boxes with five landmarks, in the image's own pixels.

use image::RgbImage;
use tract_onnx::prelude::*;

use super::geometry::{Point, Rect};
use super::onnx::Plan;
use super::FaceError;

/// The side of the square the detector was exported for.
pub const SIDE: usize = 640;
const STRIDES: [usize; 3] = [8, 16, 32];
/// Below this score a cell is not a face at all; the quality gates decide later whether a face
/// found is good enough to compare.
const MIN_SCORE: f32 = 0.6;
/// Two boxes overlapping more than this (intersection over union) are one face.
const NMS_IOU: f32 = 0.3;

/// One face: its box, its five landmarks (the eye on the image's left, the other eye, the nose
/// tip, the mouth's corner on the image's left, the other corner) and how sure the detector is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Face {
    pub bounds: Rect,
    pub landmarks: [Point; 5],
    pub score: f32,
}

impl Face {
    /// The distance between the eyes, in pixels: the face's size as the aligner sees it.
    pub fn eye_distance(&self) -> f32 {
        self.landmarks[0].distance(self.landmarks[1])
    }
}

/// The faces of `image`, surest first.
pub fn faces(plan: &Plan, image: &RgbImage) -> Result<Vec<Face>, FaceError> {
    let (input, scale) = input_of(image)?;
    let outputs = plan.run(tvec!(input.into_tvalue())).map_err(FaceError::run)?;
    let mut found = Vec::new();
    for (level, stride) in STRIDES.into_iter().enumerate() {
        let view = |group: usize| -> Result<Vec<f32>, FaceError> {
            let output = outputs
                .get(group * STRIDES.len() + level)
                .ok_or_else(|| FaceError::Model("the detector gave fewer outputs than its twelve".to_owned()))?;
            super::floats(output)
        };
        let (cls, obj, bbox, kps) = (view(0)?, view(1)?, view(2)?, view(3)?);
        let grid = Grid {
            stride,
            cols: SIDE / stride,
            cls: &cls,
            obj: &obj,
            bbox: &bbox,
            kps: &kps,
        };
        grid.decode(scale, &mut found)?;
    }
    Ok(suppress_overlaps(found))
}

/// The model's input: `image` scaled so that its longer side is 640, at the top left of a black
/// square, as planes of blue, green and red (the channel order YuNet was trained on), 0 to 255.
fn input_of(image: &RgbImage) -> Result<(Tensor, f32), FaceError> {
    let (width, height) = image.dimensions();
    let scale = SIDE as f32 / width.max(height).max(1) as f32;
    let fit = |side: u32| ((side as f32 * scale).round() as u32).clamp(1, SIDE as u32);
    let resized = image::imageops::resize(image, fit(width), fit(height), image::imageops::FilterType::Triangle);
    let mut planes = vec![0f32; 3 * SIDE * SIDE];
    for (x, y, pixel) in resized.enumerate_pixels() {
        let at = y as usize * SIDE + x as usize;
        for (plane, channel) in [2, 1, 0].into_iter().enumerate() {
            planes[plane * SIDE * SIDE + at] = f32::from(pixel[channel]);
        }
    }
    let tensor = Tensor::from_shape(&[1, 3, SIDE, SIDE], &planes).map_err(FaceError::run)?;
    Ok((tensor, scale))
}

/// The outputs of one grid: per cell, a class and an objectness score, a box and ten landmark
/// coordinates, all relative to the cell.
struct Grid<'a> {
    stride: usize,
    cols: usize,
    cls: &'a [f32],
    obj: &'a [f32],
    bbox: &'a [f32],
    kps: &'a [f32],
}

impl Grid<'_> {
    fn decode(&self, scale: f32, found: &mut Vec<Face>) -> Result<(), FaceError> {
        let cells = self.cols * self.cols;
        if self.cls.len() < cells || self.obj.len() < cells || self.bbox.len() < 4 * cells || self.kps.len() < 10 * cells {
            return Err(FaceError::Model("a detector output is shorter than its grid".to_owned()));
        }
        let stride = self.stride as f32;
        for cell in 0..cells {
            let score = (self.cls[cell].clamp(0.0, 1.0) * self.obj[cell].clamp(0.0, 1.0)).sqrt();
            if score < MIN_SCORE {
                continue;
            }
            let (row, col) = ((cell / self.cols) as f32, (cell % self.cols) as f32);
            let b = &self.bbox[4 * cell..4 * cell + 4];
            let (cx, cy) = ((col + b[0]) * stride, (row + b[1]) * stride);
            let (w, h) = (b[2].exp() * stride, b[3].exp() * stride);
            let k = &self.kps[10 * cell..10 * cell + 10];
            let landmark = |n: usize| Point::new((k[2 * n] + col) * stride / scale, (k[2 * n + 1] + row) * stride / scale);
            found.push(Face {
                bounds: Rect::new((cx - w / 2.0) / scale, (cy - h / 2.0) / scale, w / scale, h / scale),
                landmarks: [landmark(0), landmark(1), landmark(2), landmark(3), landmark(4)],
                score,
            });
        }
        Ok(())
    }
}

/// Keeps the surest of overlapping boxes.
fn suppress_overlaps(mut faces: Vec<Face>) -> Vec<Face> {
    faces.sort_by(|a, b| b.score.total_cmp(&a.score));
    let mut kept: Vec<Face> = Vec::new();
    for face in faces {
        if kept.iter().all(|k| k.bounds.iou(&face.bounds) < NMS_IOU) {
            kept.push(face);
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn face(x: f32, score: f32) -> Face {
        Face {
            bounds: Rect::new(x, 0.0, 10.0, 10.0),
            landmarks: [Point::new(0.0, 0.0); 5],
            score,
        }
    }

    #[test]
    fn overlapping_boxes_are_one_face_the_surest() {
        let kept = suppress_overlaps(vec![face(0.0, 0.7), face(1.0, 0.9), face(30.0, 0.8)]);
        let scores: Vec<f32> = kept.iter().map(|f| f.score).collect();
        assert_eq!(scores, vec![0.9, 0.8]);
    }

    #[test]
    fn the_input_keeps_the_proportions_and_turns_rgb_into_bgr_planes() {
        let image = RgbImage::from_pixel(1280, 640, image::Rgb([10, 20, 30]));
        let (tensor, scale) = input_of(&image).unwrap();
        assert_eq!(scale, 0.5);
        assert_eq!(tensor.shape(), &[1, 3, SIDE, SIDE]);
        let planes = tensor.to_plain_array_view::<f32>().unwrap();
        let planes = planes.as_slice().unwrap();
        let at = |plane: usize, x: usize, y: usize| planes[plane * SIDE * SIDE + y * SIDE + x];
        assert_eq!((at(0, 5, 5), at(1, 5, 5), at(2, 5, 5)), (30.0, 20.0, 10.0));
        // Padded below the 640×320 picture, never stretched.
        assert_eq!(at(0, 5, 319), 30.0);
        assert_eq!(at(0, 5, 320), 0.0);
    }
}
