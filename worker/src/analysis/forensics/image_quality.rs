//! Whether an image can carry the other checks at all: big enough, sharp enough, not burnt out.
//! A fraudster need not forge anything when a blurred or glare-covered photo hides the details
//! the checks read, so such images are reported rather than silently trusted.
//!
//! The measures are taken on downscaled grey copies so that their cost and their scale do not
//! depend on the camera: a 48-megapixel photo and a 1000-pixel crop are judged alike.

use domain::vocabulary::AnomalyCode;
use image::{imageops, DynamicImage, GrayImage};

/// The limits the measures are judged against (see [`THRESHOLDS`] for the values and why).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// Shorter side under which an image is too small, unless it is a card-shaped crop.
    pub min_short_side: u32,
    /// A card-shaped crop (aspect ratio within `card_aspect`) is big enough from this longer side.
    pub card_min_long_side: u32,
    pub card_aspect: (f64, f64),
    /// Longer side of the grey copy the sharpness is measured on.
    pub sharpness_side: u32,
    /// Side of the square tiles the sharpness is averaged over.
    pub sharpness_tile: u32,
    /// A tile whose grey standard deviation is above this shows something (text, edges, texture).
    pub content_deviation: f64,
    /// Fewer content tiles than this: nothing to judge sharpness on.
    pub min_content_tiles: usize,
    /// Mean variance of the Laplacian over the content tiles under which the image is blurred.
    pub blurry_below: f64,
    /// Longer side of the grey copy the exposure is measured on.
    pub exposure_side: u32,
    /// A grey level at or above this is clipped (saturated).
    pub saturated_level: u8,
    /// A clipped pixel at least this far (city-block pixels, at `exposure_side`) from any unclipped
    /// one lies in a solid burnt-out blob.
    pub burnt_radius: u32,
    /// Fraction of the image in burnt-out blobs from which it is over-exposed.
    pub overexposed_fraction: f64,
    /// Side of the tiles the paper level and the content are measured on (at `exposure_side`).
    pub paper_tile: u32,
    /// A paper level at or above this is a white page (scan, render): blank paper, not glare.
    pub white_paper_level: u8,
    /// A tile whose grey range reaches this shows something.
    pub content_range: u8,
    /// A white page with less content than this fraction of tiles is blank: burnt out.
    pub blank_content_fraction: f64,
    /// An image whose longer side is under this, or whose shorter side is under `unusable_short_side`,
    /// cannot carry a document at all (see [`unusable`]).
    pub unusable_long_side: u32,
    pub unusable_short_side: u32,
    /// An image whose grey levels (at `exposure_side`) span at most this shows nothing: it is uniform.
    pub uniform_range: u8,
}

/// Calibrated on the samples (the module tests print these measures with `--nocapture`):
/// - sharpness: the identity samples score 4 500 to 5 300 and the photographed proof of address
///   (rotated, blurred, JPEG q70) 3 400; a Gaussian blur of sigma 2 pixels at the measuring scale
///   brings the card samples to 39–52 (the edge) and sigma 3 to 8–13 (a sigma-4 render: 3), so
///   40 flags strong blur only, with a margin of two orders of magnitude on the samples;
/// - burnt-out blobs: the card samples' clipped white MRZ band leaves at most 2.8 % of the image in
///   solid blobs (the photo: 0 %), a glare spot over a card gives 10 %, hence 6 %; the rendered
///   sample PDFs (white paper at 255, 92–95 % clipped) fall under the white-paper rule;
/// - size: the identity samples are 1000 x 630 card crops, the photo 1555 x 2072;
/// - unusable: a third of the card crop's 900 pixels across (MRZ characters of about 9 pixels, a
///   2D-Doc module of about one) and a sixth of the 600 a page needs are the floor under which no
///   check can even start; a blank render or scan spans no grey level at all at `exposure_side`,
///   and rounding or compression a level or two, while a faint texture (a tinted card without a
///   zone, 40 levels at full size) keeps 4 once averaged: 2 levels call only the flat image uniform.
pub const THRESHOLDS: Thresholds = Thresholds {
    min_short_side: 600,
    card_min_long_side: 900,
    card_aspect: (1.38, 1.75),
    sharpness_side: 1000,
    sharpness_tile: 32,
    content_deviation: 12.0,
    min_content_tiles: 4,
    blurry_below: 40.0,
    exposure_side: 512,
    saturated_level: 250,
    burnt_radius: 8,
    overexposed_fraction: 0.06,
    paper_tile: 16,
    white_paper_level: 250,
    content_range: 40,
    blank_content_fraction: 0.02,
    unusable_long_side: 300,
    unusable_short_side: 100,
    uniform_range: 2,
};

