//! The outline found, the proportions told and the warp, on generated photos of a card.

use super::outline::through;
use super::proportions::snapped;
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
fn the_straightened_document_is_grey_as_its_readers_read_it() {
    let colour = photo(&card(), &TURNED, 900, 700);
    let grey = DynamicImage::ImageLuma8(colour.to_luma8());
    for photo in [colour, grey] {
        assert!(matches!(straighten(&photo), Some(DynamicImage::ImageLuma8(_))));
    }
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
