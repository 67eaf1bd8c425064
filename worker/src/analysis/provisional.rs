//! The engine used until the real one lands: it really reads the files (so unreadable and
//! unsupported documents fail as they will later) but performs no authenticity check, and says so.
//! It therefore never returns a favourable verdict.

use super::catalogue;
use super::engine::{Engine, EngineError};
use async_trait::async_trait;
use common::analysis::{AnalysisInput, AnalysisReport};
use common::document::{decode_image_checked, page_count, sniff, DocumentError, FileKind};
use common::domain::{DocumentCategory, Verdict};

/// The anomaly that tells the client no check was performed.
const NO_CHECKS: &str = "automated_checks_unavailable";

/// Reads the files honestly and concludes nothing: `analyse_impossible`, with an info anomaly.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProvisionalEngine;

#[async_trait]
impl Engine for ProvisionalEngine {
    async fn analyse(&self, input: AnalysisInput) -> Result<AnalysisReport, EngineError> {
        // Decoding is CPU-bound and may take a second on a large scan: keep it off the runtime.
        let pages = tokio::task::spawn_blocking(move || read_files(&input))
            .await
            .map_err(|_| EngineError::Failure("the file decoder stopped unexpectedly".to_owned()))??;
        inconclusive_report(pages)
    }

    fn name(&self) -> &'static str {
        "provisional"
    }
}

/// Reads the front, then the back if any; the report's page count is the front's.
fn read_files(input: &AnalysisInput) -> Result<u32, EngineError> {
    let pages = read_file(input.category, &input.front)?;
    if let Some(back) = &input.back {
        read_file(input.category, back)?;
    }
    Ok(pages)
}

/// Checks the file's kind against the category and its page count, then decodes it for real.
fn read_file(category: DocumentCategory, bytes: &[u8]) -> Result<u32, EngineError> {
    let kind = recognised_kind(bytes)?;
    if !kind.allowed_for(category) {
        return Err(EngineError::Unsupported(format!(
            "{} files are not accepted for {} documents",
            kind.as_str().to_uppercase(),
            category_label(category)
        )));
    }
    let pages = page_count(kind, bytes).map_err(engine_error)?;
    if pages > 1 {
        return Err(EngineError::Unsupported(format!(
            "the file has {pages} pages, and only single-page documents are analysed"
        )));
    }
    if kind.is_image() {
        decode_image_checked(kind, bytes).map_err(engine_error)?;
    }
    Ok(pages)
}

fn recognised_kind(bytes: &[u8]) -> Result<FileKind, EngineError> {
    if bytes.is_empty() {
        return Err(EngineError::Unreadable("the document is empty".to_owned()));
    }
    sniff(bytes).ok_or_else(|| EngineError::Unsupported("the file is not a JPEG, PNG, WebP, PDF or TIFF document".to_owned()))
}

fn category_label(category: DocumentCategory) -> &'static str {
    match category {
        DocumentCategory::Identite => "identity",
        DocumentCategory::Administratif => "administrative",
    }
}

/// Bytes that do not decode are the document's fault; files beyond the limits are unsupported.
fn engine_error(error: DocumentError) -> EngineError {
    let message = error.to_string();
    match error {
        DocumentError::InvalidBase64 | DocumentError::Empty | DocumentError::Unreadable(_) => EngineError::Unreadable(message),
        DocumentError::TooLarge(_) | DocumentError::Unsupported(_) => EngineError::Unsupported(message),
    }
}

