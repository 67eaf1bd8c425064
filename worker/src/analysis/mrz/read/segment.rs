//! Cutting a candidate zone into character cells. MRZ lines are monospaced and start and end on
//! a character (fillers are printed), so once the number of cells per line is assumed the first
//! and last glyph fix the pitch, and the pitch fixes the font size. Each line is then resampled
//! upright, at the templates' size, into a strip the matcher slides them along.

use image::GrayImage;

use super::components::Blob;
use super::glyphs::{Templates, EM};
use super::lines::{median, Frame, Run, Zone};

/// Rows added above and below the template box, for the matcher's vertical search.
pub(super) const PAD_Y: usize = 5;

/// Where the cells of one line lie, in the zone's frame (source pixels).
#[derive(Debug, Clone)]
pub(super) struct LineCells {
    /// Across the line: the centre of its capitals.
    pub v: f32,
    /// Along the line: the centre of the first cell, and the distance between cells.
    pub u_first: f32,
    pub pitch: f32,
    pub cells: usize,
}

/// A zone cut into cells.
#[derive(Debug, Clone)]
pub(super) struct Layout {
    pub frame: Frame,
    /// The font size (as [`EM`]) the zone is printed at, in source pixels.
    pub em: f32,
    pub lines: Vec<LineCells>,
}

/// One line resampled upright at the templates' size: ink (255 − grey) per pixel.
#[derive(Debug, Clone)]
pub(super) struct Strip {
    pub width: usize,
    pub height: usize,
    pub ink: Vec<f32>,
    /// The x of each cell's centre.
    pub cells: Vec<f32>,
}

/// The zone as `cells` characters per line, or `None` when its glyphs are not spaced so.
pub(super) fn layout(zone: &Zone, cells: usize, templates: &Templates) -> Option<Layout> {
    if cells < 2 {
        return None;
    }
    let height = zone.height();
    let frame = fit_frame(zone, height);
    // The height of the zone's tall glyphs stands for a size between a capital's and a digit's.
    let em_from_height = height / (templates.cap_per_em * 1.04);
    let half_chevron = templates.half_chevron_per_em * em_from_height;
    let mut lines = Vec::with_capacity(zone.runs.len());
    for run in &zone.runs {
        let line = line_cells(run, frame, height, half_chevron, cells)?;
        let spacing = glyph_spacing(run, frame, height);
        if spacing.is_some_and(|s| (line.pitch / s - 1.0).abs() > 0.12) {
            return None;
        }
        lines.push(line);
    }
    let pitch = median(lines.iter().map(|l| l.pitch).collect());
    if lines.iter().any(|l| (l.pitch / pitch - 1.0).abs() > 0.06) {
        return None;
    }
    let em = pitch / templates.advance_per_em;
    // Glyphs far taller or shorter than the pitch allows belong to another kind of text.
    if !(0.7..=1.45).contains(&(em / em_from_height)) {
        return None;
    }
    Some(Layout { frame, em, lines })
}

/// The common direction of the zone's lines, fitted on the centres of their tall glyphs
/// (least squares, one intercept per line); the search frame when too few glyphs are tall.
fn fit_frame(zone: &Zone, height: f32) -> Frame {
    let (mut sxy, mut sxx) = (0f64, 0f64);
    for run in &zone.runs {
        let centres: Vec<(f64, f64)> = run
            .members
            .iter()
            .filter(|b| b.height() >= 0.8 * height && b.width() <= 1.4 * height)
            .map(|b| {
                let (x, y) = b.centre();
                (f64::from(x), f64::from(y))
            })
            .collect();
        if centres.len() < 2 {
            continue;
        }
        let n = centres.len() as f64;
        let mx = centres.iter().map(|c| c.0).sum::<f64>() / n;
        let my = centres.iter().map(|c| c.1).sum::<f64>() / n;
        for (x, y) in centres {
            sxy += (x - mx) * (y - my);
            sxx += (x - mx) * (x - mx);
        }
    }
    if sxx < f64::from(height).powi(2) * 4.0 {
        return zone.frame;
    }
    let angle = (sxy / sxx).atan() as f32;
    if (angle - zone.frame.angle()).abs() > 2f32.to_radians() {
        return zone.frame;
    }
    Frame::new(angle)
}

