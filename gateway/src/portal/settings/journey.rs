//! The settings page's "Parcours client" section: what the company's customers see of it on the
//! journey (name, logo, accent colour) and its privacy notice. Its own form, multipart for the
//! logo, which a sandbox child re-encodes before anything is stored (`common::logo`).

use super::super::error::{PortalError, PortalResult};
use super::super::layout::{self, Notice};
use super::super::signed::Signed;
use crate::i18n::portal::Words;
use crate::state::AppState;
use axum::extract::{Multipart, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use common::logo::{self, LogoRefusal};
use common::store::branding::{self, Change, JourneyUpdate};
use common::store::{audit, RepoError};
use domain::branding::{
    AccentColor, DisplayName, InvalidSetting, JourneySettings, PolicyUrl, PrivacyContact, PrivacyController, PrivacyPurpose, MAX_LOGO_BYTES,
};
use domain::team::{AuditAction, Permission};
use maud::{html, Markup};

/// The section's path, where its form posts.
pub const PATH: &str = "/portal/settings/journey";
/// The largest body of the form: the logo and a few short fields.
pub const BODY_LIMIT: usize = MAX_LOGO_BYTES + 32 * 1024;
/// The longest text field read (the purpose's 500 characters, in UTF-8, with room).
const MAX_TEXT_BYTES: usize = 4 * 1024;

/// The form as the member filled it: kept to show it again when a field is refused.
#[derive(Default)]
pub struct Filled {
    csrf: String,
    display_name: String,
    accent_color: String,
    logo: Option<Vec<u8>>,
    remove_logo: bool,
    privacy_controller: String,
    privacy_contact: String,
    privacy_purpose: String,
    privacy_policy_url: String,
}

impl Filled {
    /// What the company has set, as the form shows it.
    pub fn current(settings: &JourneySettings) -> Self {
        let text = |v: Option<&str>| v.unwrap_or_default().to_owned();
        Self {
            display_name: text(settings.display_name.as_ref().map(DisplayName::as_str)),
            accent_color: settings.accent_color.map(|c| c.hex().to_uppercase()).unwrap_or_default(),
            privacy_controller: text(settings.privacy_controller.as_ref().map(PrivacyController::as_str)),
            privacy_contact: text(settings.privacy_contact.as_ref().map(PrivacyContact::as_str)),
            privacy_purpose: text(settings.privacy_purpose.as_ref().map(PrivacyPurpose::as_str)),
            privacy_policy_url: text(settings.privacy_policy_url.as_ref().map(PolicyUrl::as_str)),
            ..Self::default()
        }
    }
}

/// The section, below the company's other settings.
pub fn section(signed: &Signed, filled: &Filled) -> Markup {
    let t = signed.lang.portal();
    let settings = &signed.company.journey;
    let text = |id: &'static str, label: &'static str, value: &str, max: usize, hint: Option<&'static str>| {
        html! {
            label for=(id) { (label) }
            input id=(id) type="text" name=(id) value=(value) maxlength=(max) aria-describedby=[hint.map(|_| format!("{id}-hint"))];
            @if let Some(hint) = hint {
                p.hint id={ (id) "-hint" } { (hint) }
            }
        }
    };
    html! {
        section #journey aria-labelledby="journey-title" {
            h2 #journey-title { (t.journey_title) }
            p.hint { (t.journey_hint) }
            form method="post" action=(PATH) enctype="multipart/form-data" data-testid="journey-settings-form" {
                input type="hidden" name="csrf" value=(signed.session.csrf_token);
                (text("displayName", t.display_name, &filled.display_name, DisplayName::MAX_CHARS, Some(t.display_name_hint)))
                label for="logo" { (t.logo) }
                input #logo type="file" name="logo" accept="image/png,image/jpeg";
                @if settings.has_logo {
                    p.check {
                        input #removeLogo type="checkbox" name="removeLogo" value="on" checked[filled.remove_logo];
                        label for="removeLogo" { (t.remove_logo) }
                    }
                }
                (text("accentColor", t.accent_color, &filled.accent_color, 7, Some(t.accent_color_hint)))
                h3 { (t.privacy_notice) }
                p.hint { (t.privacy_notice_hint) }
                (text("privacyController", t.privacy_controller, &filled.privacy_controller, PrivacyController::MAX_CHARS, None))
                (text("privacyContact", t.privacy_contact, &filled.privacy_contact, PrivacyContact::MAX_CHARS, None))
                label for="privacyPurpose" { (t.privacy_purpose) }
                textarea #privacyPurpose name="privacyPurpose" rows="3" maxlength=(PrivacyPurpose::MAX_CHARS) { (filled.privacy_purpose) }
                label for="privacyPolicyUrl" { (t.privacy_policy_url) }
                input #privacyPolicyUrl type="url" name="privacyPolicyUrl" value=(filled.privacy_policy_url) maxlength="2048";
                button type="submit" { (t.save) }
            }
        }
    }
}

/// Why the form could not be read.
enum Unread {
    /// The body passed [`BODY_LIMIT`]: a logo far too large.
    TooLarge,
    /// Anything else: the "form expired" page, as for the portal's other forms.
    Bad,
}

impl From<axum::extract::multipart::MultipartError> for Unread {
    fn from(error: axum::extract::multipart::MultipartError) -> Self {
        if error.status() == StatusCode::PAYLOAD_TOO_LARGE {
            Unread::TooLarge
        } else {
            Unread::Bad
        }
    }
}

