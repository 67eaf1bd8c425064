//! A corpus these tests make themselves: invoice seals signed with the test authority's key, placed in a
//! PDF page with a text layer and in a photo of that page (rendered by poppler's `pdftoppm`, turned by 2°
//! and saved as a JPEG), then tampered with. No tampered seal may come out `valid` or `conforme`.

use std::process::Command;

use common::test_fixtures::{helvetica, PdfFixture};
use domain::vocabulary::{DocumentCategory, Verdict};
use image::{DynamicImage, GrayImage};
use lopdf::{dictionary, Object, Stream, StringFormat};

use super::{analyse, codes, engine, input};
use crate::analysis::datamatrix::testutil::symbol;
use crate::analysis::twoddoc::test_signing::{header, seal};

const GS: char = '\u{1d}';
const US: u8 = 0x1f;

/// The seal's data: an invoice (type 01) for the demo water company's customer.
fn invoice_message(amount: &str) -> String {
    format!("10M/DEMO/VICTOR{GS}2215 RUE DE LA DEMONSTRATION{GS}241300125MARSEILLE{GS}26FR18E2026110077{GS}19EAU4410099{GS}1D{amount}")
}

/// The printed page of that invoice, showing `amount`.
fn invoice_lines(amount: &str) -> Vec<String> {
    [
        "EAUX DE DEMONSTRATION",
        "1 rue de la Demo, 13001 Marseille",
        "Regie - SIRET 78901234100010",
        "",
        "Monsieur Victor DEMO",
        "15 RUE DE LA DEMONSTRATION",
        "13001 MARSEILLE",
        "",
        "Facture n\u{b0} E2026110077",
        "Numero client : EAU4410099",
        "Periode : octobre 2026",
        "",
    ]
    .iter()
    .map(|line| (*line).to_owned())
    .chain([format!("Montant TTC a payer : {amount} EUR")])
    .collect()
}

/// A genuine seal over `signed`.
fn genuine(ca_cert: &str, amount: &str) -> Vec<u8> {
    seal(&format!("{}{}", header(4, ca_cert, "264B", "264B", "01"), invoice_message(amount)))
}

/// A seal genuinely signed, but over a message or header that departs from the specification.
fn departing(issue_date: &str, message: String) -> Vec<u8> {
    seal(&format!("{}{message}", header(4, "FR000001", issue_date, "264B", "01")))
}

/// One A4 page: the text lines in Helvetica (WinAnsi), the seal as a DataMatrix image at the top right.
pub(super) fn pdf_page(lines: &[String], code: &GrayImage) -> Vec<u8> {
    let mut pdf = PdfFixture::new();
    let mut image = Stream::new(
        dictionary! {
            "Type" => "XObject", "Subtype" => "Image", "Width" => code.width() as i64, "Height" => code.height() as i64,
            "ColorSpace" => "DeviceGray", "BitsPerComponent" => 8,
        },
        code.as_raw().clone(),
    );
    image.compress().expect("compress the image");
    let image = pdf.document().add_object(image);
    let mut content = String::from("q 130 0 0 130 420 660 cm /Im1 Do Q\nBT /F1 11 Tf 50 780 Td 15 TL\n");
    for line in lines {
        content.push_str(&format!("({}) Tj T*\n", win_ansi(line)));
    }
    content.push_str("ET\n");
    let resources = dictionary! { "Font" => helvetica(), "XObject" => dictionary! { "Im1" => image } };
    pdf.page(resources, content)
        .info(dictionary! { "Producer" => Object::String(b"Sceau corpus".to_vec(), StringFormat::Literal) })
        .bytes()
}

/// `line` as a PDF string literal's body in WinAnsi: Latin-1 letters and the euro sign as octal escapes,
/// parentheses and backslashes escaped.
fn win_ansi(line: &str) -> String {
    line.chars()
        .map(|c| match c {
            '(' | ')' | '\\' => format!("\\{c}"),
            '\u{20ac}' => "\\200".to_owned(),
            ' '..='~' => c.to_string(),
            _ => match u8::try_from(u32::from(c)) {
                Ok(byte) if byte >= 0xa0 => format!("\\{byte:03o}"),
                _ => "?".to_owned(),
            },
        })
        .collect()
}

/// The printed page as a scanner gives it: rendered at 150 dpi by `pdftoppm`, saved as a PNG.
pub(super) fn render_150_dpi(pdf: &[u8]) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    DynamicImage::ImageLuma8(rendered(pdf))
        .write_to(&mut out, image::ImageFormat::Png)
        .expect("PNG");
    out.into_inner()
}

/// A photo of the printed page: rendered at 150 dpi by `pdftoppm`, turned by 2°, saved as a JPEG (q70).
pub(super) fn photo_of(pdf: &[u8]) -> Vec<u8> {
    let turned = rotate(&rendered(pdf), 2.0);
    let mut out = std::io::Cursor::new(Vec::new());
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 70)
        .encode_image(&DynamicImage::ImageLuma8(turned))
        .expect("JPEG");
    out.into_inner()
}

