//! `dataMatches` for every document type of spec §6: a realistic document per type (`specimens`),
//! its seal signed with the test authority's key, printed on a PDF page with a text layer, rendered
//! at 150 dpi and photographed. Every form must come out `conforme` with `dataMatches: true`, and
//! every forgery (one printed value changed after signing) `non_conforme`, whatever the form.
//!
//! Each image form costs an OCR, so by default a specimen is checked genuine as a PDF and one image
//! form, and forged as a PDF and the other image form, the two image forms alternating from one
//! specimen to the next: every type meets OCR genuine and forged, both image forms meet half the
//! types each way, in half the time. `SCEAU_CORPUS=full` checks every form both ways.
//!
//! The types run in several tests so both cores share the OCR; each test reports every type it
//! checked before failing on the first wrong one, with what OCR read, and with
//! `SCEAU_CORPUS_FAILURES=<dir>` keeps the images that failed there.

mod specimens;

use domain::vocabulary::{DocumentCategory, Verdict};

use super::corpus::{code_image, pdf_page, photo_of, render_150_dpi};
use super::{analyse, codes, engine};
use crate::analysis::builtin::BuiltinEngine;
use crate::analysis::text::first_page_text;
use crate::analysis::twoddoc::data_matches::{compare_with, Tolerance};
use crate::analysis::twoddoc::identifiers;
use crate::analysis::twoddoc::test_signing::{header, seal};
use crate::analysis::twoddoc::{analyse_payload, doctypes, TrustOptions, TrustStore};
use specimens::{Line, Specimen, SPECIMENS};

const GS: char = '\u{1d}';

/// The seal's message: each value after its identifier, a GS after every value whose length does not
/// end it (variable length, below the maximum), none after the last.
fn message(specimen: &Specimen) -> String {
    let fields: Vec<(&str, &str)> = specimen.lines.iter().filter_map(sealed_value).collect();
    let mut out = String::new();
    for (i, (id, value)) in fields.iter().enumerate() {
        let definition = identifiers::lookup(id).unwrap_or_else(|| panic!("{}: {id} is not in §7", specimen.name));
        out.push_str(id);
        out.push_str(value);
        let ends_by_length = definition.fixed_len().is_some() || definition.max == Some(value.len());
        if i + 1 < fields.len() && !ends_by_length {
            out.push(GS);
        }
    }
    out
}

fn sealed_value(line: &Line) -> Option<(&'static str, &'static str)> {
    match *line {
        Line::Field(id, value, _) | Line::Code(id, value, _) | Line::Sealed(id, value) => Some((id, value)),
        Line::Text(_) => None,
    }
}

/// The printed lines, with `tamper` applied when given.
fn printed(specimen: &Specimen, tamper: Option<(&str, &str)>) -> Vec<String> {
    let lines: Vec<String> = specimen
        .lines
        .iter()
        .filter_map(|line| match *line {
            Line::Field(_, _, text) | Line::Code(_, _, text) | Line::Text(text) => Some(text),
            Line::Sealed(..) => None,
        })
        .filter(|text| !text.is_empty())
        .map(str::to_owned)
        .collect();
    let Some((from, to)) = tamper else {
        return lines;
    };
    let tampered: Vec<String> = lines.iter().map(|line| line.replacen(from, to, 1)).collect();
    let changed = lines.iter().zip(&tampered).filter(|(a, b)| a != b).count();
    assert_eq!(
        changed, 1,
        "{}: the forgery must change one line, {from:?} changed {changed}",
        specimen.name
    );
    tampered
}

/// The identifiers the comparison must cover: every printed `Field`.
fn printed_fields(specimen: &Specimen) -> Vec<&'static str> {
    let mut ids: Vec<&str> = specimen
        .lines
        .iter()
        .filter_map(|line| match *line {
            Line::Field(id, ..) => Some(id),
            _ => None,
        })
        .collect();
    ids.sort_unstable();
    ids
}

/// The image forms a printed document is checked in besides its PDF.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ImageForms {
    Render,
    Photo,
    Both,
}

