//! A workflow's Diffusion tab (PORTAL.md page 6): where its `verification.*` events go, live and
//! test (checked by the notifier's own destination guard, as the API and the CLI check theirs),
//! the company's signing secret and its test account's (each shown once, when made or rotated),
//! the test button, the last deliveries of each mode and the replay of a dead letter. Each action
//! is the store operation the operator's commands use.

use super::error::{PortalError, PortalResult};
use super::form::Form;
use super::layout::{self, Notice};
use super::signed::Signed;
use super::workflows::{load, tabs, SECTION};
use crate::i18n::{labels, Lang};
use crate::state::AppState;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use common::messages::DeliveryOutcome;
use common::store::events::{self, Delivery};
use common::store::{audit, companies, workflows, RepoError};
use domain::ids::EventId;
use domain::model::WorkflowDetail;
use domain::team::{AuditAction, Permission};
use domain::vocabulary::Mode;
use domain::webhook::DeliveryStatus;
use maud::{html, Markup};
use notifier::DestinationError;
use serde::Deserialize;

#[derive(Deserialize)]
pub struct Flash {
    flash: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookForm {
    csrf: String,
    #[serde(default)]
    webhook_url: String,
    /// Absent (a form of before test URLs): the test URL is left as it is.
    #[serde(default)]
    test_webhook_url: Option<String>,
}

#[derive(Deserialize)]
pub struct Csrf {
    csrf: String,
}

/// What the page shows besides the workflow and its deliveries.
#[derive(Default)]
struct Extra<'a> {
    notice: Option<Notice<'a>>,
    /// The URLs as typed, when one was refused.
    typed_url: Option<String>,
    typed_test_url: Option<String>,
    /// A secret just made, shown this once.
    new_secret: Option<String>,
    /// A test secret just made, shown this once.
    new_test_secret: Option<String>,
}

fn path_of(wf: &WorkflowDetail) -> String {
    format!("{SECTION}/{}/diffusion", wf.workflow.id)
}

/// `GET /portal/workflows/{id}/diffusion`.
pub async fn page(State(state): State<AppState>, signed: Signed, Path(id): Path<String>, Query(q): Query<Flash>) -> PortalResult<Response> {
    signed.require(Permission::ManageWorkflows)?;
    let wf = load(&state, &signed, &id).await?;
    let t = signed.lang.portal();
    let notice = match q.flash.as_deref() {
        Some("url_saved") => Some(Notice::Ok(t.wf_webhook_saved)),
        Some("url_removed") => Some(Notice::Ok(t.wf_webhook_removed)),
        Some("test_sent") => Some(Notice::Ok(t.wf_test_sent)),
        Some("replayed") => Some(Notice::Ok(t.wf_replayed)),
        _ => None,
    };
    render(
        &state,
        &signed,
        &wf,
        Extra {
            notice,
            ..Extra::default()
        },
        StatusCode::OK,
    )
    .await
}

