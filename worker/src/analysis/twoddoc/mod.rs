//! 2D-Doc seals (ANTS specification v3.2.6): reads the payload a DataMatrix reader returns, checks it against
//! the specification, verifies its signature with the trust store, and gives the engine a finding it can map
//! to the consultation's `twoDDoc` and `documentType`. Image decoding lives elsewhere; this is the message
//! layer.
//!
//! ```text
//! DC04FR03EDF0264B264B0101FR | 10M/DEMO/VICTOR<GS>2215 RUE…<GS>2413001… | <US> Base32(r||s) | [<GS> annex]
//!  header (§3.3)               message (§3.4, identifiers §7)            signature (§3.5)     (§3.6)
//! ```

pub mod c40;
pub mod data_matches;
pub mod doctypes;
mod embedded;
pub mod error;
pub mod header;
pub mod identifiers;
pub mod message;
pub mod payload;
pub mod signature;
pub mod trust;
pub mod trust_import;
pub mod trust_list;

#[cfg(test)]
mod refcodes;
#[cfg(test)]
pub(crate) mod test_signing;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use domain::vocabulary::{ReadStatus, TwoDDoc};
use serde::Serialize;

pub use error::{Malformation, TwoDDocError};
pub use header::{Header, HeaderEncoding};
pub use message::Field;
pub use signature::SignatureStatus;
pub use trust::{TrustError, TrustOptions, TrustStore};

/// What a readable seal says and whether its signature holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TwoDDocFinding {
    pub header: Header,
    /// Identifier → value as encoded in the seal (signed data only); the first value if an identifier repeats.
    pub fields: BTreeMap<String, String>,
    /// The signed fields in seal order, with truncation marks.
    pub message: Vec<Field>,
    /// Unsigned fields after the signature: informative, never to be trusted.
    pub annex: Vec<Field>,
    pub signature_status: SignatureStatus,
    /// The verification's reason in words (which certificate, which period).
    pub signature_detail: String,
    /// The certificate belongs to an authority of the trust list (FR00 only when accepted), whatever the
    /// signature's fate: a cut or altered signature of a known certificate is still `trusted`.
    pub trusted: bool,
    /// Signed with a test certificate (the test authority's, or an authority's reserved id `0000`).
    pub test_certificate: bool,
    /// Header document type, e.g. `04`.
    pub document_type_code: String,
    /// The specification's name of that type, e.g. "Avis d'impôt sur les revenus".
    pub document_type_label: String,
    /// The API's `documentType` for that type, e.g. `avis_imposition`.
    pub document_type: domain::vocabulary::DocumentType,
    /// Departures from the specification that do not prevent reading, each with its reason (an issue date the
    /// type forbids or lacks, an undefined identifier, a value of the wrong length); the signature is checked
    /// all the same, and the engine reports each as a warning.
    pub non_conformities: Vec<String>,
    /// Number of bytes the signature covers.
    pub signed_len: usize,
}

impl TwoDDocFinding {
    /// The seal is authentic: trusted certificate, valid at the signature date, signature verified.
    pub fn signature_verified(&self) -> bool {
        self.signature_status == SignatureStatus::Valid
    }

    /// The consultation's `twoDDoc`; whether the seal's data match the visible document is decided by the
    /// caller, which compares [`Self::fields`] with the page.
    pub fn to_domain(&self, data_matches: bool) -> TwoDDoc {
        TwoDDoc {
            present: true,
            trusted: self.trusted,
            signature_verified: self.signature_verified(),
            signature_status: self.signature_status,
            data_matches,
            read_status: ReadStatus::Read,
            read_status_message: None,
        }
    }
}

impl TwoDDocError {
    /// The consultation's `twoDDoc` for a payload that gave no finding: `None` when it is not a 2D-Doc at all.
    pub fn to_domain(&self) -> Option<TwoDDoc> {
        match self {
            TwoDDocError::NotTwoDDoc(_) => None,
            TwoDDocError::Malformed(reason) => Some(not_read(ReadStatus::Malformed, reason.to_string())),
        }
    }
}

/// The consultation's `twoDDoc` when a code is seen but cannot be decoded (image quality, vector drawing).
pub fn unreadable(message: impl Into<String>) -> TwoDDoc {
    not_read(ReadStatus::Unreadable, message.into())
}

fn not_read(read_status: ReadStatus, message: String) -> TwoDDoc {
    TwoDDoc {
        present: true,
        trusted: false,
        signature_verified: false,
        signature_status: SignatureStatus::NotChecked,
        data_matches: false,
        read_status,
        read_status_message: Some(message),
    }
}

/// Whether a barcode payload claims to be a 2D-Doc (C40 marker `DC` or binary marker 0xDC).
pub fn is_two_d_doc(payload: &[u8]) -> bool {
    payload.starts_with(b"DC") || payload.first() == Some(&header::BINARY_MARKER)
}

/// Reads and verifies a decoded DataMatrix payload.
pub fn analyse_payload(payload: &[u8], trust: &TrustStore) -> Result<TwoDDocFinding, TwoDDocError> {
    if !is_two_d_doc(payload) {
        let start = payload.get(..8).unwrap_or(payload).escape_ascii().to_string();
        return Err(TwoDDocError::NotTwoDDoc(format!(
            "the payload starts with '{start}', not the marker DC"
        )));
    }
    let zones = payload::read(payload)?;
    let verification = signature::verify(&zones.header, zones.signed, &zones.signature, trust);
    let mut fields = BTreeMap::new();
    for field in &zones.message {
        fields.entry(field.id.clone()).or_insert_with(|| field.value.clone());
    }
    Ok(TwoDDocFinding {
        non_conformities: non_conformities(&zones),
        document_type_code: zones.header.document_type.clone(),
        document_type_label: zones.document_type.label.into(),
        document_type: zones.document_type.api_type,
        signed_len: zones.signed.len(),
        header: zones.header,
        fields,
        message: zones.message,
        annex: zones.annex,
        signature_status: verification.status,
        signature_detail: verification.detail,
        trusted: verification.trusted,
        test_certificate: verification.test_certificate,
    })
}

/// Departures that do not prevent reading, each in words: the issue date a type requires (`O`) or forbids
/// (`N`, spec §6), the message zone's departures (undefined identifiers, lengths; see
/// [`message::parse_c40_message`]), and values the parser could only delimit by backtracking (see
/// [`message::parse_c40_zone`]).
fn non_conformities(zones: &payload::Zones<'_>) -> Vec<String> {
    let (header, document_type) = (&zones.header, zones.document_type);
    let code = document_type.code;
    let mut found = match (document_type.issue_date_required, header.issue_date) {
        (true, None) => vec![format!(
            "document type {code} requires an issue date (§6), the header has none ({})",
            header.issue_date_raw
        )],
        (false, Some(date)) => vec![format!(
            "document type {code} must not carry an issue date (§6), the header has {date}"
        )],
        _ => Vec::new(),
    };
    found.extend(zones.departures.iter().map(departure));
    for field in zones.message.iter().filter(|f| f.separator_missing) {
        found.push(format!(
            "the value of {} ({} characters) is not ended by GS although shorter than its maximum",
            field.id,
            field.value.len()
        ));
    }
    found
}

fn departure(fault: &Malformation) -> String {
    match fault {
        Malformation::UnknownIdentifier { id, offset } => format!(
            "data identifier '{id}' at offset {offset} is not defined by the specification (§7), which forbids \
             undefined identifiers (§3.4.4)"
        ),
        other => other.to_string(),
    }
}