/// Why an image cannot carry a document at all: no check could start on it, so the analysis stops
/// with `analyse_impossible` rather than reporting the image as merely of low quality.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Unusable {
    #[error("the image is {width} x {height} pixels, far below what a document needs ({long} pixels on its longer side, {short} on its shorter)")]
    TooSmall { width: u32, height: u32, long: u32, short: u32 },
    #[error("the image is uniform (its grey levels span {range} of 255): it shows nothing")]
    Uniform { range: u8 },
}

/// Whether `image` is too small or too uniform to carry a document (see [`Unusable`]).
pub fn unusable(image: &DynamicImage, t: &Thresholds) -> Option<Unusable> {
    let (width, height) = (image.width(), image.height());
    if width.max(height) < t.unusable_long_side || width.min(height) < t.unusable_short_side {
        return Some(Unusable::TooSmall {
            width,
            height,
            long: t.unusable_long_side,
            short: t.unusable_short_side,
        });
    }
    let grey = grey_within(image, t.exposure_side);
    let (low, high) = grey
        .as_raw()
        .iter()
        .fold((u8::MAX, u8::MIN), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
    let range = high.saturating_sub(low);
    (range <= t.uniform_range).then_some(Unusable::Uniform { range })
}

/// What was measured on one image; kept public so operators and tests can see why an image was
/// (or was not) flagged.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageMeasures {
    pub width: u32,
    pub height: u32,
    /// Mean variance of the Laplacian over the tiles that show something; `None` when too few do.
    pub sharpness: Option<f64>,
    pub content_tiles: usize,
    /// Fraction of clipped pixels.
    pub saturated_fraction: f64,
    /// Fraction of the image in solid clipped blobs.
    pub burnt_fraction: f64,
    /// The level of the image's background (first quartile of the tiles' bright level); `None`
    /// for an image too small to tile.
    pub paper_level: Option<u8>,
    /// Fraction of exposure tiles that show something.
    pub content_fraction: f64,
}

impl ImageMeasures {
    /// The catalogue codes these measures call for.
    pub fn findings(&self, t: &Thresholds) -> Vec<AnomalyCode> {
        let mut codes = Vec::new();
        if self.too_small(t) {
            codes.push(AnomalyCode::LowResolution);
        }
        if self.sharpness.is_some_and(|s| s < t.blurry_below) {
            codes.push(AnomalyCode::BlurryImage);
        }
        if self.overexposed(t) {
            codes.push(AnomalyCode::OverexposedImage);
        }
        codes
    }

    fn too_small(&self, t: &Thresholds) -> bool {
        let short = self.width.min(self.height);
        let long = self.width.max(self.height);
        if short >= t.min_short_side {
            return false;
        }
        // An identity card (ID-1, aspect 1.59) or passport page (1.42) cropped to its edges has no
        // margin to spare: 900 pixels across still give the MRZ characters 26 pixels.
        let aspect = f64::from(long) / f64::from(short.max(1));
        let card_like = aspect >= t.card_aspect.0 && aspect <= t.card_aspect.1;
        !(card_like && long >= t.card_min_long_side)
    }

    fn overexposed(&self, t: &Thresholds) -> bool {
        match self.paper_level {
            // Scans and renders have clipped white paper: blank paper and glare look alike there,
            // so only a page showing (almost) nothing at all is called burnt out.
            Some(level) if level >= t.white_paper_level => self.content_fraction < t.blank_content_fraction,
            _ => self.burnt_fraction >= t.overexposed_fraction,
        }
    }
}

