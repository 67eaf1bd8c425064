//! The plane geometry of faces: points, boxes, and the similarity transform (rotation, uniform
//! scale, translation) that carries five detected landmarks onto the five places the embedding
//! model expects them, fitted by least squares (Umeyama's method, no reflection).

/// A point in an image's pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub x: f32,
    pub y: f32,
}

impl Point {
    pub const fn new(x: f32, y: f32) -> Self {
        Self { x, y }
    }

    pub fn distance(self, other: Point) -> f32 {
        (self.x - other.x).hypot(self.y - other.y)
    }
}

/// An axis-aligned box: its top-left corner and its size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    pub x: f32,
    pub y: f32,
    pub width: f32,
    pub height: f32,
}

impl Rect {
    pub const fn new(x: f32, y: f32, width: f32, height: f32) -> Self {
        Self { x, y, width, height }
    }

    pub fn area(&self) -> f32 {
        self.width.max(0.0) * self.height.max(0.0)
    }

    /// Intersection over union: 0 for boxes apart, 1 for the same box.
    pub fn iou(&self, other: &Rect) -> f32 {
        let w = (self.x + self.width).min(other.x + other.width) - self.x.max(other.x);
        let h = (self.y + self.height).min(other.y + other.height) - self.y.max(other.y);
        let inter = w.max(0.0) * h.max(0.0);
        let union = self.area() + other.area() - inter;
        if union > 0.0 {
            inter / union
        } else {
            0.0
        }
    }
}

/// `p ↦ [a -b; b a]·p + (tx, ty)`: a rotation by an angle with a uniform scale `hypot(a, b)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Similarity {
    pub a: f64,
    pub b: f64,
    pub tx: f64,
    pub ty: f64,
}

impl Similarity {
    /// The similarity that carries `from` closest to `to` (least squares).
    pub fn fit(from: &[Point], to: &[Point]) -> Option<Similarity> {
        let n = from.len().min(to.len());
        if n < 2 {
            return None;
        }
        let mean = |points: &[Point]| {
            let (sx, sy) = points[..n]
                .iter()
                .fold((0.0, 0.0), |(sx, sy), p| (sx + f64::from(p.x), sy + f64::from(p.y)));
            (sx / n as f64, sy / n as f64)
        };
        let (fx, fy) = mean(from);
        let (gx, gy) = mean(to);
        // With centred points u (from) and v (to), the best [a -b; b a] minimises Σ|A·u - v|²:
        // a = Σ(u·v) / Σ|u|², b = Σ(u×v) / Σ|u|². (Umeyama's closed form in two dimensions.)
        let (mut dot, mut cross, mut norm) = (0.0, 0.0, 0.0);
        for (p, q) in from[..n].iter().zip(&to[..n]) {
            let (ux, uy) = (f64::from(p.x) - fx, f64::from(p.y) - fy);
            let (vx, vy) = (f64::from(q.x) - gx, f64::from(q.y) - gy);
            dot += ux * vx + uy * vy;
            cross += ux * vy - uy * vx;
            norm += ux * ux + uy * uy;
        }
        if norm <= f64::EPSILON {
            return None;
        }
        let (a, b) = (dot / norm, cross / norm);
        Some(Similarity {
            a,
            b,
            tx: gx - (a * fx - b * fy),
            ty: gy - (b * fx + a * fy),
        })
    }

    pub fn apply(&self, p: Point) -> Point {
        let (x, y) = (f64::from(p.x), f64::from(p.y));
        Point::new(
            (self.a * x - self.b * y + self.tx) as f32,
            (self.b * x + self.a * y + self.ty) as f32,
        )
    }

    /// The transform that undoes this one; `None` when it squashes everything to a point.
    pub fn inverse(&self) -> Option<Similarity> {
        let det = self.a * self.a + self.b * self.b;
        if det <= f64::EPSILON {
            return None;
        }
        let (a, b) = (self.a / det, -self.b / det);
        Some(Similarity {
            a,
            b,
            tx: -(a * self.tx - b * self.ty),
            ty: -(b * self.tx + a * self.ty),
        })
    }

    pub fn scale(&self) -> f64 {
        self.a.hypot(self.b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_similarity_is_found_again_and_undone() {
        let truth = Similarity {
            a: 0.8,
            b: 0.3,
            tx: 12.0,
            ty: -4.0,
        };
        let from = [
            Point::new(10.0, 20.0),
            Point::new(50.0, 22.0),
            Point::new(30.0, 40.0),
            Point::new(15.0, 60.0),
        ];
        let to: Vec<Point> = from.iter().map(|&p| truth.apply(p)).collect();
        let fitted = Similarity::fit(&from, &to).unwrap();
        for (got, want) in [(fitted.a, 0.8), (fitted.b, 0.3), (fitted.tx, 12.0), (fitted.ty, -4.0)] {
            assert!((got - want).abs() < 1e-6, "{fitted:?}");
        }
        let back = fitted.inverse().unwrap().apply(to[2]);
        assert!(back.distance(from[2]) < 1e-3);
        assert!((fitted.scale() - 0.8f64.hypot(0.3)).abs() < 1e-5);
    }

    #[test]
    fn one_point_or_one_place_fits_nothing() {
        let p = Point::new(1.0, 1.0);
        assert!(Similarity::fit(&[p], &[p]).is_none());
        assert!(Similarity::fit(&[p, p], &[Point::new(0.0, 0.0), Point::new(1.0, 0.0)]).is_none());
    }

    #[test]
    fn boxes_overlap_by_their_shared_area() {
        let a = Rect::new(0.0, 0.0, 10.0, 10.0);
        assert_eq!(a.iou(&a), 1.0);
        assert_eq!(a.iou(&Rect::new(20.0, 0.0, 10.0, 10.0)), 0.0);
        assert!((a.iou(&Rect::new(5.0, 0.0, 10.0, 10.0)) - 50.0 / 150.0).abs() < 1e-6);
    }
}
