//! Grey levels at a working size, and ink on them: glyphs are located on a binary image (an
//! adaptive threshold, so uneven light and tinted card backgrounds do not hide text, with a
//! global Otsu threshold as the second opinion) but matched on grey levels.

use image::{DynamicImage, GrayImage, Luma};

use super::ReadError;

/// Larger images are refused: decoding them is already the caller's cost, searching them
/// would be ours for no gain (an MRZ is legible far below this).
pub(super) const MAX_PIXELS: u64 = 60_000_000;
/// The long side is brought down to this before any search, which bounds all later work.
const MAX_SIDE: u32 = 2000;
/// Below this long side the image is enlarged first, so small glyphs keep strokes wider than
/// the threshold's smoothing.
const MIN_SIDE: u32 = 700;
/// The side enlarged images get (about).
const ENLARGED_SIDE: u32 = 1000;
/// An MRZ of 30 characters cannot be legible in fewer pixels than this on the long side.
const SMALLEST_SIDE: u32 = 60;

/// A binary image: `true` where there is ink (darker than its surroundings).
#[derive(Debug, Clone)]
pub(crate) struct Ink {
    pub width: usize,
    pub height: usize,
    pub data: Vec<bool>,
}

#[cfg(test)]
impl Ink {
    pub fn get(&self, x: usize, y: usize) -> bool {
        self.data[y * self.width + x]
    }
}

/// Grey levels (transparency composited on white) with the long side between `MIN_SIDE` and
/// `MAX_SIDE`.
///
/// # Errors
/// [`ReadError::TooSmall`] and [`ReadError::TooLarge`] for images no zone can be read from.
pub(super) fn prepare(image: &DynamicImage) -> Result<GrayImage, ReadError> {
    let (width, height) = (image.width(), image.height());
    let pixels = u64::from(width) * u64::from(height);
    if pixels > MAX_PIXELS {
        return Err(ReadError::TooLarge { pixels });
    }
    if width.max(height) < SMALLEST_SIDE || width.min(height) < SMALLEST_SIDE / 4 {
        return Err(ReadError::TooSmall { width, height });
    }
    let long = width.max(height);
    if long > MAX_SIDE {
        return Ok(shrink(image, long.div_ceil(MAX_SIDE)));
    }
    let gray = to_luma_on_white(image);
    if long < MIN_SIDE {
        return Ok(enlarge(&gray, ENLARGED_SIDE.div_ceil(long).min(4)));
    }
    Ok(gray)
}

/// `gray` `factor` times larger, interpolated bilinearly (a plain loop: the generic resampler
/// costs ten times more).
fn enlarge(gray: &GrayImage, factor: u32) -> GrayImage {
    let (w, h) = (gray.width() as usize, gray.height() as usize);
    let f = factor as usize;
    let raw = gray.as_raw();
    // Output pixel i has its centre at (i + 0.5) / f − 0.5 in source pixel coordinates.
    let taps = |n: usize, i: usize| {
        let at = ((i as f32 + 0.5) / f as f32 - 0.5).clamp(0.0, (n - 1) as f32);
        let low = at as usize;
        (low, (low + 1).min(n - 1), at - low as f32)
    };
    let columns: Vec<(usize, usize, f32)> = (0..w * f).map(|x| taps(w, x)).collect();
    let mut out = Vec::with_capacity(w * f * h * f);
    for y in 0..h * f {
        let (y0, y1, ay) = taps(h, y);
        let (top, bottom) = (&raw[y0 * w..][..w], &raw[y1 * w..][..w]);
        for &(x0, x1, ax) in &columns {
            let upper = f32::from(top[x0]) + (f32::from(top[x1]) - f32::from(top[x0])) * ax;
            let lower = f32::from(bottom[x0]) + (f32::from(bottom[x1]) - f32::from(bottom[x0])) * ax;
            out.push((upper + (lower - upper) * ay + 0.5) as u8);
        }
    }
    GrayImage::from_raw((w * f) as u32, (h * f) as u32, out).unwrap_or_else(|| gray.clone())
}

/// Grey levels averaged over `factor` × `factor` blocks (no aliasing on fine print). Photos
/// decode to 8-bit RGB or grey, which are averaged in one pass over their bytes; other pixel
/// types go through the library's (slower) thumbnail filter.
fn shrink(image: &DynamicImage, factor: u32) -> GrayImage {
    let (w, h) = (image.width() / factor, image.height() / factor);
    match image {
        DynamicImage::ImageRgb8(rgb) => block_means(rgb.as_raw(), rgb.width(), 3, factor, (w, h)),
        DynamicImage::ImageLuma8(gray) => block_means(gray.as_raw(), gray.width(), 1, factor, (w, h)),
        other => to_luma_on_white(&other.thumbnail(w.max(1), h.max(1))),
    }
}

