//! Which ANTS trust list the engine verifies seals with: the one shipped in the binary, or a newer one an
//! operator imported into the data directory (`sceau admin trust import`), so a list update needs no
//! rebuild. The data directory is the place because every role that analyses documents already shares it
//! (workers read the encrypted files from it and never open the database): a worker started later, on
//! any machine of the pool, reads the same file at start.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use common::capabilities::{TrustListOrigin, TrustListSummary};
use thiserror::Error;

use super::embedded;

/// Namespace of the trust list's elements (ETSI TS 102 231 v2).
const TSL_NAMESPACE: &str = "http://uri.etsi.org/02231/v2#";
/// The imported list, under the data directory.
const IMPORTED_FILE: &str = "trust/ants-tsl.xml";

/// The trust list's scheme information could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TrustListError {
    #[error("not XML: {0}")]
    Xml(String),
    #[error("no {0} in its scheme information")]
    Missing(&'static str),
    #[error("its {field} `{value}` is not valid")]
    Invalid { field: &'static str, value: String },
    #[error("the imported trust list {path} cannot be read: {reason}")]
    Unreadable { path: PathBuf, reason: String },
}

/// A trust list's text with its identity.
#[derive(Debug, Clone)]
pub struct TrustList {
    pub xml: Cow<'static, str>,
    pub summary: TrustListSummary,
}

/// Where `sceau admin trust import` puts the list, and where the engine looks for it.
pub fn imported_path(data_dir: &Path) -> PathBuf {
    data_dir.join(IMPORTED_FILE)
}

/// What tells one imported list's file from another: inode, size and time of change (a list is
/// always written beside its place and renamed over it).
pub type ListStamp = (u64, u64, std::time::SystemTime);

/// The stamp of the imported list in `data_dir`; `None` when there is none. One `stat`.
pub fn imported_stamp(data_dir: &Path) -> Option<ListStamp> {
    use std::os::unix::fs::MetadataExt;
    let metadata = std::fs::metadata(imported_path(data_dir)).ok()?;
    Some((metadata.ino(), metadata.len(), metadata.modified().ok()?))
}

/// The shipped list with its identity.
pub fn shipped() -> Result<TrustList, TrustListError> {
    Ok(TrustList {
        summary: summary(embedded::TSL_XML, TrustListOrigin::Shipped)?,
        xml: Cow::Borrowed(embedded::TSL_XML),
    })
}

/// The list in use: the imported one when there is one and it is not older than the shipped one (a binary
/// upgraded with a newer list wins over an old import).
pub fn in_use(data_dir: Option<&Path>) -> Result<TrustList, TrustListError> {
    let shipped = shipped()?;
    let Some(path) = data_dir.map(imported_path) else {
        return Ok(shipped);
    };
    let xml = match std::fs::read_to_string(&path) {
        Ok(xml) => xml,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(shipped),
        Err(e) => return Err(unreadable(&path, e.to_string())),
    };
    let summary = summary(&xml, TrustListOrigin::Imported).map_err(|e| unreadable(&path, e.to_string()))?;
    if is_older(&summary, &shipped.summary) {
        return Ok(shipped);
    }
    Ok(TrustList {
        xml: Cow::Owned(xml),
        summary,
    })
}

/// Whether `candidate` predates `current`: a lower sequence number, or the same one issued earlier.
pub fn is_older(candidate: &TrustListSummary, current: &TrustListSummary) -> bool {
    (candidate.sequence, candidate.issued) < (current.sequence, current.issued)
}

/// The sequence number and dates of the scheme information.
pub fn summary(xml: &str, origin: TrustListOrigin) -> Result<TrustListSummary, TrustListError> {
    let doc = roxmltree::Document::parse(xml).map_err(|e| TrustListError::Xml(e.to_string()))?;
    let scheme = doc
        .root_element()
        .children()
        .find(|n| n.has_tag_name((TSL_NAMESPACE, "SchemeInformation")))
        .ok_or(TrustListError::Missing("SchemeInformation"))?;
    let text = |name: &'static str| {
        scheme
            .children()
            .find(|n| n.has_tag_name((TSL_NAMESPACE, name)))
            .map(|n| {
                n.descendants()
                    .filter(|d| d.is_text())
                    .filter_map(|d| d.text())
                    .collect::<String>()
                    .trim()
                    .to_string()
            })
            .filter(|t| !t.is_empty())
    };
    let sequence_text = text("TSLSequenceNumber").ok_or(TrustListError::Missing("TSLSequenceNumber"))?;
    let sequence = sequence_text.parse().map_err(|_| TrustListError::Invalid {
        field: "TSLSequenceNumber",
        value: sequence_text.clone(),
    })?;
    let issued = date(
        "ListIssueDateTime",
        &text("ListIssueDateTime").ok_or(TrustListError::Missing("ListIssueDateTime"))?,
    )?;
    let next_update = text("NextUpdate").map(|t| date("NextUpdate", &t)).transpose()?;
    Ok(TrustListSummary {
        origin,
        sequence,
        issued,
        next_update,
    })
}

fn date(field: &'static str, value: &str) -> Result<DateTime<Utc>, TrustListError> {
    DateTime::parse_from_rfc3339(value)
        .map(|d| d.with_timezone(&Utc))
        .map_err(|_| TrustListError::Invalid {
            field,
            value: value.to_string(),
        })
}

fn unreadable(path: &Path, reason: String) -> TrustListError {
    TrustListError::Unreadable {
        path: path.to_path_buf(),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_list_is_sequence_23_of_may_2026() {
        let list = shipped().unwrap();
        assert_eq!(list.summary.sequence, 23);
        assert_eq!(list.summary.issued.to_rfc3339(), "2026-05-11T14:00:00+00:00");
        assert_eq!(
            list.summary.next_update.map(|d| d.to_rfc3339()).as_deref(),
            Some("2027-05-11T14:00:00+00:00")
        );
    }

    #[test]
    fn an_import_is_used_unless_older_than_the_shipped_list() {
        let dir = std::env::temp_dir().join(format!("sceau-trust-list-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("trust")).unwrap();
        assert_eq!(in_use(Some(&dir)).unwrap().summary.origin, TrustListOrigin::Shipped);

        let newer = embedded::TSL_XML.replace("<tsl:TSLSequenceNumber>23<", "<tsl:TSLSequenceNumber>24<");
        std::fs::write(imported_path(&dir), &newer).unwrap();
        let list = in_use(Some(&dir)).unwrap();
        assert_eq!((list.summary.origin, list.summary.sequence), (TrustListOrigin::Imported, 24));

        let older = embedded::TSL_XML.replace("<tsl:TSLSequenceNumber>23<", "<tsl:TSLSequenceNumber>22<");
        std::fs::write(imported_path(&dir), &older).unwrap();
        assert_eq!(in_use(Some(&dir)).unwrap().summary.origin, TrustListOrigin::Shipped);

        std::fs::write(imported_path(&dir), "not xml").unwrap();
        assert!(matches!(in_use(Some(&dir)), Err(TrustListError::Unreadable { .. })));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
