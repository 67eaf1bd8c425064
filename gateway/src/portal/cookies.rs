//! The portal's cookies: the session (its secret, HttpOnly), the pre-session form token of the
//! sign-in and invitation forms (double submit), and the member's language. `HttpOnly`,
//! `SameSite=Lax`, `Path=/`, and `Secure` with the `__Host-` prefix when the public URL is https.

use crate::state::AppState;
use axum::http::{header, HeaderMap, HeaderValue};

/// The cookies the portal sets.
#[derive(Debug, Clone, Copy)]
pub enum Cookie {
    Session,
    FormToken,
    Lang,
}

impl Cookie {
    fn base_name(self) -> &'static str {
        match self {
            Cookie::Session => "sceau_session",
            Cookie::FormToken => "sceau_form",
            Cookie::Lang => "sceau_lang",
        }
    }

    /// The name in use: `__Host-` prefixed when cookies are `Secure`.
    pub fn name(self, state: &AppState) -> String {
        self.name_for(secure(state))
    }

    fn name_for(self, secure: bool) -> String {
        if secure {
            format!("__Host-{}", self.base_name())
        } else {
            self.base_name().to_owned()
        }
    }

    /// This cookie's value in the request, if any.
    pub fn read<'h>(self, state: &AppState, headers: &'h HeaderMap) -> Option<&'h str> {
        let name = self.name(state);
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .find_map(|pair| {
                let (k, v) = pair.trim().split_once('=')?;
                (k == name).then_some(v)
            })
    }

    /// The `Set-Cookie` value giving it `value` (values are base64url or a language code, so
    /// they need no quoting); a session cookie unless `max_age_seconds`.
    pub fn set(self, state: &AppState, value: &str, max_age_seconds: Option<i64>) -> HeaderValue {
        self.set_for(secure(state), value, max_age_seconds)
    }

    fn set_for(self, secure: bool, value: &str, max_age_seconds: Option<i64>) -> HeaderValue {
        let flag = if secure { "; Secure" } else { "" };
        let max_age = max_age_seconds.map(|s| format!("; Max-Age={s}")).unwrap_or_default();
        let text = format!("{}={value}; Path=/; HttpOnly; SameSite=Lax{flag}{max_age}", self.name_for(secure));
        HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static("sceau_invalid=; Max-Age=0"))
    }

    /// The `Set-Cookie` value that removes it.
    pub fn clear(self, state: &AppState) -> HeaderValue {
        self.set(state, "", Some(0))
    }
}

/// Whether the portal is served over https, so its cookies must be `Secure`.
pub fn secure(state: &AppState) -> bool {
    state.public_base.starts_with("https://")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behind_https_cookies_are_secure_and_host_prefixed() {
        let secure = Cookie::Session.set_for(true, "abc", None);
        assert_eq!(secure, "__Host-sceau_session=abc; Path=/; HttpOnly; SameSite=Lax; Secure");
        let plain = Cookie::Lang.set_for(false, "en", Some(60));
        assert_eq!(plain, "sceau_lang=en; Path=/; HttpOnly; SameSite=Lax; Max-Age=60");
    }
}
