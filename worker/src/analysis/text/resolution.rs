//! The resolution a page is given to OCR at. Tesseract's time grows with the page's pixels, its
//! accuracy with the size of the letters only up to a point: a page whose letters are larger than
//! Tesseract needs is scaled down until they are that size, and one with small letters is left as
//! it is, never enlarged. The letters are measured, not guessed from the image's size, since a
//! phone photo may hold a page filling the frame or a small one in its middle.

use image::GrayImage;

use crate::analysis::mrz::read::binarise::Ink;
use crate::analysis::mrz::read::components::{self, Blob};

/// Median height, in pixels, of a page's glyphs (ink blobs of a letter's shape, capitals and small
/// letters alike) that OCR is given the page at. The photographed attestation's glyphs measure 16
/// (Tesseract finds its small letters 13 high, its body lines 23 from descender to ascender); it is
/// read without a slip at 0.7 of that size (glyphs of 11), but not at 0.5 (8: a 7 read as 1 in a
/// postcode, words lost). 12 is half as large again as where the slips start.
pub const GLYPH_HEIGHT: f32 = 12.0;
/// Scales closer to 1 than this are not worth resampling the page for.
const LEAST_REDUCTION: f32 = 0.9;
/// With fewer glyph-shaped blobs than this, there is too little text to measure: no scaling.
const MIN_GLYPHS: usize = 40;
/// The letters are measured on a copy this many times smaller on each side, which bounds the cost
/// (a few milliseconds for a 3-megapixel photo) while glyphs of the sizes that matter keep
/// several pixels.
const MEASURE_FACTOR: u32 = 2;
/// Images whose shorter side is under this are measured at full size.
const MEASURE_MIN_SIDE: u32 = 600;

/// The factor (at most 1) the page `grey` is best scaled by before OCR.
pub fn ocr_scale(grey: &GrayImage) -> f32 {
    match median_glyph_height(grey) {
        Some(height) if height > 0.0 => {
            let scale = (GLYPH_HEIGHT / height).min(1.0);
            if scale < LEAST_REDUCTION {
                scale
            } else {
                1.0
            }
        }
        _ => 1.0,
    }
}

/// `grey` scaled for OCR (see [`ocr_scale`]), or returned as it is when its letters are small enough.
pub fn scaled_for_ocr(grey: GrayImage) -> GrayImage {
    let scale = ocr_scale(&grey);
    if scale >= 1.0 {
        return grey;
    }
    let width = ((grey.width() as f32 * scale).round() as u32).max(1);
    let height = ((grey.height() as f32 * scale).round() as u32).max(1);
    area_average(&grey, width, height)
}

/// `grey` brought down to `width` x `height` (each at most its own), each pixel the mean of the
/// source area it covers, in two passes with integer weights: as sharp as a triangle filter at these
/// ratios, and a tenth of `image`'s cost for one (the attestation at 0.75: 6 ms against 65).
fn area_average(grey: &GrayImage, width: u32, height: u32) -> GrayImage {
    let w = grey.width() as usize;
    let (columns, rows) = (taps(grey.width(), width), taps(grey.height(), height));
    let across = columns.len();
    // Each row narrowed first, in 256ths of a grey level.
    let mut narrow: Vec<u32> = Vec::with_capacity(across * grey.height() as usize);
    for row in grey.as_raw().chunks_exact(w) {
        narrow.extend(columns.iter().map(|tap| tap.apply(|k| u32::from(row[k]))));
    }
    let mut out = Vec::with_capacity(across * rows.len());
    for tap in &rows {
        out.extend((0..across).map(|x| {
            let sum = tap.apply(|k| narrow[k * across + x]);
            // Back from 256ths of 256ths, rounded.
            ((sum + (1 << 15)) >> 16).min(255) as u8
        }));
    }
    GrayImage::from_raw(across as u32, rows.len() as u32, out).unwrap_or_else(|| grey.clone())
}

/// The source cells one output cell covers: from `start`, each with its share of the output cell
/// in 256ths (the shares add up to 256).
struct Tap {
    start: usize,
    weights: Vec<u32>,
}

impl Tap {
    fn apply(&self, value: impl Fn(usize) -> u32) -> u32 {
        self.weights
            .iter()
            .enumerate()
            .map(|(k, &weight)| weight * value(self.start + k))
            .sum()
    }
}

