//! From blobs to text lines to candidate zones: the page's skew is estimated from where glyph
//! centres line up, neighbouring glyph-sized blobs on one line are chained into runs, and runs
//! that look like the lines of one MRZ (long, as high, left-aligned, evenly spaced) are grouped.

use super::components::Blob;

/// Skews searched, in degrees either way: phone photos and scans are rarely worse.
const MAX_SKEW_DEGREES: f32 = 6.0;
/// At most this many candidate zones are read; the lowest on the page come first.
const MAX_ZONES: usize = 6;

/// The frame of a text line at `angle` (radians, clockwise in image coordinates): `u` runs
/// along the line, `v` across it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Frame {
    pub cos: f32,
    pub sin: f32,
}

impl Frame {
    pub fn new(angle: f32) -> Self {
        Self {
            cos: angle.cos(),
            sin: angle.sin(),
        }
    }

    pub fn angle(self) -> f32 {
        self.sin.atan2(self.cos)
    }

    /// Image point → (u, v).
    pub fn to_line(self, x: f32, y: f32) -> (f32, f32) {
        (x * self.cos + y * self.sin, -x * self.sin + y * self.cos)
    }

    /// (u, v) → image point.
    pub fn to_image(self, u: f32, v: f32) -> (f32, f32) {
        (u * self.cos - v * self.sin, u * self.sin + v * self.cos)
    }

    /// The extent of `blob` along the line and the position of its centre across it.
    pub fn span(self, blob: &Blob) -> (f32, f32, f32) {
        let (x0, y0, x1, y1) = (blob.x0 as f32, blob.y0 as f32, blob.x1 as f32, blob.y1 as f32);
        let us = [
            self.to_line(x0, y0).0,
            self.to_line(x1, y0).0,
            self.to_line(x0, y1).0,
            self.to_line(x1, y1).0,
        ];
        let (cx, cy) = blob.centre();
        let u0 = us.iter().copied().fold(f32::MAX, f32::min);
        let u1 = us.iter().copied().fold(f32::MIN, f32::max);
        (u0, u1, self.to_line(cx, cy).1)
    }
}

/// Glyphs of one line of text, chained left to right.
#[derive(Debug, Clone)]
pub(super) struct Run {
    /// Sorted along the line.
    pub members: Vec<Blob>,
    pub u0: f32,
    pub u1: f32,
    pub v: f32,
    /// The height of its tall glyphs (the fillers `<` are shorter).
    pub height: f32,
}

impl Run {
    pub fn length(&self) -> f32 {
        self.u1 - self.u0
    }
}

/// Two or three runs that may be the lines of one MRZ, top to bottom.
#[derive(Debug, Clone)]
pub(super) struct Zone {
    pub runs: Vec<Run>,
    pub frame: Frame,
}

impl Zone {
    /// The line lengths a zone of this many lines may have.
    pub fn layouts(&self) -> &'static [usize] {
        match self.runs.len() {
            3 => &[30],
            2 => &[44, 36],
            _ => &[],
        }
    }

    /// The height of the zone's tall glyphs.
    pub fn height(&self) -> f32 {
        median(self.runs.iter().map(|r| r.height).collect())
    }
}

/// Blobs that could be glyphs of a document's text: not specks, not frames or photos.
fn glyph_sized(blob: &Blob, page_height: f32) -> bool {
    let (w, h) = (blob.width(), blob.height());
    h >= 6.0 && h <= page_height / 5.0 && w <= h * 1.8 && blob.area as f32 >= 0.08 * w * h
}

/// The skew angle (radians) at which glyph centres fall on the fewest, densest lines.
pub(super) fn skew(blobs: &[Blob], page_height: f32) -> f32 {
    let glyphs: Vec<&Blob> = blobs.iter().filter(|b| glyph_sized(b, page_height)).collect();
    if glyphs.len() < 8 {
        return 0.0;
    }
    let bin = (median(glyphs.iter().map(|b| b.height()).collect()) / 6.0).max(1.5);
    let score = |degrees: f32| -> f64 {
        let frame = Frame::new(degrees.to_radians());
        let mut bins = std::collections::HashMap::<i64, u32>::new();
        for b in &glyphs {
            let (cx, cy) = b.centre();
            *bins.entry((frame.to_line(cx, cy).1 / bin).floor() as i64).or_default() += 1;
        }
        bins.values().map(|&c| f64::from(c).powi(2)).sum()
    };
    let steps = (MAX_SKEW_DEGREES / 0.25) as i32;
    let coarse = (-steps..=steps)
        .map(|i| i as f32 * 0.25)
        .map(|d| (d, score(d)))
        .fold((0.0f32, f64::MIN), |best, c| if c.1 > best.1 { c } else { best })
        .0;
    // Around the best, the score is flat while every line stays within its bins: the middle of
    // that plateau is the estimate.
    let fine: Vec<(f32, f64)> = (-6..=6).map(|i| coarse + i as f32 * 0.05).map(|d| (d, score(d))).collect();
    let top = fine.iter().map(|f| f.1).fold(f64::MIN, f64::max);
    let plateau: Vec<f32> = fine.iter().filter(|f| f.1 >= top).map(|f| f.0).collect();
    (plateau.iter().sum::<f32>() / plateau.len().max(1) as f32).to_radians()
}

