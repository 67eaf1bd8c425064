//! Envelope encryption (AES-256-GCM): each blob gets its own random key, wrapped by a master key
//! that carries an id so master keys can be rotated without re-encrypting every blob. The caller's
//! associated data (company and item ids) is bound to the ciphertext, so a blob moved to another
//! record fails to open.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM, NONCE_LEN};
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

const MAGIC: &[u8; 4] = b"SCB1";
const KEY_LEN: usize = 32;
const TAG_LEN: usize = 16;

#[derive(Debug, thiserror::Error)]
pub enum EnvelopeError {
    #[error("master key file {path}: {reason}")]
    KeyFile { path: String, reason: String },
    #[error("blob is not a Sceau envelope")]
    Format,
    #[error("blob was sealed with unknown master key `{0}`")]
    UnknownKey(String),
    #[error("blob failed authentication (altered, or bound to another record)")]
    Authentication,
}

/// The master keys: the newest seals, all of them open.
pub struct MasterKeys {
    current: String,
    keys: HashMap<String, LessSafeKey>,
    /// Per master key, the HKDF pseudo-random key other secrets are derived from (see [`Self::derived_keys`]).
    derivation: HashMap<String, ring::hkdf::Prk>,
}

impl std::fmt::Debug for MasterKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print key material.
        f.debug_struct("MasterKeys").field("current", &self.current).finish_non_exhaustive()
    }
}

fn aead_key(bytes: &[u8]) -> Result<LessSafeKey, EnvelopeError> {
    UnboundKey::new(&AES_256_GCM, bytes)
        .map(LessSafeKey::new)
        .map_err(|_| EnvelopeError::Format)
}

fn random_nonce() -> [u8; NONCE_LEN] {
    let mut n = [0u8; NONCE_LEN];
    domain::ids::random_bytes(&mut n);
    n
}

impl MasterKeys {
    /// Loads the key file (`<id>:<base64 of 32 bytes>` per line, the last line is current),
    /// creating it with one fresh key and mode 0600 when it does not exist.
    pub fn load_or_create(path: &Path) -> Result<Self, EnvelopeError> {
        let err = |reason: String| EnvelopeError::KeyFile {
            path: path.display().to_string(),
            reason,
        };
        if !path.exists() {
            Self::create_file(path).map_err(|e| err(e.to_string()))?;
        }
        Self::open_existing(path)
    }

    /// Loads an existing key file; never creates one (processes that only read documents).
    /// A file group or others may read or write is refused: the key opens every document.
    pub fn open_existing(path: &Path) -> Result<Self, EnvelopeError> {
        let err = |reason: String| EnvelopeError::KeyFile {
            path: path.display().to_string(),
            reason,
        };
        if let Some(reason) = crate::private_fs::shared_access(path).map_err(|e| err(e.to_string()))? {
            return Err(err(reason));
        }
        let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
        Self::parse(&text).map_err(err)
    }

    /// A fresh key held in memory only, for tests that seal without a data directory.
    #[cfg(any(test, feature = "test-fixtures"))]
    pub fn ephemeral() -> Self {
        let mut key = [0u8; KEY_LEN];
        domain::ids::random_bytes(&mut key);
        Self::parse(&format!("test:{}", STANDARD.encode(key))).expect("a fresh key parses")
    }

    fn create_file(path: &Path) -> std::io::Result<()> {
        let mut key = [0u8; KEY_LEN];
        domain::ids::random_bytes(&mut key);
        let line = format!("k{}:{}\n", chrono::Utc::now().format("%Y%m%d"), STANDARD.encode(key));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(path)?;
        file.write_all(line.as_bytes())?;
        file.sync_all()
    }

