//! Naming the character in each cell: every template is slid over a small neighbourhood of the
//! cell and scored by zero-mean normalised correlation, which ignores contrast and brightness.
//! A first pass on a sample of cells finds where glyphs really are; the cell positions are then
//! refitted as one straight, evenly spaced line, so no cell can drift onto its neighbour, and
//! every cell is read there.

use super::glyphs::{Templates, ALPHABET, LANES};
use super::segment::{Strip, PAD_Y};

/// A cell scoring this well in the first pass helps place the line for the second.
const RELIABLE: f32 = 0.5;
/// The first pass looks at every this-many cells: enough to fit a line, a third of the work.
const SAMPLE_STRIDE: usize = 3;

/// The characters of one line and how well each matched (correlation, 0–1).
#[derive(Debug, Clone)]
pub(super) struct LineRead {
    pub text: String,
    pub scores: Vec<f32>,
}

/// The best template at one position.
#[derive(Debug, Clone, Copy)]
struct Hit {
    score: f32,
    glyph: usize,
    left: i32,
    top: i32,
}

/// Per-pixel sums of ink and squared ink over the strip, for patch means and spreads.
struct Moments {
    width: usize,
    sum: Vec<f64>,
    squares: Vec<f64>,
}

impl Moments {
    fn new(strip: &Strip) -> Self {
        let stride = strip.width + 1;
        let mut sum = vec![0f64; stride * (strip.height + 1)];
        let mut squares = sum.clone();
        for y in 0..strip.height {
            let (mut row, mut row2) = (0f64, 0f64);
            for x in 0..strip.width {
                let v = f64::from(strip.ink[y * strip.width + x]);
                row += v;
                row2 += v * v;
                sum[(y + 1) * stride + x + 1] = sum[y * stride + x + 1] + row;
                squares[(y + 1) * stride + x + 1] = squares[y * stride + x + 1] + row2;
            }
        }
        Self {
            width: strip.width,
            sum,
            squares,
        }
    }

    /// Sum of squared deviations from the mean over a `w` × `h` patch at (`left`, `top`).
    fn spread(&self, left: usize, top: usize, w: usize, h: usize) -> f64 {
        let stride = self.width + 1;
        let rect = |t: &[f64]| {
            t[(top + h) * stride + left + w] + t[top * stride + left] - t[top * stride + left + w] - t[(top + h) * stride + left]
        };
        let (s, s2) = (rect(&self.sum), rect(&self.squares));
        (s2 - s * s / (w * h) as f64).max(0.0)
    }
}

/// A strip and its templates, ready to score positions.
struct Matcher<'a> {
    strip: &'a Strip,
    templates: &'a Templates,
    moments: Moments,
    /// How far from its nominal place the first pass looks for a glyph.
    reach: i32,
}

impl<'a> Matcher<'a> {
    fn new(strip: &'a Strip, templates: &'a Templates) -> Self {
        Self {
            strip,
            templates,
            moments: Moments::new(strip),
            reach: ((templates.advance * 0.25).round() as i32).max(2),
        }
    }

    /// The left edge of cell `k`'s template box at its nominal place.
    fn nominal_left(&self, k: usize) -> i32 {
        (self.strip.cells[k] - self.templates.width as f32 / 2.0).round() as i32
    }

    /// The first pass at cell `k`: coarse steps over the whole reach, then the best position's
    /// neighbours.
    fn locate(&self, k: usize) -> Hit {
        let coarse = self.search(self.nominal_left(k), PAD_Y as i32, self.reach, 2, 2);
        self.search(coarse.left, coarse.top, 1, 1, 1)
    }

    /// The best template and position within `reach_x` × `reach_y` of (`left`, `top`), in
    /// steps of `step` pixels.
    fn search(&self, left: i32, top: i32, reach_x: i32, reach_y: i32, step: i32) -> Hit {
        let mut best = Hit {
            score: f32::MIN,
            glyph: ALPHABET.len() - 1,
            left,
            top,
        };
        let mut dy = -reach_y;
        while dy <= reach_y {
            let mut dx = -reach_x;
            while dx <= reach_x {
                if let Some(hit) = self.best_at(left + dx, top + dy) {
                    if hit.score > best.score {
                        best = hit;
                    }
                }
                dx += step;
            }
            dy += step;
        }
        if best.score == f32::MIN {
            best.score = 0.0;
        }
        best
    }

