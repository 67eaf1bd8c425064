//! The genuine page's content: every fact the certificate prints, with the certificate's own
//! words (`i18n::labels`) in the reader's language, and the fingerprint to compare with
//! the one in the certificate's footer.

use crate::certificate::facts::{Facts, Fingerprint, SealFacts};
use crate::i18n::authenticity::Words;
use crate::i18n::{labels, Lang};
use maud::{html, Markup};

/// The title and body of the page confirming `facts`; fails only if the facts cannot be encoded.
pub fn genuine(facts: &Facts, lang: Lang) -> Result<(&'static str, Markup), serde_json::Error> {
    let w = Words::of(lang);
    let fingerprint = facts.fingerprint()?;
    let before_review = facts.before_review().map(|f| f.fingerprint()).transpose()?;
    let body = html! {
        section.ok {
            h1 { (w.title) }
            p { (w.intro) }
        }
        (fingerprint_section(w, fingerprint, before_review))
        (details(w, facts, lang))
        (checks(w, facts, lang))
        @if let Some(seal) = &facts.two_d_doc {
            (seal_section(w, seal, lang))
        }
        (anomalies(w, facts, lang))
        footer { p { (w.note) } }
    };
    Ok((w.title, body))
}

fn fingerprint_section(w: &Words, fingerprint: Fingerprint, before_review: Option<Fingerprint>) -> Markup {
    html! {
        h2 { (w.fingerprint) }
        p.fp id="fingerprint" { (fingerprint) }
        p { (w.fingerprint_where) }
        @if let Some(earlier) = before_review {
            p { (w.before_review) " : " span.fp { (earlier) } }
        }
    }
}

fn details(w: &Words, f: &Facts, lang: Lang) -> Markup {
    let rows = [
        (w.consultation, f.consultation.clone()),
        (w.analyzed, labels::date(f.analyzed_at, lang)),
        (w.recorded, labels::date(f.created_at, lang)),
        (w.category, labels::category(f.category, lang).to_owned()),
        (w.document_type, labels::document_type(f.document_type, lang).to_owned()),
        (w.country, labels::country(f.document_country.as_deref(), lang).to_owned()),
        (w.verdict, labels::verdict(f.verdict, lang).to_owned()),
        (w.decision, labels::decision(f.decision, lang).to_owned()),
        (w.review, labels::review(f.review_status, lang).to_owned()),
    ];
    html! {
        h2 { (w.details) }
        (definitions(rows.iter().map(|(term, value)| (*term, value.as_str()))))
    }
}

fn checks(w: &Words, f: &Facts, lang: Lang) -> Markup {
    let lines = f.check_lines(lang);
    html! {
        h2 { (w.checks) " (" (lines.len()) ")" }
        @if lines.is_empty() {
            p { (w.no_check) }
        } @else {
            ul {
                @for line in &lines {
                    li { (line.text) }
                }
            }
            @for reason in lines.iter().filter_map(|line| line.reason) {
                p { (reason) }
            }
        }
    }
}

fn seal_section(w: &Words, seal: &SealFacts, lang: Lang) -> Markup {
    let values = [
        labels::signature_status(seal.signature_status, lang),
        labels::yes_no(seal.signature_verified, lang),
        labels::yes_no(seal.trusted, lang),
        labels::yes_no(seal.data_matches, lang),
        labels::read_status(seal.read_status, lang),
    ];
    html! {
        h2 { (w.seal) }
        @if seal.present {
            (definitions(w.seal_rows.into_iter().zip(values)))
        } @else {
            p { (w.no_seal) }
        }
    }
}

fn anomalies(w: &Words, f: &Facts, lang: Lang) -> Markup {
    html! {
        h2 { (w.anomalies) " (" (f.anomalies.len()) ")" }
        @if f.anomalies.is_empty() {
            p { (w.no_anomaly) }
        } @else {
            ul {
                @for a in &f.anomalies {
                    li {
                        strong { (labels::severity(a.severity, lang)) " — " (a.code) }
                        br;
                        (labels::anomaly_meaning(a.code, lang))
                    }
                }
            }
        }
    }
}

/// A definition list.
fn definitions<'a>(rows: impl Iterator<Item = (&'a str, &'a str)>) -> Markup {
    html! {
        dl {
            @for (term, value) in rows {
                dt { (term) }
                dd { (value) }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::analysis::{Check, CheckOutcome};
    use domain::vocabulary::{Decision, DocumentCategory, ReviewStatus, Severity, Verdict};

    fn facts() -> Facts {
        Facts {
            consultation: "CSL-20260101-0123456789ab".into(),
            analyzed_at: domain::time::parse("2026-01-01T10:20:30.000Z").unwrap(),
            created_at: domain::time::parse("2026-01-01T10:20:31.000Z").unwrap(),
            category: DocumentCategory::Identite,
            document_type: domain::vocabulary::DocumentType::Passeport,
            document_country: Some("<script>".into()),
            verdict: Verdict::Suspect,
            decision: Some(Decision::AVerifier),
            review_status: Some(ReviewStatus::Accepted),
            checks: vec![CheckOutcome {
                check: Check::MrzCheckDigits,
                passed: false,
            }],
            face_match: None,
            two_d_doc: None,
            anomalies: vec![crate::certificate::facts::AnomalyFact {
                severity: Severity::Warning,
                code: domain::vocabulary::AnomalyCode::LowResolution,
            }],
        }
    }

    #[test]
    fn shows_every_fact_in_both_languages_escaped() {
        let f = facts();
        let fr = genuine(&f, Lang::Fr).unwrap().1.into_string();
        for expected in [
            "<dd>Passeport</dd>",
            "<dd>&lt;script&gt;</dd>",
            "<dd>Suspect</dd>",
            "<dd>À vérifier</dd>",
            "<dd>Acceptée</dd>",
            "<dd>01/01/2026 à 10:20:30 UTC</dd>",
            "Clés de contrôle de la bande MRZ — Échouée",
            "Avertissement — low_resolution",
        ] {
            assert!(fr.contains(expected), "`{expected}` missing: {fr}");
        }
        assert!(!fr.contains("<script>"));
        assert!(fr.contains(&f.fingerprint().unwrap().to_string()));
        let pending = f.before_review().unwrap().fingerprint().unwrap().to_string();
        assert!(fr.contains(&pending), "the pending certificate's fingerprint is given too");
        let (title, en) = genuine(&f, Lang::En).unwrap();
        let en = en.into_string();
        assert_eq!(title, "Genuine certificate");
        for expected in ["<dd>Passport</dd>", "<dd>Suspicious</dd>", "<dd>Accepted</dd>", "— Failed"] {
            assert!(en.contains(expected), "`{expected}` missing: {en}");
        }
    }
}