/// The first and last cell centres of `run` and the pitch between them. A glyph wider than a
/// cell is fillers run together: its outer filler is half a chevron in from its edge.
fn line_cells(run: &Run, frame: Frame, height: f32, half_chevron: f32, cells: usize) -> Option<LineCells> {
    let spans: Vec<(f32, f32, f32, bool)> = run
        .members
        .iter()
        .map(|b| {
            let (u0, u1, v) = frame.span(b);
            (u0, u1, v, b.height() >= 0.8 * height)
        })
        .collect();
    let first = spans.iter().min_by(|a, b| a.0.total_cmp(&b.0))?;
    let last = spans.iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
    let centre = |s: &(f32, f32, f32, bool), from_left: bool| {
        if s.1 - s.0 <= 1.35 * height {
            (s.0 + s.1) / 2.0
        } else if from_left {
            s.0 + half_chevron
        } else {
            s.1 - half_chevron
        }
    };
    let (u_first, u_last) = (centre(first, true), centre(last, false));
    let pitch = (u_last - u_first) / (cells - 1) as f32;
    if pitch <= 0.0 {
        return None;
    }
    let tall: Vec<f32> = spans.iter().filter(|s| s.3).map(|s| s.2).collect();
    let v = if tall.is_empty() {
        median(spans.iter().map(|s| s.2).collect())
    } else {
        median(tall)
    };
    Some(LineCells { v, u_first, pitch, cells })
}

/// The typical distance between neighbouring single glyphs of a run, when enough are apart.
fn glyph_spacing(run: &Run, frame: Frame, height: f32) -> Option<f32> {
    let mut centres: Vec<(f32, f32)> = run
        .members
        .iter()
        .filter(|b: &&Blob| b.width() <= 1.35 * height)
        .map(|b| {
            let (u0, u1, _) = frame.span(b);
            ((u0 + u1) / 2.0, u1 - u0)
        })
        .collect();
    centres.sort_by(|a, b| a.0.total_cmp(&b.0));
    let gaps: Vec<f32> = centres
        .windows(2)
        .map(|w| w[1].0 - w[0].0)
        .filter(|&d| d > 0.4 * height && d < 1.6 * height)
        .collect();
    (gaps.len() >= 6).then(|| median(gaps))
}

/// `line` of `layout` resampled so glyphs printed at font size `em` get the templates' size and
/// its cells lie at `Strip::cells` on a horizontal line `PAD_Y + templates.centre_y` from the top.
pub(super) fn strip(gray: &GrayImage, layout: &Layout, line: &LineCells, em: f32, templates: &Templates) -> Strip {
    let scale = EM / em;
    let margin = templates.width as f32;
    let step = line.pitch * scale;
    let width = ((line.cells - 1) as f32 * step + 2.0 * margin).ceil() as usize;
    let height = templates.height + 2 * PAD_Y;
    let centre_y = PAD_Y as f32 + templates.centre_y;
    // Several samples per output pixel when shrinking by more than 1.6, so thin strokes are
    // averaged, not missed.
    let samples = (0.6 / scale).ceil().clamp(1.0, 3.0) as usize;
    let sub = 1.0 / samples as f32;
    // The strip is an affine image of the source: a start point and a step per strip pixel
    // along and across the line (pixel centres at half-integers in both).
    let (along_x, along_y) = layout.frame.to_image(1.0 / scale, 0.0);
    let (across_x, across_y) = layout.frame.to_image(0.0, 1.0 / scale);
    let (origin_x, origin_y) = layout.frame.to_image(line.u_first - margin / scale, line.v - centre_y / scale);
    let source = Source::new(gray);
    let mut ink = vec![0f32; width * height];
    for y in 0..height {
        for x in 0..width {
            let mut total = 0f32;
            for sy in 0..samples {
                let fy = y as f32 + (sy as f32 + 0.5) * sub;
                for sx in 0..samples {
                    let fx = x as f32 + (sx as f32 + 0.5) * sub;
                    let px = origin_x + fx * along_x + fy * across_x;
                    let py = origin_y + fx * along_y + fy * across_y;
                    total += source.bilinear(px - 0.5, py - 0.5);
                }
            }
            ink[y * width + x] = 255.0 - total * sub * sub;
        }
    }
    let cells = (0..line.cells).map(|k| margin + k as f32 * step).collect();
    Strip { width, height, ink, cells }
}

/// Grey levels to interpolate in.
struct Source<'a> {
    raw: &'a [u8],
    width: usize,
    height: usize,
}

impl<'a> Source<'a> {
    fn new(gray: &'a GrayImage) -> Self {
        Self {
            raw: gray.as_raw(),
            width: gray.width() as usize,
            height: gray.height() as usize,
        }
    }

