//! The flat document's proportions, told by the perspective of its outline and snapped to the
//! formats documents come in, and the size it is straightened to.

use super::{Point, Quad};

/// The focal length a phone's main camera has, as a fraction of the photo's longer side (about 26 mm
/// in full-frame equivalent on a 4:3 sensor), for when the perspective does not tell it.
const PHONE_FOCAL: f64 = 0.75;
/// Degrees between opposite sides under which their vanishing point is too far to tell the focal length.
const MIN_CONVERGENCE: f64 = 5.0;
/// The proportions documents come in (longer side over shorter): ID-1 cards (85.6 × 54 mm), ID-3
/// passport pages (125 × 88), the A series of pages (√2), US Letter (11 × 8.5 in).
const FORMATS: [f64; 4] = [85.6 / 54.0, 125.0 / 88.0, std::f64::consts::SQRT_2, 11.0 / 8.5];
/// An estimate this close (relatively) to a format is taken for it.
const FORMAT_TOLERANCE: f64 = 0.06;
/// Longer side over shorter of the outlines taken for a document: the formats above and some
/// margin. A bright band inside a document (a card's white MRZ strip) is far longer than that.
pub(super) const PROPORTIONS: (f64, f64) = (1.15, 1.85);

/// The document's width over its height (width along its top side), from the perspective of its
/// outline, snapped to a known format when close to one.
pub(super) fn proportions(quad: &Quad, width: u32, height: u32) -> f64 {
    let long = f64::from(width.max(height));
    let estimate = zhang_he(quad, width, height, long).unwrap_or_else(|| {
        // The mean of opposite sides: right for a document seen square-on, a fair guess otherwise.
        let across = (quad[1].minus(quad[0]).length() + quad[2].minus(quad[3]).length()) / 2.0;
        let down = (quad[3].minus(quad[0]).length() + quad[2].minus(quad[1]).length()) / 2.0;
        across / down.max(1e-9)
    });
    snapped(estimate)
}

/// Zhang and He's aspect ratio of a rectangle seen in perspective, with the principal point at the
/// photo's centre. The focal length is estimated from the two vanishing points when both pairs of
/// opposite sides clearly converge and the estimate is plausible; otherwise (a pair nearly
/// parallel, as when a document is turned about one of its axes only, where a pixel's error on a
/// corner moves the estimate anywhere) a phone's is assumed.
fn zhang_he(quad: &Quad, width: u32, height: u32, long: f64) -> Option<f64> {
    let (cx, cy) = (f64::from(width) / 2.0, f64::from(height) / 2.0);
    // Their m1..m4: top-left, top-right, bottom-left, bottom-right, centred, homogeneous.
    let m = |p: Point| [p.x - cx, p.y - cy, 1.0];
    let (m1, m2, m3, m4) = (m(quad[0]), m(quad[1]), m(quad[3]), m(quad[2]));
    let k2 = dot3(cross3(m1, m4), m3) / dot3(cross3(m2, m4), m3);
    let k3 = dot3(cross3(m1, m4), m2) / dot3(cross3(m3, m4), m2);
    let n2 = [k2 * m2[0] - m1[0], k2 * m2[1] - m1[1], k2 * m2[2] - m1[2]];
    let n3 = [k3 * m3[0] - m1[0], k3 * m3[1] - m1[1], k3 * m3[2] - m1[2]];
    let focal_squared = -(n2[0] * n3[0] + n2[1] * n3[1]) / (n2[2] * n3[2]);
    let plausible = (0.3 * long).powi(2)..=(3.0 * long).powi(2);
    let converging = converges(quad[0], quad[1], quad[3], quad[2]) && converges(quad[0], quad[3], quad[1], quad[2]);
    let focal_squared = if converging && focal_squared.is_finite() && plausible.contains(&focal_squared) {
        focal_squared
    } else {
        (PHONE_FOCAL * long).powi(2)
    };
    let norm = |n: [f64; 3]| ((n[0] * n[0] + n[1] * n[1]) / focal_squared + n[2] * n[2]).sqrt();
    let ratio = norm(n2) / norm(n3);
    (ratio.is_finite() && ratio > 0.0).then_some(ratio)
}

/// Whether the sides a→b and c→d (opposite, in the same direction) make more than
/// [`MIN_CONVERGENCE`] with each other.
fn converges(a: Point, b: Point, c: Point, d: Point) -> bool {
    let (first, second) = (b.minus(a), d.minus(c));
    let sine = first.cross(second).abs() / (first.length() * second.length()).max(1e-9);
    sine > MIN_CONVERGENCE.to_radians().sin()
}

fn cross3(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn dot3(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// `ratio` (width over height, either way round) replaced by the nearest known format's when close.
pub(super) fn snapped(ratio: f64) -> f64 {
    let landscape = ratio >= 1.0;
    let long_over_short = if landscape { ratio } else { 1.0 / ratio };
    let nearest = FORMATS
        .into_iter()
        .min_by(|a, b| (a / long_over_short - 1.0).abs().total_cmp(&(b / long_over_short - 1.0).abs()));
    match nearest {
        Some(format) if (format / long_over_short - 1.0).abs() <= FORMAT_TOLERANCE => {
            if landscape {
                format
            } else {
                1.0 / format
            }
        }
        _ => ratio,
    }
}

/// The straightened image's size: the document at the scale the photo shows its middle (the
/// nearer side a little reduced, the further one enlarged), within as many pixels as the photo
/// has. Larger would gain nothing but blur, and OCR would scale it back down to the size its letters
/// need, where small print (a lone "1,5") fares worse than at its own size.
pub(super) fn output_size(quad: &Quad, aspect: f64, width: u32, height: u32) -> Option<(u32, u32)> {
    let across = (quad[1].minus(quad[0]).length() + quad[2].minus(quad[3]).length()) / 2.0;
    let down = (quad[3].minus(quad[0]).length() + quad[2].minus(quad[1]).length()) / 2.0;
    let mut out_w = across.max(down * aspect);
    let mut out_h = out_w / aspect;
    let budget = f64::from(width) * f64::from(height);
    if out_w * out_h > budget {
        let shrink = (budget / (out_w * out_h)).sqrt();
        out_w *= shrink;
        out_h *= shrink;
    }
    let (out_w, out_h) = (out_w.round(), out_h.round());
    let fits = |side: f64| (16.0..=f64::from(width.max(height)) * 2.0).contains(&side);
    (fits(out_w) && fits(out_h)).then_some((out_w as u32, out_h as u32))
}