/// The taps that bring `from` cells down to `to` (at most `from`, at least 1).
fn taps(from: u32, to: u32) -> Vec<Tap> {
    let to = to.clamp(1, from.max(1));
    let cell = f64::from(from) / f64::from(to);
    (0..to)
        .map(|i| {
            let (a, b) = (f64::from(i) * cell, (f64::from(i) + 1.0) * cell);
            let start = a.floor() as usize;
            let end = (b.ceil() as usize).min(from as usize).max(start + 1);
            let mut weights: Vec<u32> = (start..end)
                .map(|k| {
                    let overlap = b.min(k as f64 + 1.0) - a.max(k as f64);
                    (overlap.max(0.0) / cell * 256.0).round() as u32
                })
                .collect();
            // Rounding may leave the shares a unit off 256: the largest takes the difference.
            let total: u32 = weights.iter().sum();
            if let Some(largest) = weights.iter_mut().max() {
                *largest = (*largest + 256).saturating_sub(total);
            }
            Tap { start, weights }
        })
        .collect()
}

/// The median height of the glyph-shaped ink blobs of `grey`, in its pixels; `None` when there are
/// too few to say.
pub fn median_glyph_height(grey: &GrayImage) -> Option<f32> {
    let factor = if grey.width().min(grey.height()) >= MEASURE_MIN_SIDE {
        MEASURE_FACTOR
    } else {
        1
    };
    let small = shrink(grey, factor);
    let ink = ink(&small);
    let longest = small.width().max(small.height());
    let mut heights: Vec<u32> = components::blobs(&ink)
        .iter()
        .filter(|blob| glyph_shaped(blob, longest))
        .map(|blob| blob.y1 - blob.y0)
        .collect();
    if heights.len() < MIN_GLYPHS {
        return None;
    }
    let middle = heights.len() / 2;
    let (_, median, _) = heights.select_nth_unstable(middle);
    Some((*median * factor) as f32)
}

/// Whether a blob may be a letter or a figure: a few pixels high at least (not a speck or a
/// dot), far smaller than the page (not a frame, a logo or the page's edge), not much wider than
/// high (not a rule or a word run together), and not a thin outline.
fn glyph_shaped(blob: &Blob, longest: u32) -> bool {
    let (width, height) = (blob.x1 - blob.x0, blob.y1 - blob.y0);
    height >= 3 && height <= longest / 25 && width <= 2 * height && blob.area * 8 >= width * height
}

/// Ink where a pixel is clearly darker than the mean of a window a few letters wide around it, so
/// shadows and uneven light move both alike. Unlike the MRZ reader's threshold, the pixel is taken
/// alone, not smoothed with its neighbours, which would widen thin letters by a pixel on each side.
fn ink(grey: &GrayImage) -> Ink {
    let (w, h) = (grey.width() as usize, grey.height() as usize);
    let radius = (w.max(h) / 60).clamp(7, 50);
    let sums = integral(grey);
    let stride = w + 1;
    let raw = grey.as_raw();
    let mut data = vec![false; w * h];
    for y in 0..h {
        let (y0, y1) = (y.saturating_sub(radius), (y + radius + 1).min(h));
        for x in 0..w {
            let (x0, x1) = (x.saturating_sub(radius), (x + radius + 1).min(w));
            let total = sums[y1 * stride + x1] + sums[y0 * stride + x0] - sums[y0 * stride + x1] - sums[y1 * stride + x0];
            let area = ((x1 - x0) * (y1 - y0)) as u64;
            // Darker than the window's mean by 12 % of it, and at least 12 levels: paper texture and
            // JPEG noise stay below this margin, printed ink does not. In whole numbers, times the
            // window's area, as this runs for every pixel.
            let margin = (total * 3 / 25).max(12 * area);
            data[y * w + x] = u64::from(raw[y * w + x]) * area + margin < total;
        }
    }
    Ink { width: w, height: h, data }
}

/// Sums of `grey` over every rectangle from the origin, one row and column wider than the image.
fn integral(grey: &GrayImage) -> Vec<u64> {
    let (w, h) = (grey.width() as usize, grey.height() as usize);
    let stride = w + 1;
    let mut sums = vec![0u64; stride * (h + 1)];
    let raw = grey.as_raw();
    for y in 0..h {
        let mut row = 0u64;
        for x in 0..w {
            row += u64::from(raw[y * w + x]);
            sums[(y + 1) * stride + x + 1] = sums[y * stride + x + 1] + row;
        }
    }
    sums
}