async fn render(state: &AppState, signed: &Signed, wf: &WorkflowDetail, extra: Extra<'_>, status: StatusCode) -> PortalResult<Response> {
    let (lang, t) = (signed.lang, signed.lang.portal());
    let (company, id) = (signed.company.id.clone(), wf.workflow.id.clone());
    let (deliveries, test_deliveries) = state
        .store
        .read(move |c| {
            let test = match companies::test_account(c, &company)? {
                Some(account) => events::deliveries(c, &account, &id)?,
                None => Vec::new(),
            };
            Ok::<_, RepoError>((events::deliveries(c, &company, &id)?, test))
        })
        .await?;
    let csrf = &signed.session.csrf_token;
    let here = path_of(wf);
    let url_value = extra.typed_url.as_deref().or(wf.webhook_url.as_deref()).unwrap_or("");
    let test_url_value = extra.typed_test_url.as_deref().or(wf.test_webhook_url.as_deref()).unwrap_or("");
    let body = html! {
        (tabs(signed, wf, true))
        h2 { (t.wf_webhook) }
        form method="post" action=(here) data-testid="webhook-form" {
            input type="hidden" name="csrf" value=(csrf);
            label for="webhookUrl" { (t.wf_webhook_url) }
            input #webhookUrl type="url" name="webhookUrl" value=(url_value) maxlength=(notifier::destination::MAX_URL_CHARS) aria-describedby="webhook-hint";
            p.hint #webhook-hint { (t.wf_webhook_hint) }
            label for="testWebhookUrl" { (t.wf_test_webhook_url) }
            input #testWebhookUrl type="url" name="testWebhookUrl" value=(test_url_value) maxlength=(notifier::destination::MAX_URL_CHARS) aria-describedby="test-webhook-hint";
            p.hint #test-webhook-hint { (t.wf_test_webhook_hint) }
            button type="submit" { (t.wf_save) }
        }
        h2 { (t.wf_test) }
        p { (t.wf_test_text) }
        @if wf.webhook_url.is_some() {
            form method="post" action=(format!("{here}/test")) {
                input type="hidden" name="csrf" value=(csrf);
                button.secondary type="submit" data-testid="webhook-test" { (t.wf_test_send) }
            }
        } @else {
            p.muted { (t.wf_test_no_url) }
        }
        h2 { (t.wf_secret) }
        p { (t.wf_secret_text) }
        @if let Some(secret) = &extra.new_secret {
            p.flash.ok role="status" { (t.wf_secret_new) }
            code.secret data-testid="signing-secret" { (secret) }
        }
        form method="post" action=(format!("{here}/rotate")) {
            input type="hidden" name="csrf" value=(csrf);
            button.secondary type="submit" data-testid="secret-rotate" { (t.wf_secret_rotate) }
        }
        h2 { (t.wf_test_secret) }
        p { (t.wf_test_secret_text) }
        @if let Some(secret) = &extra.new_test_secret {
            p.flash.ok role="status" { (t.wf_test_secret_new) }
            code.secret data-testid="test-signing-secret" { (secret) }
        }
        form method="post" action=(format!("{here}/rotate-test")) {
            input type="hidden" name="csrf" value=(csrf);
            button.secondary type="submit" data-testid="test-secret-rotate" { (t.wf_test_secret_rotate) }
        }
        h2 { (t.wf_deliveries) }
        (delivery_table(&deliveries, &here, csrf, lang, Rows::Live))
        h2 { (t.wf_test_deliveries) }
        (delivery_table(&test_deliveries, &here, csrf, lang, Rows::Test))
    };
    Ok(layout::with_status(
        layout::page(signed, SECTION, &wf.workflow.name, extra.notice, body),
        status,
    ))
}

/// Which mode's events a delivery table lists: each keeps test ids of its own, so a test event
/// is never counted among the live ones.
#[derive(Clone, Copy)]
enum Rows {
    Live,
    Test,
}

impl Rows {
    fn row(self) -> &'static str {
        match self {
            Rows::Live => "delivery-row",
            Rows::Test => "test-delivery-row",
        }
    }

    fn replay(self) -> &'static str {
        match self {
            Rows::Live => "delivery-replay",
            Rows::Test => "test-delivery-replay",
        }
    }
}