/// Measures `image` for the checks above.
pub fn measure(image: &DynamicImage) -> ImageMeasures {
    let t = &THRESHOLDS;
    let (width, height) = (image.width(), image.height());
    let sharp_grey = grey_within(image, t.sharpness_side);
    let (sharpness, content_tiles) = sharpness(&sharp_grey, t);
    let exposure_grey = shrink(&sharp_grey, t.exposure_side);
    let exposure = exposure(&exposure_grey, t);
    ImageMeasures {
        width,
        height,
        sharpness,
        content_tiles,
        saturated_fraction: exposure.saturated_fraction,
        burnt_fraction: exposure.burnt_fraction,
        paper_level: exposure.paper_level,
        content_fraction: exposure.content_fraction,
    }
}

/// A grey copy whose longer side is at most `side`; never enlarged.
fn grey_within(image: &DynamicImage, side: u32) -> GrayImage {
    if image.width().max(image.height()) <= side {
        image.to_luma8()
    } else {
        // `thumbnail` averages areas: fast on big photos, and no aliasing of fine text into noise. Greyed
        // first, it averages one plane instead of three: within a level of greying the colour copy, in
        // 16 ms instead of 27 for the photographed attestation at 1000 pixels.
        DynamicImage::ImageLuma8(crate::analysis::grey::levels(image))
            .thumbnail(side, side)
            .into_luma8()
    }
}

fn shrink(grey: &GrayImage, side: u32) -> GrayImage {
    let (w, h) = grey.dimensions();
    if w.max(h) <= side {
        return grey.clone();
    }
    let scale = f64::from(side) / f64::from(w.max(h));
    let nw = ((f64::from(w) * scale).round() as u32).clamp(1, side);
    let nh = ((f64::from(h) * scale).round() as u32).clamp(1, side);
    imageops::thumbnail(grey, nw, nh)
}

#[derive(Clone, Copy, Default)]
struct TileSums {
    count: i64,
    grey: i64,
    grey_sq: i64,
    lap: i64,
    lap_sq: i64,
}

impl TileSums {
    fn variance(count: i64, sum: i64, sum_sq: i64) -> f64 {
        if count == 0 {
            return 0.0;
        }
        let n = count as f64;
        let mean = sum as f64 / n;
        (sum_sq as f64 / n - mean * mean).max(0.0)
    }
}

/// Mean variance of the 4-neighbour Laplacian over the tiles that show something. Averaging over
/// content tiles only keeps a sparse page (mostly blank paper) from reading as blurred.
fn sharpness(grey: &GrayImage, t: &Thresholds) -> (Option<f64>, usize) {
    let (w, h) = grey.dimensions();
    let tile = t.sharpness_tile;
    let (tiles_x, tiles_y) = (w / tile, h / tile);
    if w < 3 || h < 3 || tiles_x == 0 || tiles_y == 0 {
        return (None, 0);
    }
    let raw = grey.as_raw();
    let stride = w as usize;
    let mut tiles = vec![TileSums::default(); (tiles_x * tiles_y) as usize];
    for y in 1..h - 1 {
        let ty = y / tile;
        if ty >= tiles_y {
            break;
        }
        let row = y as usize * stride;
        for x in 1..w - 1 {
            let tx = x / tile;
            if tx >= tiles_x {
                break;
            }
            let i = row + x as usize;
            let centre = i64::from(raw[i]);
            let lap = i64::from(raw[i - 1]) + i64::from(raw[i + 1]) + i64::from(raw[i - stride]) + i64::from(raw[i + stride]) - 4 * centre;
            let sums = &mut tiles[(ty * tiles_x + tx) as usize];
            sums.count += 1;
            sums.grey += centre;
            sums.grey_sq += centre * centre;
            sums.lap += lap;
            sums.lap_sq += lap * lap;
        }
    }
    let content: Vec<f64> = tiles
        .iter()
        .filter(|s| TileSums::variance(s.count, s.grey, s.grey_sq).sqrt() > t.content_deviation)
        .map(|s| TileSums::variance(s.count, s.lap, s.lap_sq))
        .collect();
    if content.len() < t.min_content_tiles {
        return (None, content.len());
    }
    (Some(content.iter().sum::<f64>() / content.len() as f64), content.len())
}