fn inconclusive_report(pages: u32) -> Result<AnalysisReport, EngineError> {
    let no_checks =
        catalogue::anomaly(NO_CHECKS).ok_or_else(|| EngineError::Failure(format!("the anomaly catalogue has no `{NO_CHECKS}` entry")))?;
    Ok(AnalysisReport {
        verdict: Verdict::AnalyseImpossible,
        document_type: "inconnu".to_owned(),
        document_country: None,
        anomalies: vec![no_checks],
        two_d_doc: None,
        holder_age: None,
        pages,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::domain::{ItemError, Severity};
    use std::io::Cursor;

    fn png() -> Vec<u8> {
        let image = image::DynamicImage::ImageRgb8(image::RgbImage::new(16, 10));
        let mut out = Cursor::new(Vec::new());
        image.write_to(&mut out, image::ImageFormat::Png).unwrap();
        out.into_inner()
    }

    fn pdf_with_pages(count: usize) -> Vec<u8> {
        use lopdf::{dictionary, Document, Object};
        let mut document = Document::with_version("1.5");
        let pages_id = document.new_object_id();
        let kids: Vec<Object> = (0..count)
            .map(|_| {
                let page = dictionary! { "Type" => "Page", "Parent" => pages_id };
                document.add_object(page).into()
            })
            .collect();
        let pages = dictionary! { "Type" => "Pages", "Kids" => kids, "Count" => count as i64 };
        document.objects.insert(pages_id, Object::Dictionary(pages));
        let catalog = document.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
        document.trailer.set("Root", catalog);
        let mut out = Vec::new();
        document.save_to(&mut out).unwrap();
        out
    }

    fn input(category: DocumentCategory, front: Vec<u8>) -> AnalysisInput {
        AnalysisInput {
            category,
            front,
            back: None,
            selfie: None,
        }
    }

    async fn analyse(input: AnalysisInput) -> Result<AnalysisReport, EngineError> {
        ProvisionalEngine.analyse(input).await
    }

    #[tokio::test]
    async fn readable_image_is_inconclusive_and_says_why() {
        let report = analyse(input(DocumentCategory::Identite, png())).await.unwrap();
        assert_eq!(report.verdict, Verdict::AnalyseImpossible);
        assert_eq!(report.pages, 1);
        assert_eq!(report.document_type, "inconnu");
        assert_eq!(report.anomalies.len(), 1);
        assert_eq!(report.anomalies[0].code, NO_CHECKS);
        assert_eq!(report.anomalies[0].severity, Severity::Info);
        assert!(!report.has_reject_anomaly());
    }

    #[tokio::test]
    async fn single_page_pdf_is_inconclusive() {
        let report = analyse(input(DocumentCategory::Administratif, pdf_with_pages(1))).await.unwrap();
        assert_eq!(report.verdict, Verdict::AnalyseImpossible);
        assert_eq!(report.pages, 1);
    }

    #[tokio::test]
    async fn garbage_behind_a_jpeg_magic_is_unreadable() {
        let mut bytes = b"\xff\xd8\xff\xe0".to_vec();
        bytes.extend(std::iter::repeat_n(0x42, 500));
        let error = analyse(input(DocumentCategory::Identite, bytes)).await.unwrap_err();
        assert!(matches!(error, EngineError::Unreadable(_)), "{error:?}");
        assert_eq!(error.item_error(), ItemError::UnreadableDocument);
    }

    #[tokio::test]
    async fn pdf_is_unsupported_for_identity() {
        let error = analyse(input(DocumentCategory::Identite, pdf_with_pages(1))).await.unwrap_err();
        assert!(matches!(error, EngineError::Unsupported(_)), "{error:?}");
        assert_eq!(error.item_error(), ItemError::UnsupportedDocument);
    }

    #[tokio::test]
    async fn multi_page_pdf_is_unsupported() {
        let error = analyse(input(DocumentCategory::Administratif, pdf_with_pages(2)))
            .await
            .unwrap_err();
        assert!(matches!(error, EngineError::Unsupported(_)), "{error:?}");
    }

    #[tokio::test]
    async fn unreadable_back_fails_the_document() {
        let mut identity = input(DocumentCategory::Identite, png());
        identity.back = Some(b"\x89PNG\r\n\x1a\ntruncated".to_vec());
        let error = analyse(identity).await.unwrap_err();
        assert!(matches!(error, EngineError::Unreadable(_)), "{error:?}");
    }

    #[tokio::test]
    async fn unknown_and_empty_files() {
        let text = analyse(input(DocumentCategory::Administratif, b"plain text".to_vec()))
            .await
            .unwrap_err();
        assert!(matches!(text, EngineError::Unsupported(_)), "{text:?}");
        let empty = analyse(input(DocumentCategory::Administratif, Vec::new())).await.unwrap_err();
        assert!(matches!(empty, EngineError::Unreadable(_)), "{empty:?}");
    }
}