    /// The grey level at a point between pixel centres, edges extended.
    fn bilinear(&self, x: f32, y: f32) -> f32 {
        let (w, h) = (self.width, self.height);
        let (x, y) = (x.clamp(0.0, (w - 1) as f32), y.clamp(0.0, (h - 1) as f32));
        // Truncation is the floor here: both are non-negative.
        let (ix, iy) = (x as usize, y as usize);
        let (ax, ay) = (x - ix as f32, y - iy as f32);
        let (nx, ny) = ((ix + 1).min(w - 1), (iy + 1).min(h - 1));
        let at = |px: usize, py: usize| f32::from(self.raw[py * w + px]);
        let top = at(ix, iy) + (at(nx, iy) - at(ix, iy)) * ax;
        let bottom = at(ix, ny) + (at(nx, ny) - at(ix, ny)) * ax;
        top + (bottom - top) * ay
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::mrz::read::glyphs::templates;
    use image::Luma;

    /// A run of `count` blob glyphs (all tall) at `pitch`, with its fillers from `fillers_from`
    /// on merged into one wide blob, on a line descending `slope`.
    fn run(count: usize, fillers_from: usize, pitch: f32, h: f32, y: f32, slope: f32) -> Run {
        let glyph = |i: usize| {
            let cx = 50.0 + i as f32 * pitch;
            let cy = y + cx * slope;
            Blob {
                x0: (cx - 0.35 * pitch).round() as u32,
                x1: (cx + 0.35 * pitch).round() as u32,
                y0: (cy - h / 2.0).round() as u32,
                y1: (cy + h / 2.0).round() as u32,
                area: 100,
            }
        };
        let mut members: Vec<Blob> = (0..fillers_from.min(count)).map(glyph).collect();
        if fillers_from < count {
            let (a, b) = (glyph(fillers_from), glyph(count - 1));
            members.push(Blob {
                x0: a.x0,
                x1: b.x1,
                y0: a.y0.min(b.y0) + 2,
                y1: a.y1.max(b.y1) - 2,
                area: 500,
            });
        }
        Run {
            u0: members[0].x0 as f32,
            u1: members.last().map_or(0.0, |m| m.x1 as f32),
            v: y,
            height: h,
            members,
        }
    }

    fn zone(runs: Vec<Run>, slope: f32) -> Zone {
        Zone {
            runs,
            frame: Frame::new(slope.atan()),
        }
    }

    #[test]
    fn a_td1_zone_is_cut_into_30_cells_and_not_36_or_44() {
        let t = templates().expect("templates");
        let pitch = 31.0;
        let h = pitch / t.advance_per_em * t.cap_per_em * 1.04;
        let slope = 0.02;
        let z = zone(
            (0..3).map(|k| run(30, 15 + k, pitch, h, 400.0 + 50.0 * k as f32, slope)).collect(),
            slope,
        );
        let found = layout(&z, 30, t).expect("30 cells");
        for line in &found.lines {
            assert!((line.pitch - pitch * (1.0 + slope * slope).sqrt()).abs() < 0.2, "{line:?}");
        }
        assert!((found.frame.angle() - slope.atan()).abs() < 0.003);
        assert!((found.em * t.advance_per_em - pitch).abs() < 0.5);
        assert!(layout(&z, 36, t).is_none());
        assert!(layout(&z, 44, t).is_none());
    }

    #[test]
    fn strip_is_upright_and_at_template_size() {
        let t = templates().expect("templates");
        // A dark bar 20 px long, 8 px high, centred on (200, 100), in a 400 × 200 image.
        let gray = GrayImage::from_fn(400, 200, |x, y| {
            Luma([if (190..210).contains(&x) && (96..104).contains(&y) {
                0
            } else {
                255
            }])
        });
        let em = 20.0;
        let layout = Layout {
            frame: Frame::new(0.0),
            em,
            lines: vec![],
        };
        let line = LineCells {
            v: 100.0,
            u_first: 200.0,
            pitch: em * t.advance_per_em,
            cells: 3,
        };
        let strip = strip(&gray, &layout, &line, em, t);
        let scale = EM / em;
        assert_eq!(strip.cells.len(), 3);
        assert!((strip.cells[1] - strip.cells[0] - t.advance).abs() < 0.01);
        let row = (PAD_Y as f32 + t.centre_y) as usize;
        let at = |x: f32, y: usize| strip.ink[y * strip.width + x as usize];
        assert!(at(strip.cells[0], row) > 250.0);
        assert!(
            at(strip.cells[0] + 8.0 * scale, row) > 250.0,
            "the bar ends 10 px right of the centre"
        );
        assert!(at(strip.cells[0] + 12.0 * scale, row) < 5.0);
        assert!(at(strip.cells[0], row + (2.0 * scale) as usize) > 250.0);
        assert!(at(strip.cells[0], row + (6.0 * scale) as usize) < 5.0);
    }
}