/// Means of `factor` × `factor` blocks of an 8-bit image with `channels` interleaved samples
/// (grey, or RGB weighted as Rec. 709 luma), `out` blocks across and down.
fn block_means(raw: &[u8], width: u32, channels: usize, factor: u32, out: (u32, u32)) -> GrayImage {
    let (w, k) = (width as usize, factor as usize);
    let (out_w, out_h) = (out.0.max(1) as usize, out.1.max(1) as usize);
    let luma = |p: &[u8]| -> u32 {
        match p {
            [r, g, b] => (54 * u32::from(*r) + 183 * u32::from(*g) + 19 * u32::from(*b)) >> 8,
            [v, ..] => u32::from(*v),
            [] => 0,
        }
    };
    let mut pixels = Vec::with_capacity(out_w * out_h);
    let mut sums = vec![0u32; out_w];
    for by in 0..out_h {
        sums.iter_mut().for_each(|s| *s = 0);
        for y in by * k..(by + 1) * k {
            let Some(row) = raw.get(y * w * channels..(y * w + out_w * k) * channels) else {
                continue;
            };
            for (sum, block) in sums.iter_mut().zip(row.chunks_exact(k * channels)) {
                *sum += block.chunks_exact(channels).map(luma).sum::<u32>();
            }
        }
        pixels.extend(sums.iter().map(|&s| (s / (k * k) as u32) as u8));
    }
    GrayImage::from_raw(out_w as u32, out_h as u32, pixels).unwrap_or_default()
}

fn to_luma_on_white(image: &DynamicImage) -> GrayImage {
    if !image.color().has_alpha() {
        return image.to_luma8();
    }
    let la = image.to_luma_alpha8();
    GrayImage::from_fn(la.width(), la.height(), |x, y| {
        let [v, a] = la.get_pixel(x, y).0;
        let (v, a) = (u32::from(v), u32::from(a));
        Luma([((v * a + 255 * (255 - a)) / 255) as u8])
    })
}

/// Sums over rectangles in constant time, for local means.
struct Integral {
    width: usize,
    sums: Vec<u64>,
}

impl Integral {
    fn new(gray: &GrayImage) -> Self {
        let (w, h) = (gray.width() as usize, gray.height() as usize);
        let stride = w + 1;
        let mut sums = vec![0u64; stride * (h + 1)];
        let raw = gray.as_raw();
        for y in 0..h {
            let mut row = 0u64;
            for x in 0..w {
                row += u64::from(raw[y * w + x]);
                sums[(y + 1) * stride + x + 1] = sums[y * stride + x + 1] + row;
            }
        }
        Self { width: w, sums }
    }

    /// Mean over the rectangle `[x0, x1) × [y0, y1)` (clipped by the caller, never empty).
    fn mean(&self, x0: usize, y0: usize, x1: usize, y1: usize) -> f32 {
        let stride = self.width + 1;
        let total = self.sums[y1 * stride + x1] + self.sums[y0 * stride + x0] - self.sums[y0 * stride + x1] - self.sums[y1 * stride + x0];
        let area = ((x1 - x0) * (y1 - y0)).max(1);
        total as f32 / area as f32
    }
}

/// Ink where a pixel's 3×3 neighbourhood (which evens out sensor and JPEG noise) is clearly
/// darker than the mean of a window a few characters wide around it: background tints,
/// shadows and gradients move both alike.
pub(super) fn adaptive(gray: &GrayImage) -> Ink {
    let (w, h) = (gray.width() as usize, gray.height() as usize);
    let integral = Integral::new(gray);
    let radius = (w.max(h) / 60).clamp(7, 50);
    let mut data = vec![false; w * h];
    for y in 0..h {
        let (ny0, ny1) = (y.saturating_sub(1), (y + 2).min(h));
        let (wy0, wy1) = (y.saturating_sub(radius), (y + radius + 1).min(h));
        for x in 0..w {
            let local = integral.mean(x.saturating_sub(1), ny0, (x + 2).min(w), ny1);
            let around = integral.mean(x.saturating_sub(radius), wy0, (x + radius + 1).min(w), wy1);
            // Faint guilloches and paper texture stay below this margin; printed ink does not.
            let margin = (0.12 * around).max(12.0);
            data[y * w + x] = local + margin < around;
        }
    }
    Ink { width: w, height: h, data }
}

/// Ink below the global Otsu threshold: the fallback for evenly lit scans, where the adaptive
/// window may hollow out very bold print.
pub(super) fn otsu(gray: &GrayImage) -> Ink {
    let threshold = otsu_threshold(gray);
    Ink {
        width: gray.width() as usize,
        height: gray.height() as usize,
        data: gray.as_raw().iter().map(|&v| v <= threshold).collect(),
    }
}

