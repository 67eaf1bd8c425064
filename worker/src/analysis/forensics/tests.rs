//! Forensics tests: the shared samples give no finding, and every finding is produced by a file the
//! tests build themselves (edited metadata, appended revisions, blurred, burnt-out or tiny images).

use std::io::Cursor;
use std::path::PathBuf;

use common::document::{decode_image_checked, sniff, FileKind};
use common::test_fixtures::{png_chunk, PdfFixture};
use image::{DynamicImage, ImageFormat, Rgb, RgbImage};
use lopdf::{Document, Object, StringFormat};

use super::image_quality::measure;
use super::pdf::decode_text_string;
use super::*;

fn codes(anomalies: &[Anomaly]) -> Vec<AnomalyCode> {
    anomalies.iter().map(|a| a.code).collect()
}

fn samples_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/samples");
    assert!(
        dir.is_dir(),
        "the shared reference data is missing: expected the samples at {}",
        dir.display()
    );
    dir
}

fn sample_files(sub: &str, extensions: &[&str]) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(samples_dir().join(sub))
        .unwrap_or_else(|e| panic!("cannot list samples/{sub}: {e}"))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().and_then(|e| e.to_str()).is_some_and(|e| extensions.contains(&e)))
        .collect();
    files.sort();
    files
}

// ---------------------------------------------------------------------------------------------
// Catalogue

#[test]
fn each_code_is_reported_once() {
    assert_eq!(
        codes(&anomalies(&[
            AnomalyCode::LowResolution,
            AnomalyCode::LowResolution,
            AnomalyCode::BlurryImage
        ])),
        [AnomalyCode::LowResolution, AnomalyCode::BlurryImage]
    );
}

// ---------------------------------------------------------------------------------------------
// Samples: no finding

