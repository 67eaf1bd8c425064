//! Grey levels at a working size, and ink on them: glyphs are located on a binary image (an
//! adaptive threshold, so uneven light and tinted card backgrounds do not hide text, with a
//! global Otsu threshold as the second opinion) but matched on grey levels.

use image::{imageops, DynamicImage, GrayImage, Luma};

use super::ReadError;

/// Larger images are refused: decoding them is already the caller's cost, searching them
/// would be ours for no gain (an MRZ is legible far below this).
pub(super) const MAX_PIXELS: u64 = 60_000_000;
/// The long side is brought down to this before any search, which bounds all later work.
const MAX_SIDE: u32 = 2000;
/// Below this long side the image is enlarged first, so small glyphs keep strokes wider than
/// the threshold's smoothing.
const MIN_SIDE: u32 = 1000;
/// An MRZ of 30 characters cannot be legible in fewer pixels than this on the long side.
const SMALLEST_SIDE: u32 = 60;

/// A binary image: `true` where there is ink (darker than its surroundings).
#[derive(Debug, Clone)]
pub(super) struct Ink {
    pub width: usize,
    pub height: usize,
    pub data: Vec<bool>,
}

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
        // The thumbnail filter averages areas: cheap, and no aliasing on fine print.
        let small = image.thumbnail(MAX_SIDE, MAX_SIDE);
        return Ok(to_luma_on_white(&small));
    }
    let gray = to_luma_on_white(image);
    if long < MIN_SIDE {
        let factor = MIN_SIDE.div_ceil(long).min(4);
        return Ok(imageops::resize(&gray, width * factor, height * factor, imageops::FilterType::Triangle));
    }
    Ok(gray)
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
        let large = prepare(&DynamicImage::new_rgba8(5000, 1000)).unwrap();
        assert_eq!(large.width(), MAX_SIDE);
        let huge = DynamicImage::new_luma8(8_000, 8_000);
        assert!(matches!(prepare(&huge), Err(ReadError::TooLarge { .. })));
    }
}
