//! One result (PORTAL.md, Results and Review queue): verdict, decision, review status with who
//! settled it, points of attention in words, the 2D-Doc, the checks; for roles that may see them,
//! the images (large, beside the findings) and the certificate; and the review decision while the
//! review waits. The decision is `reviews::settle`, the operation `sceau admin review` runs too.

use super::error::{PortalError, PortalResult};
use super::form::Form;
use super::layout::{self, Notice};
use super::results::{decision_cell, workflow_name};
use super::signed::Signed;
use crate::i18n::{labels, Lang};
use crate::state::AppState;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use common::document::FileKind;
use common::store::consultations::{self, ImageRef};
use common::store::reviews::{self, Decision, Settled, Settlement};
use common::store::{workflows, RepoError};
use domain::analysis::CheckOutcome;
use domain::ids::ConsultationId;
use domain::model::{Consultation, WorkflowDetail};
use domain::team::Permission;
use domain::vocabulary::{ImageSide, ReviewStatus, TwoDDoc};
use maud::{html, Markup};
use serde::Deserialize;

#[derive(Deserialize)]
pub struct Flash {
    flash: Option<String>,
}

/// What the page shows, read in one go.
struct Shown {
    consultation: Consultation,
    checks: Vec<CheckOutcome>,
    face_match: Option<domain::face_match::FaceComparison>,
    /// Empty for roles without `ViewImages`: never read for them.
    images: Vec<(ImageSide, ImageRef)>,
    settled: Option<Settled>,
    workflows: Vec<WorkflowDetail>,
}

/// A consultation id from the path; anything else is not found here.
pub fn path_id(raw: &str) -> PortalResult<ConsultationId> {
    raw.parse().map_err(|_| PortalError::NotFound)
}

/// `GET /portal/consultations/{id}`.
pub async fn page(State(state): State<AppState>, signed: Signed, Path(id): Path<String>, Query(q): Query<Flash>) -> PortalResult<Response> {
    signed.require(Permission::ViewResults)?;
    let id = path_id(&id)?;
    let t = signed.lang.portal();
    let notice = (q.flash.as_deref() == Some("reviewed")).then_some(Notice::Ok(t.review_settled));
    render(&state, &signed, &id, notice, "", StatusCode::OK).await
}

async fn render(
    state: &AppState,
    signed: &Signed,
    id: &ConsultationId,
    notice: Option<Notice<'_>>,
    comment: &str,
    status: StatusCode,
) -> PortalResult<Response> {
    let (lang, t) = (signed.lang, signed.lang.portal());
    let role = signed.member().role;
    let (may_see_images, may_review) = (role.may(Permission::ViewImages), role.may(Permission::Review));
    let (company, lookup) = (signed.company.id.clone(), id.clone());
    let shown = state
        .store
        .read(move |c| {
            let consultation = consultations::get(c, &company, &lookup)?;
            Ok::<_, RepoError>(Shown {
                checks: consultations::checks(c, &company, &lookup)?,
                face_match: consultations::face_match(c, &company, &lookup)?,
                images: if may_see_images {
                    consultations::images(c, &company, &lookup)?
                } else {
                    Vec::new()
                },
                settled: reviews::settled(c, &company, &lookup)?,
                workflows: workflows::list(c, &company)?,
                consultation,
            })
        })
        .await?;
    let c = &shown.consultation;
    let pending = c.review_status == Some(ReviewStatus::Pending);
    let findings = html! {
        dl.facts {
            dt { (t.verdict) } dd data-testid="verdict" { (labels::verdict(c.verdict, lang)) }
            dt { (t.decision) } dd data-testid="decision" { (decision_cell(c.decision, lang)) }
            dt { (t.workflow) } dd { (workflow_name(&shown.workflows, &c.workflow_id)) }
            dt { (t.external_ref) } dd { (c.external_ref.as_deref().unwrap_or("—")) }
            dt { (t.category) } dd { (labels::category(c.document_category, lang)) }
            dt { (t.document_type) } dd { (labels::document_type(c.document_type, lang)) }
            dt { (t.country) } dd { (labels::country(c.document_country.as_deref(), lang)) }
            dt { (t.analysed_at) } dd { (labels::date(c.analyzed_at, lang)) }
        }
        (review_status(c.review_status, shown.settled.as_ref(), lang))
        @if pending && may_review {
            (review_form(signed, id, comment))
        }
        (anomalies(c, lang))
        @if let Some(face) = &shown.face_match {
            (super::face_match::section(id, face, may_see_images, lang))
        }
        (two_d_doc(c.two_d_doc.as_ref(), lang))
        (checks(&shown.checks, lang))
        @if may_see_images {
            h2 { (t.certificate) }
            p { a href=(format!("/portal/consultations/{id}/certificate")) data-testid="certificate-download" { (t.certificate_download) } }
        }
    };
    let body = html! {
        @if may_see_images {
            div.result-with-images {
                section.result-images aria-labelledby="images-title" {
                    h2 #images-title { (t.images) }
                    (images(id, &shown.images, lang))
                }
                section.result-findings { (findings) }
            }
        } @else {
            (findings)
        }
    };
    let title = format!("{} {}", t.result_title, id);
    Ok(layout::with_status(
        layout::page(signed, "/portal/consultations", &title, notice, body),
        status,
    ))
}