#[test]
fn sample_pdfs_have_no_finding() {
    let pdfs = sample_files("administratif", &["pdf"]);
    assert_eq!(pdfs.len(), 5, "expected the five administrative sample PDFs");
    for path in pdfs {
        let bytes = std::fs::read(&path).unwrap();
        let inspection = inspect_pdf(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        eprintln!(
            "{}: producer {:?}, creator {:?}, created {:?}, modified {:?}, updates {}, pages {}",
            path.file_name().unwrap().to_string_lossy(),
            inspection.producer,
            inspection.creator,
            inspection.created,
            inspection.modified,
            inspection.incremental_updates,
            inspection.pages
        );
        assert!(inspection.anomalies.is_empty(), "{}: {:?}", path.display(), inspection.anomalies);
        assert_eq!(inspection.incremental_updates, 0);
        assert!(inspection.producer.as_deref().is_some_and(|p| p.contains("ReportLab")));
        assert_eq!(inspection.created, inspection.modified);
        let expected_pages = if path.to_string_lossy().contains("deux-pages") { 2 } else { 1 };
        assert_eq!(inspection.pages, expected_pages, "{}", path.display());
    }
}

#[test]
fn sample_images_have_no_finding() {
    let mut images = sample_files("identite", &["png", "jpg"]);
    images.extend(sample_files("administratif", &["jpg", "png"]));
    let mut checked = 0;
    for path in images {
        let bytes = std::fs::read(&path).unwrap();
        // The text file renamed .jpg is refused at deposit; it never reaches the forensics.
        let Some(kind) = sniff(&bytes) else { continue };
        let image = decode_image_checked(kind, &bytes).unwrap();
        let measures = measure(&image);
        eprintln!("{}: {measures:?}", path.file_name().unwrap().to_string_lossy());
        let found = inspect_image(kind, &bytes, &image);
        assert!(found.is_empty(), "{}: {:?} ({measures:?})", path.display(), codes(&found));
        assert_eq!(unusable(&image, &THRESHOLDS), None, "{}", path.display());
        checked += 1;
    }
    assert_eq!(
        checked, 6,
        "expected five identity sample images and the photographed proof of address"
    );
}

// ---------------------------------------------------------------------------------------------
// Images no check can start on

#[test]
fn degenerate_images_are_unusable_with_their_reason() {
    let flat = |w: u32, h: u32, level: u8| DynamicImage::ImageRgb8(RgbImage::from_pixel(w, h, Rgb([level; 3])));
    let noise = |w: u32, h: u32| DynamicImage::ImageRgb8(RgbImage::from_fn(w, h, |x, y| Rgb([((x * 37 + y * 91) % 256) as u8; 3])));
    for (image, w, h) in [
        (noise(1, 1), 1, 1),
        (noise(3, 3), 3, 3),
        (noise(40, 30), 40, 30),
        (noise(2000, 60), 2000, 60),
    ] {
        let found = unusable(&image, &THRESHOLDS);
        assert!(
            matches!(found, Some(Unusable::TooSmall { width, height, .. }) if (width, height) == (w, h)),
            "{w}x{h}: {found:?}"
        );
        let reason = found.map(|u| u.to_string()).unwrap_or_default();
        assert!(reason.starts_with(&format!("the image is {w} x {h} pixels, far below")), "{reason}");
    }
    for level in [255, 0, 128] {
        let found = unusable(&flat(800, 600, level), &THRESHOLDS);
        assert_eq!(found, Some(Unusable::Uniform { range: 0 }), "level {level}");
        assert!(found.map(|u| u.to_string()).unwrap_or_default().contains("uniform"));
    }
    // Just above the floors, or a blank page with one printed mark: the other checks judge them.
    assert_eq!(unusable(&noise(300, 100), &THRESHOLDS), None);
    let mut marked = RgbImage::from_pixel(800, 600, Rgb([255; 3]));
    for x in 100..400 {
        for y in 300..306 {
            marked.put_pixel(x, y, Rgb([20; 3]));
        }
    }
    assert_eq!(unusable(&DynamicImage::ImageRgb8(marked), &THRESHOLDS), None);
}

// ---------------------------------------------------------------------------------------------
// PDFs built by the tests

fn literal(text: &str) -> Object {
    Object::String(text.as_bytes().to_vec(), StringFormat::Literal)
}

/// A one-page PDF whose Info dictionary holds `info` (key, value object).
fn pdf_with_info(info: Vec<(&str, Object)>) -> Vec<u8> {
    let mut dict = lopdf::Dictionary::new();
    for (key, value) in info {
        dict.set(key, value);
    }
    PdfFixture::new().blank_pages(1).info(dict).bytes()
}

fn generated_pdf() -> Vec<u8> {
    pdf_with_info(vec![
        ("Producer", literal("ReportLab PDF Library - www.reportlab.com")),
        ("Creator", literal("(unspecified)")),
        ("CreationDate", literal("D:20261103101500+01'00'")),
        ("ModDate", literal("D:20261103101500+01'00'")),
    ])
}

/// The offset the last `startxref` points to.
fn last_startxref(bytes: &[u8]) -> usize {
    let text = String::from_utf8_lossy(bytes);
    let at = text.rfind("startxref").unwrap();
    text[at + 9..].split_whitespace().next().unwrap().parse().unwrap()
}

/// Appends a revision holding one new object `body`, as an editor saving incrementally does.
fn append_revision(mut bytes: Vec<u8>, body: &str) -> Vec<u8> {
    let document = Document::load_mem(&bytes).unwrap();
    let root = document.trailer.get(b"Root").unwrap().as_reference().unwrap();
    let info = document.trailer.get(b"Info").unwrap().as_reference().unwrap();
    let id = document.max_id + 1;
    let prev = last_startxref(&bytes);
    bytes.extend_from_slice(b"\n");
    let object_at = bytes.len();
    bytes.extend_from_slice(format!("{id} 0 obj\n{body}\nendobj\n").as_bytes());
    let xref_at = bytes.len();
    let tail = format!(
        "xref\n0 1\n0000000000 65535 f \n{id} 1\n{object_at:010} 00000 n \ntrailer\n<< /Size {} /Root {} {} R /Info {} {} R /Prev {prev} >>\nstartxref\n{xref_at}\n%%EOF\n",
        id + 1,
        root.0,
        root.1,
        info.0,
        info.1
    );
    bytes.extend_from_slice(tail.as_bytes());
    bytes
}

#[test]
fn a_generated_pdf_has_no_finding() {
    let inspection = inspect_pdf(&generated_pdf()).unwrap();
    assert!(inspection.anomalies.is_empty(), "{:?}", inspection.anomalies);
    assert_eq!(inspection.incremental_updates, 0);
    assert_eq!(inspection.pages, 1);
    assert_eq!(inspection.producer.as_deref(), Some("ReportLab PDF Library - www.reportlab.com"));
    assert_eq!(inspection.created, parse_pdf_date("D:20261103091500Z"));
}

#[test]
fn an_incremental_update_is_a_modification() {
    let updated = append_revision(generated_pdf(), "(a replaced amount)");
    let inspection = inspect_pdf(&updated).unwrap();
    assert_eq!(inspection.incremental_updates, 1);
    assert_eq!(codes(&inspection.anomalies), [AnomalyCode::PdfModifiedAfterCreation]);

    let twice = append_revision(updated, "(another one)");
    assert_eq!(inspect_pdf(&twice).unwrap().incremental_updates, 2);
}

#[test]
fn a_signature_revision_is_not_a_modification() {
    let signed = append_revision(
        generated_pdf(),
        "<< /Type /Sig /Filter /Adobe.PPKLite /SubFilter /ETSI.CAdES.detached /ByteRange [0 10 20 30] /Contents <00> >>",
    );
    let inspection = inspect_pdf(&signed).unwrap();
    assert_eq!((inspection.incremental_updates, inspection.signature_updates), (1, 1));
    assert!(inspection.anomalies.is_empty(), "{:?}", inspection.anomalies);
    // Editing after signing is still seen.
    let edited = append_revision(signed, "(edited after signing)");
    assert_eq!(
        codes(&inspect_pdf(&edited).unwrap().anomalies),
        [AnomalyCode::PdfModifiedAfterCreation]
    );
}

#[test]
fn a_linearised_file_is_one_save() {
    // The structure of a linearised file: first-page section (whose trailer points to the main
    // section with /Prev), then the main section; the last startxref points to the first one.
    let first = "%PDF-1.7\n1 0 obj\n<< /Linearized 1 /L 400 >>\nendobj\n";
    let first_xref = first.len();
    let mut text = format!("{first}xref\n1 1\n0000000009 00000 n \ntrailer\n<< /Size 3 /Prev MAIN >>\nstartxref\n0\n%%EOF\n");
    text.push_str("2 0 obj\n<< /Type /Catalog >>\nendobj\n");
    let main_xref = text.len();
    text = text.replace("MAIN", &format!("{main_xref:>4}"));
    text.push_str(&format!(
        "xref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 3 >>\nstartxref\n{first_xref}\n%%EOF\n"
    ));
    let revisions = super::pdf::tests_support::revisions(text.as_bytes());
    assert_eq!(revisions, (2, 0, true));

    // The same file updated once.
    let update_xref = text.len();
    text.push_str(&format!(
        "xref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 3 /Prev {first_xref} >>\nstartxref\n{update_xref}\n%%EOF\n"
    ));
    assert_eq!(super::pdf::tests_support::revisions(text.as_bytes()), (3, 1, true));
}

#[test]
fn an_editor_producer_is_reported() {
    let gimp = pdf_with_info(vec![("Producer", literal("GIMP 2.10")), ("Creator", literal("GIMP"))]);
    let inspection = inspect_pdf(&gimp).unwrap();
    assert_eq!(codes(&inspection.anomalies), [AnomalyCode::EditedWithSoftware]);

    // UTF-16BE with its byte order mark, as most editors write non-ASCII metadata.
    let mut utf16 = vec![0xfe, 0xff];
    for unit in "PDF-XChange Editor 10.2 – édition".encode_utf16() {
        utf16.extend_from_slice(&unit.to_be_bytes());
    }
    let xchange = pdf_with_info(vec![("Producer", Object::String(utf16, StringFormat::Hexadecimal))]);
    let inspection = inspect_pdf(&xchange).unwrap();
    assert_eq!(inspection.producer.as_deref(), Some("PDF-XChange Editor 10.2 – édition"));
    assert_eq!(codes(&inspection.anomalies), [AnomalyCode::EditedWithSoftware]);

    let draw = pdf_with_info(vec![("Producer", literal("LibreOffice 7.6")), ("Creator", literal("Draw"))]);
    assert_eq!(codes(&inspect_pdf(&draw).unwrap().anomalies), [AnomalyCode::EditedWithSoftware]);
}

#[test]
fn generators_are_not_editors() {
    for producer in [
        "ReportLab PDF Library - www.reportlab.com",
        "wkhtmltopdf 0.12.6",
        "JasperReports Library version 6.20.0",
        "iText® 7.2.5 ©2000-2023 iText Group NV",
        "Microsoft® Word pour Microsoft 365",
        "LibreOffice 7.6",
        "Adobe PDF Library 23.1.175",
        "Acrobat Distiller 23.0 (Windows)",
        "Skia/PDF m120",
        "macOS Version 14.1 (Build 23B74) Quartz PDFContext",
    ] {
        assert!(!software::is_pdf_editor(producer), "{producer}");
    }
    assert!(!software::is_pdf_editor("Writer"));
    for editor in [
        "Foxit PhantomPDF 10",
        "iLovePDF",
        "Sejda PDF Desktop",
        "Smallpdf.com",
        "PDFescape Online",
        "Inkscape 1.3",
    ] {
        assert!(software::is_pdf_editor(editor), "{editor}");
    }
}

#[test]
fn a_later_mod_date_is_a_modification() {
    let day_later = pdf_with_info(vec![
        ("Producer", literal("ReportLab PDF Library")),
        ("CreationDate", literal("D:20261103101500+01'00'")),
        ("ModDate", literal("D:20261104101500+01'00'")),
    ]);
    let inspection = inspect_pdf(&day_later).unwrap();
    assert_eq!(codes(&inspection.anomalies), [AnomalyCode::PdfModifiedAfterCreation]);
    assert_eq!(inspection.incremental_updates, 0);

    // Two stamps of one generation run, a minute apart, and the same instant in two offsets.
    for (created, modified) in [
        ("D:20261103101500+01'00'", "D:20261103101600+01'00'"),
        ("D:20261103101500+01'00'", "D:20261103091500Z"),
    ] {
        let pdf = pdf_with_info(vec![("CreationDate", literal(created)), ("ModDate", literal(modified))]);
        assert!(inspect_pdf(&pdf).unwrap().anomalies.is_empty(), "{created} {modified}");
    }
}

#[test]
fn pdf_dates() {
    let utc = |y, mo, d, h, mi, s| chrono::Utc.with_ymd_and_hms(y, mo, d, h, mi, s).unwrap();
    use chrono::TimeZone;
    let cases = [
        ("D:20240131235959+01'00'", utc(2024, 1, 31, 22, 59, 59)),
        ("D:20240131235959+0100", utc(2024, 1, 31, 22, 59, 59)),
        ("D:20240131235959-05'30", utc(2024, 2, 1, 5, 29, 59)),
        ("D:20240131235959Z00'00'", utc(2024, 1, 31, 23, 59, 59)),
        ("D:20240131235959Z", utc(2024, 1, 31, 23, 59, 59)),
        ("D:20240131", utc(2024, 1, 31, 0, 0, 0)),
        ("D:2024", utc(2024, 1, 1, 0, 0, 0)),
        ("20240131120000", utc(2024, 1, 31, 12, 0, 0)),
    ];
    for (text, expected) in cases {
        assert_eq!(parse_pdf_date(text).map(|d| d.to_utc()), Some(expected), "{text}");
    }
    for bad in [
        "",
        "D:",
        "D:20241332",
        "D:20240230",
        "D:20240131250000",
        "D:2024013",
        "D:20240131120000+25'00'",
        "hello",
    ] {
        assert_eq!(parse_pdf_date(bad), None, "{bad}");
    }
}

#[test]
fn pdf_text_strings() {
    assert_eq!(decode_text_string(b"Caf\xe9 \x84 \x80 \xa0"), "Café — • €");
    assert_eq!(decode_text_string(&[0xfe, 0xff, 0x00, 0x41, 0x20, 0xac]), "A€");
    assert_eq!(decode_text_string(&[0xff, 0xfe, 0x41, 0x00]), "A");
    assert_eq!(decode_text_string(b"\xef\xbb\xbf\xc3\xa9"), "é");
    // An unpaired surrogate or an odd byte count is not a panic.
    assert_eq!(decode_text_string(&[0xfe, 0xff, 0xd8, 0x00, 0x41]), "\u{fffd}");
}

// ---------------------------------------------------------------------------------------------
// Image metadata

fn encoded(image: &DynamicImage, format: ImageFormat) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, format).unwrap();
    out.into_inner()
}

