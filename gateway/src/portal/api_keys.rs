//! Developers → API keys (PORTAL.md page 7): the company's keys (prefix, access, scopes, mode, who
//! made them, when, last use), minting one with the Group licence, live or for test mode, the new key shown once in the answer to
//! its form (it is stored only as a hash), and revoking. The same store operations as
//! `sceau admin key create|list|revoke`. A member gives a key only the scopes of their role: the
//! box `images` is offered, ticked, to those who see images (owners, admins), and a form asking
//! it from anyone else is refused 403.

use super::error::{PortalError, PortalResult};
use super::form::Form;
use super::layout::{self, Notice};
use super::signed::Signed;
use crate::i18n::labels;
use crate::state::AppState;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use common::crypto::api_key::PREFIX_LEN;
use common::store::api_keys::{self, KeySpec};
use common::store::{audit, companies, RepoError};
use domain::key_scopes::{KeyScopes, Scope};
use domain::team::{AuditAction, Permission};
use domain::vocabulary::{Licence, Mode};
use maud::html;
use serde::Deserialize;

const PATH: &str = "/portal/api-keys";

#[derive(Deserialize)]
pub struct Flash {
    flash: Option<String>,
}

/// `GET /portal/api-keys`.
pub async fn page(State(state): State<AppState>, signed: Signed, Query(q): Query<Flash>) -> PortalResult<Response> {
    signed.require(Permission::ManageApiKeys)?;
    let t = signed.lang.portal();
    let notice = match q.flash.as_deref() {
        Some("revoked") => Some(Notice::Ok(t.keys_revoked)),
        _ => None,
    };
    render(&state, &signed, notice, None, StatusCode::OK).await
}

/// A key just minted, shown this once: with the test account's signing secret when the key is
/// the company's first test key, so that its test events can be verified from the start.
struct Minted {
    key: String,
    test_secret: Option<String>,
}

