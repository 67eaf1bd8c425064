//! Server-rendered pages behind journey links. The full journey (capture, upload, progress) comes
//! with the journey issue; this page already tells the customer where their link stands.

use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use common::domain::VerificationStatus;

fn page(status: StatusCode, title: &str, text: &str) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"fr\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
<title>{title} — Sceau</title><style>body{{font-family:system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a;line-height:1.5}}h1{{font-size:1.4rem}}</style></head>\
<body><main><h1>{title}</h1><p>{text}</p></main></body></html>"
    );
    (
        status,
        [(header::CACHE_CONTROL, "no-store"), (header::REFERRER_POLICY, "no-referrer")],
        Html(html),
    )
        .into_response()
}

pub async fn journey(State(state): State<AppState>, Path(token): Path<String>) -> Response {
    if token.len() > 128 || !token.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return page(
            StatusCode::NOT_FOUND,
            "Lien inconnu",
            "Ce lien de vérification n’existe pas. Vérifiez l’adresse reçue.",
        );
    }
    let session = state
        .store
        .read(move |c| common::store::verifications::by_token(c, &token, chrono::Utc::now()))
        .await;
    match session {
        Ok(Some(s)) => match s.status {
            VerificationStatus::Expired => page(
                StatusCode::GONE,
                "Lien expiré",
                "Ce lien de vérification a expiré. Demandez-en un nouveau à votre interlocuteur.",
            ),
            VerificationStatus::Submitted | VerificationStatus::Completed => page(
                StatusCode::OK,
                "Lien déjà utilisé",
                "Vos documents ont déjà été transmis avec ce lien. Merci.",
            ),
            VerificationStatus::Created | VerificationStatus::Started => page(
                StatusCode::OK,
                "Vérification de document",
                "Votre interlocuteur vous demande de transmettre un document. Le parcours de dépôt sera disponible sur cette page.",
            ),
        },
        Ok(None) => page(
            StatusCode::NOT_FOUND,
            "Lien inconnu",
            "Ce lien de vérification n’existe pas. Vérifiez l’adresse reçue.",
        ),
        Err(e) => {
            tracing::error!(error = %e, "journey page");
            page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Service indisponible",
                "Réessayez dans quelques instants.",
            )
        }
    }
}
