//! The face comparison on a result's page: its outcome, its similarity against the two
//! thresholds, why it was not made, and the two faces side by side. The faces are cropped by the
//! browser from the stored images, through the audited image route (each crop is an image view in
//! the audit log), with no decoding on the server: an SVG whose `viewBox` frames the recorded box,
//! which the page's Content-Security-Policy allows where an inline style would not be.

use domain::face_match::{FaceBox, FaceComparison, FaceMatch, MATCH_THRESHOLD, MISMATCH_THRESHOLD};
use domain::ids::ConsultationId;
use domain::vocabulary::ImageSide;
use maud::{html, Markup};

use crate::i18n::Lang;

/// How much of the surroundings a crop shows around the detected box (hair, chin, ears).
const MARGIN: f32 = 0.35;
/// The side of a crop on the page, in CSS pixels.
const SIDE: u32 = 160;

pub fn section(id: &ConsultationId, face: &FaceComparison, may_see_images: bool, lang: Lang) -> Markup {
    let t = lang.portal();
    let (outcome, score) = (&face.outcome, face.outcome.similarity());
    let label = match lang {
        Lang::Fr => outcome.label_fr(),
        Lang::En => outcome.label_en(),
    };
    html! {
        section data-testid="face-match" aria-labelledby="face-title" {
            h2 #face-title { (t.face_title) }
            dl.facts {
                dt { (t.face_outcome) } dd data-testid="face-match-outcome" { (label) }
                @if let Some(score) = score {
                    dt { (t.face_score) }
                    dd data-testid="face-match-score" {
                        (decimal(score, lang))
                        span.muted {
                            " (" (t.face_thresholds) " " (threshold(MATCH_THRESHOLD, lang)) " ; "
                            (t.face_thresholds_below) " " (threshold(MISMATCH_THRESHOLD, lang)) ")"
                        }
                    }
                }
                @if let FaceMatch::NotChecked { reason } = outcome {
                    dt { (t.face_reason) }
                    dd data-testid="face-match-reason" {
                        (match lang { Lang::Fr => reason.detail_fr(), Lang::En => reason.detail() })
                    }
                }
            }
            @if score.is_some() {
                p.muted { (t.face_liveness) }
            }
            @if may_see_images {
                @if let (Some(document), Some(selfie)) = (face.document_face, face.selfie_face) {
                    div.face-pair data-testid="face-match-faces" {
                        (crop(id, ImageSide::Recto, &document, t.face_document))
                        (crop(id, ImageSide::Selfie, &selfie, t.face_selfie))
                    }
                }
            }
        }
    }
}

/// One face: the stored image, turned as the face was found, framed on the face's box.
fn crop(id: &ConsultationId, side: ImageSide, face: &FaceBox, caption: &str) -> Markup {
    let (w, h) = (face.image_width as f32, face.image_height as f32);
    let grow = face.width.max(face.height) * (1.0 + 2.0 * MARGIN);
    let (cx, cy) = (face.left + face.width / 2.0, face.top + face.height / 2.0);
    let view_box = format!("{:.1} {:.1} {grow:.1} {grow:.1}", cx - grow / 2.0, cy - grow / 2.0);
    // The image turned clockwise by quarter turns, in the frame the box was measured in.
    let transform = match face.turns % 4 {
        1 => format!("translate({h} 0) rotate(90)"),
        2 => format!("translate({w} {h}) rotate(180)"),
        3 => format!("translate(0 {w}) rotate(270)"),
        _ => String::new(),
    };
    html! {
        figure.face {
            svg viewBox=(view_box) width=(SIDE) height=(SIDE) role="img" aria-label=(caption)
                data-testid=(format!("face-match-{side}")) {
                image href=(format!("/portal/consultations/{id}/images/{side}")) width=(w) height=(h)
                    transform=[(!transform.is_empty()).then_some(transform.as_str())] {}
            }
            figcaption { (caption) }
        }
    }
}

/// A similarity with two decimals, a comma in French.
fn decimal(value: f32, lang: Lang) -> String {
    localised(format!("{value:.2}"), lang)
}

/// A threshold as it is set (0.363, 0.3), a comma in French.
fn threshold(value: f32, lang: Lang) -> String {
    localised(value.to_string(), lang)
}

fn localised(text: String, lang: Lang) -> String {
    match lang {
        Lang::Fr => text.replace('.', ","),
        Lang::En => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id() -> ConsultationId {
        ConsultationId::generate(chrono::Utc::now())
    }

    fn framed(turns: u8) -> FaceBox {
        FaceBox {
            left: 100.0,
            top: 50.0,
            width: 40.0,
            height: 60.0,
            turns,
            image_width: 400,
            image_height: 300,
        }
    }

    #[test]
    fn a_compared_pair_shows_its_score_against_the_thresholds_and_both_faces() {
        let face = FaceComparison {
            outcome: FaceMatch::Mismatch { similarity: 0.12 },
            document_face: Some(framed(0)),
            selfie_face: Some(framed(1)),
        };
        let page = section(&id(), &face, true, Lang::Fr).into_string();
        assert!(page.contains("Personnes différentes"), "{page}");
        assert!(
            page.contains("0,12") && page.contains("0,363") && page.contains("sous 0,3)"),
            "{page}"
        );
        // The box grown by its margins around its centre (120, 80): 102 wide.
        assert!(page.contains(r#"viewBox="69.0 29.0 102.0 102.0""#), "{page}");
        assert!(page.contains(r#"transform="translate(300 0) rotate(90)""#), "{page}");
        assert!(page.contains("/images/recto") && page.contains("/images/selfie"), "{page}");
        let hidden = section(&id(), &face, false, Lang::En).into_string();
        assert!(!hidden.contains("/images/"), "a role without images sees no face: {hidden}");
        assert!(hidden.contains("Different people"), "{hidden}");
    }

    #[test]
    fn a_selfie_not_compared_says_why() {
        let face = FaceComparison::from(FaceMatch::NotChecked {
            reason: domain::face_match::NotCheckedReason::NoConsent,
        });
        let page = section(&id(), &face, true, Lang::Fr).into_string();
        assert!(page.contains("Non comparé") && page.contains("n’a pas consenti"), "{page}");
        assert!(!page.contains("face-match-score"), "{page}");
    }
}
