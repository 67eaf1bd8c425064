//! The warp itself: every pixel of the upright rectangle taken from where the homography maps it
//! in the photo, then the levels stretched as a scanner's are.

use image::{imageops, GrayImage, ImageBuffer, Pixel};

use super::{Point, Quad};

/// A plane projective map, x = (a u + b v + c) / (g u + h v + 1), y = (d u + e v + f) / (g u + h v + 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Homography {
    pub(super) m: [f64; 8],
}

impl Homography {
    /// The map from the rectangle (0, 0)–(width, height) onto `quad` (its corners in the same order:
    /// top-left, top-right, bottom-right, bottom-left); `None` for a degenerate quad. Heckbert's
    /// closed form of the unit square's map ("Fundamentals of Texture Mapping", 1989), scaled.
    pub fn rectangle_to_quad(width: u32, height: u32, quad: &Quad) -> Option<Self> {
        let [p0, p1, p2, p3] = *quad;
        let (dx1, dx2, dx3) = (p1.x - p2.x, p3.x - p2.x, p0.x - p1.x + p2.x - p3.x);
        let (dy1, dy2, dy3) = (p1.y - p2.y, p3.y - p2.y, p0.y - p1.y + p2.y - p3.y);
        let denominator = dx1 * dy2 - dx2 * dy1;
        if denominator.abs() < 1e-9 {
            return None;
        }
        let g = (dx3 * dy2 - dx2 * dy3) / denominator;
        let h = (dx1 * dy3 - dx3 * dy1) / denominator;
        let (sw, sh) = (f64::from(width), f64::from(height));
        let unit = [
            p1.x - p0.x + g * p1.x,
            p3.x - p0.x + h * p3.x,
            p0.x,
            p1.y - p0.y + g * p1.y,
            p3.y - p0.y + h * p3.y,
            p0.y,
            g,
            h,
        ];
        // u = x / width, v = y / height.
        let m = [
            unit[0] / sw,
            unit[1] / sh,
            unit[2],
            unit[3] / sw,
            unit[4] / sh,
            unit[5],
            unit[6] / sw,
            unit[7] / sh,
        ];
        m.iter().all(|v| v.is_finite()).then_some(Self { m })
    }

    pub fn apply(&self, u: f64, v: f64) -> Option<Point> {
        let m = &self.m;
        let w = m[6] * u + m[7] * v + 1.0;
        if w.abs() < 1e-12 {
            return None;
        }
        Some(Point::new((m[0] * u + m[1] * v + m[2]) / w, (m[3] * u + m[4] * v + m[5]) / w))
    }
}

/// The straightened document's levels stretched as a scanner's are: its paper white, its ink black.
/// A photo's paper comes out grey (exposure, uneven light), and Tesseract loses small print on it
/// that it reads on white: a lone "1,5" read "15" or "ikis)" on the photographed tax notice's paper
/// at 230, "1,5" once the paper is at 255.
pub(super) fn levelled(grey: &mut GrayImage) {
    let mut histogram = [0u64; 256];
    for &level in grey.as_raw() {
        histogram[usize::from(level)] += 1;
    }
    let total = grey.as_raw().len() as u64;
    let percentile = |fraction: f64| {
        let wanted = (fraction * total as f64) as u64;
        let mut seen = 0;
        histogram
            .iter()
            .position(|&n| {
                seen += n;
                seen > wanted
            })
            .unwrap_or(255) as f64
    };
    let (ink, paper) = (percentile(INK_PERCENTILE), percentile(PAPER_PERCENTILE));
    if paper - ink < MIN_CONTRAST {
        return;
    }
    let table: Vec<u8> = (0..=255u8)
        .map(|level| ((f64::from(level) - ink) * 255.0 / (paper - ink)).round().clamp(0.0, 255.0) as u8)
        .collect();
    for byte in grey.iter_mut() {
        *byte = table[usize::from(*byte)];
    }
}

