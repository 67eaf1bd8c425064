//! The public API handlers, one module per resource.
pub mod batches;
pub mod certificate;
pub mod consultations;
pub mod deposits;
pub mod download;
pub mod images;
pub mod verifications;
pub mod workflows;

/// Parses a path id; a malformed one is simply not found (never a hint of what exists).
pub fn path_id<T: std::str::FromStr>(raw: &str) -> Result<T, crate::error::ApiError> {
    raw.parse().map_err(|_| crate::error::ApiError::not_found())
}