/// An APP1 Exif segment whose IFD0 holds one `Software` entry, built byte by byte.
fn exif_app1(software: &str) -> Vec<u8> {
    let mut value = software.as_bytes().to_vec();
    value.push(0);
    let mut tiff = b"II*\0".to_vec();
    tiff.extend_from_slice(&8u32.to_le_bytes()); // IFD0 right after the header
    tiff.extend_from_slice(&1u16.to_le_bytes()); // one entry
    tiff.extend_from_slice(&0x0131u16.to_le_bytes()); // Software
    tiff.extend_from_slice(&2u16.to_le_bytes()); // ASCII
    tiff.extend_from_slice(&(value.len() as u32).to_le_bytes());
    tiff.extend_from_slice(&26u32.to_le_bytes()); // value after the IFD: 8 + 2 + 12 + 4
    tiff.extend_from_slice(&0u32.to_le_bytes()); // no next IFD
    tiff.extend_from_slice(&value);
    let mut payload = b"Exif\0\0".to_vec();
    payload.extend_from_slice(&tiff);
    let mut segment = vec![0xff, 0xe1];
    segment.extend_from_slice(&((payload.len() + 2) as u16).to_be_bytes());
    segment.extend_from_slice(&payload);
    segment
}

/// A sharp document-like image, encoded as JPEG with an Exif `Software`.
fn jpeg_with_software(software: &str) -> Vec<u8> {
    let jpeg = encoded(&DynamicImage::ImageRgb8(document_page(1000, 630, 225)), ImageFormat::Jpeg);
    let mut out = jpeg[..2].to_vec(); // SOI
    out.extend_from_slice(&exif_app1(software));
    out.extend_from_slice(&jpeg[2..]);
    out
}