/// Reads the multipart form, each field within its bound; an unknown field or an oversized text
/// field is refused.
async fn read(mut multipart: Multipart) -> Result<Filled, Unread> {
    let mut filled = Filled::default();
    while let Some(mut field) = multipart.next_field().await? {
        let name = field.name().unwrap_or_default().to_owned();
        let limit = if name == "logo" { MAX_LOGO_BYTES + 1 } else { MAX_TEXT_BYTES };
        let mut bytes = Vec::new();
        while let Some(chunk) = field.chunk().await? {
            if bytes.len() + chunk.len() > limit {
                if name == "logo" {
                    // Over 200 KB: refused below as too large, without reading the rest.
                    bytes.extend_from_slice(&chunk[..limit - bytes.len()]);
                    break;
                }
                return Err(Unread::Bad);
            }
            bytes.extend_from_slice(&chunk);
        }
        let text = || String::from_utf8(bytes.clone()).map_err(|_| Unread::Bad);
        match name.as_str() {
            "csrf" => filled.csrf = text()?,
            "displayName" => filled.display_name = text()?,
            "accentColor" => filled.accent_color = text()?,
            "logo" => filled.logo = (!bytes.is_empty()).then_some(bytes),
            "removeLogo" => filled.remove_logo = true,
            "privacyController" => filled.privacy_controller = text()?,
            "privacyContact" => filled.privacy_contact = text()?,
            "privacyPurpose" => filled.privacy_purpose = text()?,
            "privacyPolicyUrl" => filled.privacy_policy_url = text()?,
            _ => return Err(Unread::Bad),
        }
    }
    Ok(filled)
}

/// A text field: empty clears the setting.
fn change<T>(raw: &str, parse: impl Fn(&str) -> Result<T, InvalidSetting>) -> Result<Change<T>, InvalidSetting> {
    match raw.trim() {
        "" => Ok(Some(None)),
        value => parse(value).map(|v| Some(Some(v))),
    }
}

/// The portal's words for a refused field.
fn refusal(t: &Words, field: &str) -> &'static str {
    match field {
        "displayName" => t.invalid_display_name,
        "accentColor" => t.invalid_accent_color,
        "logo" => t.invalid_logo,
        _ => t.invalid_privacy,
    }
}

/// The text settings as the form gives them: every field is sent, so each is set or cleared.
fn text_update(filled: &Filled) -> Result<JourneyUpdate, InvalidSetting> {
    Ok(JourneyUpdate {
        display_name: change(&filled.display_name, DisplayName::parse)?,
        accent_color: change(&filled.accent_color, AccentColor::parse)?,
        logo: None,
        privacy_controller: change(&filled.privacy_controller, PrivacyController::parse)?,
        privacy_contact: change(&filled.privacy_contact, PrivacyContact::parse)?,
        privacy_purpose: change(&filled.privacy_purpose, PrivacyPurpose::parse)?,
        privacy_policy_url: change(&filled.privacy_policy_url, PolicyUrl::parse)?,
    })
}

/// `POST /portal/settings/journey`.
pub async fn save(State(state): State<AppState>, signed: Signed, multipart: Multipart) -> PortalResult<Response> {
    signed.require(Permission::ManageSettings)?;
    let filled = match read(multipart).await {
        Ok(filled) => filled,
        Err(Unread::TooLarge) => {
            // The body passed the form's limit: a logo far over 200 KB. Nothing was saved.
            let current = Filled::current(&signed.company.journey);
            let notice = Notice::Error(signed.lang.portal().invalid_logo);
            let page = super::render_with_journey(&signed, Some(notice), &current);
            return Ok(layout::with_status(page, StatusCode::PAYLOAD_TOO_LARGE));
        }
        Err(Unread::Bad) => return Err(PortalError::BadForm),
    };
    signed.check_csrf(&filled.csrf)?;
    let t = signed.lang.portal();
    let refused_with = |message: &'static str, status: StatusCode| {
        let page = super::render_with_journey(&signed, Some(Notice::Error(message)), &filled);
        layout::with_status(page, status)
    };
    let refused = |message: &'static str| Ok(refused_with(message, StatusCode::UNPROCESSABLE_ENTITY));
    let mut update = match text_update(&filled) {
        Ok(update) => update,
        Err(invalid) => return refused(refusal(t, invalid.field)),
    };
    if let Some(bytes) = &filled.logo {
        match logo::reencode_in(&state.sandbox, bytes).await {
            Ok(png) => update.logo = Some(Some(png)),
            Err(LogoRefusal::Logo(_)) => return refused(t.invalid_logo),
            Err(LogoRefusal::Sandbox(error)) => {
                tracing::warn!(%error, "no sandbox to re-encode a logo");
                let mut page = refused_with(t.logo_unavailable, StatusCode::SERVICE_UNAVAILABLE);
                page.headers_mut()
                    .insert(axum::http::header::RETRY_AFTER, axum::http::HeaderValue::from(5u32));
                return Ok(page);
            }
        }
    } else if filled.remove_logo {
        update.logo = Some(None);
    }
    let (company, acting, now) = (signed.company.id.clone(), signed.acting(), chrono::Utc::now());
    let target = format!("journey: {}", update.changed().join(", "));
    state
        .store
        .write(move |tx| {
            branding::set_journey(tx, &company, &update)?;
            audit::record(tx, &company, &acting.entry(AuditAction::SettingsChanged, target, now))?;
            Ok::<_, RepoError>(())
        })
        .await
        .map_err(PortalError::from)?;
    Ok(Redirect::to("/portal/settings?flash=journey#journey").into_response())
}