impl ImageForms {
    /// The image forms of the `index`th specimen, genuine and forged (see the module's comment).
    fn of(index: usize) -> (Self, Self) {
        if std::env::var("SCEAU_CORPUS").as_deref() == Ok("full") {
            (Self::Both, Self::Both)
        } else if index.is_multiple_of(2) {
            (Self::Photo, Self::Render)
        } else {
            (Self::Render, Self::Photo)
        }
    }
}

/// The forms one printed document is checked in: its PDF and the chosen images of it.
fn forms(pdf: Vec<u8>, images: ImageForms) -> Vec<(&'static str, Vec<u8>)> {
    let render = matches!(images, ImageForms::Render | ImageForms::Both).then(|| ("150 dpi", render_150_dpi(&pdf)));
    let photo = matches!(images, ImageForms::Photo | ImageForms::Both).then(|| ("photo", photo_of(&pdf)));
    std::iter::once(("PDF", pdf)).chain(render).chain(photo).collect()
}

/// What one form of one document came out as, for the report and the assertions.
struct Outcome {
    verdict: Verdict,
    data_matches: Option<bool>,
    signature: Option<String>,
    anomalies: Vec<String>,
}

async fn outcome(engine: &BuiltinEngine, bytes: Vec<u8>) -> Outcome {
    let report = analyse(engine, super::input(DocumentCategory::Administratif, bytes))
        .await
        .expect("the engine analyses the document");
    Outcome {
        verdict: report.verdict,
        data_matches: report.two_d_doc.as_ref().map(|seal| seal.data_matches),
        signature: report.two_d_doc.as_ref().map(|seal| seal.signature_status.as_str().to_owned()),
        anomalies: codes(&report).into_iter().map(str::to_owned).collect(),
    }
}

/// Checks one specimen in every form, genuine and forged; returns what went wrong, one line each.
async fn check(engine: &BuiltinEngine, trust: &TrustStore, specimen: &Specimen, images: (ImageForms, ImageForms)) -> Vec<String> {
    let mut wrong = Vec::new();
    let name = format!("{} ({})", specimen.code, specimen.name);
    let signed = format!(
        "{}{}",
        header(4, "FR000001", specimen.issued, "264B", specimen.code),
        message(specimen)
    );
    let payload = seal(&signed);
    let code = code_image(&payload);

    // The seal as the engine reads it, and the comparison on the text layer: every printed field compared.
    let finding = analyse_payload(&payload, trust).expect("the seal parses");
    assert!(finding.non_conformities.is_empty(), "{name}: {:?}", finding.non_conformities);
    let expected_type = doctypes::lookup("01", specimen.code).map(|d| d.api_type);
    assert_eq!(Some(finding.document_type), expected_type, "{name}");
    let genuine = pdf_page(&printed(specimen, None), &code);
    let text = first_page_text(&genuine).expect("the text layer");
    let mut compared = compare_with(&finding, &text, Tolerance::Exact).compared;
    compared.sort_unstable();
    if compared != printed_fields(specimen) {
        wrong.push(format!("{name}: compared {compared:?}, printed {:?}", printed_fields(specimen)));
    }

    let mut checked = Vec::new();
    for (form, bytes) in forms(genuine, images.0) {
        checked.push(form);
        let got = outcome(engine, bytes.clone()).await;
        if got.verdict != Verdict::Conforme || got.data_matches != Some(true) || got.signature.as_deref() != Some("valid") {
            wrong.push(format!(
                "{name} {form}: {:?}, dataMatches {:?}, signature {:?}, anomalies {:?}{}",
                got.verdict,
                got.data_matches,
                got.signature,
                got.anomalies,
                ocr_mismatches(&finding, &bytes)
            ));
        }
    }
    let forged = pdf_page(&printed(specimen, Some(specimen.tamper)), &code);
    for (form, bytes) in forms(forged, images.1) {
        checked.push(form);
        let got = outcome(engine, bytes).await;
        let caught = got.verdict == Verdict::NonConforme && got.anomalies.iter().any(|a| a == "twoddoc_data_mismatch");
        if !caught {
            wrong.push(format!(
                "{name} {form}, forged {:?}: {:?}, anomalies {:?}",
                specimen.tamper, got.verdict, got.anomalies
            ));
        }
    }
    eprintln!(
        "{name}: {} fields compared; genuine then forged as {}: {}",
        compared.len(),
        checked.join(", "),
        if wrong.is_empty() { "as expected" } else { "WRONG" }
    );
    wrong
}

