//! The PDF certificate of a consultation, generated on demand with lopdf: nothing is stored, and
//! the same consultation gives the same bytes (dates and file id come from the analysis, never
//! from the clock). Its QR code leads to the public authenticity page.

pub mod facts;
mod layout;
mod qr;

use crate::i18n::{labels, Lang};
use domain::analysis::CheckOutcome;
use domain::face_match::FaceMatch;
use domain::model::Consultation;
use facts::{Facts, SealFacts};
use layout::{Font, Pages, MARGIN, PAGE_HEIGHT, PAGE_WIDTH};
use lopdf::{dictionary, Object};

#[derive(Debug, thiserror::Error)]
#[error("certificate generation failed: {0}")]
pub struct CertificateError(String);

/// The certificate is in French; the authenticity page follows the reader's language.
const FR: Lang = Lang::Fr;
/// Side of the QR code in points (about 4 cm): large modules for phone cameras.
const QR_SIZE: f32 = 112.0;
/// Characters per line of body text at 10 pt across the page, and beside the QR code.
const WIDE: usize = 92;
const NARROW: usize = 64;

/// The PDF date of the analysis (`D:YYYYMMDDHHmmSSZ`), so readers show a date that never moves.
fn pdf_date(t: chrono::DateTime<chrono::Utc>) -> Object {
    Object::string_literal(t.format("D:%Y%m%d%H%M%SZ").to_string())
}

fn two_d_doc(pages: &mut Pages, seal: &SealFacts) {
    pages.space(6.0);
    pages.line(Font::Bold, 12.0, 0.0, "Cachet électronique 2D-Doc");
    if !seal.present {
        pages.line(Font::Regular, 10.0, 0.0, "Aucun cachet 2D-Doc n’a été trouvé sur le document.");
        return;
    }
    let rows = [
        format!("Signature : {}", labels::signature_status(seal.signature_status, FR)),
        format!("Signature vérifiée : {}", labels::yes_no(seal.signature_verified, FR)),
        format!("Autorité de certification reconnue (ANTS) : {}", labels::yes_no(seal.trusted, FR)),
        format!(
            "Données du cachet conformes au document : {}",
            labels::yes_no(seal.data_matches, FR)
        ),
        format!("Lecture : {}", labels::read_status(seal.read_status, FR)),
    ];
    // `readStatusMessage` is the engine's English explanation, for the API; the certificate says
    // the same in French through the status and the matching point of attention.
    for row in rows {
        pages.line(Font::Regular, 10.0, 0.0, &row);
    }
}

