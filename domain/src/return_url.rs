//! Where a journey sends its customer back when it ends: the client's `returnUrl`, checked once
//! when the session is created so the end pages can link to it as given.

use serde::{Deserialize, Serialize};
use url::Url;

/// The longest `returnUrl` a session takes, in characters.
pub const MAX_RETURN_URL_CHARS: usize = 2048;

/// Why a `returnUrl` was refused, in words for the `invalid_request` message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReturnUrlError {
    #[error("returnUrl must be at most {MAX_RETURN_URL_CHARS} characters.")]
    TooLong,
    #[error("returnUrl must be an absolute URL without spaces or control characters.")]
    Malformed,
    #[error("returnUrl must use https (http only for a host of SCEAU_WEBHOOK_ALLOW_HOSTS).")]
    Scheme,
    #[error("returnUrl must not carry a user name or password.")]
    Credentials,
}

/// An absolute https URL (http only for a host the operator allows), without credentials, at most
/// [`MAX_RETURN_URL_CHARS`]; kept exactly as the client gave it, so the button's `href` is theirs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ReturnUrl(String);

impl ReturnUrl {
    /// Checks `raw`; `http_allowed` says whether the operator allows plain http to this URL's host.
    pub fn parse(raw: &str, http_allowed: impl Fn(&Url) -> bool) -> Result<Self, ReturnUrlError> {
        if raw.chars().count() > MAX_RETURN_URL_CHARS {
            return Err(ReturnUrlError::TooLong);
        }
        // The URL parser would quietly trim or drop these; the link must be the one given.
        if raw.is_empty() || raw.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(ReturnUrlError::Malformed);
        }
        let url = Url::parse(raw).map_err(|_| ReturnUrlError::Malformed)?;
        match url.scheme() {
            "https" => {}
            "http" if http_allowed(&url) => {}
            _ => return Err(ReturnUrlError::Scheme),
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(ReturnUrlError::Malformed);
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(ReturnUrlError::Credentials);
        }
        Ok(Self(raw.to_owned()))
    }

    /// A value read back from the store, checked when it was written.
    pub fn stored(raw: String) -> Self {
        Self(raw)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(raw: &str) -> Result<ReturnUrl, ReturnUrlError> {
        ReturnUrl::parse(raw, |url| url.host_str() == Some("127.0.0.1"))
    }

    #[test]
    fn https_is_kept_exactly_as_given() {
        let raw = "https://Banque.example/retour?dossier=7&étape=fin#haut";
        assert_eq!(parse(raw).unwrap().as_str(), raw);
    }

    #[test]
    fn http_only_for_an_allowed_host() {
        assert!(parse("http://127.0.0.1:8080/back").is_ok());
        assert_eq!(parse("http://banque.example/back"), Err(ReturnUrlError::Scheme));
    }

    #[test]
    fn what_a_link_must_not_be() {
        for (raw, error) in [
            ("javascript:alert(1)", ReturnUrlError::Scheme),
            ("data:text/html,hi", ReturnUrlError::Scheme),
            ("ftp://banque.example/", ReturnUrlError::Scheme),
            ("/relative/path", ReturnUrlError::Malformed),
            ("", ReturnUrlError::Malformed),
            (" https://banque.example/", ReturnUrlError::Malformed),
            ("https://banque.example/a b", ReturnUrlError::Malformed),
            ("https://banque.example/\n", ReturnUrlError::Malformed),
            ("https://moi:secret@banque.example/", ReturnUrlError::Credentials),
        ] {
            assert_eq!(parse(raw), Err(error), "{raw:?}");
        }
        let long = format!("https://banque.example/{}", "a".repeat(MAX_RETURN_URL_CHARS));
        assert_eq!(parse(&long), Err(ReturnUrlError::TooLong));
        let longest = format!("https://b.example/{}", "a".repeat(MAX_RETURN_URL_CHARS - 18));
        assert_eq!(longest.chars().count(), MAX_RETURN_URL_CHARS);
        assert!(parse(&longest).is_ok());
    }
}
