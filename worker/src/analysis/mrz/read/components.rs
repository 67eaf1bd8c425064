//! Connected blobs of ink: the candidates for glyphs, from which text lines are assembled.

use super::binarise::Ink;

/// Past this many blobs the image is noise, not a document: the rest are ignored.
const MAX_BLOBS: usize = 60_000;

/// A connected set of ink pixels (8-connectivity), by its bounding box `[x0, x1) × [y0, y1)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Blob {
    pub x0: u32,
    pub y0: u32,
    pub x1: u32,
    pub y1: u32,
    pub area: u32,
}

impl Blob {
    pub fn width(&self) -> f32 {
        (self.x1 - self.x0) as f32
    }

    pub fn height(&self) -> f32 {
        (self.y1 - self.y0) as f32
    }

    pub fn centre(&self) -> (f32, f32) {
        ((self.x0 + self.x1) as f32 / 2.0, (self.y0 + self.y1) as f32 / 2.0)
    }
}

/// Every blob of `ink`, in scan order.
pub(crate) fn blobs(ink: &Ink) -> Vec<Blob> {
    let (w, h) = (ink.width, ink.height);
    let mut seen = vec![false; w * h];
    let mut stack = Vec::new();
    let mut found = Vec::new();
    for start in 0..w * h {
        if !ink.data[start] || seen[start] {
            continue;
        }
        if found.len() >= MAX_BLOBS {
            break;
        }
        seen[start] = true;
        stack.push(start);
        let (sx, sy) = ((start % w) as u32, (start / w) as u32);
        let mut blob = Blob {
            x0: sx,
            y0: sy,
            x1: sx + 1,
            y1: sy + 1,
            area: 0,
        };
        while let Some(at) = stack.pop() {
            let (x, y) = (at % w, at / w);
            blob.area += 1;
            blob.x0 = blob.x0.min(x as u32);
            blob.x1 = blob.x1.max(x as u32 + 1);
            blob.y1 = blob.y1.max(y as u32 + 1);
            for ny in y.saturating_sub(1)..(y + 2).min(h) {
                for nx in x.saturating_sub(1)..(x + 2).min(w) {
                    let next = ny * w + nx;
                    if ink.data[next] && !seen[next] {
                        seen[next] = true;
                        stack.push(next);
                    }
                }
            }
        }
        found.push(blob);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ink(rows: &[&str]) -> Ink {
        Ink {
            width: rows[0].len(),
            height: rows.len(),
            data: rows.iter().flat_map(|r| r.bytes().map(|b| b == b'#')).collect(),
        }
    }

    #[test]
    fn blobs_are_8_connected_with_tight_boxes() {
        let found = blobs(&ink(&[
            "#.....##", //
            ".#....#.", "..#.....", "........", "...###..",
        ]));
        assert_eq!(found.len(), 3, "{found:?}");
        assert_eq!(
            found[0],
            Blob {
                x0: 0,
                y0: 0,
                x1: 3,
                y1: 3,
                area: 3
            }
        );
        assert_eq!(
            found[1],
            Blob {
                x0: 6,
                y0: 0,
                x1: 8,
                y1: 2,
                area: 3
            }
        );
        assert_eq!(
            found[2],
            Blob {
                x0: 3,
                y0: 4,
                x1: 6,
                y1: 5,
                area: 3
            }
        );
        assert_eq!(found[2].centre(), (4.5, 4.5));
    }

    #[test]
    fn u_shapes_are_one_blob() {
        let found = blobs(&ink(&["#...#", "#...#", "#####"]));
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].width(), found[0].height(), found[0].area), (5.0, 3.0, 9));
    }
}
