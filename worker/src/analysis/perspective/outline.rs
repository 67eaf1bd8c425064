//! Finding the document in the photo: the largest bright region of a grey thumbnail, clear of the
//! frame's border, and the four sides fitted to its boundary.

use image::{DynamicImage, GrayImage};

use super::{Point, Quad};

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
pub(super) struct Line {
    point: Point,
    direction: Point,
}

impl Line {
    fn distance(&self, p: Point) -> f64 {
        self.direction.cross(p.minus(self.point)).abs()
    }

    pub(super) fn intersection(&self, other: &Line) -> Option<Point> {
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

pub(super) fn through(from: Point, to: Point) -> Option<Line> {
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
