//! The face models Sceau ships (`models/` at the root of the repository, see its NOTICE), built
//! into the binary so that every installation has them, offline, with no path to configure. Their
//! sizes and SHA-256 digests are checked when the engine starts: a checkout whose files were
//! swapped or left as placeholders (a Git LFS pointer, a truncated download) builds a binary that
//! refuses its models by name and reports the selfie not checked, rather than running them.

use ring::digest::{digest, SHA256};

/// One model file and what it must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelFile {
    pub name: &'static str,
    pub size: usize,
    /// Lower-case hexadecimal.
    pub sha256: &'static str,
    contents: &'static [u8],
}

/// YuNet 2023mar, block-quantised: a face detector with five landmarks (MIT).
pub const DETECTOR: ModelFile = ModelFile {
    name: "face_detection_yunet_2023mar_int8bq.onnx",
    size: 122_489,
    sha256: "49f000ec501fef24739071fc7e68267d32209045b6822c0c72dce1da25726f10",
    contents: include_bytes!("../../../../models/face_detection_yunet_2023mar_int8bq.onnx"),
};

/// SFace 2021dec, block-quantised: a 128-dimension face embedding (Apache-2.0).
pub const EMBEDDER: ModelFile = ModelFile {
    name: "face_recognition_sface_2021dec_int8bq.onnx",
    size: 10_667_852,
    sha256: "fb143eea07838aa532d1c95df5f69899974ea0140e1fba05e94204be13ed74ee",
    contents: include_bytes!("../../../../models/face_recognition_sface_2021dec_int8bq.onnx"),
};

/// Why a model was refused.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("the face model {name} is {found} bytes, not {expected}: not the file Sceau ships")]
    WrongSize { name: &'static str, found: usize, expected: usize },
    #[error("the face model {name} has SHA-256 {found}, not {expected}: not the file Sceau ships")]
    WrongDigest {
        name: &'static str,
        found: String,
        expected: &'static str,
    },
}

impl ModelFile {
    /// The model's bytes, once their size and digest are the ones shipped.
    pub fn verified(self) -> Result<&'static [u8], ModelError> {
        check(self, self.contents)
    }
}

fn check(model: ModelFile, bytes: &[u8]) -> Result<&[u8], ModelError> {
    if bytes.len() != model.size {
        return Err(ModelError::WrongSize {
            name: model.name,
            found: bytes.len(),
            expected: model.size,
        });
    }
    let found = hex(digest(&SHA256, bytes).as_ref());
    if found != model.sha256 {
        return Err(ModelError::WrongDigest {
            name: model.name,
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

    #[test]
    fn the_shipped_models_are_the_ones_named() {
        for model in [DETECTOR, EMBEDDER] {
            let bytes = model.verified().unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(bytes.len(), model.size);
        }
    }

    #[test]
    fn a_model_changed_or_cut_is_refused_by_name() {
        let mut bytes = DETECTOR.contents.to_vec();
        bytes[1000] ^= 1;
        let refused = check(DETECTOR, &bytes);
        assert!(
            matches!(refused, Err(ModelError::WrongDigest { name, .. }) if name == DETECTOR.name),
            "{refused:?}"
        );
        let pointer = b"version https://git-lfs.github.com/spec/v1\n";
        assert!(matches!(check(EMBEDDER, pointer), Err(ModelError::WrongSize { found: 43, .. })));
    }
}
