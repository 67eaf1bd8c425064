//! Documents photographed at an angle: a card or a page lying on a table, taken by a hand-held phone
//! turned or tilted, shows as a quadrilateral whose edges converge. The readers (the MRZ's, the
//! DataMatrix search, OCR) were written for flat scans; this module finds the document's outline in
//! the photo and warps it into an upright flat image they read as one. A document that fills the
//! frame, as a scan does, is left alone after a look at a thumbnail.
//!
//! The outline is found on a grey thumbnail (its longer side [`FIND_SIDE`] pixels, so the cost does
//! not grow with the camera's resolution): the document is the largest bright region after Otsu's
//! threshold, clear of the frame's border; its four sides are lines fitted to the region's boundary
//! away from the corners (a card's rounded corners then meet at the corners of its rectangle). The
//! rectangle's proportions come from the perspective itself (Zhang and He, "Whiteboard scanning
//! and image enhancement", 2007), snapped to the formats documents come in; the warp then maps every
//! pixel of that rectangle back into the full-resolution photo, bilinearly.

use image::{DynamicImage, GrayImage, ImageBuffer, Pixel};

use super::grey;

/// Longer side of the thumbnail the outline is searched on: a card filling a third of it still has
/// sides of a hundred pixels, and the whole search costs about a millisecond.
const FIND_SIDE: u32 = 480;
/// A thumbnail narrower than this (an image of a few pixels, or a thin strip) holds no document.
const MIN_THUMBNAIL_SIDE: u32 = 16;
/// A frame whose outermost pixels are bright over more than this fraction is filled by its document.
const FILLED_FRAME: f64 = 0.5;
/// A region smaller than this fraction of the frame is not taken for the document.
const MIN_AREA_FRACTION: f64 = 0.08;
/// A region touching the frame's border over more than this fraction of its perimeter is a document
/// that fills the frame (a scan) or runs out of it: there are no four corners to straighten.
const MAX_BORDER_CONTACT: f64 = 0.01;
/// The region must fill its four sides this well (the rest is a corner's rounding or a shadow),
/// else it is not a quadrilateral.
const MIN_QUAD_FILL: f64 = 0.9;
/// Interior angles of the outline, in degrees: converging edges at 30° of tilt stay well within.
const ANGLES: (f64, f64) = (35.0, 145.0);
/// Corners closer than this to their upright rectangle (a fraction of the longer side) need no warp.
const UPRIGHT_TOLERANCE: f64 = 0.01;
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
const PROPORTIONS: (f64, f64) = (1.15, 1.85);

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

/// The document in `image` straightened into an upright flat image, or `None` when there is nothing
/// to straighten: the document fills the frame, no outline stands out, or it is already upright.
pub fn straighten(image: &DynamicImage) -> Option<DynamicImage> {
    let quad = find_document(image)?;
    let aspect = proportions(&quad, image.width(), image.height());
    if !(PROPORTIONS.0..=PROPORTIONS.1).contains(&aspect.max(1.0 / aspect)) {
        return None;
    }
    let (width, height) = output_size(&quad, aspect, image.width(), image.height())?;
    let homography = Homography::rectangle_to_quad(width, height, &quad)?;
    let mut flat = warp(image, &homography, width, height);
    levelled(&mut flat);
    Some(flat)
}

/// The document's outline in the photo, in its full-resolution pixels, when one stands out clear of
/// the frame's border and is not already an upright rectangle.
pub fn find_document(image: &DynamicImage) -> Option<Quad> {
    let (width, height) = (image.width(), image.height());
    let (small, block) = thumbnail_grey(image)?;
    let (sw, sh) = small.dimensions();
    let threshold = otsu(small.as_raw())?;
    // A frame whose edges are mostly bright is filled by the document (a scan, a close-up): the
    // common case, settled here at the cost of the thumbnail.
    if bright_border_fraction(&small, threshold) > FILLED_FRAME {
        return None;
    }
    let levels = blurred(&small);
    let bright: Vec<bool> = levels.iter().map(|&level| level > threshold).collect();
    let mask = opened(&bright, sw as usize, sh as usize);
    let region = largest_region(&mask, sw, sh)?;
    let quad = outline(&region, sw, sh)?;
    // Back to the photo's pixels: a thumbnail pixel is a block of the photo's.
    let quad = quad.map(|p| Point::new(p.x * f64::from(block), p.y * f64::from(block)));
    (!already_upright(&quad, width, height)).then_some(quad)
}