fn xmp_packet(description: &str) -> String {
    format!(
        "<?xpacket begin=\"\u{feff}\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\
         <x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">\
         {description}</rdf:RDF></x:xmpmeta><?xpacket end=\"w\"?>"
    )
}

/// A PNG carrying `packet` in an `iTXt` chunk keyed `XML:com.adobe.xmp`, before IEND.
fn png_with_xmp(packet: &str) -> Vec<u8> {
    let png = encoded(&DynamicImage::ImageRgb8(document_page(1000, 630, 225)), ImageFormat::Png);
    let iend = png.len() - 12;
    let mut itxt = b"XML:com.adobe.xmp\0\0\0\0\0".to_vec();
    itxt.extend_from_slice(packet.as_bytes());
    let mut out = png[..iend].to_vec();
    out.extend(png_chunk(b"iTXt", &itxt));
    out.extend_from_slice(&png[iend..]);
    out
}

fn inspect_bytes(bytes: &[u8]) -> Vec<Anomaly> {
    let kind = sniff(bytes).unwrap();
    let image = decode_image_checked(kind, bytes).unwrap();
    inspect_image(kind, bytes, &image)
}

#[test]
fn exif_software_of_an_editor_is_reported() {
    let edited = jpeg_with_software("Adobe Photoshop 25.0 (Windows)");
    assert_eq!(
        metadata::image_software(FileKind::Jpeg, &edited),
        ["Adobe Photoshop 25.0 (Windows)"]
    );
    assert_eq!(codes(&inspect_bytes(&edited)), [AnomalyCode::EditedWithSoftware]);

    for firmware in [
        "iOS 17.1",
        "G998BXXU5CVDD",
        "HDR+ 1.0.540104767zd",
        "Ver.1.00",
        "Adobe Scan",
        "Microsoft Lens",
    ] {
        let photo = jpeg_with_software(firmware);
        assert!(inspect_bytes(&photo).is_empty(), "{firmware}");
    }
}

