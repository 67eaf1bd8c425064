//! Documents photographed at an angle, as a hand-held phone takes them (issue 29, item 7): every
//! kind of document the engine reads (the identity samples, the photographed proof of address and
//! the sample pages rendered at 150 dpi) laid on a table (a wood or a granite texture, made here
//! and deterministic), turned in depth left or right (yaw) by 20° and 30°, or tilted top or bottom
//! (pitch) by 15° and 25°, seen through a phone's lens so that its edges converge, and saved as a
//! JPEG (the proof of address also as a PDF of that JPEG, as a phone saves a photo as a PDF). Each
//! photo must keep the verdict, document type and findings of the flat document.
//!
//! Every photo costs an analysis (several OCR runs for a page), so by default a card is photographed
//! twice, once turned and once tilted, and a page once, turned or tilted in turn, the angles
//! rotating from one document to the next: the cards meet all eight angles, the pages both kinds of
//! tilt (16 photos in all, about 20 s of CPU). `SCEAU_TILT=full` photographs every document at
//! every angle (88 photos) and prints how many keep their findings by kind of tilt, and the time
//! straightening takes (the figures of `docs/measurements/2026-11-tilted-photos.md`);
//! `SCEAU_TILT_DUMP=<dir>` keeps the photos and their straightened images there;
//! `SCEAU_TILT_ONLY=<part of a file name>` photographs only the documents whose sample's name holds it.

use std::io::Cursor;
use std::time::{Duration, Instant};

use domain::analysis::AnalysisReport;
use domain::vocabulary::DocumentCategory;
use image::{DynamicImage, GenericImageView, Rgb, RgbImage};

use super::corpus::render_150_dpi;
use super::{analyse, engine, input, shared_data};
use crate::analysis::builtin::BuiltinEngine;
use crate::analysis::perspective;

/// How the document is held before the lens, in degrees.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Tilt {
    /// Turned in depth about its vertical axis: positive brings its right edge nearer.
    Yaw(f64),
    /// Tilted about its horizontal axis: positive takes its top edge away, as a page on a table.
    Pitch(f64),
}

impl Tilt {
    fn label(self) -> String {
        match self {
            Tilt::Yaw(degrees) => format!("turned {} {}°", if degrees > 0.0 { "left" } else { "right" }, degrees.abs()),
            Tilt::Pitch(degrees) => format!("tilted {} {}°", if degrees > 0.0 { "back" } else { "forward" }, degrees.abs()),
        }
    }

    /// The kind of tilt and its size, for the figures: "yaw 20°", "pitch 25°".
    fn kind(self) -> String {
        match self {
            Tilt::Yaw(degrees) => format!("yaw {}°", degrees.abs()),
            Tilt::Pitch(degrees) => format!("pitch {}°", degrees.abs()),
        }
    }
}

const YAWS: [Tilt; 4] = [Tilt::Yaw(20.0), Tilt::Yaw(-30.0), Tilt::Yaw(-20.0), Tilt::Yaw(30.0)];
const PITCHES: [Tilt; 4] = [Tilt::Pitch(25.0), Tilt::Pitch(-15.0), Tilt::Pitch(-25.0), Tilt::Pitch(15.0)];

/// What the document lies on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Table {
    /// Brown boards with their grain.
    Wood,
    /// A grey speckled stone, blotched.
    Granite,
}

