//! The public authenticity page behind a certificate's QR code. The link carries an HMAC of the
//! consultation id, so ids cannot be enumerated and a forged certificate cannot point to a page
//! that vouches for it; the page shows no personal data, only what confirms the certificate.

mod body;

use crate::certificate::facts::Facts;
use crate::html;
use crate::i18n::Lang;
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use common::crypto::envelope::MasterKeys;
use common::store::RepoError;
use domain::ids::ConsultationId;
use maud::{html, Markup, PreEscaped, DOCTYPE};
use ring::hmac;
use std::sync::LazyLock;

/// The purpose label of the signing key: changing it invalidates every printed link.
const PURPOSE: &str = "authenticity-link-v1";
/// The path prefix of the page (its route is `/authenticite/{link}`).
pub const PATH: &str = "/authenticite/";
const SIGNATURE_LEN: usize = 32;

fn signing_keys(keys: &MasterKeys) -> Vec<hmac::Key> {
    keys.derived_keys(PURPOSE)
        .iter()
        .map(|k| hmac::Key::new(hmac::HMAC_SHA256, k))
        .collect()
}

/// The last path segment of the link: `<id>.<base64url(HMAC-SHA256(key, id))>`.
pub fn link_segment(keys: &MasterKeys, id: &ConsultationId) -> String {
    // The current master key always derives one key, so `first` is only empty on a broken store.
    let signature = signing_keys(keys)
        .first()
        .map(|k| URL_SAFE_NO_PAD.encode(hmac::sign(k, id.as_str().as_bytes()).as_ref()))
        .unwrap_or_default();
    format!("{id}.{signature}")
}

/// The full URL printed in the certificate's QR code.
pub fn url(public_base: &str, keys: &MasterKeys, id: &ConsultationId) -> String {
    format!("{public_base}{PATH}{}", link_segment(keys, id))
}

/// The consultation id of a genuine link segment, `None` for a forged or altered one. Every key
/// is tried (links signed before a rotation), each comparison in constant time.
pub fn verify(keys: &MasterKeys, segment: &str) -> Option<ConsultationId> {
    if segment.len() > 128 {
        return None;
    }
    let (id, signature) = segment.split_once('.')?;
    let id: ConsultationId = id.parse().ok()?;
    let signature = URL_SAFE_NO_PAD.decode(signature).ok()?;
    if signature.len() != SIGNATURE_LEN {
        return None;
    }
    let genuine = signing_keys(keys).iter().fold(false, |found, k| {
        hmac::verify(k, id.as_str().as_bytes(), &signature).is_ok() | found
    });
    genuine.then_some(id)
}

/// Dark text on white, a green or red band well above 4.5:1 against its text.
const STYLE: &str = include_str!("authenticity.css");

/// The CSP: nothing external, no script, only the page's own stylesheet (by hash).
static CSP: LazyLock<String> = LazyLock::new(|| {
    let hash = STANDARD.encode(ring::digest::digest(&ring::digest::SHA256, STYLE.as_bytes()).as_ref());
    format!("default-src 'none'; style-src 'sha256-{hash}'; img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
});

fn html_page(status: StatusCode, lang: Lang, title: &str, body: Markup) -> Response {
    let html = html! {
        (DOCTYPE)
        html lang=(lang.code()) {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width,initial-scale=1";
                meta name="robots" content="noindex";
                title { (title) " — Sceau" }
                style { (PreEscaped(STYLE)) }
            }
            body { main { (body) } }
        }
    }
    .into_string();
    let mut response = html::page(status, lang, &CSP, html);
    let headers = response.headers_mut();
    headers.insert(HeaderName::from_static("x-robots-tag"), HeaderValue::from_static("noindex"));
    response
}

fn invalid(lang: Lang) -> Response {
    let (title, text) = match lang {
        Lang::Fr => (
            "Lien de certificat non valide",
            "Ce lien n’est pas un lien de certificat valide : il a été modifié ou falsifié. \
Le document qui le porte ne doit pas être considéré comme un certificat émis par Sceau.",
        ),
        Lang::En => (
            "Invalid certificate link",
            "This link is not a valid certificate link: it was altered or forged. \
The document carrying it must not be taken as a certificate issued by Sceau.",
        ),
    };
    html_page(
        StatusCode::NOT_FOUND,
        lang,
        title,
        html! { section.ko { h1 { (title) } p { (text) } } },
    )
}

fn unavailable(lang: Lang) -> Response {
    let (title, text) = match lang {
        Lang::Fr => ("Service indisponible", "Réessayez dans quelques instants."),
        Lang::En => ("Service unavailable", "Please try again in a moment."),
    };
    html_page(
        StatusCode::INTERNAL_SERVER_ERROR,
        lang,
        title,
        html! { h1 { (title) } p { (text) } },
    )
}