/// Chains of neighbouring blobs of comparable height on one line (at `frame`).
pub(super) fn runs(blobs: &[Blob], frame: Frame, page_height: f32) -> Vec<Run> {
    let mut items: Vec<(Blob, f32, f32, f32)> = blobs
        .iter()
        .filter(|b| b.height() >= 6.0 && b.height() <= page_height / 5.0 && b.area as f32 >= 0.05 * b.width() * b.height())
        .map(|b| {
            let (u0, u1, v) = frame.span(b);
            (*b, u0, u1, v)
        })
        .collect();
    items.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut parent: Vec<usize> = (0..items.len()).collect();
    for (i, &(a, _, a_u1, a_v)) in items.iter().enumerate() {
        for (j, &(b, b_u0, _, b_v)) in items.iter().enumerate().skip(i + 1) {
            // A neighbour is at most 2.2 times as high, so at most 1.2 × 2.2 heights of `a`
            // away; past that, sorted by start, none is.
            if b_u0 > a_u1 + 2.7 * a.height() {
                break;
            }
            let (high, low) = (a.height().max(b.height()), a.height().min(b.height()));
            let gap = b_u0 - a_u1;
            if gap < 1.2 * high && (a_v - b_v).abs() < 0.3 * high && high <= 2.2 * low {
                union(&mut parent, i, j);
            }
        }
    }
    let mut groups = std::collections::HashMap::<usize, Vec<usize>>::new();
    for i in 0..items.len() {
        groups.entry(find(&mut parent, i)).or_default().push(i);
    }
    groups
        .into_values()
        .filter(|g| g.len() >= 5)
        .map(|g| {
            let members: Vec<Blob> = g.iter().map(|&i| items[i].0).collect();
            let heights: Vec<f32> = members.iter().map(Blob::height).collect();
            Run {
                u0: g.iter().map(|&i| items[i].1).fold(f32::MAX, f32::min),
                u1: g.iter().map(|&i| items[i].2).fold(f32::MIN, f32::max),
                v: median(g.iter().map(|&i| items[i].3).collect()),
                height: percentile(heights, 0.85),
                members,
            }
        })
        .collect()
}

fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

fn union(parent: &mut [usize], a: usize, b: usize) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra != rb {
        parent[ra.max(rb)] = ra.min(rb);
    }
}

/// Runs long enough for an MRZ line: 30 characters are about 27 glyph heights.
fn long_enough(run: &Run) -> bool {
    run.length() >= 14.0 * run.height && run.members.len() >= 5
}

/// Whether `lower` may be the MRZ line after `upper`.
fn follows(upper: &Run, lower: &Run) -> bool {
    let height = upper.height.max(lower.height);
    let spacing = lower.v - upper.v;
    let ratio = |a: f32, b: f32| a.max(b) / a.min(b).max(1e-3);
    ratio(upper.height, lower.height) <= 1.3
        && (upper.u0 - lower.u0).abs() <= 1.5 * height
        && ratio(upper.length(), lower.length()) <= 1.15
        && (1.1 * height..=3.2 * height).contains(&spacing)
}