#[test]
fn xmp_creator_tools_and_history_are_read() {
    let gimp = png_with_xmp(&xmp_packet(
        "<rdf:Description rdf:about=\"\" xmlns:xmp=\"http://ns.adobe.com/xap/1.0/\" xmp:CreatorTool=\"GIMP 2.10\"/>",
    ));
    assert_eq!(metadata::image_software(FileKind::Png, &gimp), ["GIMP 2.10"]);
    assert_eq!(codes(&inspect_bytes(&gimp)), [AnomalyCode::EditedWithSoftware]);

    let history = xmp_packet(
        "<rdf:Description rdf:about=\"\" xmlns:xmpMM=\"http://ns.adobe.com/xap/1.0/mm/\" \
         xmlns:stEvt=\"http://ns.adobe.com/xap/1.0/sType/ResourceEvent#\"><xmpMM:History><rdf:Seq>\
         <rdf:li stEvt:action=\"saved\" stEvt:softwareAgent=\"Adobe Photoshop Lightroom Classic 13.0 (Windows)\"/>\
         </rdf:Seq></xmpMM:History></rdf:Description>",
    );
    assert_eq!(
        metadata::xmp_software(&history),
        ["Adobe Photoshop Lightroom Classic 13.0 (Windows)"]
    );

    let photoshop_history = xmp_packet(
        "<rdf:Description rdf:about=\"\" xmlns:photoshop=\"http://ns.adobe.com/photoshop/1.0/\">\
         <photoshop:History>Cloned a zone</photoshop:History></rdf:Description>",
    );
    assert!(metadata::xmp_software(&photoshop_history)
        .iter()
        .any(|n| software::is_image_editor(n)));

    // A phone's XMP: its OS version as creator tool and a Photoshop-namespace date are no edit.
    let phone = png_with_xmp(&xmp_packet(
        "<rdf:Description rdf:about=\"\" xmlns:xmp=\"http://ns.adobe.com/xap/1.0/\" \
         xmlns:photoshop=\"http://ns.adobe.com/photoshop/1.0/\" xmp:CreatorTool=\"17.1\" \
         photoshop:DateCreated=\"2026-10-15T10:00:00\"/>",
    ));
    assert!(inspect_bytes(&phone).is_empty());

    // A broken packet is still searched.
    let broken = "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:Description xmp:CreatorTool=\"Pixelmator Pro 3.5\"></x:xmpmeta>";
    assert_eq!(metadata::xmp_software(broken), ["Pixelmator Pro 3.5"]);
}