struct Exposure {
    saturated_fraction: f64,
    burnt_fraction: f64,
    paper_level: Option<u8>,
    content_fraction: f64,
}

fn exposure(grey: &GrayImage, t: &Thresholds) -> Exposure {
    let (w, h) = grey.dimensions();
    let n = (w as usize) * (h as usize);
    if n == 0 {
        return Exposure {
            saturated_fraction: 0.0,
            burnt_fraction: 0.0,
            paper_level: None,
            content_fraction: 0.0,
        };
    }
    let raw = grey.as_raw();
    let saturated = raw.iter().filter(|&&v| v >= t.saturated_level).count();
    // Radius scaled down with images smaller than the measuring size, so "solid" keeps meaning
    // the same share of the image.
    let long = w.max(h);
    let radius = if long >= t.exposure_side {
        t.burnt_radius
    } else {
        ((f64::from(t.burnt_radius) * f64::from(long) / f64::from(t.exposure_side)).round() as u32).max(2)
    };
    let distances = distance_to_unclipped(raw, w as usize, h as usize, t.saturated_level);
    let burnt = distances.iter().filter(|&&d| d >= radius).count();
    let (paper_level, content_fraction) = paper_and_content(grey, t);
    Exposure {
        saturated_fraction: saturated as f64 / n as f64,
        burnt_fraction: burnt as f64 / n as f64,
        paper_level,
        content_fraction,
    }
}

/// City-block distance from each clipped pixel to the nearest unclipped one (outside the image
/// counts as unclipped, so a blob cut by the frame is not called solid up to the edge); 0 for
/// unclipped pixels. Two passes, linear time.
fn distance_to_unclipped(raw: &[u8], w: usize, h: usize, level: u8) -> Vec<u32> {
    let mut d: Vec<u32> = raw.iter().map(|&v| if v >= level { u32::MAX / 2 } else { 0 }).collect();
    for y in 0..h {
        for x in 0..w {
            let i = y * w + x;
            if d[i] == 0 {
                continue;
            }
            let left = if x > 0 { d[i - 1] } else { 0 };
            let up = if y > 0 { d[i - w] } else { 0 };
            d[i] = d[i].min(left.min(up) + 1);
        }
    }
    for y in (0..h).rev() {
        for x in (0..w).rev() {
            let i = y * w + x;
            if d[i] == 0 {
                continue;
            }
            let right = if x + 1 < w { d[i + 1] } else { 0 };
            let down = if y + 1 < h { d[i + w] } else { 0 };
            d[i] = d[i].min(right.min(down) + 1);
        }
    }
    d
}

/// The background level (first quartile of each tile's 90th-percentile grey, i.e. the paper where
/// it is darkest) and the fraction of tiles showing something.
fn paper_and_content(grey: &GrayImage, t: &Thresholds) -> (Option<u8>, f64) {
    let (w, h) = grey.dimensions();
    let tile = t.paper_tile;
    let (tiles_x, tiles_y) = (w / tile, h / tile);
    if tiles_x == 0 || tiles_y == 0 {
        return (None, 0.0);
    }
    let mut backgrounds = Vec::with_capacity((tiles_x * tiles_y) as usize);
    let mut content = 0usize;
    let mut values = Vec::with_capacity((tile * tile) as usize);
    for ty in 0..tiles_y {
        for tx in 0..tiles_x {
            values.clear();
            for y in ty * tile..(ty + 1) * tile {
                for x in tx * tile..(tx + 1) * tile {
                    values.push(grey.get_pixel(x, y).0[0]);
                }
            }
            values.sort_unstable();
            let (Some(&low), Some(&high)) = (values.first(), values.last()) else {
                continue;
            };
            backgrounds.push(values[values.len() * 9 / 10]);
            if high - low >= t.content_range {
                content += 1;
            }
        }
    }
    if backgrounds.is_empty() {
        return (None, 0.0);
    }
    let tiles = backgrounds.len();
    backgrounds.sort_unstable();
    (Some(backgrounds[tiles / 4]), content as f64 / tiles as f64)
}