/// The straightened document with its edges sharpened (an unsharp mask): the lens, the JPEG and the
/// warp's interpolation each soften a photo's print, and Tesseract drops the faint strokes left, the
/// comma of a lone "1,5" read "15" on the tax notice photographed at 15° to 30° (3 photos of 8,
/// after a second and a third reading), where it reads "1,5" on every one of the 8 once sharpened.
/// The blur is `image`'s box-blur approximation of a Gaussian, whose cost does not grow with sigma.
pub(super) fn sharpened(grey: &GrayImage) -> GrayImage {
    let soft = imageops::fast_blur(grey, SHARPEN_SIGMA);
    let mut sharp = grey.clone();
    for (level, soft) in sharp.iter_mut().zip(soft.iter()) {
        let detail = i16::from(*level) - i16::from(*soft);
        if detail.abs() > SHARPEN_THRESHOLD {
            *level = (i16::from(*level) + detail).clamp(0, 255) as u8;
        }
    }
    sharp
}

/// The blur the unsharp mask takes away, in pixels of the straightened image: a stroke of print
/// at the scale of a 150 dpi scan is two or three pixels wide.
const SHARPEN_SIGMA: f32 = 2.0;
/// Differences of a grey level or two (the paper's grain, JPEG's noise) are not sharpened.
const SHARPEN_THRESHOLD: i16 = 2;

/// The level under which this fraction of the straightened document lies is its ink's (black).
const INK_PERCENTILE: f64 = 0.005;
/// The level under which this fraction lies is its paper's (white): most of a document is paper,
/// and the brightest twentieth, a lit corner or a card's white band, may saturate without loss.
const PAPER_PERCENTILE: f64 = 0.95;
/// A document whose ink and paper are closer than this is left as it is: stretching would only
/// magnify its noise.
const MIN_CONTRAST: f64 = 64.0;

/// Every pixel of the `width` × `height` rectangle taken from where `homography` maps it in
/// `source`, bilinearly.
pub(super) fn warp<P>(source: &ImageBuffer<P, Vec<u8>>, homography: &Homography, width: u32, height: u32) -> ImageBuffer<P, Vec<u8>>
where
    P: Pixel<Subpixel = u8>,
{
    let channels = usize::from(P::CHANNEL_COUNT);
    let (sw, sh) = (source.width() as usize, source.height() as usize);
    let raw = source.as_raw();
    let mut out = ImageBuffer::<P, Vec<u8>>::new(width, height);
    let (max_x, max_y) = ((sw.max(1) - 1) as f32, (sh.max(1) - 1) as f32);
    let m = homography.m;
    for (y, row) in out.chunks_exact_mut(width as usize * channels).enumerate() {
        // Along a row the map's numerators and denominator grow by constant steps: one division a
        // pixel. Pixel centres on both sides: the output's at (x + ½, y + ½), the source's at + ½.
        let v = y as f64 + 0.5;
        let (mut nx, mut ny, mut d) = (
            m[0] * 0.5 + m[1] * v + m[2],
            m[3] * 0.5 + m[4] * v + m[5],
            m[6] * 0.5 + m[7] * v + 1.0,
        );
        for pixel in row.chunks_exact_mut(channels) {
            if d.abs() > 1e-12 {
                let (sx, sy) = (((nx / d) as f32 - 0.5).clamp(0.0, max_x), ((ny / d) as f32 - 0.5).clamp(0.0, max_y));
                let (x0, y0) = (sx as usize, sy as usize);
                let (x1, y1) = ((x0 + 1).min(sw - 1), (y0 + 1).min(sh - 1));
                let (fx, fy) = (sx - x0 as f32, sy - y0 as f32);
                let (top, bottom) = ((y0 * sw) * channels, (y1 * sw) * channels);
                let (left, right) = (x0 * channels, x1 * channels);
                for (c, value) in pixel.iter_mut().enumerate() {
                    let at = |offset: usize| f32::from(raw[offset + c]);
                    let upper = at(top + left) + (at(top + right) - at(top + left)) * fx;
                    let lower = at(bottom + left) + (at(bottom + right) - at(bottom + left)) * fx;
                    *value = (upper + (lower - upper) * fy + 0.5) as u8;
                }
            }
            nx += m[0];
            ny += m[3];
            d += m[6];
        }
    }
    out
}
