//! Documents photographed at an angle: a card or a page lying on a table, taken by a hand-held phone
//! turned or tilted, shows as a quadrilateral whose edges converge. The readers (the MRZ's, the
//! DataMatrix search, OCR) were written for flat scans; this module finds the document's outline in
//! the photo and warps it into an upright flat image they read as one. A document that fills the
//! frame, as a scan does, is left alone after a look at a thumbnail.
//!
//! The outline is found on a grey thumbnail (its longer side `FIND_SIDE` pixels, so the cost does
//! not grow with the camera's resolution): the document is the largest bright region after Otsu's
//! threshold, clear of the frame's border; its four sides are lines fitted to the region's boundary
//! away from the corners (a card's rounded corners then meet at the corners of its rectangle). The
//! rectangle's proportions come from the perspective itself (Zhang and He, "Whiteboard scanning
//! and image enhancement", 2007), snapped to the formats documents come in; the warp then maps every
//! pixel of that rectangle back into the full-resolution photo, bilinearly; its levels are then
//! stretched and its edges sharpened, as a scanner's image is.

mod outline;
mod proportions;
mod warp;

use image::DynamicImage;

use super::grey;

pub use outline::find_document;
use proportions::{output_size, proportions, PROPORTIONS};
pub use warp::Homography;
use warp::{levelled, sharpened, warp};

/// A point in an image's pixels (x to the right, y down).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

impl Point {
    fn new(x: f64, y: f64) -> Self {
        Self { x, y }
    }

    fn minus(self, other: Point) -> Point {
        Point::new(self.x - other.x, self.y - other.y)
    }

    fn length(self) -> f64 {
        self.x.hypot(self.y)
    }

    fn cross(self, other: Point) -> f64 {
        self.x * other.y - self.y * other.x
    }

    fn dot(self, other: Point) -> f64 {
        self.x * other.x + self.y * other.y
    }
}

/// The document's corners in the photo: top-left, top-right, bottom-right, bottom-left as the
/// photo shows it (a page photographed sideways stays sideways: quarter turns are `orientation`'s).
pub type Quad = [Point; 4];

/// The document in `image` straightened into an upright flat image, in grey levels as every reader
/// reads it, or `None` when there is nothing to straighten: the document fills the frame, no outline
/// stands out, or it is already upright.
pub fn straighten(image: &DynamicImage) -> Option<DynamicImage> {
    let quad = find_document(image)?;
    let aspect = proportions(&quad, image.width(), image.height());
    if !(PROPORTIONS.0..=PROPORTIONS.1).contains(&aspect.max(1.0 / aspect)) {
        return None;
    }
    let (width, height) = output_size(&quad, aspect, image.width(), image.height())?;
    let homography = Homography::rectangle_to_quad(width, height, &quad)?;
    let mut flat = warp(&grey::levels(image), &homography, width, height);
    levelled(&mut flat);
    Some(DynamicImage::ImageLuma8(sharpened(&flat)))
}

#[cfg(test)]
mod tests;