/// The image in grey levels, each pixel the mean of a square block of the photo's (which also
/// smooths a table's texture), the block the smallest that brings the longer side to
/// [`FIND_SIDE`] or under; with the block's side. One pass over the photo, in integers. `None`
/// for an image too small or too narrow to hold a document.
fn thumbnail_grey(image: &DynamicImage) -> Option<(GrayImage, u32)> {
    let (width, height) = (image.width(), image.height());
    let block = width.max(height).div_ceil(FIND_SIDE).max(1);
    let (sw, sh) = (width / block, height / block);
    if sw < MIN_THUMBNAIL_SIDE || sh < MIN_THUMBNAIL_SIDE {
        return None;
    }
    let converted;
    let (raw, channels): (&[u8], usize) = match image {
        DynamicImage::ImageLuma8(grey) => (grey.as_raw(), 1),
        DynamicImage::ImageRgb8(rgb) => (rgb.as_raw(), 3),
        DynamicImage::ImageRgba8(rgba) => (rgba.as_raw(), 4),
        other => {
            converted = other.to_luma8();
            (converted.as_raw(), 1)
        }
    };
    let (sw, sh, block_px) = (sw as usize, sh as usize, block as usize);
    let stride = width as usize * channels;
    let mut sums = vec![0u32; sw * sh];
    for (y, row) in raw.chunks_exact(stride).take(sh * block_px).enumerate() {
        let cells = &mut sums[(y / block_px) * sw..][..sw];
        for (cell, pixels) in cells.iter_mut().zip(row.chunks_exact(channels * block_px)) {
            *cell += pixels.chunks_exact(channels).map(luma).sum::<u32>();
        }
    }
    let area = (block * block).max(1);
    let levels = sums.iter().map(|sum| (sum / area) as u8).collect();
    GrayImage::from_raw(sw as u32, sh as u32, levels).map(|grey| (grey, block))
}

/// The grey level of one pixel: sRGB's luma weights, as [`grey::levels`] applies them.
fn luma(pixel: &[u8]) -> u32 {
    match pixel {
        [r, g, b, ..] => (2126 * u32::from(*r) + 7152 * u32::from(*g) + 722 * u32::from(*b)) / 10_000,
        [level, ..] => u32::from(*level),
        [] => 0,
    }
}

/// The fraction of the thumbnail's outermost pixels above `threshold`.
fn bright_border_fraction(small: &GrayImage, threshold: u8) -> f64 {
    let (w, h) = small.dimensions();
    let ring = (0..w)
        .flat_map(|x| [(x, 0), (x, h - 1)])
        .chain((1..h - 1).flat_map(|y| [(0, y), (w - 1, y)]));
    let (mut bright, mut all) = (0usize, 0usize);
    for (x, y) in ring {
        all += 1;
        if small.get_pixel(x, y)[0] > threshold {
            bright += 1;
        }
    }
    bright as f64 / all.max(1) as f64
}

/// Two passes of a 3 × 3 box blur: the texture left in the thumbnail (wood grain, stone speckles,
/// JPEG blocks) averaged away, the document's edges kept within a pixel.
fn blurred(image: &GrayImage) -> Vec<u8> {
    let (w, h) = (image.width() as usize, image.height() as usize);
    let mut levels = image.as_raw().clone();
    for _ in 0..2 {
        levels = box3(&levels, w, h);
    }
    levels
}

/// A 3 × 3 mean, rows then columns, edges repeated.
fn box3(levels: &[u8], w: usize, h: usize) -> Vec<u8> {
    let mut across = vec![0u16; levels.len()];
    for (row, out) in levels.chunks_exact(w).zip(across.chunks_exact_mut(w)) {
        for (x, cell) in out.iter_mut().enumerate() {
            let at = |i: usize| u16::from(row[i]);
            *cell = at(x.saturating_sub(1)) + at(x) + at((x + 1).min(w - 1));
        }
    }
    let mut out = vec![0u8; levels.len()];
    for y in 0..h {
        let (up, down) = (y.saturating_sub(1) * w, (y + 1).min(h - 1) * w);
        for x in 0..w {
            let sum = across[up + x] + across[y * w + x] + across[down + x];
            out[y * w + x] = (sum / 9) as u8;
        }
    }
    out
}

