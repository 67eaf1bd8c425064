//! Where blobs live, as `SCEAU_BLOB_URL` says: a local directory (`file:///srv/sceau/blobs`, by
//! default the data dir's `blobs/`) or an S3 bucket (`s3://bucket` or `s3://bucket/prefix`), whose
//! endpoint, region and credentials come from the usual `AWS_*` variables.

use std::path::PathBuf;
use std::str::FromStr;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlobLocation {
    /// A directory on this host (shared by every process that reads blobs).
    Directory(PathBuf),
    /// A bucket of an S3-compatible store; `prefix` is empty or ends with `/`.
    S3 { bucket: String, prefix: String },
}

/// What a malformed `SCEAU_BLOB_URL` is told (the value itself is not echoed).
const FORMS: &str = "SCEAU_BLOB_URL must be file:///absolute/directory or s3://bucket[/prefix]";

impl FromStr for BlobLocation {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let url = url::Url::parse(text.trim()).map_err(|_| FORMS.to_owned())?;
        if !url.username().is_empty() || url.password().is_some() || url.query().is_some() || url.fragment().is_some() {
            // Credentials come from AWS_* variables, never from a URL that ends up in a log.
            return Err(format!("{FORMS}, without credentials, query or fragment"));
        }
        match url.scheme() {
            "file" if url.host().is_none() => {
                let path = url.to_file_path().map_err(|()| FORMS.to_owned())?;
                Ok(BlobLocation::Directory(path))
            }
            "s3" => {
                let bucket = url
                    .host_str()
                    .filter(|b| valid_bucket(b))
                    .ok_or_else(|| format!("{FORMS}: a bucket name is 3 to 63 lower-case letters, digits, dots and hyphens"))?;
                let prefix = url.path().trim_matches('/');
                let prefix = if prefix.is_empty() { String::new() } else { format!("{prefix}/") };
                Ok(BlobLocation::S3 {
                    bucket: bucket.to_owned(),
                    prefix,
                })
            }
            _ => Err(FORMS.to_owned()),
        }
    }
}

/// The S3 bucket naming rules (the part a typo breaks).
fn valid_bucket(name: &str) -> bool {
    (3..=63).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-')
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_directories_and_buckets() {
        assert_eq!(
            "file:///srv/sceau/blobs".parse(),
            Ok(BlobLocation::Directory("/srv/sceau/blobs".into()))
        );
        assert_eq!(
            "s3://sceau-blobs".parse(),
            Ok(BlobLocation::S3 {
                bucket: "sceau-blobs".into(),
                prefix: String::new()
            })
        );
        assert_eq!(
            " s3://sceau-blobs/eu/prod/ ".parse(),
            Ok(BlobLocation::S3 {
                bucket: "sceau-blobs".into(),
                prefix: "eu/prod/".into()
            })
        );
    }

    #[test]
    fn refuses_what_is_not_a_place_for_blobs() {
        for bad in [
            "",
            "blobs",
            "/srv/blobs",
            "file://host/srv/blobs",
            "http://127.0.0.1:9000/bucket",
            "s3://",
            "s3://Upper_Case",
            "s3://ab",
            "s3://key:secret@bucket",
            "s3://bucket?region=eu",
        ] {
            let refused = bad.parse::<BlobLocation>().unwrap_err();
            assert!(refused.starts_with("SCEAU_BLOB_URL must be"), "{bad}: {refused}");
            assert!(!refused.contains("secret"), "the value is never echoed: {refused}");
        }
    }
}