/// The public page behind a certificate's QR code, confirming it was issued by Sceau.
#[utoipa::path(
    get,
    path = "/authenticite/{link}",
    operation_id = "authenticityPage",
    tag = "Journey",
    params(("link" = String, Path, description = "The signed link printed in a certificate's QR code.")),
    responses(
        (status = 200, description = "The certificate is genuine: every non-personal fact it prints (type, country, verdict, decision, \
review, checks, points of attention) and the fingerprint of those facts printed in its footer, no personal data.",
            body = String, content_type = "text/html"),
        (status = 404, description = "The link is not a valid certificate link (forged or altered).", body = String, content_type = "text/html"),
        (status = 500, description = "The service is unavailable; try again shortly.", body = String, content_type = "text/html"),
    ),
)]
pub async fn page(State(state): State<AppState>, headers: HeaderMap, Path(link): Path<String>) -> Response {
    let lang = Lang::from_headers(&headers);
    let Some(id) = verify(&state.keys, &link) else {
        return invalid(lang);
    };
    let found = state
        .store
        .read(move |c| {
            let (company, consultation) = common::store::consultations::get_any(c, &id)?;
            // A test result is never vouched for, whatever link names it.
            if common::store::companies::get(c, &company)?.mode == domain::vocabulary::Mode::Test {
                return Err(RepoError::NotFound);
            }
            let checks = common::store::consultations::checks(c, &company, &id)?;
            let face = common::store::consultations::face_match(c, &company, &id)?.map(|f| f.outcome);
            Ok::<_, RepoError>(Facts::of(&consultation, &checks, face))
        })
        .await;
    let facts = match found {
        Ok(facts) => facts,
        // A genuine signature over a consultation this store does not hold: not a valid link here.
        Err(RepoError::NotFound) => return invalid(lang),
        Err(e) => {
            tracing::error!(error = %e, "authenticity page");
            return unavailable(lang);
        }
    };
    match body::genuine(&facts, lang) {
        Ok((title, body)) => html_page(StatusCode::OK, lang, title, body),
        Err(e) => {
            tracing::error!(error = %e, "authenticity page fingerprint");
            unavailable(lang)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(lines: &str) -> MasterKeys {
        let dir = std::env::temp_dir().join(format!("sceau-authenticity-{}", domain::ids::random_hex(8)));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("master.key");
        std::io::Write::write_all(&mut common::private_fs::file_options().open(&path).unwrap(), lines.as_bytes()).unwrap();
        let keys = MasterKeys::open_existing(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        keys
    }

    const K1: &str = "k1:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n";
    const K2: &str = "k2:HxwdHhsaGRgXFhUUExIREA8ODQwLCgkIBwYFBAMCAQA=\n";

    #[test]
    fn links_verify_and_survive_rotation() {
        let id: ConsultationId = "CSL-20260101-0123456789ab".parse().unwrap();
        let old = keys(K1);
        let segment = link_segment(&old, &id);
        assert_eq!(segment, link_segment(&keys(K1), &id), "the same key file gives the same link");
        assert_eq!(verify(&old, &segment), Some(id.clone()));
        let rotated = keys(&format!("{K1}{K2}"));
        assert_ne!(link_segment(&rotated, &id), segment, "the new current key signs");
        assert_eq!(verify(&rotated, &segment), Some(id.clone()), "old links stay valid");
        assert_eq!(verify(&keys(K2), &segment), None, "a dropped key no longer vouches");
    }

    #[test]
    fn altered_links_are_refused() {
        let id: ConsultationId = "CSL-20260101-0123456789ab".parse().unwrap();
        let k = keys(K1);
        let segment = link_segment(&k, &id);
        let (_, signature) = segment.split_once('.').unwrap();
        let other = format!("CSL-20260101-0123456789ac.{signature}");
        assert_eq!(verify(&k, &other), None);
        let mut flipped = segment.clone().into_bytes();
        let last = flipped.len() - 5;
        flipped[last] = if flipped[last] == b'A' { b'B' } else { b'A' };
        assert_eq!(verify(&k, std::str::from_utf8(&flipped).unwrap()), None);
        for bad in [
            "",
            ".",
            "CSL-20260101-0123456789ab",
            "CSL-20260101-0123456789ab.",
            "x.y",
            &segment[..segment.len() - 1],
        ] {
            assert_eq!(verify(&k, bad), None, "{bad}");
        }
    }
}