fn delivery_table(deliveries: &[Delivery], here: &str, csrf: &str, lang: Lang, rows: Rows) -> Markup {
    let t = lang.portal();
    html! {
        @if deliveries.is_empty() {
            p { (match rows { Rows::Live => t.wf_deliveries_none, Rows::Test => t.wf_test_deliveries_none }) }
        } @else {
            table {
                thead { tr {
                    th scope="col" { (t.wf_col_event) }
                    th scope="col" { (t.wf_col_event_id) }
                    th scope="col" { (t.wf_col_attempt) }
                    th scope="col" { (t.wf_col_status_code) }
                    th scope="col" { (t.wf_col_duration) }
                    th scope="col" { (t.wf_col_outcome) }
                    th scope="col" { (t.wf_col_time) }
                    th scope="col" { (t.wf_col_action) }
                } }
                tbody {
                    @for (i, d) in deliveries.iter().enumerate() {
                        // The replay button goes on the event's newest line only.
                        @let first_of_event = i == 0 || deliveries[i - 1].event_id != d.event_id;
                        tr data-testid=(rows.row()) {
                            td { code { (d.event.as_str()) } }
                            td { code { (d.event_id) } }
                            @match &d.attempt {
                                Some(a) => {
                                    td { (a.attempt) }
                                    td { (a.status_code.map(|c| c.to_string()).unwrap_or_else(|| "—".into())) }
                                    td { (a.duration_ms.map(|ms| format!("{ms} ms")).unwrap_or_else(|| "—".into())) }
                                    td { (outcome(a.outcome, t)) }
                                    td { (labels::date(a.at, lang)) }
                                },
                                None => {
                                    td { "—" } td { "—" } td { "—" }
                                    td { (if d.status == DeliveryStatus::NotSent { t.wf_outcome_not_sent } else { t.wf_outcome_pending }) }
                                    td { (labels::date(d.created_at, lang)) }
                                },
                            }
                            td {
                                @if first_of_event && d.status.is_dead_letter() {
                                    form method="post" action=(format!("{here}/replay/{}", d.event_id)) {
                                        input type="hidden" name="csrf" value=(csrf);
                                        button.secondary type="submit" data-testid=(rows.replay()) { (t.wf_replay) }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn outcome(outcome: DeliveryOutcome, t: &crate::i18n::portal::Words) -> &'static str {
    match outcome {
        DeliveryOutcome::Delivered => t.wf_outcome_delivered,
        DeliveryOutcome::Retrying => t.wf_outcome_retrying,
        DeliveryOutcome::Dead => t.wf_outcome_dead,
        DeliveryOutcome::Gone => t.wf_outcome_gone,
    }
}

/// Why a destination is refused, in the member's words.
fn refusal(e: &DestinationError, lang: Lang) -> String {
    let t = lang.portal();
    let why = match e {
        DestinationError::UnsupportedScheme | DestinationError::HttpNotAllowed => t.wf_webhook_http.to_owned(),
        DestinationError::Forbidden { .. } => t.wf_webhook_internal.to_owned(),
        DestinationError::Port { .. } => t.wf_webhook_port.to_owned(),
        DestinationError::Malformed(_) | DestinationError::NoHost => t.wf_webhook_malformed.to_owned(),
        other => other.to_string(),
    };
    format!("{} {why}", t.wf_webhook_refused)
}

/// `POST /portal/workflows/{id}/diffusion`: sets or (empty) removes the webhook URL and, when the
/// form has it, the test webhook URL. The first test URL makes the test secret, shown this once.
pub async fn set_url(
    State(state): State<AppState>,
    signed: Signed,
    Path(id): Path<String>,
    Form(form): Form<WebhookForm>,
) -> PortalResult<Response> {
    signed.require(Permission::ManageWorkflows)?;
    signed.check_csrf(&form.csrf)?;
    let wf = load(&state, &signed, &id).await?;
    let typed = form.webhook_url.trim().to_owned();
    let typed_test = form.test_webhook_url.map(|u| u.trim().to_owned());
    let checked = |typed: &str| match typed {
        "" => Ok(None),
        url => notifier::validate_url(url, &state.webhook_allow_hosts).map(|_| Some(url.to_owned())),
    };
    let urls = checked(&typed).and_then(|url| Ok((url, typed_test.as_deref().map(checked).transpose()?)));
    let (url, test_url) = match urls {
        Ok(urls) => urls,
        Err(e) => {
            let text = refusal(&e, signed.lang);
            let extra = Extra {
                notice: Some(Notice::Error(&text)),
                typed_url: Some(typed),
                typed_test_url: typed_test,
                ..Extra::default()
            };
            return render(&state, &signed, &wf, extra, StatusCode::UNPROCESSABLE_ENTITY).await;
        }
    };
    let (company, acting, wf_id, keys, now) = (
        signed.company.id.clone(),
        signed.acting(),
        wf.workflow.id.clone(),
        state.keys.clone(),
        chrono::Utc::now(),
    );
    let (saved, new_test_secret) = state
        .store
        .write(move |tx| {
            let mut saved = workflows::set_webhook_url(tx, &company, &wf_id, url.as_deref())?;
            let mut secret = None;
            if let Some(test_url) = test_url {
                saved = workflows::set_test_webhook_url(tx, &company, &wf_id, test_url.as_deref())?;
                if test_url.is_some() {
                    secret = companies::make_test_secret(tx, &company, &keys, now)?;
                }
            }
            audit::record(tx, &company, &acting.entry(AuditAction::WebhookUrlChanged, wf_id.as_str(), now))?;
            Ok::<_, RepoError>((saved, secret))
        })
        .await?;
    let any_url = saved.webhook_url.is_some() || saved.test_webhook_url.is_some();
    if let Some(secret) = new_test_secret {
        let t = signed.lang.portal();
        let extra = Extra {
            notice: Some(Notice::Ok(t.wf_webhook_saved)),
            new_test_secret: Some(secret),
            ..Extra::default()
        };
        return render(&state, &signed, &saved, extra, StatusCode::OK).await;
    }
    let flash = if any_url { "url_saved" } else { "url_removed" };
    Ok(Redirect::to(&format!("{}?flash={flash}", path_of(&wf))).into_response())
}

/// `POST /portal/workflows/{id}/diffusion/test`: queues `verification.test`, as
/// `sceau admin workflow test-webhook` does.
pub async fn test(State(state): State<AppState>, signed: Signed, Path(id): Path<String>, Form(form): Form<Csrf>) -> PortalResult<Response> {
    signed.require(Permission::ManageWorkflows)?;
    signed.check_csrf(&form.csrf)?;
    let wf = load(&state, &signed, &id).await?;
    let (company, acting, now, workflow) = (signed.company.id.clone(), signed.acting(), chrono::Utc::now(), wf.clone());
    let sent = state
        .store
        .write(move |tx| {
            // Read again inside the write: the URL may have been removed since the page loaded.
            let workflow = workflows::get(tx, &company, &workflow.workflow.id)?;
            let event = workflows::emit_test(tx, &workflow, now)?;
            audit::record(
                tx,
                &company,
                &acting.entry(AuditAction::WebhookTestSent, workflow.workflow.id.as_str(), now),
            )?;
            Ok::<_, RepoError>(event)
        })
        .await;
    match sent {
        Ok(_) => {
            state.outbox_wake.notify_one();
            Ok(Redirect::to(&format!("{}?flash=test_sent", path_of(&wf))).into_response())
        }
        Err(RepoError::InvalidState(_)) => {
            let text = signed.lang.portal().wf_test_no_url;
            let extra = Extra {
                notice: Some(Notice::Error(text)),
                ..Extra::default()
            };
            render(&state, &signed, &wf, extra, StatusCode::CONFLICT).await
        }
        Err(e) => Err(e.into()),
    }
}

/// `POST /portal/workflows/{id}/diffusion/rotate`: a new company signing secret, shown in this
/// response only; the previous one keeps signing for the overlap (`companies::rotate_secret`).
pub async fn rotate(state: State<AppState>, signed: Signed, id: Path<String>, form: Form<Csrf>) -> PortalResult<Response> {
    rotate_in(state, signed, id, form, Mode::Live).await
}

/// `POST /portal/workflows/{id}/diffusion/rotate-test`: a new test signing secret (made with the
/// test account if there is none yet), shown in this response only.
pub async fn rotate_test(state: State<AppState>, signed: Signed, id: Path<String>, form: Form<Csrf>) -> PortalResult<Response> {
    rotate_in(state, signed, id, form, Mode::Test).await
}

/// Rotates the signing secret of `mode`'s account, audited, and shows the new one this once.
async fn rotate_in(
    State(state): State<AppState>,
    signed: Signed,
    Path(id): Path<String>,
    Form(form): Form<Csrf>,
    mode: Mode,
) -> PortalResult<Response> {
    signed.require(Permission::ManageWorkflows)?;
    signed.check_csrf(&form.csrf)?;
    let wf = load(&state, &signed, &id).await?;
    let (company, acting, keys, now) = (signed.company.id.clone(), signed.acting(), state.keys.clone(), chrono::Utc::now());
    let secret = state
        .store
        .write(move |tx| {
            let (secret, action) = match mode {
                Mode::Live => (
                    companies::rotate_secret(tx, &company, &keys, now)?,
                    AuditAction::SigningSecretRotated,
                ),
                Mode::Test => (
                    companies::rotate_test_secret(tx, &company, &keys, now)?,
                    AuditAction::TestSigningSecretRotated,
                ),
            };
            audit::record(tx, &company, &acting.entry(action, company.as_str(), now))?;
            Ok::<_, RepoError>(secret)
        })
        .await?;
    let extra = match mode {
        Mode::Live => Extra {
            new_secret: Some(secret),
            ..Extra::default()
        },
        Mode::Test => Extra {
            new_test_secret: Some(secret),
            ..Extra::default()
        },
    };
    render(&state, &signed, &wf, extra, StatusCode::OK).await
}

/// `POST /portal/workflows/{id}/diffusion/replay/{event}`: delivers a dead event of this workflow
/// again, as `sceau admin webhook replay` does.
pub async fn replay(
    State(state): State<AppState>,
    signed: Signed,
    Path((id, event)): Path<(String, String)>,
    Form(form): Form<Csrf>,
) -> PortalResult<Response> {
    signed.require(Permission::ManageWorkflows)?;
    signed.check_csrf(&form.csrf)?;
    let wf = load(&state, &signed, &id).await?;
    let event: EventId = event.parse().map_err(|_| PortalError::NotFound)?;
    let (company, acting, now, wf_id) = (
        signed.company.id.clone(),
        signed.acting(),
        chrono::Utc::now(),
        wf.workflow.id.clone(),
    );
    let replayed = state
        .store
        .write(move |tx| {
            events::replay_of(tx, &company, &wf_id, &event, now)?;
            audit::record(tx, &company, &acting.entry(AuditAction::EventReplayed, event.as_str(), now))
        })
        .await;
    match replayed {
        Ok(()) => {
            state.outbox_wake.notify_one();
            Ok(Redirect::to(&format!("{}?flash=replayed", path_of(&wf))).into_response())
        }
        Err(RepoError::InvalidState(_)) => {
            let extra = Extra {
                notice: Some(Notice::Error(signed.lang.portal().wf_replay_refused)),
                ..Extra::default()
            };
            render(&state, &signed, &wf, extra, StatusCode::CONFLICT).await
        }
        Err(e) => Err(e.into()),
    }
}