fn side_label(side: ImageSide, lang: Lang) -> &'static str {
    let t = lang.portal();
    match side {
        ImageSide::Recto => t.image_recto,
        ImageSide::Verso => t.image_verso,
        ImageSide::Selfie => t.image_selfie,
    }
}

/// The images through the audited route: `<img>` for what a browser shows, a link for a PDF or
/// TIFF, a sentence for a purged one.
fn images(id: &ConsultationId, images: &[(ImageSide, ImageRef)], lang: Lang) -> Markup {
    let t = lang.portal();
    html! {
        @if images.is_empty() {
            p.muted { (t.no_images) }
        }
        @for (side, image) in images {
            @let src = format!("/portal/consultations/{id}/images/{side}");
            @let label = side_label(*side, lang);
            figure.result-image {
                figcaption { (label) }
                @match image {
                    ImageRef::Stored { kind: FileKind::Jpeg | FileKind::Png | FileKind::Webp, .. } => {
                        img data-testid=(format!("image-{side}")) alt=(format!("{} — {label}", t.image_alt)) src=(src);
                    }
                    ImageRef::Stored { kind, .. } => {
                        a href=(src) data-testid=(format!("image-{side}-link")) { (t.image_open) " (" (kind.extension().to_uppercase()) ")" }
                    }
                    ImageRef::Purged => p.muted data-testid=(format!("image-{side}-purged")) { (t.image_purged) },
                }
            }
        }
    }
}

fn review_status(status: Option<ReviewStatus>, settled: Option<&Settled>, lang: Lang) -> Markup {
    let t = lang.portal();
    html! {
        div.review-status data-testid="review-status" {
            p { strong { (t.review_status) " : " } (labels::review(status, lang)) }
            @if let Some(s) = settled {
                dl.facts {
                    dt { (t.settled_by) } dd data-testid="review-by" { (s.by.as_deref().unwrap_or("—")) }
                    dt { (t.settled_at) } dd { (labels::date(s.at, lang)) }
                    @if let Some(comment) = &s.comment {
                        dt { (t.comment) } dd data-testid="review-comment" { (comment) }
                    }
                }
            }
        }
    }
}

fn review_form(signed: &Signed, id: &ConsultationId, comment: &str) -> Markup {
    let t = signed.lang.portal();
    html! {
        form.review method="post" action=(format!("/portal/consultations/{id}/review")) data-testid="review-form" aria-labelledby="review-title" {
            h2 #review-title { (t.review_form) }
            input type="hidden" name="csrf" value=(signed.session.csrf_token);
            label for="comment" { (t.comment) }
            textarea #comment name="comment" maxlength=(reviews::COMMENT_MAX) aria-describedby="comment-hint" { (comment) }
            p.hint #comment-hint { (t.review_comment_hint) }
            button type="submit" name="decision" value="accept" data-testid="review-accept" { (t.review_accept) }
            " "
            button.danger type="submit" name="decision" value="reject" data-testid="review-reject" { (t.review_reject) }
        }
    }
}

