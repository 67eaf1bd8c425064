//! Files the engine must refuse or cannot conclude on: wrong kinds for the category, several pages,
//! bytes that do not decode, empty files, and a readable image that carries nothing to verify.

use common::test_fixtures::blank_pdf;
use domain::vocabulary::{DocumentCategory, ItemError, Severity, Verdict};
use std::io::Cursor;

use super::{analyse, codes, engine, input};
use crate::analysis::engine::EngineError;

pub fn png() -> Vec<u8> {
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

fn encoded(image: image::DynamicImage, format: image::ImageFormat) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, format).expect("encode");
    out.into_inner()
}

/// Issue 13, item 4: images too small or too uniform to carry a document cannot be concluded on,
/// and the point of attention says why; they are not judged `suspect` on checks that read nothing.
#[tokio::test]
async fn degenerate_images_cannot_be_concluded_on_and_say_why() {
    let engine = engine();
    let noise = |w: u32, h: u32| {
        image::DynamicImage::ImageRgb8(image::RgbImage::from_fn(w, h, |x, y| {
            image::Rgb([((x * 37 + y * 91) % 256) as u8, 90, 160])
        }))
    };
    let white = image::DynamicImage::ImageRgb8(image::RgbImage::from_pixel(800, 600, image::Rgb([255; 3])));
    let cases = [
        (
            "1x1",
            encoded(noise(1, 1), image::ImageFormat::Png),
            "the image is 1 x 1 pixels, far below what a document needs",
        ),
        ("3x3", encoded(noise(3, 3), image::ImageFormat::Png), "the image is 3 x 3 pixels"),
        (
            "40x30",
            encoded(noise(40, 30), image::ImageFormat::Jpeg),
            "the image is 40 x 30 pixels",
        ),
        ("white 800x600", encoded(white, image::ImageFormat::Png), "the image is uniform"),
    ];
    for (name, bytes, reason) in cases {
        for category in [DocumentCategory::Identite, DocumentCategory::Administratif] {
            let report = analyse(&engine, input(category, bytes.clone())).await.expect("report");
            assert_eq!(
                report.verdict,
                Verdict::AnalyseImpossible,
                "{name} {category:?}: {:?}",
                report.anomalies
            );
            assert_eq!(codes(&report), ["image_unusable"], "{name} {category:?}");
            assert_eq!(report.anomalies[0].severity, Severity::Info);
            assert!(
                report.anomalies[0].message.contains(reason),
                "{name}: {}",
                report.anomalies[0].message
            );
            assert!(
                report.two_d_doc.is_none() && report.checks.is_empty(),
                "{name}: nothing was checked"
            );
        }
    }
    // A degenerate back makes the identity document impossible to conclude on too, and says which side.
    let mut with_back = input(DocumentCategory::Identite, png());
    with_back.back = Some(encoded(noise(3, 3), image::ImageFormat::Png));
    let report = analyse(&engine, with_back).await.expect("report");
    assert_eq!(report.verdict, Verdict::AnalyseImpossible);
    assert!(
        report.anomalies[0].message.contains("(the back: the image is 3 x 3 pixels"),
        "{}",
        report.anomalies[0].message
    );
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