/// Otsu's threshold: the level that best splits the histogram in two classes (document and table);
/// `None` for an image of one level.
fn otsu(levels: &[u8]) -> Option<u8> {
    let mut histogram = [0u64; 256];
    for &level in levels {
        histogram[usize::from(level)] += 1;
    }
    let total = levels.len() as f64;
    let sum: f64 = histogram.iter().enumerate().map(|(level, &n)| level as f64 * n as f64).sum();
    let (mut below, mut below_sum) = (0.0, 0.0);
    let mut best: Option<(f64, u8)> = None;
    for (level, &n) in histogram.iter().enumerate().take(255) {
        below += n as f64;
        below_sum += level as f64 * n as f64;
        let above = total - below;
        if below == 0.0 || above == 0.0 {
            continue;
        }
        let spread = below * above * (below_sum / below - (sum - below_sum) / above).powi(2);
        if best.is_none_or(|(b, _)| spread > b) {
            best = Some((spread, level as u8));
        }
    }
    best.map(|(_, level)| level)
}

/// The mask eroded then dilated by a pixel: bright specks of the table and threads joining the
/// document to a bright patch of it are cut off.
fn opened(mask: &[bool], w: usize, h: usize) -> Vec<bool> {
    let eroded = morph(mask, w, h, true);
    morph(&eroded, w, h, false)
}

/// A 3 × 3 erosion (`all`) or dilation of the mask, rows then columns.
fn morph(mask: &[bool], w: usize, h: usize, all: bool) -> Vec<bool> {
    let combine = |a: bool, b: bool, c: bool| if all { a && b && c } else { a || b || c };
    let mut across = vec![false; mask.len()];
    for (row, out) in mask.chunks_exact(w).zip(across.chunks_exact_mut(w)) {
        for (x, cell) in out.iter_mut().enumerate() {
            *cell = combine(row[x.saturating_sub(1)], row[x], row[(x + 1).min(w - 1)]);
        }
    }
    let mut out = vec![false; mask.len()];
    for y in 0..h {
        let (up, down) = (y.saturating_sub(1) * w, (y + 1).min(h - 1) * w);
        for x in 0..w {
            out[y * w + x] = combine(across[up + x], across[y * w + x], across[down + x]);
        }
    }
    out
}

/// One connected region of the mask: its pixels' count and, per row, its leftmost and rightmost
/// pixel, per column its topmost and bottommost: its outer boundary.
struct Region {
    area: usize,
    rows: Vec<Option<(u32, u32)>>,
    columns: Vec<Option<(u32, u32)>>,
    /// Pixels on the frame's outermost rows and columns.
    border_contact: usize,
}

/// The largest 4-connected region of the mask, if it is large enough to be a document.
fn largest_region(mask: &[bool], w: u32, h: u32) -> Option<Region> {
    let (wu, hu) = (w as usize, h as usize);
    let mut label = vec![0u32; mask.len()];
    let mut best: Option<(usize, u32)> = None;
    let mut next = 0u32;
    let mut stack = Vec::new();
    for start in 0..mask.len() {
        if !mask[start] || label[start] != 0 {
            continue;
        }
        next += 1;
        label[start] = next;
        stack.push(start);
        let mut area = 0usize;
        while let Some(i) = stack.pop() {
            area += 1;
            let (x, y) = (i % wu, i / wu);
            let neighbours = [
                (x > 0).then(|| i - 1),
                (x + 1 < wu).then(|| i + 1),
                (y > 0).then(|| i - wu),
                (y + 1 < hu).then(|| i + wu),
            ];
            for j in neighbours.into_iter().flatten() {
                if mask[j] && label[j] == 0 {
                    label[j] = next;
                    stack.push(j);
                }
            }
        }
        if best.is_none_or(|(a, _)| area > a) {
            best = Some((area, next));
        }
    }
    let (area, id) = best?;
    if (area as f64) < MIN_AREA_FRACTION * mask.len() as f64 {
        return None;
    }
    let mut region = Region {
        area,
        rows: vec![None; hu],
        columns: vec![None; wu],
        border_contact: 0,
    };
    for (i, _) in label.iter().enumerate().filter(|(_, l)| **l == id) {
        let (x, y) = ((i % wu) as u32, (i / wu) as u32);
        let widen = |span: &mut Option<(u32, u32)>, v: u32| {
            *span = Some(span.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))));
        };
        widen(&mut region.rows[y as usize], x);
        widen(&mut region.columns[x as usize], y);
        if x == 0 || y == 0 || x + 1 == w || y + 1 == h {
            region.border_contact += 1;
        }
    }
    Some(region)
}

