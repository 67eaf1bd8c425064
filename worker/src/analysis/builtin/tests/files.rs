//! Files the engine must refuse or cannot conclude on: wrong kinds for the category, several pages,
//! bytes that do not decode, empty files, and a readable image that carries nothing to verify.

use common::domain::{DocumentCategory, ItemError, Severity, Verdict};
use common::test_fixtures::blank_pdf;
use std::io::Cursor;

use super::{analyse, codes, engine, input};
use crate::analysis::engine::EngineError;

fn png() -> Vec<u8> {
    let image = image::DynamicImage::ImageRgb8(image::RgbImage::from_fn(1200, 760, |x, y| {
        image::Rgb([200 + ((x * 7 + y * 13) % 40) as u8, 210, 205])
    }));
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, image::ImageFormat::Png).expect("png");
    out.into_inner()
}

#[tokio::test]
async fn an_identity_image_without_a_zone_cannot_be_concluded_on() {
    let report = analyse(&engine(), input(DocumentCategory::Identite, png())).await.expect("report");
    assert_eq!(report.verdict, Verdict::AnalyseImpossible);
    assert_eq!(report.pages, 1);
    assert_eq!(report.document_type.as_str(), "inconnu");
    assert_eq!(codes(&report), ["mrz_not_found"]);
    assert_eq!(report.anomalies[0].severity, Severity::Info);
}

#[tokio::test]
async fn an_empty_page_cannot_be_concluded_on() {
    let report = analyse(&engine(), input(DocumentCategory::Administratif, blank_pdf(1)))
        .await
        .expect("report");
    assert_eq!(report.verdict, Verdict::AnalyseImpossible);
    assert!(report.two_d_doc.is_none());
    assert!(codes(&report).contains(&"issuer_not_confirmed"), "{:?}", codes(&report));
}

#[tokio::test]
async fn a_selfie_without_an_external_service_is_not_checked() {
    let mut identity = input(DocumentCategory::Identite, png());
    identity.selfie = Some(png());
    let report = analyse(&engine(), identity).await.expect("report");
    assert!(codes(&report).contains(&"selfie_not_checked"), "{:?}", codes(&report));
}

#[tokio::test]
async fn refused_files() {
    let engine = engine();
    let mut jpeg_magic = b"\xff\xd8\xff\xe0".to_vec();
    jpeg_magic.extend(std::iter::repeat_n(0x42, 500));
    let mut truncated_back = input(DocumentCategory::Identite, png());
    truncated_back.back = Some(b"\x89PNG\r\n\x1a\ntruncated".to_vec());
    let cases = [
        (input(DocumentCategory::Identite, jpeg_magic), ItemError::UnreadableDocument),
        (input(DocumentCategory::Identite, blank_pdf(1)), ItemError::UnsupportedDocument),
        (input(DocumentCategory::Administratif, blank_pdf(2)), ItemError::UnsupportedDocument),
        (truncated_back, ItemError::UnreadableDocument),
        (
            input(DocumentCategory::Administratif, b"plain text".to_vec()),
            ItemError::UnsupportedDocument,
        ),
        (input(DocumentCategory::Administratif, Vec::new()), ItemError::UnreadableDocument),
    ];
    for (case, expected) in cases {
        let error: EngineError = analyse(&engine, case).await.expect_err("refused");
        assert_eq!(error.item_error(), expected, "{error:?}");
    }
}