/// `grey` with each `factor` x `factor` square averaged into one pixel.
fn shrink(grey: &GrayImage, factor: u32) -> GrayImage {
    if factor <= 1 {
        return grey.clone();
    }
    let (w, f) = (grey.width() as usize, factor as usize);
    let (width, height) = (grey.width() / factor, grey.height() / factor);
    let raw = grey.as_raw();
    let mut sums = vec![0u32; width as usize];
    let mut out = Vec::with_capacity(width as usize * height as usize);
    for band in raw.chunks_exact(w * f).take(height as usize) {
        sums.iter_mut().for_each(|s| *s = 0);
        for row in band.chunks_exact(w) {
            for (sum, cell) in sums.iter_mut().zip(row.chunks_exact(f)) {
                *sum += cell.iter().map(|&v| u32::from(v)).sum::<u32>();
            }
        }
        let area = factor * factor;
        out.extend(sums.iter().map(|&s| (s / area) as u8));
    }
    GrayImage::from_raw(width, height, out).unwrap_or_else(|| grey.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{imageops, Luma};

    fn sample_photo() -> GrayImage {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../shared/data/samples/administratif/sample-domicile-v03-photo.jpg"
        );
        image::open(path).expect("the photographed attestation").to_luma8()
    }

    /// A white page with `count` dark letter-like bars `height` pixels high, on lines.
    fn page_of_bars(count: u32, height: u32) -> GrayImage {
        page_of_bars_on(count, height, 1600)
    }

    fn page_of_bars_on(count: u32, height: u32, side: u32) -> GrayImage {
        let width = height * 3 / 4;
        let mut page = GrayImage::from_pixel(side, side, Luma([235]));
        for i in 0..count {
            let (col, row) = (i % 20, i / 20);
            let (x0, y0) = (100 + col * (width * 2), 100 + row * (height * 2));
            for y in y0..y0 + height {
                for x in x0..x0 + width {
                    page.put_pixel(x, y, Luma([30]));
                }
            }
        }
        page
    }

    #[test]
    fn measures_the_height_of_the_letters() {
        for height in [12, 20, 30, 48] {
            let measured = median_glyph_height(&page_of_bars(200, height)).expect("measured");
            assert!((measured - height as f32).abs() <= 2.0, "{height}: {measured}");
        }
    }

    #[test]
    fn large_letters_are_brought_down_to_the_size_ocr_needs_and_small_ones_left() {
        let scale = ocr_scale(&page_of_bars(200, 30));
        assert!((scale - GLYPH_HEIGHT / 30.0).abs() < 0.1, "{scale}");
        let scaled = scaled_for_ocr(page_of_bars(200, 30));
        assert!(scaled.width() < 1000, "{}", scaled.width());
        assert_eq!(ocr_scale(&page_of_bars(200, 10)), 1.0);
        // Nearly the right size already: not worth resampling (a small image, measured at full size).
        assert_eq!(median_glyph_height(&page_of_bars_on(200, 13, 599)), Some(13.0));
        assert_eq!(ocr_scale(&page_of_bars_on(200, 13, 599)), 1.0);
        assert!(ocr_scale(&page_of_bars_on(200, 15, 599)) < 0.9);
    }

    #[test]
    fn scaling_averages_the_area_each_pixel_covers() {
        let stripes = GrayImage::from_fn(4, 3, |x, _| Luma([if x % 2 == 0 { 0 } else { 200 }]));
        let half = area_average(&stripes, 2, 3);
        assert!(half.pixels().all(|p| p.0[0] == 100), "{:?}", half.as_raw());
        // Three cells into two: the middle one is shared half and half.
        let ramp = GrayImage::from_raw(3, 1, vec![0, 90, 180]).expect("3 x 1");
        assert_eq!(area_average(&ramp, 2, 1).as_raw(), &vec![30, 150]);
        let flat = GrayImage::from_pixel(1555, 2072, Luma([211]));
        let scaled = area_average(&flat, 1166, 1554);
        assert_eq!(scaled.dimensions(), (1166, 1554));
        assert!(scaled.pixels().all(|p| p.0[0] == 211));
    }

    #[test]
    fn too_little_text_is_not_measured() {
        assert_eq!(median_glyph_height(&page_of_bars(10, 30)), None);
        assert_eq!(median_glyph_height(&GrayImage::from_pixel(800, 800, Luma([200]))), None);
        assert_eq!(ocr_scale(&page_of_bars(10, 30)), 1.0);
    }

    #[test]
    fn the_photographed_attestation_is_read_smaller() {
        let photo = sample_photo();
        let measured = median_glyph_height(&photo).expect("measured");
        eprintln!("median glyph height of the photo: {measured}");
        assert!((12.0..=18.0).contains(&measured), "{measured}");
        let scale = ocr_scale(&photo);
        assert!(scale < 0.9 && scale > 0.6, "{scale}");
        // The same page photographed from twice as far has letters half as high: left as it is.
        let far = imageops::resize(&photo, photo.width() / 2, photo.height() / 2, imageops::FilterType::Triangle);
        assert_eq!(ocr_scale(&far), 1.0);
    }
}