/// The region's four sides, if it is a quadrilateral clear of the frame's border.
fn outline(region: &Region, w: u32, h: u32) -> Option<Quad> {
    let perimeter = 2.0 * f64::from(w + h);
    if region.border_contact as f64 > MAX_BORDER_CONTACT * perimeter {
        return None;
    }
    // The boundary as pixel edges: a row's leftmost pixel starts at x, its rightmost ends at x + 1.
    let mut boundary = Vec::new();
    for (y, span) in region.rows.iter().enumerate() {
        if let Some((lo, hi)) = span {
            boundary.push(Point::new(f64::from(*lo), y as f64 + 0.5));
            boundary.push(Point::new(f64::from(*hi) + 1.0, y as f64 + 0.5));
        }
    }
    for (x, span) in region.columns.iter().enumerate() {
        if let Some((lo, hi)) = span {
            boundary.push(Point::new(x as f64 + 0.5, f64::from(*lo)));
            boundary.push(Point::new(x as f64 + 0.5, f64::from(*hi) + 1.0));
        }
    }
    let hull = convex_hull(boundary.clone());
    let hull_area = polygon_area(&hull);
    let corners = largest_inscribed_quad(&hull)?;
    if polygon_area(&corners) < MIN_QUAD_FILL * hull_area || (region.area as f64) < 0.5 * hull_area {
        return None;
    }
    let quad = ordered(fit_sides(&corners, &boundary)?)?;
    let inside = |p: &Point| {
        (-0.05 * f64::from(w)..=1.05 * f64::from(w)).contains(&p.x) && (-0.05 * f64::from(h)..=1.05 * f64::from(h)).contains(&p.y)
    };
    (quad.iter().all(inside) && angles_plausible(&quad)).then_some(quad)
}

/// Andrew's monotone chain; the hull counter-clockwise on screen (y down), without repeated points.
fn convex_hull(mut points: Vec<Point>) -> Vec<Point> {
    points.sort_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
    points.dedup();
    if points.len() < 3 {
        return points;
    }
    let turn = |o: Point, a: Point, b: Point| a.minus(o).cross(b.minus(o));
    let mut hull: Vec<Point> = Vec::with_capacity(points.len() + 1);
    for pass in 0..2 {
        let start = hull.len();
        let ordered: Box<dyn Iterator<Item = &Point>> = if pass == 0 {
            Box::new(points.iter())
        } else {
            Box::new(points.iter().rev())
        };
        for &p in ordered {
            while hull.len() >= start + 2 && turn(hull[hull.len() - 2], hull[hull.len() - 1], p) <= 0.0 {
                hull.pop();
            }
            hull.push(p);
        }
        hull.pop();
    }
    hull
}

/// The polygon's area (absolute), by the shoelace formula.
fn polygon_area(points: &[Point]) -> f64 {
    signed_area(points).abs()
}

/// Positive when the polygon turns clockwise on screen (y down).
fn signed_area(points: &[Point]) -> f64 {
    let n = points.len();
    (0..n).map(|i| points[i].cross(points[(i + 1) % n])).sum::<f64>() / 2.0
}

/// Four hull vertices enclosing the largest area: the two furthest apart, the furthest on each side
/// of the line through them, then each moved along the hull while the area grows.
fn largest_inscribed_quad(hull: &[Point]) -> Option<Quad> {
    let n = hull.len();
    if n < 4 {
        return None;
    }
    let centre = hull
        .iter()
        .fold(Point::new(0.0, 0.0), |s, p| Point::new(s.x + p.x / n as f64, s.y + p.y / n as f64));
    let furthest = |from: Point| (0..n).max_by(|&i, &j| hull[i].minus(from).length().total_cmp(&hull[j].minus(from).length()));
    let a = furthest(centre)?;
    let c = furthest(hull[a])?;
    let side = |i: usize| hull[c].minus(hull[a]).cross(hull[i].minus(hull[a]));
    let between = |from: usize, to: usize| {
        let count = (to + n - from) % n;
        (1..count).map(move |k| (from + k) % n)
    };
    let b = between(a, c).max_by(|&i, &j| side(i).abs().total_cmp(&side(j).abs()))?;
    let d = between(c, a).max_by(|&i, &j| side(i).abs().total_cmp(&side(j).abs()))?;
    let mut corners = [a, b, c, d];
    let area = |k: &[usize; 4]| polygon_area(&k.map(|i| hull[i]));
    // Each corner in turn slides between its neighbours to where the area is largest; a few rounds
    // settle it (each round can only grow the area).
    for _ in 0..8 {
        let before = corners;
        for slot in 0..4 {
            let (prev, next) = (corners[(slot + 3) % 4], corners[(slot + 1) % 4]);
            let best = between(prev, next).max_by(|&i, &j| {
                let mut with_i = corners;
                with_i[slot] = i;
                let mut with_j = corners;
                with_j[slot] = j;
                area(&with_i).total_cmp(&area(&with_j))
            });
            if let Some(best) = best {
                corners[slot] = best;
            }
        }
        if corners == before {
            break;
        }
    }
    Some(corners.map(|i| hull[i]))
}

