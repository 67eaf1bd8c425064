//! What every file the API hands out (images, certificates) is served with. These are a client's
//! bytes, or a PDF built from them: a browser that opens the link must save them, never sniff them
//! into HTML or render them with the API origin's rights, and the name it saves them under must
//! not be able to carry a path or break out of the header.

use axum::body::Body;
use axum::http::{header, HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};
use domain::ids::ConsultationId;

/// `<consultation>-<what>.<extension>`, every character outside `[A-Za-z0-9_-]` replaced by `_`
/// (the dot before the extension excepted): plain ASCII, so it needs no quoting rules beyond the
/// surrounding quotes and cannot name a directory.
pub fn file_name(consultation: &ConsultationId, what: &str, extension: &str) -> String {
    let safe = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    format!("{}-{}.{}", safe(consultation.as_str()), safe(what), safe(extension))
}

/// `bytes` served as `content_type`, to be saved as `filename` (built by [`file_name`]).
pub fn attachment(content_type: &'static str, filename: &str, bytes: Vec<u8>) -> Response {
    let disposition =
        HeaderValue::from_str(&format!("attachment; filename=\"{filename}\"")).unwrap_or_else(|_| HeaderValue::from_static("attachment"));
    let headers: [(HeaderName, HeaderValue); 5] = [
        (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
        (header::CONTENT_DISPOSITION, disposition),
        (header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
        // Opened in a tab anyway (a PDF viewer, an image): no script, no same-origin rights.
        (header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("sandbox")),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
    ];
    (headers, Body::from(bytes)).into_response()
}

/// The OpenAPI response of a file served by [`attachment`]: `media_types`, saved as `name`,
/// with the headers that keep a browser from rendering it.
pub fn documented<'a>(description: &str, media_types: impl IntoIterator<Item = &'a str>, name: &str) -> utoipa::openapi::Response {
    use utoipa::openapi::header::HeaderBuilder;
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    use utoipa::openapi::{ContentBuilder, KnownFormat, ResponseBuilder, SchemaFormat};
    let text = |description: String, constant: Option<&str>| {
        let mut schema = ObjectBuilder::new().schema_type(Type::String);
        if let Some(value) = constant {
            schema = schema.enum_values(Some([value]));
        }
        HeaderBuilder::new().description(Some(description)).schema(schema).build()
    };
    let binary = ObjectBuilder::new()
        .schema_type(Type::String)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Binary)))
        .build();
    media_types
        .into_iter()
        .fold(ResponseBuilder::new().description(description), |response, media_type| {
            response.content(media_type, ContentBuilder::new().schema(Some(binary.clone())).build())
        })
        .header(
            "Content-Disposition",
            text(format!("`attachment; filename=\"{name}\"`: saved, not opened."), None),
        )
        .header("X-Content-Type-Options", text("`nosniff`.".into(), Some("nosniff")))
        .header(
            "Content-Security-Policy",
            text(
                "`sandbox`: if opened anyway, no script and no same-origin rights.".into(),
                Some("sandbox"),
            ),
        )
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csl() -> ConsultationId {
        ConsultationId::generate(chrono::Utc::now())
    }

    #[test]
    fn names_are_plain_ascii_with_the_right_extension() {
        let id = csl();
        assert_eq!(file_name(&id, "recto", "png"), format!("{id}-recto.png"));
        let odd = file_name(&id, "../é\"\r\n;x", "p/d");
        assert_eq!(odd, format!("{id}-________x.p_d"));
        assert!(odd.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)));
    }

    #[test]
    fn an_attachment_is_saved_not_rendered() {
        let r = attachment("application/pdf", "CSL-x-certificate.pdf", b"%PDF".to_vec());
        let h = r.headers();
        assert_eq!(h[header::CONTENT_TYPE], "application/pdf");
        assert_eq!(h[header::CONTENT_DISPOSITION], "attachment; filename=\"CSL-x-certificate.pdf\"");
        assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert_eq!(h[header::CONTENT_SECURITY_POLICY], "sandbox");
        assert_eq!(h[header::CACHE_CONTROL], "no-store");
    }
}