/// The certificate of `c`, listing `checks` (the checks the engine performed, nothing else), with
/// a QR code of `authenticity_url` and the fingerprint of its facts in every page's footer.
/// Without a link, it is a test-mode result's: it says so first, and vouches for nothing.
pub fn render(
    c: &Consultation,
    checks: &[CheckOutcome],
    face_match: Option<FaceMatch>,
    authenticity_url: Option<&str>,
) -> Result<Vec<u8>, CertificateError> {
    let facts = Facts::of(c, checks, face_match);
    let fingerprint = facts.fingerprint().map_err(|e| CertificateError(e.to_string()))?;
    let mut pages = Pages::new();

    let qr_left = PAGE_WIDTH - MARGIN - QR_SIZE;
    let qr_top = PAGE_HEIGHT - MARGIN + 8.0;
    if let Some(url) = authenticity_url {
        let qr = qr::operations(url, qr_left, qr_top, QR_SIZE)?;
        pages.current().extend(qr);
    }

    pages.line(Font::Bold, 18.0, 0.0, "Sceau");
    match authenticity_url {
        Some(_) => {
            pages.line(Font::Bold, 14.0, 0.0, "Certificat d’analyse documentaire");
            pages.paragraph(
                Font::Regular,
                9.0,
                0.0,
                NARROW,
                "Émis par Sceau, service de vérification de documents d’identité et administratifs.",
            );
        }
        None => {
            pages.line(Font::Bold, 14.0, 0.0, "TEST — Certificat sans valeur");
            pages.paragraph(
                Font::Regular,
                9.0,
                0.0,
                NARROW,
                "Établi en mode test : il n’atteste aucune vérification et ne peut pas être authentifié.",
            );
        }
    }
    pages.space(6.0);
    let fields = [
        ("Consultation", facts.consultation.clone()),
        ("Analysé le", labels::date(facts.analyzed_at, FR)),
        ("Enregistré le", labels::date(facts.created_at, FR)),
        ("Catégorie", labels::category(facts.category, FR).to_owned()),
        ("Type de document", labels::document_type(facts.document_type, FR).to_owned()),
        ("Pays", labels::country(facts.document_country.as_deref(), FR).to_owned()),
    ];
    for (label, value) in fields {
        pages.line(Font::Regular, 10.0, 0.0, &format!("{label} : {value}"));
    }
    // The caption sits under the QR code, whatever the height of the fields beside it.
    let after_fields = pages.y();
    if authenticity_url.is_some() {
        pages.set_y(qr_top - QR_SIZE - 2.0);
        pages.line(Font::Regular, 8.0, qr_left - MARGIN, "Vérifier l’authenticité");
        pages.set_y(after_fields.min(pages.y()));
    }

    pages.rule();
    pages.line(Font::Bold, 13.0, 0.0, &format!("Verdict : {}", labels::verdict(facts.verdict, FR)));
    pages.line(
        Font::Regular,
        10.0,
        0.0,
        &format!("Décision : {}", labels::decision(facts.decision, FR)),
    );
    pages.line(
        Font::Regular,
        10.0,
        0.0,
        &format!("Revue humaine : {}", labels::review(facts.review_status, FR)),
    );

    pages.rule();
    // A face comparison not made is listed too, with its reason: the reader must know it was not.
    let lines = facts.check_lines(FR);
    pages.line(Font::Bold, 12.0, 0.0, &format!("Vérifications réalisées ({})", lines.len()));
    if lines.is_empty() {
        pages.line(
            Font::Regular,
            10.0,
            0.0,
            "Aucune vérification n’a pu être réalisée sur ce document.",
        );
    }
    for line in &lines {
        pages.line(Font::Regular, 10.0, 0.0, &format!("•  {}", line.text));
        if let Some(reason) = line.reason {
            pages.paragraph(Font::Regular, 9.0, 12.0, WIDE - 3, &format!("Motif : {reason}."));
        }
    }

    if let Some(seal) = &facts.two_d_doc {
        two_d_doc(&mut pages, seal);
    }

    pages.rule();
    pages.line(Font::Bold, 12.0, 0.0, &format!("Points d’attention ({})", c.anomalies.len()));
    if c.anomalies.is_empty() {
        pages.line(Font::Regular, 10.0, 0.0, "Aucun point d’attention.");
    }
    for a in &c.anomalies {
        pages.line(Font::Bold, 10.0, 0.0, &format!("{} — {}", labels::severity(a.severity, FR), a.code));
        pages.paragraph(Font::Regular, 10.0, 12.0, WIDE - 3, &a.message_fr());
    }

    pages.rule();
    // A test certificate has no authenticity page to compare its fingerprint with.
    let authenticity = match authenticity_url {
        Some(url) => format!(
            "Authenticité : scannez le QR code ou ouvrez {url}\nEmpreinte du certificat : {fingerprint}. La page d’authenticité \
affiche les mêmes informations et la même empreinte : si l’une d’elles diffère, ce document a été modifié."
        ),
        None => format!("Empreinte du certificat : {fingerprint}."),
    };
    for paragraph in authenticity.lines() {
        pages.paragraph(Font::Regular, 8.0, 0.0, WIDE + 20, paragraph);
    }
    pages.paragraph(
        Font::Regular,
        8.0,
        0.0,
        WIDE + 20,
        "Ce certificat est établi à la demande à partir de l’analyse enregistrée ; il ne contient aucune image du document. \
Seules les vérifications effectivement réalisées y figurent.",
    );

    let info = dictionary! {
        "Title" => Object::string_literal(format!("Certificat d'analyse {}", c.id)),
        "Producer" => Object::string_literal("Sceau"),
        "CreationDate" => pdf_date(c.analyzed_at),
        "ModDate" => pdf_date(c.analyzed_at),
    };
    let digest = ring::digest::digest(
        &ring::digest::SHA256,
        format!("sceau-certificate:{}:{}", c.id, domain::time::format(c.analyzed_at)).as_bytes(),
    );
    let mut file_id = [0u8; 16];
    file_id.copy_from_slice(&digest.as_ref()[..16]);
    let footer = format!("Sceau — certificat {} — empreinte {fingerprint}", c.id);
    pages.finish(&footer, info, file_id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::analysis::Check;
    use domain::vocabulary::{Anomaly, AnomalyCode, Decision, DocumentCategory, ReviewStatus, Severity, TwoDDoc, Verdict};

    fn sample(anomalies: usize) -> Consultation {
        Consultation {
            id: "CSL-20260101-0123456789ab".parse().unwrap(),
            external_ref: Some("Dupont".into()),
            workflow_id: "WFL-20260101-0123456789ab".parse().unwrap(),
            document_category: DocumentCategory::Administratif,
            document_type: domain::vocabulary::DocumentType::AvisImposition,
            document_country: Some("FRA".into()),
            verdict: Verdict::NonConforme,
            decision: Some(Decision::AVerifier),
            review_status: Some(ReviewStatus::Pending),
            anomaly_count: anomalies,
            has_reject_anomaly: true,
            anomalies: (0..anomalies)
                .map(|i| Anomaly {
                    code: AnomalyCode::ALL[i % AnomalyCode::ALL.len()],
                    severity: Severity::Reject,
                    message: "Les données du cachet ne correspondent pas au texte imprimé : le revenu fiscal de référence diffère. "
                        .repeat(2),
                })
                .collect(),
            two_d_doc: Some(TwoDDoc {
                present: true,
                trusted: true,
                signature_verified: true,
                signature_status: domain::vocabulary::SignatureStatus::Valid,
                data_matches: false,
                read_status: domain::vocabulary::ReadStatus::Read,
                read_status_message: None,
            }),
            analyzed_at: domain::time::parse("2026-01-01T10:20:30.000Z").unwrap(),
            created_at: domain::time::parse("2026-01-01T10:20:31.000Z").unwrap(),
        }
    }

    const URL: &str = "https://sceau.example/authenticite/CSL-20260101-0123456789ab.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";

    #[test]
    fn the_face_comparison_is_listed_with_its_outcome_or_why_it_was_not_made() {
        let compared = [CheckOutcome {
            check: Check::FaceMatch,
            passed: false,
        }];
        let mismatch = FaceMatch::Mismatch { similarity: 0.123 };
        let pdf = render(&sample(2), &compared, Some(mismatch), Some(URL)).unwrap();
        let text = lopdf::Document::load_mem(&pdf).unwrap().extract_text(&[1]).unwrap();
        assert!(text.contains("Vérifications réalisées (1)"), "{text}");
        assert!(text.contains("Personnes différentes (similarité 0,12)"), "{text}");
        let refused = FaceMatch::NotChecked {
            reason: domain::face_match::NotCheckedReason::NoConsent,
        };
        let not_compared = render(&sample(2), &[], Some(refused), Some(URL)).unwrap();
        let text = lopdf::Document::load_mem(&not_compared).unwrap().extract_text(&[1]).unwrap();
        assert!(
            text.contains("Vérifications réalisées (1)") && text.contains("Non comparé"),
            "{text}"
        );
        assert!(text.contains("consenti"), "{text}");
        if let Ok(path) = std::env::var("SCEAU_CERTIFICATE_SAMPLE") {
            let compared = render(&sample(2), &compared, Some(FaceMatch::Match { similarity: 0.734 }), Some(URL)).unwrap();
            std::fs::write(format!("{path}.face.pdf"), compared).unwrap();
            std::fs::write(format!("{path}.face-not-compared.pdf"), not_compared).unwrap();
        }
    }

    #[test]
    fn renders_the_same_bytes_and_breaks_pages() {
        let checks = [
            CheckOutcome {
                check: Check::TwoDDocSignature,
                passed: true,
            },
            CheckOutcome {
                check: Check::TwoDDocData,
                passed: false,
            },
        ];
        let started = std::time::Instant::now();
        let pdf = render(&sample(2), &checks, None, Some(URL)).unwrap();
        let elapsed = started.elapsed();
        assert_eq!(pdf, render(&sample(2), &checks, None, Some(URL)).unwrap());
        let doc = lopdf::Document::load_mem(&pdf).unwrap();
        assert_eq!(doc.get_pages().len(), 1, "generated in {elapsed:?}");
        let long = render(&sample(40), &checks, None, Some(URL)).unwrap();
        assert!(lopdf::Document::load_mem(&long).unwrap().get_pages().len() > 1);
        let fingerprint = Facts::of(&sample(2), &checks, None).fingerprint().unwrap().to_string();
        let text = doc.extract_text(&[1]).unwrap();
        assert!(
            text.contains(&format!("empreinte {fingerprint}")),
            "the footer prints the fingerprint {fingerprint}: {text}"
        );
        let test = render(&sample(2), &checks, None, None).unwrap();
        let test_text = lopdf::Document::load_mem(&test).unwrap().extract_text(&[1]).unwrap();
        assert!(test_text.contains("sans valeur") && !test_text.contains(URL), "{test_text}");
        // Samples to look at (live, and test mode's beside it): SCEAU_CERTIFICATE_SAMPLE=/tmp/sample.pdf cargo test -p gateway certificate
        if let Ok(path) = std::env::var("SCEAU_CERTIFICATE_SAMPLE") {
            std::fs::write(&path, &pdf).unwrap();
            std::fs::write(format!("{path}.test.pdf"), &test).unwrap();
            eprintln!("certificate rendered in {elapsed:?}");
        }
    }
}