    /// The template correlating best with the patch at (`left`, `top`); `None` off the strip.
    fn best_at(&self, left: i32, top: i32) -> Option<Hit> {
        let (w, h) = (self.templates.width, self.templates.height);
        let (l, t) = (usize::try_from(left).ok()?, usize::try_from(top).ok()?);
        if l + w > self.strip.width || t + h > self.strip.height {
            return None;
        }
        let spread = self.moments.spread(l, t, w, h).sqrt() as f32;
        if spread < 1e-3 {
            // A blank patch: nothing printed, no character matches.
            return Some(Hit {
                score: 0.0,
                glyph: ALPHABET.len() - 1,
                left,
                top,
            });
        }
        let sums = self.correlate(l, t);
        let (glyph, score) = self
            .templates
            .glyphs
            .iter()
            .enumerate()
            .map(|(i, g)| (i, sums[i] / (g.norm * spread)))
            .fold((0, f32::MIN), |best, c| if c.1 > best.1 { c } else { best });
        Some(Hit { score, glyph, left, top })
    }

    /// The dot products of the patch at (`l`, `t`) with every template, in one pass.
    fn correlate(&self, l: usize, t: usize) -> [f32; LANES] {
        let (w, h) = (self.templates.width, self.templates.height);
        let mut sums = [0f32; LANES];
        for row in 0..h {
            let patch = &self.strip.ink[(t + row) * self.strip.width + l..][..w];
            let values = &self.templates.interleaved[row * w * LANES..][..w * LANES];
            for (&ink, lanes) in patch.iter().zip(values.chunks_exact(LANES)) {
                for (sum, &v) in sums.iter_mut().zip(lanes) {
                    *sum += ink * v;
                }
            }
        }
        sums
    }
}

/// The cells the first pass looks at: a regular sample, the last cell always included.
fn sampled(cells: usize) -> Vec<usize> {
    let mut ks: Vec<usize> = (0..cells).step_by(SAMPLE_STRIDE).collect();
    if cells > 0 && ks.last() != Some(&(cells - 1)) {
        ks.push(cells - 1);
    }
    ks
}

/// The mean first-pass score over the sampled cells: how well the strip's resampling fits the
/// print (used to choose the font size).
pub(super) fn probe(strip: &Strip, templates: &Templates) -> f32 {
    let matcher = Matcher::new(strip, templates);
    let ks = sampled(strip.cells.len());
    let total: f32 = ks
        .iter()
        .map(|&k| matcher.search(matcher.nominal_left(k), PAD_Y as i32, matcher.reach, 2, 2).score)
        .sum();
    total / ks.len().max(1) as f32
}

/// Reads every cell of `strip`.
pub(super) fn read_line(strip: &Strip, templates: &Templates) -> LineRead {
    let matcher = Matcher::new(strip, templates);
    let n = strip.cells.len();
    let first: Vec<(usize, Hit)> = sampled(n).into_iter().map(|k| (k, matcher.locate(k))).collect();
    let lefts = fit_line(&first, n, |h| h.left, |k| matcher.nominal_left(k));
    let tops = fit_line(&first, n, |h| h.top, |_| PAD_Y as i32);
    let second: Vec<Hit> = lefts
        .iter()
        .zip(&tops)
        .map(|(&left, &top)| matcher.search(left.round() as i32, top.round() as i32, 1, 1, 1))
        .collect();
    LineRead {
        text: second.iter().map(|h| char::from(ALPHABET[h.glyph])).collect(),
        scores: second.iter().map(|h| h.score.clamp(0.0, 1.0)).collect(),
    }
}

