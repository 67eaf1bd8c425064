//! Why a payload is not a usable 2D-Doc, typed so the engine can tell "no seal here" from "a seal that breaks
//! the spec" and show the reason (`readStatusMessage`) without parsing strings.

use thiserror::Error;

use super::c40::C40Error;

/// The outcome of reading a payload that did not give a finding.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TwoDDocError {
    /// The payload does not start with the 2D-Doc marker: some other barcode, not a seal.
    #[error("not a 2D-Doc: {0}")]
    NotTwoDDoc(String),
    /// A 2D-Doc marker, but the content breaks the specification.
    #[error("malformed 2D-Doc: {0}")]
    Malformed(#[from] Malformation),
}

/// How a 2D-Doc breaks the specification; offsets are byte offsets in the payload. In the signed message zone,
/// an undefined identifier, a wrong length and a truncated fixed value are departures the zone is read past
/// (see `message::parse_c40_message`); elsewhere, and for the other faults, the seal is malformed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Malformation {
    #[error("the payload has {len} bytes, more than the {max} that sixteen DataMatrix codes can hold")]
    TooLong { len: usize, max: usize },
    #[error("header version {0} is not supported (02, 03 and 04 in C40, 04 in binary)")]
    UnsupportedVersion(String),
    #[error("header is {actual} bytes long, version {version} needs {expected}")]
    TruncatedHeader { version: String, expected: usize, actual: usize },
    #[error("header field {field} has an invalid value '{value}'")]
    InvalidHeaderField { field: &'static str, value: String },
    #[error("header field {field} '{value}' is not a valid date")]
    InvalidDate { field: &'static str, value: String },
    #[error("binary header field {field}: {source}")]
    BinaryHeader { field: &'static str, source: C40Error },
    #[error("perimeter '{0}' is not defined by the specification")]
    UnknownPerimeter(String),
    #[error("document type '{doc_type}' is not defined in perimeter '{perimeter}'")]
    UnknownDocumentType { perimeter: String, doc_type: String },
    #[error("the message zone holds no data")]
    EmptyMessage,
    #[error("unknown data identifier '{id}' at offset {offset}")]
    UnknownIdentifier { id: String, offset: usize },
    #[error("data identifier '{id}' at offset {offset} has {actual} characters, the specification allows {allowed}")]
    WrongLength {
        id: String,
        offset: usize,
        actual: usize,
        allowed: String,
    },
    #[error("fixed-length field '{id}' at offset {offset} is marked truncated, which the specification forbids")]
    TruncatedFixedField { id: String, offset: usize },
    #[error("byte {byte:#04x} at offset {offset} is not allowed in a C40 data zone")]
    InvalidCharacter { byte: u8, offset: usize },
    #[error("no signature: the <US> separator that ends the signed data is missing")]
    MissingSignature,
    #[error("the signature is not valid Base32: {0}")]
    InvalidSignatureEncoding(String),
    #[error("binary block at offset {offset} runs past the end of the payload")]
    TruncatedBlock { offset: usize },
}
