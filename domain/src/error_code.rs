//! The error codes of the API (`API.md`), each with its HTTP status: the one list the gateway's
//! error type, the journey pages and the OpenAPI document are built from.

use crate::vocabulary::wire_enum;

wire_enum!(
    /// Why the API refused a request, as the `error` field of its body says.
    ErrorCode {
        InvalidRequest => "invalid_request",
        InvalidDocument => "invalid_document",
        InvalidApiKey => "invalid_api_key",
        ReadOnlyKey => "read_only_key",
        Forbidden => "forbidden",
        IaDesactivee => "ia_desactivee",
        BrowserRequestForbidden => "browser_request_forbidden",
        NotFound => "not_found",
        ImagePurged => "image_purged",
        InvalidState => "invalid_state",
        BatchEmpty => "batch_empty",
        IdempotencyKeyInUse => "idempotency_key_in_use",
        IdempotencyKeyReused => "idempotency_key_reused",
        DocumentTooLarge => "document_too_large",
        PayloadTooLarge => "payload_too_large",
        TooManyOpenBatches => "too_many_open_batches",
        BatchFull => "batch_full",
        DocumentQuotaExceeded => "document_quota_exceeded",
        VolumeQuotaExceeded => "volume_quota_exceeded",
        RateLimited => "rate_limited",
        ServiceUnavailable => "service_unavailable",
        InternalError => "internal_error",
    }
);

impl ErrorCode {
    /// The HTTP status a response with this code carries.
    pub fn status(self) -> u16 {
        use ErrorCode::*;
        match self {
            InvalidRequest | InvalidDocument => 400,
            InvalidApiKey => 401,
            ReadOnlyKey | Forbidden | IaDesactivee | BrowserRequestForbidden => 403,
            NotFound | ImagePurged => 404,
            InvalidState | BatchEmpty | IdempotencyKeyInUse => 409,
            IdempotencyKeyReused => 422,
            DocumentTooLarge | PayloadTooLarge => 413,
            TooManyOpenBatches | BatchFull | DocumentQuotaExceeded | VolumeQuotaExceeded | RateLimited => 429,
            InternalError => 500,
            ServiceUnavailable => 503,
        }
    }

    /// When the API answers this code, as `API.md` and the OpenAPI document tell clients.
    pub fn meaning(self) -> &'static str {
        use ErrorCode::*;
        match self {
            InvalidRequest => {
                "Malformed JSON, a missing or invalid field or query parameter, or a postal code of no commune; `field` names it \
                 when one field is at fault."
            }
            InvalidDocument => {
                "The document is not base64, its file type is not allowed for the category, a PDF or TIFF has more than one \
                 page, or `documentVerso` was sent for an administrative document; a journey file that is empty, of a type not \
                 accepted, or of more than one page."
            }
            InvalidApiKey => "The API key is absent, malformed, unknown or revoked.",
            ReadOnlyKey => "A read-only key called a non-GET operation.",
            Forbidden => {
                "The API key lacks the scope the operation needs: a result's images and its certificate need the `images` \
                 scope, which a key holds only when made by an owner or an admin of the company, or by the operator."
            }
            IaDesactivee => "New administrative deposit while AI use is disabled for the company.",
            BrowserRequestForbidden => {
                "`POST /api/v1/verifications` carrying an `Origin` header (sessions are created from the client's server, never \
                 from a browser); on a journey's session endpoints, a cross-site request or a missing or wrong `X-CSRF-Token`."
            }
            NotFound => "Unknown id, an id of another company, or an unknown journey token.",
            ImagePurged => "The image was removed by the company's retention policy.",
            InvalidState => {
                "Deposit or submit on a batch that is not `open`; cancel of an `ended`, `canceled` or `expired` batch; upload \
                 or submit on a journey already submitted, completed or expired."
            }
            BatchEmpty => "Submit of a batch holding no document.",
            IdempotencyKeyInUse => "A request with the same `Idempotency-Key` is still being processed; retry once it has answered.",
            IdempotencyKeyReused => "The `Idempotency-Key` was used in the last 24 h with another request (method, path or body).",
            DocumentTooLarge => "A decoded document (front or back), or a journey file, is over 10 Mo (10,000,000 bytes).",
            PayloadTooLarge => "The request body is over the hard cap (30 MB).",
            TooManyOpenBatches => "Three batches of the company are already open.",
            BatchFull => "The batch already holds 200 documents.",
            DocumentQuotaExceeded => "The company already holds 400 documents whose images are not purged.",
            VolumeQuotaExceeded => "The company's pending file volume would exceed its limit (5 GiB unless the operator set another).",
            RateLimited => {
                "A rate limit was reached: the company's real-time limit; too many wrong API keys from the client's address \
                 (any authenticated operation, whatever the key); on a journey's session endpoints, the per-session or \
                 per-address limit. `Retry-After` gives the seconds to wait."
            }
            ServiceUnavailable => {
                "The service cannot store the request now (its disk is full); nothing was kept, and the same request \
                 succeeds once space is back. `Retry-After` gives the seconds to wait."
            }
            InternalError => "A bug; logged with the request id, nothing leaked.",
        }
    }

    /// Whether a response with this code carries `Retry-After`.
    pub fn has_retry_after(self) -> bool {
        matches!(self, ErrorCode::RateLimited | ErrorCode::ServiceUnavailable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_those_of_the_api() {
        let status = |wire: &str| wire.parse::<ErrorCode>().unwrap().status();
        assert_eq!(status("invalid_document"), 400);
        assert_eq!(status("read_only_key"), 403);
        assert_eq!(status("forbidden"), 403);
        assert_eq!(status("image_purged"), 404);
        assert_eq!(status("batch_empty"), 409);
        assert_eq!(status("idempotency_key_in_use"), 409);
        assert_eq!(status("idempotency_key_reused"), 422);
        assert_eq!(status("payload_too_large"), 413);
        assert_eq!(status("volume_quota_exceeded"), 429);
        assert_eq!(status("service_unavailable"), 503);
        assert!(ErrorCode::ALL.iter().all(|code| (400..600).contains(&code.status())));
    }
}