/// Where a document comes from.
enum Source {
    /// An image sample, photographed as it is.
    Image(&'static str),
    /// An image sample, photographed as it is, and every photo of it saved as a one-page PDF (as a
    /// phone's "save as PDF" does, without straightening it).
    ImageInPdf(&'static str),
    /// A PDF sample, rendered at 150 dpi by `pdftoppm` as the page a customer would print.
    Pdf(&'static str),
}

struct Document {
    source: Source,
    category: DocumentCategory,
    /// A card: its corners are rounded (ID-1's 3.18 mm on 85.6).
    card: bool,
    /// The sample is itself a photo of the page on a dark table, slightly askew: it is straightened
    /// flat too, where the others (scans, renders) fill their frame and are left alone.
    photo: bool,
}

const IDENTITY: [Document; 5] = [
    card("identite/sample-cni-td1-valide.png"),
    card("identite/sample-cni-ancienne-valide.png"),
    card("identite/sample-passeport-td3-valide.jpg"),
    card("identite/sample-passeport-td3-cle-fausse.png"),
    card("identite/sample-id-td1-bel-expiree.jpg"),
];

const PAGES: [Document; 6] = [
    Document {
        source: Source::Image("administratif/sample-domicile-v03-photo.jpg"),
        category: DocumentCategory::Administratif,
        card: false,
        photo: true,
    },
    Document {
        source: Source::ImageInPdf("administratif/sample-domicile-v03-photo.jpg"),
        category: DocumentCategory::Administratif,
        card: false,
        photo: true,
    },
    page(Source::Pdf("administratif/sample-facture-v04.pdf")),
    page(Source::Pdf("administratif/sample-avis-impot-v04-rfr-modifie.pdf")),
    page(Source::Pdf("administratif/sample-bulletin-v03-montant-different.pdf")),
    page(Source::Pdf("administratif/sample-facture-sans-2ddoc.pdf")),
];

const fn card(path: &'static str) -> Document {
    Document {
        source: Source::Image(path),
        category: DocumentCategory::Identite,
        card: true,
        photo: false,
    }
}

const fn page(source: Source) -> Document {
    Document {
        source,
        category: DocumentCategory::Administratif,
        card: false,
        photo: false,
    }
}

impl Document {
    fn name(&self) -> &'static str {
        match self.source {
            Source::Image(path) | Source::ImageInPdf(path) | Source::Pdf(path) => path,
        }
    }

    fn bytes(&self) -> Vec<u8> {
        let path = shared_data().join("samples").join(self.name());
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// The flat document's pixels: the image as the samples give it, or the page rendered (a scan).
    fn flat(&self) -> Vec<u8> {
        match self.source {
            Source::Image(_) | Source::ImageInPdf(_) => self.bytes(),
            Source::Pdf(_) => render_150_dpi(&self.bytes()),
        }
    }

    /// The file sent of a JPEG of the document (flat or photographed): the JPEG, or a PDF of it.
    fn file(&self, jpeg: Vec<u8>) -> Vec<u8> {
        match self.source {
            Source::ImageInPdf(_) => pdf_of_jpeg(jpeg),
            Source::Image(_) | Source::Pdf(_) => jpeg,
        }
    }

    /// The document as the lens sees it: an image sample as it is; a printed page finer than any
    /// photo of it (rendered at 300 dpi), so that the photo's own pixels, not a second resampling
    /// of the scan's, limit its sharpness.
    fn seen(&self, flat: &[u8]) -> RgbImage {
        let seen = match self.source {
            Source::Image(_) | Source::ImageInPdf(_) => flat.to_vec(),
            Source::Pdf(_) => render_pdf(&self.bytes(), 300),
        };
        image::load_from_memory(&seen).expect("the document decodes").to_rgb8()
    }
}

/// A one-page PDF whose page is the JPEG `jpeg`, one point a pixel, as a phone saves a photo.
fn pdf_of_jpeg(jpeg: Vec<u8>) -> Vec<u8> {
    use lopdf::{dictionary, Document, Object, Stream};
    let (width, height) = image::load_from_memory(&jpeg).expect("the photo decodes").dimensions();
    let (width, height) = (i64::from(width), i64::from(height));
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let image_id = doc.add_object(Stream::new(
        dictionary! {
            "Type" => "XObject", "Subtype" => "Image", "Width" => width, "Height" => height,
            "ColorSpace" => "DeviceRGB", "BitsPerComponent" => 8, "Filter" => "DCTDecode",
        },
        jpeg,
    ));
    let content = format!("q {width} 0 0 {height} 0 0 cm /Im0 Do Q");
    let content_id = doc.add_object(Stream::new(dictionary! {}, content.into_bytes()));
    let page_id = doc.add_object(dictionary! {
        "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
        "MediaBox" => vec![0.into(), 0.into(), width.into(), height.into()],
        "Resources" => dictionary! { "XObject" => dictionary! { "Im0" => image_id } },
    });
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => vec![page_id.into()], "Count" => 1 }),
    );
    let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog_id);
    let mut out = Vec::new();
    doc.save_to(&mut out).expect("save the PDF");
    out
}

