//! The PDF certificate of a consultation, generated on demand with lopdf (nothing is stored, the
//! same consultation gives the same bytes). This version lists the recorded findings; the
//! certificate issue adds the checks table, the QR code and the authenticity page.

use common::model::Consultation;
use lopdf::content::{Content, Operation};
use lopdf::{dictionary, Document, Object, Stream, StringFormat};

#[derive(Debug, thiserror::Error)]
#[error("certificate generation failed: {0}")]
pub struct CertificateError(String);

/// Text in WinAnsiEncoding, so French accents print with the standard fonts.
fn win_ansi(text: &str) -> Object {
    let bytes = text
        .chars()
        .map(|c| match c {
            '\u{20}'..='\u{7e}' | '\u{a0}'..='\u{ff}' => c as u32 as u8,
            '’' => 0x92,
            '–' => 0x96,
            '—' => 0x97,
            '€' => 0x80,
            _ => b'?',
        })
        .collect();
    Object::String(bytes, StringFormat::Literal)
}

fn lines(c: &Consultation) -> Vec<(bool, String)> {
    let or_dash = |v: Option<&str>| v.unwrap_or("—").to_owned();
    let mut out = vec![
        (true, "Sceau — Certificat d’analyse documentaire".to_owned()),
        (false, String::new()),
        (false, format!("Consultation : {}", c.id)),
        (false, format!("Analysé le : {}", c.analyzed_at)),
        (false, format!("Enregistré le : {}", c.created_at)),
        (false, format!("Catégorie : {}", c.document_category)),
        (false, format!("Type de document : {}", c.document_type)),
        (false, format!("Pays : {}", or_dash(c.document_country.as_deref()))),
        (true, format!("Verdict : {}", c.verdict)),
        (false, format!("Décision : {}", or_dash(c.decision.map(|d| d.as_str())))),
        (false, format!("Revue humaine : {}", or_dash(c.review_status.map(|r| r.as_str())))),
        (false, String::new()),
        (true, format!("Points d’attention ({})", c.anomaly_count)),
    ];
    for a in &c.anomalies {
        out.push((false, format!("[{}] {}", a.severity, a.code)));
        for chunk in wrap(&a.message, 90) {
            out.push((false, format!("    {chunk}")));
        }
    }
    out
}

fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let last = lines.last_mut().expect("lines is never empty");
        if !last.is_empty() && last.chars().count() + word.chars().count() + 1 > width {
            lines.push(word.to_owned());
        } else {
            if !last.is_empty() {
                last.push(' ');
            }
            last.push_str(word);
        }
    }
    lines
}

/// An A4 PDF of the consultation.
pub fn render(c: &Consultation) -> Result<Vec<u8>, CertificateError> {
    let mut doc = Document::with_version("1.7");
    let pages_id = doc.new_object_id();
    let font =
        |name: &str| dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => name.to_owned(), "Encoding" => "WinAnsiEncoding" };
    let regular = doc.add_object(font("Helvetica"));
    let bold = doc.add_object(font("Helvetica-Bold"));
    let resources = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => regular, "F2" => bold } });

    let mut ops = vec![
        Operation::new("BT", vec![]),
        Operation::new("TL", vec![16.into()]),
        Operation::new("Td", vec![56.into(), 780.into()]),
    ];
    for (is_bold, text) in lines(c) {
        ops.push(Operation::new("Tf", vec![if is_bold { "F2" } else { "F1" }.into(), 11.into()]));
        ops.push(Operation::new("Tj", vec![win_ansi(&text)]));
        ops.push(Operation::new("T*", vec![]));
    }
    ops.push(Operation::new("ET", vec![]));
    let content = Content { operations: ops }.encode().map_err(|e| CertificateError(e.to_string()))?;
    let content_id = doc.add_object(Stream::new(dictionary! {}, content));
    let page = doc.add_object(dictionary! {
        "Type" => "Page",
        "Parent" => pages_id,
        "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        "Contents" => content_id,
        "Resources" => resources,
    });
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => vec![page.into()], "Count" => 1 }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    let mut out = Vec::new();
    doc.save_to(&mut out).map_err(|e| CertificateError(e.to_string()))?;
    Ok(out)
}