/// The grey level that best separates the histogram into two classes (Otsu, 1979).
fn otsu_threshold(gray: &GrayImage) -> u8 {
    let mut histogram = [0u64; 256];
    for &v in gray.as_raw() {
        histogram[usize::from(v)] += 1;
    }
    let total: u64 = histogram.iter().sum();
    let sum_all: f64 = histogram.iter().enumerate().map(|(i, &c)| i as f64 * c as f64).sum();
    let (mut below, mut sum_below, mut best, mut threshold) = (0u64, 0f64, -1f64, 0u8);
    for (level, &count) in histogram.iter().enumerate() {
        below += count;
        if below == 0 {
            continue;
        }
        let above = total - below;
        if above == 0 {
            break;
        }
        sum_below += level as f64 * count as f64;
        let mean_below = sum_below / below as f64;
        let mean_above = (sum_all - sum_below) / above as f64;
        let between = below as f64 * above as f64 * (mean_below - mean_above).powi(2);
        if between > best {
            best = between;
            threshold = level as u8;
        }
    }
    threshold
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A light background lit unevenly (left dark, right bright) with dark bars on it.
    fn uneven_with_bars() -> GrayImage {
        GrayImage::from_fn(400, 100, |x, y| {
            let light = 120 + (x * 130 / 400) as u8;
            let bar = (40..60).contains(&y) && (x / 10) % 2 == 0;
            Luma([if bar { light / 3 } else { light }])
        })
    }

    #[test]
    fn adaptive_finds_bars_under_uneven_light() {
        let ink = adaptive(&uneven_with_bars());
        for x in [5usize, 25, 205, 385] {
            assert!(ink.get(x, 50), "bar at {x}");
            assert!(!ink.get(x, 10) && !ink.get(x, 90), "background at {x}");
        }
        assert!(!ink.get(15, 50) && !ink.get(395, 50), "gaps between bars");
    }

    #[test]
    fn otsu_separates_two_levels() {
        let gray = GrayImage::from_fn(100, 100, |x, _| Luma([if x < 30 { 40 } else { 210 }]));
        let threshold = otsu_threshold(&gray);
        assert!((40..210).contains(&threshold), "{threshold}");
        let ink = otsu(&gray);
        assert!(ink.get(10, 10) && !ink.get(50, 10));
    }

    #[test]
    fn shrinking_averages_blocks() {
        let rgb = image::RgbImage::from_fn(4, 2, |x, _| image::Rgb(if x < 2 { [255, 255, 255] } else { [0, 0, 0] }));
        let small = shrink(&DynamicImage::ImageRgb8(rgb), 2);
        assert_eq!(small.as_raw(), &vec![255, 0]);
        let gray = GrayImage::from_fn(5, 3, |x, y| Luma([(x * 10 + y) as u8]));
        let small = shrink(&DynamicImage::ImageLuma8(gray), 2);
        assert_eq!((small.width(), small.height()), (2, 1));
        assert_eq!(small.as_raw(), &vec![5, 25]);
    }

    #[test]
    fn enlarging_interpolates_between_pixel_centres() {
        let gray = GrayImage::from_raw(2, 1, vec![0, 200]).unwrap();
        let big = enlarge(&gray, 4);
        assert_eq!((big.width(), big.height()), (8, 4));
        let row: Vec<u8> = (0..8).map(|x| big.get_pixel(x, 2).0[0]).collect();
        assert_eq!(row, vec![0, 0, 25, 75, 125, 175, 200, 200]);
    }

    #[test]
    fn blank_and_black_images_have_no_adaptive_ink() {
        for level in [0u8, 255] {
            let ink = adaptive(&GrayImage::from_pixel(200, 120, Luma([level])));
            assert!(ink.data.iter().all(|&i| !i), "level {level}");
        }
    }

    #[test]
    fn working_size_is_bounded() {
        let tiny = DynamicImage::new_luma8(1, 1);
        assert!(matches!(prepare(&tiny), Err(ReadError::TooSmall { .. })));
        let small = prepare(&DynamicImage::new_rgb8(300, 200)).unwrap();
        assert_eq!((small.width(), small.height()), (1200, 800));
        let enough = prepare(&DynamicImage::new_rgb8(800, 500)).unwrap();
        assert_eq!((enough.width(), enough.height()), (800, 500));
        let large = prepare(&DynamicImage::new_rgba8(5000, 1000)).unwrap();
        // Other pixel types go through the library's filter, which rounds its own way.
        assert!(
            (1665..=1666).contains(&large.width()) && large.height() == 333,
            "{}×{}",
            large.width(),
            large.height()
        );
        let photo = prepare(&DynamicImage::new_rgb8(4000, 3000)).unwrap();
        assert_eq!((photo.width(), photo.height()), (2000, 1500));
        let huge = DynamicImage::new_luma8(8_000, 8_000);
        assert!(matches!(prepare(&huge), Err(ReadError::TooLarge { .. })));
    }
}