/// Groups of two or three runs that may form an MRZ, the lowest on the page first.
pub(super) fn zones(runs: &[Run], frame: Frame) -> Vec<Zone> {
    let mut long: Vec<&Run> = runs.iter().filter(|r| long_enough(r)).collect();
    long.sort_by(|a, b| a.v.total_cmp(&b.v));
    let mut found: Vec<Zone> = Vec::new();
    for (i, first) in long.iter().enumerate() {
        for (j, second) in long.iter().enumerate().skip(i + 1) {
            if !follows(first, second) {
                continue;
            }
            for third in long.iter().skip(j + 1) {
                let even = (third.v - second.v) / (second.v - first.v).max(1e-3);
                if follows(second, third) && (0.8..=1.25).contains(&even) {
                    found.push(Zone {
                        runs: vec![(*first).clone(), (*second).clone(), (*third).clone()],
                        frame,
                    });
                }
            }
            found.push(Zone {
                runs: vec![(*first).clone(), (*second).clone()],
                frame,
            });
        }
    }
    found.sort_by(|a, b| {
        let bottom = |z: &Zone| z.runs.last().map_or(0.0, |r| r.v);
        bottom(b).total_cmp(&bottom(a)).then(b.runs.len().cmp(&a.runs.len()))
    });
    found.truncate(MAX_ZONES);
    found
}

pub(super) fn median(values: Vec<f32>) -> f32 {
    percentile(values, 0.5)
}

/// The value at fraction `at` of the sorted values; 0 for none.
pub(super) fn percentile(mut values: Vec<f32>, at: f32) -> f32 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f32::total_cmp);
    let index = ((values.len() - 1) as f32 * at).round() as usize;
    values[index.min(values.len() - 1)]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blobs of a line of `count` glyphs of height `h` at pitch `pitch`, starting at (`x`, `y`)
    /// and descending `slope` pixels per pixel; every third one a shorter filler.
    fn line(count: usize, x: f32, y: f32, h: f32, pitch: f32, slope: f32) -> Vec<Blob> {
        (0..count)
            .map(|i| {
                let cx = x + i as f32 * pitch;
                let cy = y + (cx - x) * slope;
                let gh = if i % 3 == 2 { h * 0.8 } else { h };
                Blob {
                    x0: (cx - pitch * 0.35) as u32,
                    x1: (cx + pitch * 0.35) as u32,
                    y0: (cy - gh / 2.0) as u32,
                    y1: (cy + gh / 2.0) as u32,
                    area: (pitch * gh * 0.4) as u32,
                }
            })
            .collect()
    }

    fn page(slope: f32) -> Vec<Blob> {
        let mut blobs = Vec::new();
        // A title, a short field, then a TD1 zone.
        blobs.extend(line(12, 40.0, 40.0, 30.0, 24.0, slope));
        blobs.extend(line(8, 300.0, 120.0, 20.0, 16.0, slope));
        for k in 0..3 {
            blobs.extend(line(30, 40.0, 460.0 + k as f32 * 52.0, 34.0, 31.0, slope));
        }
        blobs
    }

    #[test]
    fn skew_is_found_within_a_fifth_of_a_degree() {
        for degrees in [-4.0f32, -1.5, 0.0, 2.0, 3.5, 5.5] {
            let found = skew(&page(degrees.to_radians().tan()), 630.0).to_degrees();
            assert!((found - degrees).abs() <= 0.2, "{degrees}: {found}");
        }
    }

    #[test]
    fn a_td1_zone_is_three_long_runs_below_the_rest() {
        let slope = 2.5f32.to_radians().tan();
        let blobs = page(slope);
        let frame = Frame::new(skew(&blobs, 630.0));
        let found = runs(&blobs, frame, 630.0);
        assert_eq!(found.len(), 5, "{found:?}");
        let zones = zones(&found, frame);
        let first = &zones[0];
        assert_eq!(first.runs.len(), 3);
        assert_eq!(first.layouts(), &[30]);
        assert!(first.runs.iter().all(|r| r.members.len() == 30));
        assert!((first.height() - 34.0).abs() <= 1.0, "{}", first.height());
        // The pairs inside the triple are candidates too, after it.
        assert!(zones.iter().skip(1).all(|z| z.runs.len() == 2));
    }

    #[test]
    fn lines_far_apart_or_misaligned_make_no_zone() {
        let mut blobs = line(30, 40.0, 100.0, 30.0, 28.0, 0.0);
        blobs.extend(line(30, 300.0, 145.0, 30.0, 28.0, 0.0));
        blobs.extend(line(30, 40.0, 400.0, 30.0, 28.0, 0.0));
        let frame = Frame::new(0.0);
        assert!(zones(&runs(&blobs, frame, 600.0), frame).is_empty());
    }

    #[test]
    fn frame_round_trips() {
        let frame = Frame::new(0.05);
        let (u, v) = frame.to_line(120.0, 45.0);
        let (x, y) = frame.to_image(u, v);
        assert!((x - 120.0).abs() < 1e-3 && (y - 45.0).abs() < 1e-3);
        assert!((frame.angle() - 0.05).abs() < 1e-6);
    }
}