/// `pdf`'s page rendered in grey at `dpi` by `pdftoppm`, as a PNG.
fn render_pdf(pdf: &[u8], dpi: u32) -> Vec<u8> {
    let dir = std::env::temp_dir().join(format!("sceau-tilt-{}-{dpi}-{:x}", std::process::id(), pdf.len()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let source = dir.join("page.pdf");
    std::fs::write(&source, pdf).expect("write the page");
    let status = std::process::Command::new("pdftoppm")
        .args(["-r", &dpi.to_string(), "-gray", "-png", "-singlefile"])
        .arg(&source)
        .arg(dir.join("page"))
        .status()
        .expect("pdftoppm (Debian poppler-utils) must be installed: scripts/test installs it");
    assert!(status.success(), "pdftoppm failed");
    let page = std::fs::read(dir.join("page.png")).expect("the rendered page");
    let _ = std::fs::remove_dir_all(&dir);
    page
}

/// The angles document `index` is photographed at: every angle when `full`, else `shots` (one or
/// two) of a yaw and a pitch that rotate with the index.
fn angles(index: usize, full: bool, shots: usize) -> Vec<Tilt> {
    if full {
        return YAWS.into_iter().chain(PITCHES).collect();
    }
    let pair = [YAWS[index % YAWS.len()], PITCHES[index % PITCHES.len()]];
    if shots >= 2 {
        pair.to_vec()
    } else {
        vec![pair[index % 2]]
    }
}

/// What a photo must keep of the flat document's report.
fn findings(report: &AnalysisReport) -> String {
    let codes: Vec<&str> = report.anomalies.iter().map(|a| a.code.as_str()).collect();
    format!(
        "{} {} {} {:?}",
        report.verdict.as_str(),
        report.document_type.as_str(),
        report.document_country.as_deref().unwrap_or("-"),
        codes
    )
}

/// One photo's outcome.
struct Outcome {
    document: &'static str,
    tilt: Tilt,
    kept: bool,
    detail: String,
    /// How long straightening took on the photo, and on the flat document it was made from when
    /// that fills its frame.
    straightening: Duration,
    flat_straightening: Option<Duration>,
}

/// How long `perspective::straighten` takes on the decoded image of `bytes`, and whether it
/// straightened it; with `dump`, the straightened image is kept there as `name`.
fn straightening_time(bytes: &[u8], dump: Option<(&std::path::Path, &str)>) -> (Duration, bool) {
    let decoded = image::load_from_memory(bytes).expect("the image decodes");
    let started = Instant::now();
    let straightened = perspective::straighten(&decoded);
    let elapsed = started.elapsed();
    if let (Some((dir, name)), Some(image)) = (dump, &straightened) {
        image.save(dir.join(name)).expect("dump the straightened image");
    }
    (elapsed, straightened.is_some())
}

/// Photographs each document at its angles and analyses flat and photos alike.
async fn photograph_all(engine: &BuiltinEngine, documents: &[Document], full: bool, shots: usize) -> Vec<Outcome> {
    let dump = std::env::var_os("SCEAU_TILT_DUMP").map(std::path::PathBuf::from);
    if let Some(dir) = &dump {
        std::fs::create_dir_all(dir).expect("the dump directory");
    }
    let only = std::env::var("SCEAU_TILT_ONLY").ok();
    let mut outcomes = Vec::new();
    for (index, document) in documents.iter().enumerate() {
        if only.as_deref().is_some_and(|part| !document.name().contains(part)) {
            continue;
        }
        let flat = document.flat();
        let expected = analyse(engine, input(document.category, document.file(flat.clone())))
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", document.name()));
        let expected = findings(&expected);
        let size = image::load_from_memory(&flat).expect("the flat document decodes").dimensions();
        let seen = document.seen(&flat);
        let (flat_straightening, straightened) = straightening_time(&flat, None);
        assert_eq!(
            straightened,
            document.photo,
            "{}: only a photo on a table is straightened",
            document.name()
        );
        // The time on a document that fills its frame: what every scan pays.
        let flat_straightening = (!document.photo).then_some(flat_straightening);
        for (shot, tilt) in angles(index, full, shots).into_iter().enumerate() {
            let table = if (index + shot) % 2 == 0 { Table::Wood } else { Table::Granite };
            // A hand never holds a phone quite level: a slight roll, one way or the other. Lenses
            // differ: a wide main camera, or one a little longer than the engine assumes.
            let (roll, lens) = if (index + shot) % 2 == 0 { (2.5, 0.68) } else { (-3.5, 0.85) };
            let photo = photograph(&seen, size, tilt, roll, lens, table, document.card);
            let bytes = jpeg(&photo, 88);
            let in_pdf = if matches!(document.source, Source::ImageInPdf(_)) {
                "-in-pdf"
            } else {
                ""
            };
            let name = format!("{}{in_pdf}-{}", document.name().replace('/', "-"), tilt.label().replace(' ', "-"));
            if let Some(dir) = &dump {
                // As a PNG of the JPEG's pixels: what the engine reads, in a format every viewer shows.
                let decoded = image::load_from_memory(&bytes).expect("the photo decodes");
                decoded.save(dir.join(format!("{name}.png"))).expect("dump the photo");
            }
            let straightened_name = format!("{name}-straightened.png");
            let (straightening, _) = straightening_time(&bytes, dump.as_deref().map(|dir| (dir, straightened_name.as_str())));
            let report = analyse(engine, input(document.category, document.file(bytes))).await;
            let got = match &report {
                Ok(report) => findings(report),
                Err(error) => format!("error: {error}"),
            };
            outcomes.push(Outcome {
                document: document.name(),
                tilt,
                kept: got == expected,
                detail: format!("{} {}: {got}, flat {expected}", document.name(), tilt.label()),
                straightening,
                flat_straightening,
            });
        }
    }
    outcomes
}

/// The outcomes counted by kind of tilt, for the measurements.
fn figures(outcomes: &[Outcome]) -> String {
    let mut kinds: Vec<String> = outcomes.iter().map(|o| o.tilt.kind()).collect();
    kinds.dedup();
    kinds.sort();
    kinds.dedup();
    let mut lines = Vec::new();
    for kind in kinds {
        let of_kind: Vec<&Outcome> = outcomes.iter().filter(|o| o.tilt.kind() == kind).collect();
        let kept = of_kind.iter().filter(|o| o.kept).count();
        lines.push(format!("{kind}: {kept} of {} keep their findings", of_kind.len()));
    }
    let kept = outcomes.iter().filter(|o| o.kept).count();
    lines.push(format!("all: {kept} of {}", outcomes.len()));
    let median = |mut times: Vec<Duration>| {
        times.sort();
        times.get(times.len() / 2).copied().unwrap_or_default()
    };
    lines.push(format!(
        "straightening, median: {:.1} ms on a flat document, {:.1} ms on a photo",
        median(outcomes.iter().filter_map(|o| o.flat_straightening).collect()).as_secs_f64() * 1000.0,
        median(outcomes.iter().map(|o| o.straightening).collect()).as_secs_f64() * 1000.0
    ));
    lines.join("\n")
}

async fn check(documents: &[Document], shots: usize) {
    let full = std::env::var("SCEAU_TILT").is_ok_and(|v| v == "full");
    let outcomes = photograph_all(&engine(), documents, full, shots).await;
    let failed: Vec<&str> = outcomes.iter().filter(|o| !o.kept).map(|o| o.detail.as_str()).collect();
    let summary = figures(&outcomes);
    println!("{summary}");
    for outcome in &outcomes {
        println!(
            "{} {}: {}",
            outcome.document,
            outcome.tilt.label(),
            if outcome.kept { "kept" } else { "lost" }
        );
    }
    assert!(failed.is_empty(), "{summary}\n{}", failed.join("\n"));
}

#[tokio::test(flavor = "multi_thread")]
async fn identity_documents_photographed_at_an_angle_keep_their_findings() {
    check(&IDENTITY, 2).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pages_photographed_at_an_angle_keep_their_findings() {
    check(&PAGES, 1).await;
}

/// `image` as a JPEG of `quality`.
pub(super) fn jpeg(image: &RgbImage, quality: u8) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality)
        .encode_image(&DynamicImage::ImageRgb8(image.clone()))
        .expect("JPEG");
    out.into_inner()
}

/// A 3×3 rotation matrix, rows first.
type Matrix = [[f64; 3]; 3];

fn multiply(a: &Matrix, b: &Matrix) -> Matrix {
    let mut out = [[0.0; 3]; 3];
    for (i, row) in out.iter_mut().enumerate() {
        for (j, cell) in row.iter_mut().enumerate() {
            *cell = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    out
}

/// The document's orientation before the lens: `tilt`, then `roll` degrees in the image plane.
fn orientation(tilt: Tilt, roll: f64) -> Matrix {
    let (yaw, pitch) = match tilt {
        Tilt::Yaw(degrees) => (degrees.to_radians(), 0.0),
        Tilt::Pitch(degrees) => (0.0, degrees.to_radians()),
    };
    let (sy, cy) = yaw.sin_cos();
    let (sp, cp) = pitch.sin_cos();
    let (sr, cr) = roll.to_radians().sin_cos();
    // About the vertical axis (y), then the horizontal one (x), then the optical axis (z). Positive
    // yaw brings +x (the right edge) to smaller depths; positive pitch takes -y (the top) further.
    let yaw: Matrix = [[cy, 0.0, sy], [0.0, 1.0, 0.0], [-sy, 0.0, cy]];
    let pitch: Matrix = [[1.0, 0.0, 0.0], [0.0, cp, sp], [0.0, -sp, cp]];
    let roll: Matrix = [[cr, -sr, 0.0], [sr, cr, 0.0], [0.0, 0.0, 1.0]];
    multiply(&roll, &multiply(&pitch, &yaw))
}

/// A photo of `document` (the flat document of `size`, or a finer rendering of it) held at `tilt`
/// (and `roll`) over `table`, through a phone's lens: a 4:3 frame whose longer side is the flat
/// document's divided by 0.72 (the document at its centre's depth
/// keeps its pixels' size and fills about three quarters of the frame), the focal length `lens`
/// times the frame's longer side (a phone's main camera is about 0.75, 26 mm equivalent), so the
/// document's nearer edge comes out larger than its further one. Each pixel is the mean of four
/// rays; a little sensor noise and uneven light are added.
pub(super) fn photograph(document: &RgbImage, size: (u32, u32), tilt: Tilt, roll: f64, lens: f64, table: Table, card: bool) -> RgbImage {
    // The geometry in the flat document's pixels; `document` may be finer.
    let (w, h) = (f64::from(size.0), f64::from(size.1));
    let fineness = f64::from(document.width()) / w;
    let (frame_w, frame_h) = if w >= h {
        let long = (w / 0.72).round();
        (long, (long * 0.75).round())
    } else {
        let long = (h / 0.72).round();
        ((long * 0.75).round(), long)
    };
    let focal = lens * frame_w.max(frame_h);
    let distance = focal;
    let rotation = orientation(tilt, roll);
    let normal = [rotation[0][2], rotation[1][2], rotation[2][2]];
    let radius = if card { 0.037 * w.max(h) } else { 0.0 };
    let (cx, cy) = (frame_w / 2.0, frame_h / 2.0);
    // Where the ray through the photo's point (x, y) meets the document, in its pixels.
    let on_document = |x: f64, y: f64| -> Option<(f64, f64)> {
        let ray = [(x - cx) / focal, (y - cy) / focal, 1.0];
        let facing = normal[0] * ray[0] + normal[1] * ray[1] + normal[2] * ray[2];
        if facing.abs() < 1e-9 {
            return None;
        }
        let t = normal[2] * distance / facing;
        let point = [t * ray[0], t * ray[1], t * ray[2] - distance];
        // The transposed rotation brings the point back to the document's own axes.
        let u = rotation[0][0] * point[0] + rotation[1][0] * point[1] + rotation[2][0] * point[2] + w / 2.0;
        let v = rotation[0][1] * point[0] + rotation[1][1] * point[1] + rotation[2][1] * point[2] + h / 2.0;
        inside(u, v, w, h, radius).then_some((u, v))
    };
    RgbImage::from_fn(frame_w as u32, frame_h as u32, |x, y| {
        // Four rays on the document; the table's texture, smooth at this scale, once for the rest.
        let mut sum = [0.0; 3];
        let mut on_table = 0.0;
        for (dx, dy) in [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)] {
            match on_document(f64::from(x) + dx, f64::from(y) + dy) {
                Some((u, v)) => {
                    for (s, c) in sum.iter_mut().zip(bilinear(document, u * fineness, v * fineness)) {
                        *s += c / 4.0;
                    }
                }
                None => on_table += 0.25,
            }
        }
        if on_table > 0.0 {
            for (s, c) in sum.iter_mut().zip(texture(table, f64::from(x) + 0.5, f64::from(y) + 0.5)) {
                *s += c * on_table;
            }
        }
        // Exposed for the scene as a phone does (white paper comes out near 235, not clipped); light
        // falls off towards the frame's corners and from one side; the sensor adds its grain.
        let (nx, ny) = ((f64::from(x) - cx) / frame_w, (f64::from(y) - cy) / frame_h);
        let light = 0.92 - 0.25 * (nx * nx + ny * ny) + 0.04 * nx;
        let grain = 3.0 * (hash(x, y, 7) - 0.5);
        Rgb(sum.map(|c| (c * light + grain).round().clamp(0.0, 255.0) as u8))
    })
}

/// Whether the document's point (u, v) is on it: its rectangle, less the corners' rounding.
fn inside(u: f64, v: f64, w: f64, h: f64, radius: f64) -> bool {
    if !(0.0..w).contains(&u) || !(0.0..h).contains(&v) {
        return false;
    }
    let dx = (radius - u).max(u - (w - radius)).max(0.0);
    let dy = (radius - v).max(v - (h - radius)).max(0.0);
    dx * dx + dy * dy <= radius * radius
}

fn bilinear(image: &RgbImage, u: f64, v: f64) -> [f64; 3] {
    let (u, v) = ((u - 0.5).max(0.0), (v - 0.5).max(0.0));
    let (x0, y0) = (u.floor() as u32, v.floor() as u32);
    let (x1, y1) = ((x0 + 1).min(image.width() - 1), (y0 + 1).min(image.height() - 1));
    let (x0, y0) = (x0.min(image.width() - 1), y0.min(image.height() - 1));
    let (fx, fy) = (u - u.floor(), v - v.floor());
    let at = |x: u32, y: u32, c: usize| f64::from(image.get_pixel(x, y)[c]);
    [0, 1, 2].map(|c| {
        let top = at(x0, y0, c) * (1.0 - fx) + at(x1, y0, c) * fx;
        let bottom = at(x0, y1, c) * (1.0 - fx) + at(x1, y1, c) * fx;
        top * (1.0 - fy) + bottom * fy
    })
}

/// The table's colour at a point of the photo.
fn texture(table: Table, x: f64, y: f64) -> [f64; 3] {
    let fine = hash(x as u32, y as u32, 1) - 0.5;
    match table {
        Table::Wood => {
            // Boards along x, their grain waving; darker late wood in thin bands.
            let phase = y * 0.045 + 2.5 * (x * 0.0031).sin() + 0.8 * (x * 0.011 + y * 0.002).sin();
            let band = 0.5 + 0.5 * phase.sin();
            let board = if ((y / 180.0).floor() as i64) % 2 == 0 { 0.0 } else { 0.05 };
            let level = 0.50 - 0.14 * band.powi(4) + board + 0.05 * fine;
            [255.0 * level, 255.0 * level * 0.70, 255.0 * level * 0.43]
        }
        Table::Granite => {
            let blotch = 0.6 * value_noise(x / 23.0, y / 23.0, 3) + 0.4 * value_noise(x / 7.0, y / 7.0, 5) - 0.5;
            let level = 0.52 + 0.18 * blotch + 0.16 * fine;
            [255.0 * level, 255.0 * level * 0.98, 255.0 * level * 0.95]
        }
    }
}

/// Smooth noise in [0, 1]: hashed lattice values, interpolated.
fn value_noise(x: f64, y: f64, seed: u64) -> f64 {
    let (x0, y0) = (x.floor(), y.floor());
    let (fx, fy) = (x - x0, y - y0);
    let (ix, iy) = (x0 as u32, y0 as u32);
    let smooth = |t: f64| t * t * (3.0 - 2.0 * t);
    let (sx, sy) = (smooth(fx), smooth(fy));
    let top = hash(ix, iy, seed) * (1.0 - sx) + hash(ix + 1, iy, seed) * sx;
    let bottom = hash(ix, iy + 1, seed) * (1.0 - sx) + hash(ix + 1, iy + 1, seed) * sx;
    top * (1.0 - sy) + bottom * sy
}

/// A deterministic value in [0, 1) for a point (SplitMix64's finaliser).
fn hash(x: u32, y: u32, seed: u64) -> f64 {
    let mut z = (u64::from(x) << 32 | u64::from(y)) ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}