/// The page rendered in grey at 150 dpi by `pdftoppm`.
fn rendered(pdf: &[u8]) -> GrayImage {
    let dir = std::env::temp_dir().join(format!("sceau-corpus-{}-{}", std::process::id(), rand_suffix()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let source = dir.join("page.pdf");
    std::fs::write(&source, pdf).expect("write the page");
    let status = Command::new("pdftoppm")
        .args(["-r", "150", "-png", "-singlefile"])
        .arg(&source)
        .arg(dir.join("page"))
        .status()
        .expect("pdftoppm (Debian poppler-utils) must be installed: scripts/test installs it");
    assert!(status.success(), "pdftoppm failed");
    let page = image::open(dir.join("page.png")).expect("rendered page").to_luma8();
    let _ = std::fs::remove_dir_all(&dir);
    page
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Rotation about the centre by `degrees`, bilinear, white outside the page (as a photo's background).
fn rotate(page: &GrayImage, degrees: f32) -> GrayImage {
    let (w, h) = (page.width() as f32, page.height() as f32);
    let (sin, cos) = degrees.to_radians().sin_cos();
    let (cx, cy) = (w / 2.0, h / 2.0);
    GrayImage::from_fn(page.width(), page.height(), |x, y| {
        let (dx, dy) = (x as f32 - cx, y as f32 - cy);
        let (sx, sy) = (cos * dx + sin * dy + cx, -sin * dx + cos * dy + cy);
        if sx < 0.0 || sy < 0.0 || sx >= w - 1.0 || sy >= h - 1.0 {
            return image::Luma([255]);
        }
        let (x0, y0) = (sx.floor() as u32, sy.floor() as u32);
        let (fx, fy) = (sx - x0 as f32, sy - y0 as f32);
        let at = |x: u32, y: u32| f32::from(page.get_pixel(x, y)[0]);
        let top = at(x0, y0) * (1.0 - fx) + at(x0 + 1, y0) * fx;
        let bottom = at(x0, y0 + 1) * (1.0 - fx) + at(x0 + 1, y0 + 1) * fx;
        image::Luma([(top * (1.0 - fy) + bottom * fy).round() as u8])
    })
}

pub(super) fn code_image(payload: &[u8]) -> GrayImage {
    symbol(std::str::from_utf8(payload).expect("C40 payloads are ASCII"), 4)
}

/// A case of the corpus: the seal, the amount printed on the page, and what must come out.
struct Case {
    name: &'static str,
    payload: Vec<u8>,
    printed_amount: &'static str,
    verdict: Verdict,
    read_status: &'static str,
    signature_status: &'static str,
    anomaly: Option<&'static str>,
    photo: bool,
    trusted: bool,
    /// The reasons of the seal's points of attention (`twoddoc_non_conformity`, `twoddoc_malformed`), one each.
    reasons: &'static [&'static str],
}

fn cases() -> Vec<Case> {
    let altered = {
        // The amount changed after signing: the signature no longer covers these bytes.
        let genuine = genuine("FR000001", "38,65");
        let text = String::from_utf8(genuine).expect("ASCII").replacen("1D38,65", "1D88,65", 1);
        text.into_bytes()
    };
    let truncated = {
        let mut payload = genuine("FR000001", "38,65");
        let signature_start = payload.iter().position(|b| *b == US).expect("US") + 1;
        payload.truncate(signature_start + 40);
        payload
    };
    let too_long = {
        let mut payload = genuine("FR000001", "38,65");
        payload.extend(b"AAAAAAAA");
        payload
    };
    vec![
        Case {
            name: "genuine",
            payload: genuine("FR000001", "38,65"),
            printed_amount: "38,65",
            verdict: Verdict::Conforme,
            read_status: "read",
            signature_status: "valid",
            anomaly: None,
            photo: true,
            trusted: true,
            reasons: &[],
        },
        Case {
            name: "value changed after signing",
            payload: altered,
            printed_amount: "88,65",
            verdict: Verdict::NonConforme,
            read_status: "read",
            signature_status: "invalid",
            anomaly: Some("twoddoc_signature_invalid"),
            photo: true,
            trusted: true,
            reasons: &[],
        },
        Case {
            name: "unknown certificate",
            payload: genuine("FR000099", "38,65"),
            printed_amount: "38,65",
            verdict: Verdict::Suspect,
            read_status: "read",
            signature_status: "unknown_certificate",
            anomaly: Some("twoddoc_certificate_unknown"),
            photo: false,
            trusted: false,
            reasons: &[],
        },
        Case {
            name: "unknown authority",
            payload: genuine("FR990001", "38,65"),
            printed_amount: "38,65",
            verdict: Verdict::Suspect,
            read_status: "read",
            signature_status: "untrusted_authority",
            anomaly: Some("twoddoc_authority_untrusted"),
            photo: false,
            trusted: false,
            reasons: &[],
        },
        Case {
            name: "truncated signature",
            payload: truncated,
            printed_amount: "38,65",
            verdict: Verdict::Suspect,
            read_status: "read",
            signature_status: "not_checked",
            anomaly: Some("twoddoc_malformed"),
            photo: false,
            trusted: true,
            reasons: &["the signature has 25 bytes, a P-256 key signs with 64"],
        },
        Case {
            name: "signature longer than its key's",
            payload: too_long,
            printed_amount: "38,65",
            verdict: Verdict::Suspect,
            read_status: "read",
            signature_status: "not_checked",
            anomaly: Some("twoddoc_malformed"),
            photo: false,
            trusted: true,
            reasons: &["the signature has 69 bytes, a P-256 key signs with 64"],
        },
        Case {
            name: "undefined data identifier",
            payload: departing("264B", invoice_message("38,65").replacen("19EAU", "ZZ42\u{1d}19EAU", 1)),
            printed_amount: "38,65",
            verdict: Verdict::Suspect,
            read_status: "read",
            signature_status: "valid",
            anomaly: Some("twoddoc_non_conformity"),
            photo: false,
            trusted: true,
            reasons: &["data identifier 'ZZ' at offset 108 is not defined by the specification (§7)"],
        },
        Case {
            name: "no issue date on an invoice",
            payload: departing("FFFF", invoice_message("38,65")),
            printed_amount: "38,65",
            verdict: Verdict::Suspect,
            read_status: "read",
            signature_status: "valid",
            anomaly: Some("twoddoc_non_conformity"),
            photo: false,
            trusted: true,
            reasons: &["document type 01 requires an issue date (§6), the header has none (FFFF)"],
        },
        Case {
            name: "field of the wrong length",
            payload: departing("264B", invoice_message("38,65").replacen("26FR18", "26F\u{1d}18", 1)),
            printed_amount: "38,65",
            verdict: Verdict::Suspect,
            read_status: "read",
            signature_status: "valid",
            anomaly: Some("twoddoc_non_conformity"),
            photo: false,
            trusted: true,
            reasons: &["data identifier '26' at offset 90 has 1 characters, the specification allows exactly 2"],
        },
        Case {
            name: "visible text differs from the seal",
            payload: genuine("FR000001", "38,65"),
            printed_amount: "98,65",
            verdict: Verdict::NonConforme,
            read_status: "read",
            signature_status: "valid",
            anomaly: Some("twoddoc_data_mismatch"),
            photo: true,
            trusted: true,
            reasons: &[],
        },
    ]
}

#[tokio::test]
async fn signed_rendered_and_tampered_seals() {
    let engine = engine();
    let mut tampered_valid = 0;
    for case in cases() {
        let pdf = pdf_page(&invoice_lines(case.printed_amount), &code_image(&case.payload));
        let mut files = vec![("PDF", pdf.clone())];
        if case.photo {
            files.push(("photo", photo_of(&pdf)));
        }
        for (form, bytes) in files {
            let label = format!("{} ({form})", case.name);
            let report = analyse(&engine, input(DocumentCategory::Administratif, bytes))
                .await
                .unwrap_or_else(|e| panic!("{label}: {e}"));
            let seal = report
                .two_d_doc
                .as_ref()
                .unwrap_or_else(|| panic!("{label}: no seal found; anomalies {:?}", codes(&report)));
            assert_eq!(
                seal.read_status.as_str(),
                case.read_status,
                "{label}: {:?}",
                seal.read_status_message
            );
            assert_eq!(seal.signature_status.as_str(), case.signature_status, "{label}");
            assert_eq!(seal.trusted, case.trusted, "{label}");
            let points: Vec<&str> = report
                .anomalies
                .iter()
                .filter(|a| ["twoddoc_non_conformity", "twoddoc_malformed"].contains(&a.code.as_str()))
                .map(|a| a.message.as_str())
                .collect();
            assert_eq!(points.len(), case.reasons.len(), "{label}: {points:?}");
            for (point, reason) in points.iter().zip(case.reasons) {
                assert!(point.contains(reason), "{label}: {point}");
                let severity = report.anomalies.iter().find(|a| a.message == *point).map(|a| a.severity);
                assert_eq!(severity, Some(domain::vocabulary::Severity::Warning), "{label}");
            }
            assert_eq!(report.verdict, case.verdict, "{label}: anomalies {:?}", codes(&report));
            if let Some(code) = case.anomaly {
                assert!(codes(&report).contains(&code), "{label}: {code} missing from {:?}", codes(&report));
            }
            // A seal genuinely signed over departures from the spec verifies, but is never `conforme`.
            let departs = !case.reasons.is_empty() && case.signature_status == "valid";
            let vouched_for = seal.signature_verified && seal.data_matches && !departs;
            if case.name != "genuine" && (vouched_for || report.verdict == Verdict::Conforme) {
                tampered_valid += 1;
            }
            if case.read_status == "read" {
                assert_eq!(report.document_type.as_str(), "facture", "{label}");
            }
        }
    }
    assert_eq!(tampered_valid, 0, "no tampered seal may be reported valid");
}
