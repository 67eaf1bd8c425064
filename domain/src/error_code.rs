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
        IaDesactivee => "ia_desactivee",
        BrowserRequestForbidden => "browser_request_forbidden",
        NotFound => "not_found",
        ImagePurged => "image_purged",
        InvalidState => "invalid_state",
        BatchEmpty => "batch_empty",
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
            ReadOnlyKey | IaDesactivee | BrowserRequestForbidden => 403,
            NotFound | ImagePurged => 404,
            InvalidState | BatchEmpty => 409,
            DocumentTooLarge | PayloadTooLarge => 413,
            TooManyOpenBatches | BatchFull | DocumentQuotaExceeded | VolumeQuotaExceeded | RateLimited => 429,
            InternalError => 500,
            ServiceUnavailable => 503,
        }
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
        assert_eq!(status("image_purged"), 404);
        assert_eq!(status("batch_empty"), 409);
        assert_eq!(status("payload_too_large"), 413);
        assert_eq!(status("volume_quota_exceeded"), 429);
        assert_eq!(status("service_unavailable"), 503);
        assert!(ErrorCode::ALL.iter().all(|code| (400..600).contains(&code.status())));
    }
}