/// The page, with the key just minted if any: the only time its secret is ever shown.
async fn render(
    state: &AppState,
    signed: &Signed,
    notice: Option<Notice<'_>>,
    minted: Option<&Minted>,
    status: StatusCode,
) -> PortalResult<Response> {
    let (lang, t) = (signed.lang, signed.lang.portal());
    let company = signed.company.id.clone();
    let keys = state.store.read(move |c| api_keys::list(c, &company)).await?;
    let csrf = &signed.session.csrf_token;
    let gives_images = signed.member().role.key_scopes().has(Scope::Images);
    let body = html! {
        @if let Some(minted) = minted {
            section aria-labelledby="new-key" {
                h2 #new-key { (t.keys_secret) }
                code.secret data-testid="api-key-secret" { (minted.key) }
                @if let Some(test_secret) = &minted.test_secret {
                    p { (t.keys_test_secret) }
                    code.secret data-testid="api-key-test-secret" { (test_secret) }
                }
            }
        }
        h2 { (t.keys_new) }
        @if signed.company.licence == Licence::Group {
            form method="post" action=(PATH) data-testid="api-key-create" {
                input type="hidden" name="csrf" value=(csrf);
                p.check {
                    input #readOnly type="checkbox" name="readOnly" value="on";
                    label for="readOnly" { (t.keys_read_only_label) }
                }
                p.check {
                    input #testMode type="checkbox" name="test" value="on";
                    label for="testMode" { (t.keys_test_label) }
                }
                @if gives_images {
                    p.check {
                        input #images type="checkbox" name="images" value="on" checked;
                        label for="images" { (t.keys_images_label) }
                    }
                } @else {
                    p.hint data-testid="api-key-no-images" { (t.keys_images_not_yours) }
                }
                button type="submit" { (t.keys_create) }
            }
        } @else {
            p data-testid="api-key-licence" { (t.keys_licence) }
        }
        h2 { (t.keys_title) }
        @if keys.is_empty() {
            p.muted { (t.keys_none) }
        } @else {
            table {
                thead {
                    tr {
                        th scope="col" { (t.keys_prefix) }
                        th scope="col" { (t.keys_access) }
                        th scope="col" { (t.keys_scopes) }
                        th scope="col" { (t.keys_mode) }
                        th scope="col" { (t.keys_created_by) }
                        th scope="col" { (t.keys_created_at) }
                        th scope="col" { (t.keys_last_used) }
                        th scope="col" { (t.keys_state) }
                    }
                }
                tbody {
                    @for k in &keys {
                        tr data-testid="api-key-row" {
                            td { code { (k.prefix) "…" } }
                            td { (if k.read_only { t.keys_read_only } else { t.keys_full }) }
                            td data-testid="api-key-scopes" { (if k.scopes.has(Scope::Images) { t.keys_scope_images } else { t.keys_scope_none }) }
                            td data-testid="api-key-mode" { (if k.mode == Mode::Test { t.keys_mode_test } else { t.keys_mode_live }) }
                            td data-testid="api-key-created-by" { (k.created_by.as_deref().unwrap_or(t.keys_operator)) }
                            td { (labels::date(k.created_at, lang)) }
                            td data-testid="api-key-last-used" {
                                @match k.last_used_at {
                                    Some(at) => (labels::date(at, lang)),
                                    None => (t.keys_never),
                                }
                            }
                            td {
                                @if let Some(at) = k.revoked_at {
                                    (t.keys_revoked_on) " " (labels::date(at, lang))
                                } @else {
                                    (t.keys_live)
                                    form method="post" action=(format!("{PATH}/{}/revoke", k.prefix)) {
                                        input type="hidden" name="csrf" value=(csrf);
                                        button.danger type="submit" data-testid="api-key-revoke" aria-label=(format!("{} {}", t.keys_revoke, k.prefix)) { (t.keys_revoke) }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            p.hint { (t.keys_last_used_hint) }
        }
    };
    Ok(layout::with_status(layout::page(signed, PATH, t.keys_title, notice, body), status))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Create {
    csrf: String,
    /// A checkbox: present (whatever its value) when ticked.
    read_only: Option<String>,
    /// A checkbox: a test key (`sk_test_…`).
    test: Option<String>,
    /// A checkbox: the `images` scope (images and certificates).
    images: Option<String>,
}

/// `POST /portal/api-keys`: mints a key and answers the page with it, once; the audit row names
/// the key by its prefix only. Scopes beyond the member's role are refused, whatever the form.
pub async fn create(State(state): State<AppState>, signed: Signed, Form(form): Form<Create>) -> PortalResult<Response> {
    signed.require(Permission::ManageApiKeys)?;
    signed.check_csrf(&form.csrf)?;
    let t = signed.lang.portal();
    if signed.company.licence != Licence::Group {
        return render(&state, &signed, Some(Notice::Error(t.keys_licence)), None, StatusCode::FORBIDDEN).await;
    }
    let spec = KeySpec {
        read_only: form.read_only.is_some(),
        mode: if form.test.is_some() { Mode::Test } else { Mode::Live },
        scopes: if form.images.is_some() {
            KeyScopes::of(&[Scope::Images])
        } else {
            KeyScopes::NONE
        },
    };
    if !spec.scopes.within(signed.member().role.key_scopes()) {
        return beyond_role(&state, &signed).await;
    }
    let (company, member, acting, now) = (
        signed.company.id.clone(),
        signed.member().id.clone(),
        signed.acting(),
        chrono::Utc::now(),
    );
    let master = state.keys.clone();
    let minted = state
        .store
        .write(move |tx| {
            let key = api_keys::create(tx, &company, spec, Some(&member), now)?;
            audit::record(tx, &company, &acting.entry(AuditAction::ApiKeyCreated, key.prefix.as_str(), now))?;
            let test_secret = match spec.mode {
                Mode::Test => companies::make_test_secret(tx, &company, &master, now)?,
                Mode::Live => None,
            };
            Ok::<_, RepoError>(Minted {
                key: key.secret,
                test_secret,
            })
        })
        .await;
    let minted = match minted {
        Ok(key) => key,
        // The licence changed since the session's company was read.
        Err(RepoError::Refused(_)) => {
            return render(&state, &signed, Some(Notice::Error(t.keys_licence)), None, StatusCode::FORBIDDEN).await
        }
        // The role changed since the session began (it would have ended with it): refused alike.
        Err(RepoError::Invalid { field: "scopes", .. }) => return beyond_role(&state, &signed).await,
        Err(e) => return Err(e.into()),
    };
    render(&state, &signed, Some(Notice::Ok(t.keys_created)), Some(&minted), StatusCode::OK).await
}

/// The page again, saying the member's role cannot give the scopes asked (a forged form).
async fn beyond_role(state: &AppState, signed: &Signed) -> PortalResult<Response> {
    let t = signed.lang.portal();
    render(
        state,
        signed,
        Some(Notice::Error(t.keys_images_refused)),
        None,
        StatusCode::FORBIDDEN,
    )
    .await
}

#[derive(Deserialize)]
pub struct Csrf {
    csrf: String,
}

/// `POST /portal/api-keys/{prefix}/revoke`: one of the company's live keys; another company's
/// prefix is not found.
pub async fn revoke(
    State(state): State<AppState>,
    signed: Signed,
    Path(prefix): Path<String>,
    Form(form): Form<Csrf>,
) -> PortalResult<Response> {
    signed.require(Permission::ManageApiKeys)?;
    signed.check_csrf(&form.csrf)?;
    if prefix.len() != PREFIX_LEN || !prefix.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(PortalError::NotFound);
    }
    let (company, acting, now) = (signed.company.id.clone(), signed.acting(), chrono::Utc::now());
    state
        .store
        .write(move |tx| {
            api_keys::revoke(tx, Some(&company), &prefix, now)?;
            audit::record(tx, &company, &acting.entry(AuditAction::ApiKeyRevoked, prefix.as_str(), now))
        })
        .await?;
    Ok(Redirect::to(&format!("{PATH}?flash=revoked")).into_response())
}