#[test]
fn editor_names() {
    for editor in [
        "Adobe Photoshop CC 2019 (Macintosh)",
        "GIMP 2.10.36",
        "Affinity Photo 2.3",
        "Pixelmator Pro 3.5",
        "paint.net 5.0.12",
        "Canva",
        "Snapseed 2.0",
        "Adobe Lightroom 9.0",
        "Photopea",
    ] {
        assert!(software::is_image_editor(editor), "{editor}");
    }
    for camera in [
        "Canvas Camera 1.0",
        "iOS 17.1",
        "Android",
        "Google",
        "Samsung Camera",
        "Apple iPhone 15",
        "GIMPY",
    ] {
        assert!(!software::is_image_editor(camera), "{camera}");
    }
}

// ---------------------------------------------------------------------------------------------
// Image quality

/// A deterministic document-like image: lines of "words" made of sharp vertical strokes on paper
/// of grey level `paper`, with margins.
fn document_page(width: u32, height: u32, paper: u8) -> RgbImage {
    let mut image = RgbImage::from_pixel(width, height, Rgb([paper, paper, paper.saturating_add(4)]));
    let mut seed = 0x2545_f491u32;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    };
    let margin = width / 12;
    let mut y = height / 10;
    while y + 16 < height - height / 10 {
        let mut x = margin;
        while x + 40 < width - margin {
            let word = 12 + next() % 60;
            let mut sx = x;
            while sx + 2 < x + word {
                let tall = 8 + next() % 8;
                for dy in 0..tall {
                    for dx in 0..2 {
                        image.put_pixel(sx + dx, y + 16 - dy, Rgb([25, 25, 35]));
                    }
                }
                sx += 4 + next() % 3;
            }
            x += word + 10;
        }
        y += 30;
    }
    image
}