    fn parse(text: &str) -> Result<Self, String> {
        let mut keys = HashMap::new();
        let mut derivation = HashMap::new();
        let mut current = None;
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
            let (id, b64) = line.split_once(':').ok_or("a line is not `<id>:<base64>`")?;
            let bytes = STANDARD.decode(b64).map_err(|_| format!("key `{id}` is not base64"))?;
            if bytes.len() != KEY_LEN || id.is_empty() || id.len() > 64 {
                return Err(format!("key `{id}` must be 32 bytes with a short id"));
            }
            keys.insert(id.to_owned(), aead_key(&bytes).map_err(|e| e.to_string())?);
            derivation.insert(
                id.to_owned(),
                ring::hkdf::Salt::new(ring::hkdf::HKDF_SHA256, DERIVATION_SALT).extract(&bytes),
            );
            current = Some(id.to_owned());
        }
        let current = current.ok_or("no key in file")?;
        Ok(Self { current, keys, derivation })
    }

    /// Encrypts `plaintext` under a fresh data key bound to `associated_data`.
    pub fn seal(&self, associated_data: &str, plaintext: &[u8]) -> Vec<u8> {
        let mut body = plaintext.to_vec();
        let Sealed { header, tag } = self.seal_in_place(associated_data, &mut body);
        let mut out = header;
        out.reserve(body.len() + TAG_LEN);
        out.extend_from_slice(&body);
        out.extend_from_slice(&tag);
        out
    }

    /// Encrypts `body` where it lies (no copy of a 10 MB document): the blob is the returned
    /// header, then `body`, then the tag, as [`MasterKeys::seal`] would lay them in one buffer.
    pub fn seal_in_place(&self, associated_data: &str, body: &mut [u8]) -> Sealed {
        let master = &self.keys[&self.current];
        let mut data_key = [0u8; KEY_LEN];
        domain::ids::random_bytes(&mut data_key);

        let wrap_nonce = random_nonce();
        let mut wrapped = data_key.to_vec();
        master
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(wrap_nonce),
                Aad::from(self.current.as_bytes()),
                &mut wrapped,
            )
            .expect("AES-GCM sealing of 32 bytes cannot fail");

        let data_nonce = random_nonce();
        let mut header = Vec::with_capacity(MAGIC.len() + 1 + self.current.len() + 2 * NONCE_LEN + wrapped.len());
        header.extend_from_slice(MAGIC);
        header.push(self.current.len() as u8);
        header.extend_from_slice(self.current.as_bytes());
        header.extend_from_slice(&wrap_nonce);
        header.extend_from_slice(&wrapped);
        header.extend_from_slice(&data_nonce);
        let tag = aead_key(&data_key)
            .expect("a 32-byte key is a valid AES-256 key")
            .seal_in_place_separate_tag(
                Nonce::assume_unique_for_key(data_nonce),
                Aad::from(associated_data.as_bytes()),
                body,
            )
            .expect("AES-GCM sealing within size limits cannot fail");
        let mut tag_bytes = [0u8; TAG_LEN];
        tag_bytes.copy_from_slice(tag.as_ref());
        Sealed { header, tag: tag_bytes }
    }

    /// Decrypts a blob made by [`MasterKeys::seal`] with the same associated data.
    pub fn open(&self, associated_data: &str, blob: &[u8]) -> Result<Vec<u8>, EnvelopeError> {
        let rest = blob.strip_prefix(MAGIC.as_slice()).ok_or(EnvelopeError::Format)?;
        let (&id_len, rest) = rest.split_first().ok_or(EnvelopeError::Format)?;
        let (id, rest) = split(rest, id_len as usize)?;
        let id = std::str::from_utf8(id).map_err(|_| EnvelopeError::Format)?;
        let master = self.keys.get(id).ok_or_else(|| EnvelopeError::UnknownKey(id.to_owned()))?;
        let (wrap_nonce, rest) = split(rest, NONCE_LEN)?;
        let (wrapped, rest) = split(rest, KEY_LEN + TAG_LEN)?;
        let (data_nonce, body) = split(rest, NONCE_LEN)?;

        let mut key = wrapped.to_vec();
        let key = master
            .open_in_place(nonce(wrap_nonce)?, Aad::from(id.as_bytes()), &mut key)
            .map_err(|_| EnvelopeError::Authentication)?;
        let data_key = aead_key(key)?;
        let mut body = body.to_vec();
        let plain_len = data_key
            .open_in_place(nonce(data_nonce)?, Aad::from(associated_data.as_bytes()), &mut body)
            .map_err(|_| EnvelopeError::Authentication)?
            .len();
        body.truncate(plain_len);
        Ok(body)
    }
}

/// What surrounds a body sealed in place: the blob is `header`, the body, then `tag`.
pub struct Sealed {
    pub header: Vec<u8>,
    pub tag: [u8; TAG_LEN],
}

