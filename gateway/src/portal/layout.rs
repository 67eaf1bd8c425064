//! The portal's page shell: the navigation of the member's role (only what it may use, each link
//! with its `data-testid`), the member's menu with sign-out, the notice of the last action, and
//! the headers of a page with data (no-store, strict CSP, no framing).

use super::signed::Signed;
use crate::i18n::portal::Words;
use crate::i18n::Lang;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use domain::team::{Permission, Role};
use maud::{html, Markup, DOCTYPE};

/// No script, styles from our own file, images from our own routes (and inline QR codes),
/// forms only to ourselves, never in a frame.
pub const CSP: &str =
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// What the last action said.
pub enum Notice<'a> {
    Ok(&'a str),
    Error(&'a str),
}

/// The portal's sections, in menu order: where each leads, its test id, and who sees it.
struct Section {
    path: &'static str,
    testid: &'static str,
    label: fn(&Words) -> &'static str,
    visible: fn(Role) -> bool,
}

const SECTIONS: &[Section] = &[
    Section {
        path: "/portal/",
        testid: "nav-dashboard",
        label: |t| t.nav_dashboard,
        visible: |r| r.may(Permission::ViewResults),
    },
    Section {
        path: "/portal/consultations",
        testid: "nav-consultations",
        label: |t| t.nav_consultations,
        visible: |r| r.may(Permission::ViewResults),
    },
    Section {
        path: "/portal/reviews",
        testid: "nav-reviews",
        label: |t| t.nav_reviews,
        visible: |r| r.may(Permission::Review),
    },
    Section {
        path: "/portal/batches",
        testid: "nav-batches",
        label: |t| t.nav_batches,
        visible: |r| r.may(Permission::ViewBatches),
    },
    Section {
        path: "/portal/workflows",
        testid: "nav-workflows",
        label: |t| t.nav_workflows,
        visible: |r| r.may(Permission::ManageWorkflows),
    },
    Section {
        path: "/portal/api-keys",
        testid: "nav-api-keys",
        label: |t| t.nav_api_keys,
        visible: |r| r.may(Permission::ManageApiKeys),
    },
    Section {
        path: "/portal/team",
        testid: "nav-team",
        label: |t| t.nav_team,
        visible: |r| r.may(Permission::ManageTeam),
    },
    Section {
        path: "/portal/settings",
        testid: "nav-settings",
        label: |t| t.nav_settings,
        visible: |r| r.may(Permission::ManageSettings),
    },
    Section {
        path: "/portal/audit",
        testid: "nav-audit",
        label: |t| t.nav_audit,
        visible: |r| r.may(Permission::ViewAudit),
    },
    Section {
        path: "/portal/usage",
        testid: "nav-usage",
        label: |t| t.nav_usage,
        visible: |r| r.may(Permission::ViewUsage),
    },
];

/// A page of the signed-in portal: `current` is the path of its section, for `aria-current`.
pub fn page(signed: &Signed, current: &str, title: &str, notice: Option<Notice<'_>>, body: Markup) -> Response {
    let (lang, t) = (signed.lang, signed.lang.portal());
    let role = signed.member().role;
    let markup = html! {
        (DOCTYPE)
        html lang=(lang.code()) {
            (head(title))
            body {
                a.skip href="#main" { (t.skip) }
                header.top {
                    a.brand href="/portal/" { "Sceau" span.sub { (t.portal) } }
                    @if !signed.must_enrol() {
                        nav aria-label=(t.portal) {
                            ul {
                                @for s in SECTIONS.iter().filter(|s| (s.visible)(role)) {
                                    li { a href=(s.path) data-testid=(s.testid) aria-current=[(s.path == current).then_some("page")] { ((s.label)(t)) } }
                                }
                            }
                        }
                    }
                    div.me {
                        a href="/portal/account" data-testid="nav-account" { (signed.member().email) }
                        " · " (crate::i18n::portal::role(role, lang)) " · " (signed.company.name)
                        form method="post" action="/portal/logout" {
                            input type="hidden" name="csrf" value=(signed.session.csrf_token);
                            button.link type="submit" data-testid="sign-out" { (t.sign_out) }
                        }
                    }
                }
                main #main {
                    h1 { (title) }
                    (notice_markup(notice))
                    (body)
                }
            }
        }
    };
    respond(StatusCode::OK, lang, markup)
}

/// A page outside a session (sign-in, invitation, errors).
pub fn bare(lang: Lang, title: &str, body: Markup) -> Response {
    let markup = html! {
        (DOCTYPE)
        html lang=(lang.code()) {
            (head(title))
            body.bare {
                main #main {
                    p.brand { "Sceau" span.sub { (lang.portal().portal) } }
                    (body)
                }
            }
        }
    };
    respond(StatusCode::OK, lang, markup)
}

/// A title, a sentence and a way on.
pub fn message(title: &str, text: &str, link: Option<(&str, &str)>) -> Markup {
    html! {
        h1 { (title) }
        p { (text) }
        @if let Some((href, label)) = link {
            p { a href=(href) { (label) } }
        }
    }
}

pub fn notice_markup(notice: Option<Notice<'_>>) -> Markup {
    html! {
        @match notice {
            Some(Notice::Ok(text)) => p.flash.ok role="status" data-testid="flash-ok" { (text) },
            Some(Notice::Error(text)) => p.flash.error role="alert" data-testid="flash-error" { (text) },
            None => {},
        }
    }
}

fn head(title: &str) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width,initial-scale=1";
            meta name="robots" content="noindex";
            title { (title) " — Sceau" }
            link rel="stylesheet" href=(super::assets::CSS_PATH);
        }
    }
}

fn respond(status: StatusCode, lang: Lang, markup: Markup) -> Response {
    let mut response = crate::html::page(status, lang, CSP, markup.into_string());
    let h = response.headers_mut();
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::VARY, HeaderValue::from_static("Accept-Language, Cookie"));
    response
}

/// The response to a form that failed: its page again, with the status saying why.
pub fn with_status(mut response: Response, status: StatusCode) -> Response {
    *response.status_mut() = status;
    response
}