/// A straight line through `point` along the unit vector `direction`.
#[derive(Debug, Clone, Copy)]
struct Line {
    point: Point,
    direction: Point,
}

impl Line {
    fn distance(&self, p: Point) -> f64 {
        self.direction.cross(p.minus(self.point)).abs()
    }

    fn intersection(&self, other: &Line) -> Option<Point> {
        let denominator = self.direction.cross(other.direction);
        if denominator.abs() < 1e-6 {
            return None;
        }
        let t = other.point.minus(self.point).cross(other.direction) / denominator;
        Some(Point::new(self.point.x + t * self.direction.x, self.point.y + t * self.direction.y))
    }
}

/// Each side fitted (total least squares) to the boundary points that lie along it, away from the
/// corners (a card's are rounded); the corners are where the fitted sides meet.
fn fit_sides(corners: &Quad, boundary: &[Point]) -> Option<Quad> {
    let mut lines: Vec<Line> = (0..4).map(|i| through(corners[i], corners[(i + 1) % 4])).collect::<Option<_>>()?;
    let mut quad = *corners;
    // Twice: the second pass gathers its points around the better sides of the first.
    for _ in 0..2 {
        for (i, line) in lines.iter_mut().enumerate() {
            let (from, to) = (quad[i], quad[(i + 1) % 4]);
            let side = to.minus(from);
            let length = side.length().max(1e-9);
            let tolerance = (0.015 * length).max(1.5);
            let along: Vec<Point> = boundary
                .iter()
                .copied()
                .filter(|p| {
                    let t = p.minus(from).dot(side) / (length * length);
                    (0.1..=0.9).contains(&t) && line.distance(*p) <= tolerance
                })
                .collect();
            if along.len() >= 8 {
                *line = fitted(&along).unwrap_or(*line);
            }
        }
        let mut next = quad;
        for (i, corner) in next.iter_mut().enumerate() {
            *corner = lines[(i + 3) % 4].intersection(&lines[i])?;
        }
        quad = next;
    }
    Some(quad)
}

fn through(from: Point, to: Point) -> Option<Line> {
    let d = to.minus(from);
    let length = d.length();
    (length > 1e-6).then(|| Line {
        point: from,
        direction: Point::new(d.x / length, d.y / length),
    })
}

/// The line of least squared distances to `points`: through their mean, along their principal axis.
fn fitted(points: &[Point]) -> Option<Line> {
    let n = points.len() as f64;
    let mean = points
        .iter()
        .fold(Point::new(0.0, 0.0), |s, p| Point::new(s.x + p.x / n, s.y + p.y / n));
    let (mut sxx, mut sxy, mut syy) = (0.0, 0.0, 0.0);
    for p in points {
        let d = p.minus(mean);
        sxx += d.x * d.x;
        sxy += d.x * d.y;
        syy += d.y * d.y;
    }
    let angle = 0.5 * (2.0 * sxy).atan2(sxx - syy);
    let direction = Point::new(angle.cos(), angle.sin());
    direction.x.is_finite().then_some(Line { point: mean, direction })
}

/// The corners clockwise on screen from the one that starts the side pointing most to the right:
/// top-left, top-right, bottom-right, bottom-left as the photo shows the document.
fn ordered(mut quad: Quad) -> Option<Quad> {
    if signed_area(&quad) < 0.0 {
        quad.reverse();
    }
    let rightwards = |i: usize| {
        let side = quad[(i + 1) % 4].minus(quad[i]);
        side.x / side.length().max(1e-9)
    };
    let first = (0..4).max_by(|&i, &j| rightwards(i).total_cmp(&rightwards(j)))?;
    quad.rotate_left(first);
    quad.iter().all(|p| p.x.is_finite() && p.y.is_finite()).then_some(quad)
}

/// Whether every interior angle is one a tilted rectangle can show, and the outline is convex.
fn angles_plausible(quad: &Quad) -> bool {
    (0..4).all(|i| {
        let (prev, here, next) = (quad[(i + 3) % 4], quad[i], quad[(i + 1) % 4]);
        let (a, b) = (prev.minus(here), next.minus(here));
        let cosine = a.dot(b) / (a.length() * b.length()).max(1e-9);
        let degrees = cosine.clamp(-1.0, 1.0).acos().to_degrees();
        let convex = next.minus(here).cross(prev.minus(here)) > 0.0;
        convex && (ANGLES.0..=ANGLES.1).contains(&degrees)
    })
}