/// The positions of cells `0..n` on the least-squares line through the reliable first-pass
/// positions `at(hit)` of cells `k`; `nominal(k)` when too few are reliable.
fn fit_line(hits: &[(usize, Hit)], n: usize, at: impl Fn(&Hit) -> i32, nominal: impl Fn(usize) -> i32) -> Vec<f32> {
    let points: Vec<(f64, f64)> = hits
        .iter()
        .filter(|(_, h)| h.score >= RELIABLE)
        .map(|(k, h)| (*k as f64, f64::from(at(h))))
        .collect();
    if points.len() < 3 {
        return (0..n).map(|k| nominal(k) as f32).collect();
    }
    let count = points.len() as f64;
    let (mk, mp) = (
        points.iter().map(|p| p.0).sum::<f64>() / count,
        points.iter().map(|p| p.1).sum::<f64>() / count,
    );
    let skk: f64 = points.iter().map(|p| (p.0 - mk).powi(2)).sum();
    let skp: f64 = points.iter().map(|p| (p.0 - mk) * (p.1 - mp)).sum();
    let slope = if skk > 0.0 { skp / skk } else { 0.0 };
    (0..n).map(|k| (mp + slope * (k as f64 - mk)) as f32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::mrz::read::glyphs::templates;

    /// `text` drawn from the templates themselves into a strip, at `pitch` and shifted by
    /// (`dx`, `dy`), with deterministic noise of amplitude `noise`.
    fn rendered(text: &str, pitch: f32, dx: f32, dy: usize, noise: f32) -> Strip {
        let t = templates().expect("templates");
        let margin = t.width as f32;
        let width = ((text.len() - 1) as f32 * pitch + 2.0 * margin).ceil() as usize;
        let height = t.height + 2 * PAD_Y;
        let mut ink = vec![0f32; width * height];
        let mut seed = 0x2545_f491_u32;
        for (k, c) in text.bytes().enumerate() {
            let g = &t.glyphs[ALPHABET.iter().position(|&a| a == c).expect("MRZ character")];
            let min = g.values.iter().copied().fold(f32::MAX, f32::min);
            let left = (margin + k as f32 * pitch - t.width as f32 / 2.0 + dx).round() as usize;
            for y in 0..t.height {
                for x in 0..t.width {
                    let v = (g.values[y * t.width + x] - min) * 200.0;
                    let at = &mut ink[(y + PAD_Y + dy) * width + left + x];
                    *at = at.max(v);
                }
            }
        }
        for v in &mut ink {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            *v += (seed as f32 / u32::MAX as f32 - 0.5) * noise;
        }
        let cells = (0..text.len()).map(|k| margin + k as f32 * pitch).collect();
        Strip { width, height, ink, cells }
    }

    const LINE: &str = "P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<";
    const DIGITS: &str = "L898902C36UTO7408122F1204159ZE184226B<<<<<10";

    #[test]
    fn a_clean_rendered_line_reads_exactly() {
        let t = templates().expect("templates");
        for text in [LINE, DIGITS, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789<"] {
            let read = read_line(&rendered(text, t.advance, 0.0, 0, 0.0), t);
            assert_eq!(read.text, text);
            assert!(read.scores.iter().all(|&s| s > 0.99), "{:?}", read.scores);
        }
    }

    #[test]
    fn shifted_noisy_lines_read_exactly() {
        let t = templates().expect("templates");
        for (dx, dy) in [(3.0, 0), (-4.0, 2), (2.0, 4)] {
            let read = read_line(&rendered(DIGITS, t.advance, dx, dy, 120.0), t);
            assert_eq!(read.text, DIGITS, "shift {dx},{dy}");
            assert!(read.scores.iter().all(|&s| s > 0.7), "{:?}", read.scores);
        }
    }

    #[test]
    fn blank_strip_scores_nothing() {
        let t = templates().expect("templates");
        let mut strip = rendered("<<<", t.advance, 0.0, 0, 0.0);
        strip.ink.iter_mut().for_each(|v| *v = 0.0);
        let read = read_line(&strip, t);
        assert_eq!(read.text.len(), 3);
        assert!(read.scores.iter().all(|&s| s == 0.0));
    }

    #[test]
    fn fitted_positions_ignore_unreliable_cells() {
        let hit = |score, left| Hit {
            score,
            glyph: 0,
            left,
            top: 5,
        };
        let hits = [
            (0, hit(0.9, 10)),
            (3, hit(0.9, 79)),
            (6, hit(0.1, 90)),
            (9, hit(0.9, 217)),
            (10, hit(0.9, 240)),
        ];
        let fitted = fit_line(&hits, 11, |h| h.left, |_| 0);
        assert!((fitted[6] - 148.0).abs() < 0.5, "{fitted:?}");
        assert!((fitted[1] - 33.0).abs() < 0.5, "{fitted:?}");
        let unreliable = [(0, hit(0.2, 10)), (3, hit(0.9, 79))];
        assert_eq!(fit_line(&unreliable, 2, |h| h.left, |k| k as i32 * 7), vec![0.0, 7.0]);
    }

    #[test]
    fn probe_scores_print_high_and_blank_zero() {
        let t = templates().expect("templates");
        let right = probe(&rendered(DIGITS, t.advance, 0.0, 0, 0.0), t);
        assert!(right > 0.99, "{right}");
        let blank = rendered("<<<", t.advance, 0.0, 0, 0.0);
        assert!(
            probe(
                &Strip {
                    ink: vec![0.0; blank.ink.len()],
                    ..blank
                },
                t
            ) == 0.0
        );
    }
}