fn findings_for(image: RgbImage) -> Vec<AnomalyCode> {
    measure(&DynamicImage::ImageRgb8(image)).findings(&THRESHOLDS)
}

#[test]
fn a_sharp_page_has_no_finding() {
    assert_eq!(findings_for(document_page(1000, 630, 225)), Vec::<AnomalyCode>::new());
    assert_eq!(findings_for(document_page(1240, 1754, 255)), Vec::<AnomalyCode>::new());
}

#[test]
fn a_blurred_image_is_reported() {
    let sharp = document_page(1000, 630, 225);
    let blurred = image::imageops::blur(&sharp, 4.0);
    let measures = measure(&DynamicImage::ImageRgb8(blurred.clone()));
    eprintln!("blurred sigma 4: {measures:?}");
    assert_eq!(findings_for(blurred), [AnomalyCode::BlurryImage]);
    // A slight blur, like a phone's, is tolerated.
    assert_eq!(findings_for(image::imageops::blur(&sharp, 0.8)), Vec::<AnomalyCode>::new());
}

#[test]
fn blurred_samples_are_reported() {
    // The card samples are measured at their own scale (1000 pixels wide): sigma 3 is strong blur.
    for path in sample_files("identite", &["png"]) {
        let image = image::open(&path).unwrap().to_rgb8();
        let slight = measure(&DynamicImage::ImageRgb8(image::imageops::blur(&image, 2.0)));
        let strong = image::imageops::blur(&image, 3.0);
        eprintln!("{} sigma 2: {:?}", path.file_name().unwrap().to_string_lossy(), slight.sharpness);
        assert!(findings_for(strong).contains(&AnomalyCode::BlurryImage), "{}", path.display());
    }
}

#[test]
fn a_burnt_out_image_is_reported() {
    // Glare on a photographed card: a clipped spot with a soft halo over a third of the picture.
    let mut glare = document_page(1000, 630, 200);
    for (x, y, pixel) in glare.enumerate_pixels_mut() {
        let r2 = (f64::from(x) - 600.0).powi(2) + (f64::from(y) - 280.0).powi(2);
        let light = 1.6 * 255.0 * (-r2 / (2.0 * 130.0 * 130.0)).exp();
        for channel in pixel.0.iter_mut() {
            *channel = (f64::from(*channel) + light).min(255.0) as u8;
        }
    }
    let measures = measure(&DynamicImage::ImageRgb8(glare.clone()));
    eprintln!("glare: {measures:?}");
    assert_eq!(findings_for(glare), [AnomalyCode::OverexposedImage]);

    // A white page with nothing left on it.
    let blank = RgbImage::from_pixel(1240, 1754, Rgb([255, 255, 255]));
    assert_eq!(findings_for(blank), [AnomalyCode::OverexposedImage]);
}