/// Whether the outline is already an upright rectangle: straightening would only crop it.
fn already_upright(quad: &Quad, width: u32, height: u32) -> bool {
    let tolerance = UPRIGHT_TOLERANCE * f64::from(width.max(height));
    let (left, right) = ((quad[0].x + quad[3].x) / 2.0, (quad[1].x + quad[2].x) / 2.0);
    let (top, bottom) = ((quad[0].y + quad[1].y) / 2.0, (quad[2].y + quad[3].y) / 2.0);
    let square = [
        Point::new(left, top),
        Point::new(right, top),
        Point::new(right, bottom),
        Point::new(left, bottom),
    ];
    quad.iter().zip(square).all(|(p, q)| p.minus(q).length() <= tolerance)
}

/// The document's width over its height (width along its top side), from the perspective of its
/// outline, snapped to a known format when close to one.
fn proportions(quad: &Quad, width: u32, height: u32) -> f64 {
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
fn snapped(ratio: f64) -> f64 {
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
fn output_size(quad: &Quad, aspect: f64, width: u32, height: u32) -> Option<(u32, u32)> {
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

/// A plane projective map, x = (a u + b v + c) / (g u + h v + 1), y = (d u + e v + f) / (g u + h v + 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Homography {
    m: [f64; 8],
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
fn levelled(image: &mut DynamicImage) {
    let grey = grey::levels(image);
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
    let bytes: &mut [u8] = match image {
        DynamicImage::ImageLuma8(grey) => grey,
        DynamicImage::ImageRgb8(rgb) => rgb,
        _ => return,
    };
    for byte in bytes.iter_mut() {
        *byte = table[usize::from(*byte)];
    }
}

/// The level under which this fraction of the straightened document lies is its ink's (black).
const INK_PERCENTILE: f64 = 0.005;
/// The level under which this fraction lies is its paper's (white): most of a document is paper,
/// and the brightest twentieth, a lit corner or a card's white band, may saturate without loss.
const PAPER_PERCENTILE: f64 = 0.95;
/// A document whose ink and paper are closer than this is left as it is: stretching would only
/// magnify its noise.
const MIN_CONTRAST: f64 = 64.0;

/// Every pixel of the `width` × `height` rectangle taken from where `homography` maps it in `image`,
/// bilinearly; grey stays grey, anything else becomes 8-bit RGB.
fn warp(image: &DynamicImage, homography: &Homography, width: u32, height: u32) -> DynamicImage {
    match image {
        DynamicImage::ImageLuma8(grey) => DynamicImage::ImageLuma8(warp_pixels(grey, homography, width, height)),
        DynamicImage::ImageRgb8(rgb) => DynamicImage::ImageRgb8(warp_pixels(rgb, homography, width, height)),
        other => DynamicImage::ImageRgb8(warp_pixels(&other.to_rgb8(), homography, width, height)),
    }
}

fn warp_pixels<P>(source: &ImageBuffer<P, Vec<u8>>, homography: &Homography, width: u32, height: u32) -> ImageBuffer<P, Vec<u8>>
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

#[cfg(test)]
mod tests {
    use super::*;
    use image::{GrayImage, Luma, Rgb, RgbImage};

    /// The card of these tests, 640 × 404 (ID-1's proportions): light, with dark bars for lines of
    /// text and a dark square near its top-left corner to see where that corner went.
    fn card() -> RgbImage {
        RgbImage::from_fn(640, 404, |x, y| {
            let text = (300..600).contains(&x) && y % 40 < 12 && (60..340).contains(&y);
            let mark = (40..120).contains(&x) && (40..120).contains(&y);
            if text || mark {
                Rgb([40, 40, 50])
            } else {
                Rgb([228, 232, 240])
            }
        })
    }

    /// A table with a speckled texture, darker than paper.
    fn table(x: u32, y: u32) -> Rgb<u8> {
        let speckle = ((x.wrapping_mul(7919) ^ y.wrapping_mul(104_729)).wrapping_mul(2_654_435_761) >> 24) as u8 / 4;
        let grain = if (y / 9).is_multiple_of(2) { 20 } else { 0 };
        Rgb([90 + speckle + grain, 70 + speckle, 50 + speckle / 2])
    }

    /// `card` laid on the table of a `width` × `height` photo with its corners at `quad`.
    fn photo(card: &RgbImage, quad: &Quad, width: u32, height: u32) -> DynamicImage {
        let forward = Homography::rectangle_to_quad(card.width(), card.height(), quad).expect("a quad");
        let back = inverse(&forward);
        DynamicImage::ImageRgb8(RgbImage::from_fn(width, height, |x, y| {
            let at = back.apply(f64::from(x) + 0.5, f64::from(y) + 0.5).expect("finite");
            if (0.0..f64::from(card.width())).contains(&at.x) && (0.0..f64::from(card.height())).contains(&at.y) {
                *card.get_pixel(at.x as u32, at.y as u32)
            } else {
                table(x, y)
            }
        }))
    }

    /// The inverse map, by the adjugate of its 3 × 3 matrix.
    fn inverse(h: &Homography) -> Homography {
        let [a, b, c, d, e, f, g, k] = h.m;
        let m = [[a, b, c], [d, e, f], [g, k, 1.0]];
        let cofactor = |r: usize, s: usize| {
            let rows: Vec<usize> = (0..3).filter(|i| *i != r).collect();
            let cols: Vec<usize> = (0..3).filter(|i| *i != s).collect();
            let minor = m[rows[0]][cols[0]] * m[rows[1]][cols[1]] - m[rows[0]][cols[1]] * m[rows[1]][cols[0]];
            if (r + s).is_multiple_of(2) {
                minor
            } else {
                -minor
            }
        };
        // The adjugate is the transposed cofactor matrix; its scale does not matter.
        let adj = |r: usize, s: usize| cofactor(s, r);
        let scale = adj(2, 2);
        Homography {
            m: [
                adj(0, 0) / scale,
                adj(0, 1) / scale,
                adj(0, 2) / scale,
                adj(1, 0) / scale,
                adj(1, 1) / scale,
                adj(1, 2) / scale,
                adj(2, 0) / scale,
                adj(2, 1) / scale,
            ],
        }
    }

    /// The card turned 25° in depth, tilted 10° and rolled 4°, seen through a lens of 700 pixels'
    /// focal length from 700 pixels away (computed apart): its right side nearer, so longer.
    const TURNED: Quad = [
        Point { x: 226.6, y: 192.6 },
        Point { x: 804.5, y: 115.5 },
        Point { x: 814.7, y: 607.0 },
        Point { x: 182.6, y: 526.9 },
    ];

    fn worst_error(found: &Quad, truth: &Quad) -> f64 {
        found.iter().zip(truth).map(|(a, b)| a.minus(*b).length()).fold(0.0, f64::max)
    }

    #[test]
    fn the_rectangle_maps_onto_its_quad() {
        let h = Homography::rectangle_to_quad(640, 404, &TURNED).expect("a quad");
        let corners = [(0.0, 0.0), (640.0, 0.0), (640.0, 404.0), (0.0, 404.0)];
        for ((u, v), expected) in corners.into_iter().zip(TURNED) {
            let at = h.apply(u, v).expect("finite");
            assert!(at.minus(expected).length() < 1e-6, "{at:?} {expected:?}");
        }
        // A projective map keeps the diagonals' crossing at the rectangle's centre.
        let diagonal = |a: Point, b: Point| through(a, b).expect("a line");
        let crossing = diagonal(TURNED[0], TURNED[2])
            .intersection(&diagonal(TURNED[1], TURNED[3]))
            .expect("they cross");
        let centre = h.apply(320.0, 202.0).expect("finite");
        assert!(centre.minus(crossing).length() < 1e-6, "{centre:?} {crossing:?}");
        let back = inverse(&h).apply(TURNED[2].x, TURNED[2].y).expect("finite");
        assert!(back.minus(Point::new(640.0, 404.0)).length() < 1e-6, "{back:?}");
        assert_eq!(Homography::rectangle_to_quad(10, 10, &[TURNED[0]; 4]), None, "a degenerate quad");
    }

    #[test]
    fn a_tilted_card_on_a_textured_table_is_found_to_a_pixel() {
        let photo = photo(&card(), &TURNED, 900, 700);
        let found = find_document(&photo).expect("the card is found");
        assert!(worst_error(&found, &TURNED) < 3.0, "{found:?}");
        // Sideways (the photo turned a quarter): the top side is still the one pointing right.
        let sideways = DynamicImage::ImageRgb8(photo.to_rgb8()).rotate90();
        let found = find_document(&sideways).expect("the card is found");
        let turned = TURNED.map(|p| Point::new(700.0 - p.y, p.x));
        let expected = [turned[3], turned[0], turned[1], turned[2]];
        assert!(worst_error(&found, &expected) < 3.0, "{found:?} {expected:?}");
    }

    #[test]
    fn a_large_photo_is_searched_on_its_thumbnail_and_found_at_full_size() {
        let scale = 4.0;
        let big = TURNED.map(|p| Point::new(p.x * scale, p.y * scale));
        let large_card = DynamicImage::ImageRgb8(card()).resize_exact(2560, 1616, image::imageops::FilterType::Triangle);
        let photo = photo(&large_card.to_rgb8(), &big, 3600, 2800);
        let found = find_document(&photo).expect("the card is found");
        // Within a pixel of the thumbnail (about eight of the photo's).
        assert!(worst_error(&found, &big) < 8.0, "{found:?}");
    }

    #[test]
    fn the_straightened_card_is_upright_with_its_proportions() {
        let photo = photo(&card(), &TURNED, 900, 700);
        let flat = straighten(&photo).expect("straightened").to_rgb8();
        let aspect = f64::from(flat.width()) / f64::from(flat.height());
        assert!((aspect - 85.6 / 54.0).abs() < 0.01, "{} x {}", flat.width(), flat.height());
        // The dark square sits a sixteenth of the width from the top-left corner, as on the card.
        let at = |fx: f64, fy: f64| flat.get_pixel((fx * f64::from(flat.width())) as u32, (fy * f64::from(flat.height())) as u32)[0];
        assert!(at(80.0 / 640.0, 80.0 / 404.0) < 90, "the mark");
        assert!(at(20.0 / 640.0, 20.0 / 404.0) > 180, "the card's margin, not the table");
        assert!(at(150.0 / 640.0, 300.0 / 404.0) > 180, "the card's blank part");
        assert!(at(0.7, 86.0 / 404.0) < 90, "a line of text");
        assert!(at(0.7, 100.0 / 404.0) > 180, "between two lines");
    }

    #[test]
    fn a_grey_photo_stays_grey() {
        let photo = DynamicImage::ImageLuma8(photo(&card(), &TURNED, 900, 700).to_luma8());
        assert!(matches!(straighten(&photo), Some(DynamicImage::ImageLuma8(_))));
    }

    #[test]
    fn documents_that_fill_the_frame_or_stand_upright_are_left_alone() {
        // A scan: the card is the whole image.
        assert_eq!(find_document(&DynamicImage::ImageRgb8(card())), None);
        // A page running out of the frame at the bottom.
        let out = [
            Point::new(120.0, 80.0),
            Point::new(780.0, 90.0),
            Point::new(800.0, 760.0),
            Point::new(100.0, 760.0),
        ];
        assert_eq!(find_document(&photo(&card(), &out, 900, 700)), None);
        // A card photographed square-on: straightening would only crop it.
        let square = [
            Point::new(130.0, 140.0),
            Point::new(770.0, 140.0),
            Point::new(770.0, 544.0),
            Point::new(130.0, 544.0),
        ];
        assert_eq!(find_document(&photo(&card(), &square, 900, 700)), None);
    }

    #[test]
    fn images_without_a_document_are_left_alone() {
        let uniform = |w, h| DynamicImage::ImageLuma8(GrayImage::from_pixel(w, h, Luma([255])));
        let tables = DynamicImage::ImageRgb8(RgbImage::from_fn(900, 700, table));
        let stripes = DynamicImage::ImageLuma8(GrayImage::from_fn(900, 700, |x, _| {
            Luma([if (x / 30) % 2 == 0 { 30 } else { 220 }])
        }));
        for (name, image) in [
            ("1 x 1", uniform(1, 1)),
            ("3 x 3", uniform(3, 3)),
            ("40 x 30", uniform(40, 30)),
            ("white", uniform(800, 600)),
            ("a bare table", tables),
            ("stripes", stripes),
        ] {
            assert_eq!(straighten(&image), None, "{name}");
        }
    }

    #[test]
    fn proportions_snap_to_the_formats_documents_come_in() {
        assert_eq!(snapped(1.55), 85.6 / 54.0);
        assert_eq!(snapped(1.0 / 1.45), 1.0 / (125.0 / 88.0));
        assert_eq!(snapped(1.0), 1.0, "a square is no known format");
        assert!((snapped(0.72) - 1.0 / std::f64::consts::SQRT_2).abs() < 1e-12);
    }
}