fn anomalies(c: &Consultation, lang: Lang) -> Markup {
    let t = lang.portal();
    html! {
        h2 { (t.anomalies) }
        @if c.anomalies.is_empty() {
            p.muted { (t.no_anomalies) }
        } @else {
            table data-testid="anomalies" {
                thead { tr { th scope="col" { (t.severity) } th scope="col" { (t.meaning) } } }
                tbody {
                    @for a in &c.anomalies {
                        tr data-testid="anomaly-row" {
                            td { (labels::severity(a.severity, lang)) }
                            td { (labels::anomaly_meaning(a.code, lang)) }
                        }
                    }
                }
            }
        }
    }
}

fn two_d_doc(seal: Option<&TwoDDoc>, lang: Lang) -> Markup {
    let t = lang.portal();
    html! {
        h2 { (t.two_d_doc) }
        @match seal {
            None => p.muted { (t.no_two_d_doc) },
            Some(s) => dl.facts data-testid="two-d-doc" {
                dt { (t.seal_present) } dd { (labels::yes_no(s.present, lang)) }
                dt { (t.seal_read) } dd { (labels::read_status(s.read_status, lang)) }
                dt { (t.seal_signature) } dd { (labels::signature_status(s.signature_status, lang)) }
                dt { (t.seal_trusted) } dd { (labels::yes_no(s.trusted, lang)) }
                dt { (t.seal_data) } dd { (labels::yes_no(s.data_matches, lang)) }
            },
        }
    }
}

fn checks(checks: &[CheckOutcome], lang: Lang) -> Markup {
    let t = lang.portal();
    html! {
        h2 { (t.checks) }
        @if checks.is_empty() {
            p.muted { (t.no_checks) }
        } @else {
            table data-testid="checks" {
                thead { tr { th scope="col" { (t.check) } th scope="col" { (t.outcome) } } }
                tbody {
                    @for c in checks {
                        tr { td { (labels::check(c.check, lang)) } td { (labels::outcome(c.passed, lang)) } }
                    }
                }
            }
        }
    }
}

#[derive(Deserialize)]
pub struct ReviewForm {
    csrf: String,
    decision: String,
    #[serde(default)]
    comment: String,
}

/// `POST /portal/consultations/{id}/review`: the decision, through `reviews::settle`.
pub async fn settle(
    State(state): State<AppState>,
    signed: Signed,
    Path(id): Path<String>,
    Form(form): Form<ReviewForm>,
) -> PortalResult<Response> {
    signed.require(Permission::Review)?;
    signed.check_csrf(&form.csrf)?;
    let id = path_id(&id)?;
    let t = signed.lang.portal();
    let decision = match form.decision.as_str() {
        "accept" => Decision::Accept,
        "reject" => Decision::Reject,
        _ => return Err(PortalError::BadForm),
    };
    let refused = |message, status| render(&state, &signed, &id, Some(Notice::Error(message)), &form.comment, status);
    let settlement = match Settlement::new(decision, Some(&form.comment)) {
        Ok(s) => s,
        Err(RepoError::Invalid { .. }) if form.comment.trim().is_empty() => {
            return refused(t.review_comment_required, StatusCode::UNPROCESSABLE_ENTITY).await
        }
        Err(_) => return refused(t.review_comment_too_long, StatusCode::UNPROCESSABLE_ENTITY).await,
    };
    let (company, acting, target, now) = (signed.company.id.clone(), signed.acting(), id.clone(), chrono::Utc::now());
    let settled = state
        .store
        .write(move |tx| reviews::settle(tx, Some(&company), &target, &settlement, &acting, now))
        .await;
    match settled {
        Ok(_) => {
            state.outbox_wake.notify_one();
            Ok(Redirect::to(&format!("/portal/consultations/{id}?flash=reviewed")).into_response())
        }
        Err(RepoError::InvalidState(_)) => refused(t.review_not_pending, StatusCode::CONFLICT).await,
        Err(e) => Err(e.into()),
    }
}