#[test]
fn white_paper_with_text_is_not_burnt_out() {
    // A render or scan: paper clipped at 255 everywhere, even a page holding two lines only.
    assert_eq!(findings_for(document_page(1240, 1754, 255)), Vec::<AnomalyCode>::new());
    let mut sparse = RgbImage::from_pixel(1240, 1754, Rgb([255, 255, 255]));
    let lines = document_page(1240, 120, 255);
    image::imageops::replace(&mut sparse, &lines, 0, 200);
    let measures = measure(&DynamicImage::ImageRgb8(sparse.clone()));
    eprintln!("sparse page: {measures:?}");
    assert_eq!(findings_for(sparse), Vec::<AnomalyCode>::new());
}

#[test]
fn small_images_are_low_resolution() {
    let low = |w, h| findings_for(document_page(w, h, 225)).contains(&AnomalyCode::LowResolution);
    assert!(low(320, 200), "a thumbnail");
    assert!(low(850, 536), "a card crop under 900 pixels");
    assert!(low(560, 792), "a page photo under 600 pixels");
    assert!(low(2000, 500), "a strip");
    assert!(!low(1000, 630), "a card crop of the samples' size");
    assert!(!low(900, 567), "the smallest card crop accepted");
    assert!(!low(620, 877), "a small page photo");
    assert!(!low(1555, 2072), "the samples' page photo");
}

#[test]
fn degenerate_images_do_not_panic() {
    for (w, h) in [(1, 1), (2, 2), (3, 3), (1, 4000), (4000, 1), (31, 31), (33, 17)] {
        let image = DynamicImage::ImageRgb8(RgbImage::from_pixel(w, h, Rgb([128, 128, 128])));
        let found = inspect_image(FileKind::Png, b"", &image);
        assert!(codes(&found).contains(&AnomalyCode::LowResolution), "{w}x{h}");
    }
    let grey16 = DynamicImage::ImageLuma16(image::ImageBuffer::from_pixel(1000, 700, image::Luma([40_000u16])));
    inspect_image(FileKind::Tiff, b"II*\0", &grey16);
}

// ---------------------------------------------------------------------------------------------
// Hostile input

/// Deterministic pseudo-random bytes.
fn noise(len: usize, mut seed: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (seed >> 56) as u8
        })
        .collect()
}

#[test]
fn garbage_never_panics() {
    let image = DynamicImage::ImageRgb8(document_page(1000, 630, 225));
    let mut inputs: Vec<Vec<u8>> = vec![
        Vec::new(),
        b"%PDF-".to_vec(),
        b"%PDF-1.7\nstartxref\n99999999999999999999999\n%%EOF".to_vec(),
    ];
    for seed in 0..20 {
        inputs.push(noise(64 + seed as usize * 97, seed));
    }
    let edited = jpeg_with_software("Adobe Photoshop 25.0");
    let xmp = png_with_xmp(&xmp_packet("<rdf:Description rdf:about=\"\"/>"));
    let pdf = append_revision(generated_pdf(), "(x)");
    for whole in [&edited, &xmp, &pdf] {
        for cut in [1, 2, 3, 10, 20, 40, 100, whole.len() / 2, whole.len() - 1] {
            inputs.push(whole[..cut.min(whole.len())].to_vec());
        }
        // Random bytes glued after a valid start.
        let mut glued = whole[..whole.len() / 3].to_vec();
        glued.extend(noise(500, whole.len() as u64));
        inputs.push(glued);
    }
    let mut exif_garbage = vec![0xff, 0xd8, 0xff, 0xe1, 0x00, 0x40];
    exif_garbage.extend_from_slice(b"Exif\0\0MM\0*\xff\xff\xff\xf0");
    exif_garbage.extend(noise(80, 7));
    inputs.push(exif_garbage);
    for input in &inputs {
        let _ = inspect_pdf(input);
        for kind in [FileKind::Jpeg, FileKind::Png, FileKind::Webp, FileKind::Tiff] {
            let _ = inspect_image(kind, input, &image);
        }
    }
    assert!(inspect_pdf(b"not a pdf").is_err());
    assert_eq!(inspect_pdf(&noise(4096, 1)), Err(ForensicsError::UnreadablePdf));
}