/// For a failure's message: the fields OCR does not find on an image form, and the text it read.
fn ocr_mismatches(finding: &crate::analysis::twoddoc::TwoDDocFinding, bytes: &[u8]) -> String {
    let Ok(image) = image::load_from_memory(bytes) else {
        return String::new();
    };
    if let Some(dir) = std::env::var_os("SCEAU_CORPUS_FAILURES") {
        let _ = std::fs::write(
            std::path::Path::new(&dir).join(format!("{}-{}.img", finding.header.document_type, bytes.len())),
            bytes,
        );
    }
    let ocr = crate::analysis::text::Ocr::new(crate::analysis::text::OcrOptions::default());
    match ocr.image_text(&image) {
        Ok(text) => format!(
            "; OCR misses {:?} in {text:?}",
            compare_with(finding, &text, Tolerance::Ocr).mismatched
        ),
        Err(error) => format!("; OCR failed: {error}"),
    }
}

/// Checks the specimens whose type is in `codes` (each listed type must have one).
async fn check_types(codes: &[&str]) {
    let engine = engine();
    let trust = TrustStore::build(&TrustOptions {
        accept_test_ca: true,
        extra_dir: None,
    })
    .expect("trust store");
    let mut wrong = Vec::new();
    for code in codes {
        let of_type: Vec<(usize, &Specimen)> = SPECIMENS.iter().enumerate().filter(|(_, s)| s.code == *code).collect();
        assert!(!of_type.is_empty(), "no specimen of type {code}");
        for (index, specimen) in of_type {
            wrong.extend(check(&engine, &trust, specimen, ImageForms::of(index)).await);
        }
    }
    assert!(wrong.is_empty(), "{} wrong:\n{}", wrong.len(), wrong.join("\n"));
}

/// The groups the tests below take, in §6's order; together they are every type but 08.
const GROUPS: &[&[&str]] = &[
    &["00", "01", "02"],
    &["03", "05", "11"],
    &["04", "09", "18"],
    &["06", "10", "15"],
    &["07", "13", "16", "17"],
    &["A0", "A7", "14", "A8", "A1", "AA", "AB"],
    &["B0", "B1", "A4", "A2", "A3", "A5", "A6", "A9", "AC", "12"],
    &["C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8", "B2", "L1"],
];

#[test]
fn the_groups_cover_every_type_of_section_6_but_the_mrz_seal() {
    let mut covered: Vec<&str> = GROUPS.iter().flat_map(|g| g.iter().copied()).collect();
    covered.sort_unstable();
    let mut expected: Vec<&str> = doctypes::PERIMETER_01.iter().map(|d| d.code).filter(|c| *c != "08").collect();
    expected.sort_unstable();
    assert_eq!(covered, expected);
    let mut specimen_types: Vec<&str> = SPECIMENS.iter().map(|s| s.code).collect();
    specimen_types.sort_unstable();
    specimen_types.dedup();
    assert_eq!(specimen_types, expected);
}

#[tokio::test]
async fn proofs_of_address_and_bills() {
    check_types(GROUPS[0]).await;
}

#[tokio::test]
async fn bank_documents() {
    check_types(GROUPS[1]).await;
}

#[tokio::test]
async fn tax_documents() {
    check_types(GROUPS[2]).await;
}

#[tokio::test]
async fn employment_documents() {
    check_types(GROUPS[3]).await;
}

#[tokio::test]
async fn identity_and_asylum_documents() {
    check_types(GROUPS[4]).await;
}

#[tokio::test]
async fn vehicle_and_driving_licence_documents() {
    check_types(GROUPS[5]).await;
}

#[tokio::test]
async fn academic_medical_and_activity_documents() {
    check_types(GROUPS[6]).await;
}

#[tokio::test]
async fn customs_health_and_vaccination_documents() {
    check_types(GROUPS[7]).await;
}
