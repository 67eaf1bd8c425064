//! Aligning a face for the embedding model: the similarity that carries its five landmarks onto
//! the places SFace was trained with (the ArcFace template of a 112×112 crop), then the crop
//! itself, sampled bilinearly from the full-resolution image so that no detail is lost twice.

use image::{Rgb, RgbImage};

use super::detect::Face;
use super::geometry::{Point, Similarity};

/// The side of the aligned crop.
pub const SIDE: u32 = 112;

/// Where the eyes, the nose tip and the mouth's corners sit in an aligned crop.
pub const TEMPLATE: [Point; 5] = [
    Point::new(38.2946, 51.6963),
    Point::new(73.5318, 51.5014),
    Point::new(56.0252, 71.7366),
    Point::new(41.5493, 92.3655),
    Point::new(70.7299, 92.2041),
];

/// A face's aligned crop, and how far its landmarks stray from the template once aligned, in
/// units of the template's eye distance (0 for a face exactly like the template; a face seen in
/// profile, or landmarks guessed on something that is not a face, stray far).
pub struct Aligned {
    pub crop: RgbImage,
    pub stray: f32,
}

pub fn align(image: &RgbImage, face: &Face) -> Option<Aligned> {
    let to_crop = Similarity::fit(&face.landmarks, &TEMPLATE)?;
    let from_crop = to_crop.inverse()?;
    let eyes = TEMPLATE[0].distance(TEMPLATE[1]);
    let stray = face
        .landmarks
        .iter()
        .zip(&TEMPLATE)
        .map(|(&p, &t)| to_crop.apply(p).distance(t))
        .fold(0.0f32, f32::max)
        / eyes;
    let crop = RgbImage::from_fn(SIDE, SIDE, |x, y| sample(image, from_crop.apply(Point::new(x as f32, y as f32))));
    Some(Aligned { crop, stray })
}

/// The colour at `p`, interpolated between its four neighbours; black outside the image.
fn sample(image: &RgbImage, p: Point) -> Rgb<u8> {
    let (width, height) = image.dimensions();
    let (x0, y0) = (p.x.floor(), p.y.floor());
    let (fx, fy) = (p.x - x0, p.y - y0);
    let pixel = |x: f32, y: f32| -> [f32; 3] {
        if x < 0.0 || y < 0.0 || x >= width as f32 || y >= height as f32 {
            return [0.0; 3];
        }
        let Rgb(c) = *image.get_pixel(x as u32, y as u32);
        [f32::from(c[0]), f32::from(c[1]), f32::from(c[2])]
    };
    let (a, b, c, d) = (pixel(x0, y0), pixel(x0 + 1.0, y0), pixel(x0, y0 + 1.0), pixel(x0 + 1.0, y0 + 1.0));
    let mut out = [0u8; 3];
    for i in 0..3 {
        let top = a[i] + (b[i] - a[i]) * fx;
        let bottom = c[i] + (d[i] - c[i]) * fx;
        out[i] = (top + (bottom - top) * fy).round().clamp(0.0, 255.0) as u8;
    }
    Rgb(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::face::geometry::Rect;

    /// A face whose landmarks are the template's, doubled and moved by (100, 50).
    fn doubled() -> Face {
        Face {
            bounds: Rect::new(100.0, 50.0, 224.0, 224.0),
            landmarks: TEMPLATE.map(|p| Point::new(100.0 + 2.0 * p.x, 50.0 + 2.0 * p.y)),
            score: 0.9,
        }
    }

    #[test]
    fn a_face_twice_the_template_comes_back_at_its_size_unstrayed() {
        // A gradient: the crop must sample it at (100 + 2x, 50 + 2y).
        let image = RgbImage::from_fn(400, 300, |x, y| Rgb([(x / 2) as u8, (y / 2) as u8, 7]));
        let aligned = align(&image, &doubled()).unwrap();
        assert!(aligned.stray < 1e-3, "{}", aligned.stray);
        assert_eq!(aligned.crop.dimensions(), (SIDE, SIDE));
        assert_eq!(*aligned.crop.get_pixel(10, 20), Rgb([60, 45, 7]));
        assert_eq!(*aligned.crop.get_pixel(111, 111), Rgb([161, 136, 7]));
    }

    #[test]
    fn landmarks_out_of_a_face_s_order_stray() {
        let mut face = doubled();
        face.landmarks.swap(2, 4);
        assert!(align(&RgbImage::new(400, 300), &face).unwrap().stray > 0.3);
    }

    #[test]
    fn outside_the_image_is_black() {
        let image = RgbImage::from_pixel(10, 10, Rgb([200, 200, 200]));
        assert_eq!(sample(&image, Point::new(-3.0, 2.0)), Rgb([0, 0, 0]));
        assert_eq!(sample(&image, Point::new(4.5, 4.5)), Rgb([200, 200, 200]));
    }
}
