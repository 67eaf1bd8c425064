//! The face models Sceau ships (`models/` at the root of the repository): which files, their
//! sizes and SHA-256 digests. A model is read only once its digest matches, so a file swapped or
//! truncated on disk is refused by name, never run.

use ring::digest::{digest, SHA256};
use std::path::{Path, PathBuf};

/// One model file and what it must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelFile {
    pub name: &'static str,
    pub bytes: u64,
    /// Lower-case hexadecimal.
    pub sha256: &'static str,
}

/// YuNet 2023mar, block-quantised: a face detector with five landmarks (MIT).
pub const DETECTOR: ModelFile = ModelFile {
    name: "face_detection_yunet_2023mar_int8bq.onnx",
    bytes: 122_489,
    sha256: "49f000ec501fef24739071fc7e68267d32209045b6822c0c72dce1da25726f10",
};

/// SFace 2021dec, block-quantised: a 128-dimension face embedding (Apache-2.0).
pub const EMBEDDER: ModelFile = ModelFile {
    name: "face_recognition_sface_2021dec_int8bq.onnx",
    bytes: 10_667_852,
    sha256: "fb143eea07838aa532d1c95df5f69899974ea0140e1fba05e94204be13ed74ee",
};

/// Why a model file was refused.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("the face model {path} cannot be read: {source}")]
    Unreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the face model {path} is {found} bytes, not {expected}: not the file Sceau ships")]
    WrongSize { path: PathBuf, found: u64, expected: u64 },
    #[error("the face model {path} has SHA-256 {found}, not {expected}: not the file Sceau ships")]
    WrongDigest {
        path: PathBuf,
        found: String,
        expected: &'static str,
    },
}

/// The bytes of `model` in `dir`, once their size and digest are the ones shipped. The size is
/// checked from the metadata first, so a wrong file is never read whole.
pub fn load(dir: &Path, model: ModelFile) -> Result<Vec<u8>, ModelError> {
    let path = dir.join(model.name);
    let unreadable = |source| ModelError::Unreadable {
        path: path.clone(),
        source,
    };
    let found = std::fs::metadata(&path).map_err(unreadable)?.len();
    if found != model.bytes {
        return Err(ModelError::WrongSize {
            path,
            found,
            expected: model.bytes,
        });
    }
    let bytes = std::fs::read(&path).map_err(unreadable)?;
    let found = hex(digest(&SHA256, &bytes).as_ref());
    if found != model.sha256 {
        return Err(ModelError::WrongDigest {
            path,
            found,
            expected: model.sha256,
        });
    }
    Ok(bytes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipped() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../models")
    }

    #[test]
    fn the_shipped_models_are_the_ones_named() {
        for model in [DETECTOR, EMBEDDER] {
            let bytes = load(&shipped(), model).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(bytes.len() as u64, model.bytes);
        }
    }

    #[test]
    fn a_model_changed_on_disk_is_refused_by_name() {
        let dir = std::env::temp_dir().join(format!("sceau-models-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut bytes = std::fs::read(shipped().join(DETECTOR.name)).unwrap();
        bytes[1000] ^= 1;
        std::fs::write(dir.join(DETECTOR.name), &bytes).unwrap();
        let refused = load(&dir, DETECTOR);
        assert!(matches!(refused, Err(ModelError::WrongDigest { .. })), "{refused:?}");
        bytes.truncate(1000);
        std::fs::write(dir.join(DETECTOR.name), &bytes).unwrap();
        let refused = load(&dir, DETECTOR);
        assert!(matches!(refused, Err(ModelError::WrongSize { found: 1000, .. })), "{refused:?}");
        assert!(matches!(load(&dir, EMBEDDER), Err(ModelError::Unreadable { .. })));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