fn split(bytes: &[u8], at: usize) -> Result<(&[u8], &[u8]), EnvelopeError> {
    if bytes.len() < at {
        return Err(EnvelopeError::Format);
    }
    Ok(bytes.split_at(at))
}

fn nonce(bytes: &[u8]) -> Result<Nonce, EnvelopeError> {
    Nonce::try_assume_unique_for_key(bytes).map_err(|_| EnvelopeError::Format)
}

/// Salt of the HKDF extraction from master keys: fixed, so derived keys survive restarts.
const DERIVATION_SALT: &[u8] = b"sceau master key derivation v1";

/// Keys for other uses than sealing (signing public links), derived from the master keys so they
/// need no storage of their own, survive restarts, and follow rotation.
impl MasterKeys {
    /// 32 secret bytes per master key for `purpose` (HKDF-SHA256, the purpose as info), the current
    /// key's first: sign with the first, accept any, so links signed before a rotation stay valid
    /// while their key is kept.
    pub fn derived_keys(&self, purpose: &str) -> Vec<[u8; KEY_LEN]> {
        let mut others: Vec<&String> = self.derivation.keys().filter(|id| **id != self.current).collect();
        others.sort();
        std::iter::once(&self.current)
            .chain(others)
            .filter_map(|id| self.derivation.get(id))
            .filter_map(|prk| {
                let info = [purpose.as_bytes()];
                let mut out = [0u8; KEY_LEN];
                prk.expand(&info, DerivedLen).and_then(|okm| okm.fill(&mut out)).ok().map(|()| out)
            })
            .collect()
    }
}

/// The output length HKDF is asked for: one key.
struct DerivedLen;

impl ring::hkdf::KeyType for DerivedLen {
    fn len(&self) -> usize {
        KEY_LEN
    }
}

#[cfg(test)]
mod tests {

    /// A body sealed in place, written as header, body and tag, opens like a sealed buffer.
    #[test]
    fn sealed_in_place_parts_open_as_one_blob() {
        let keys = MasterKeys::ephemeral();
        let mut body = b"a document of a few bytes".to_vec();
        let sealed = keys.seal_in_place("company=C;item=I", &mut body);
        assert_ne!(body, b"a document of a few bytes");
        let blob = [sealed.header.as_slice(), &body, &sealed.tag].concat();
        assert_eq!(keys.open("company=C;item=I", &blob).expect("open"), b"a document of a few bytes");
        assert!(keys.open("company=C;item=other", &blob).is_err());
    }

    use super::*;

    fn keys() -> (tempdir::Dir, MasterKeys) {
        let dir = tempdir::Dir::new();
        let keys = MasterKeys::load_or_create(&dir.path.join("master.key")).unwrap();
        (dir, keys)
    }

    mod tempdir {
        pub struct Dir {
            pub path: std::path::PathBuf,
        }
        impl Dir {
            pub fn new() -> Self {
                let path = std::env::temp_dir().join(format!("sceau-env-{}", domain::ids::random_hex(12)));
                std::fs::create_dir_all(&path).unwrap();
                Self { path }
            }
        }
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.path);
            }
        }
    }

    #[test]
    fn round_trip_and_binding() {
        let (_dir, keys) = keys();
        let blob = keys.seal("company=A;item=1", b"secret document");
        assert!(!blob.windows(6).any(|w| w == b"secret"));
        assert_eq!(keys.open("company=A;item=1", &blob).unwrap(), b"secret document");
        assert!(matches!(keys.open("company=B;item=1", &blob), Err(EnvelopeError::Authentication)));
        let mut altered = blob.clone();
        let last = altered.len() - 1;
        altered[last] ^= 1;
        assert!(keys.open("company=A;item=1", &altered).is_err());
        assert!(keys.open("x", b"junk").is_err());
    }

    #[cfg(unix)]
    #[test]
    fn key_file_is_private_and_reloads() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempdir::Dir::new();
        let path = dir.path.join("master.key");
        let first = MasterKeys::load_or_create(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let blob = first.seal("ad", b"x");
        let again = MasterKeys::load_or_create(&path).unwrap();
        assert_eq!(again.open("ad", &blob).unwrap(), b"x");

        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        for refused in [MasterKeys::load_or_create(&path), MasterKeys::open_existing(&path)] {
            let message = refused.unwrap_err().to_string();
            assert!(message.contains("group or others") && message.contains("chmod 600"), "{message}");
        }
    }
}
