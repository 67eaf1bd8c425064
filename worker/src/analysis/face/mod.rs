//! Face match: the selfie of an identity journey compared with the portrait of its document,
//! offline, on CPU, by the models that ship with the project (`models/`, see its NOTICE). It runs
//! in the analysis child like every other check; embeddings and face crops live in that child's
//! memory for one comparison and are never stored, logged or sent: only the score and the outcome
//! leave it (`docs/face-match.md`).

pub mod align;
pub mod compare;
pub mod detect;
pub mod embed;
pub mod geometry;
pub mod models;
pub mod onnx;
pub mod quality;

use std::sync::OnceLock;

pub use compare::{compare, examine, examine_knowing, Comparison, Examined};

/// Why the face models could not run.
#[derive(Debug, Clone, thiserror::Error)]
pub enum FaceError {
    #[error("the face models are unavailable: {0}")]
    Unavailable(String),
    #[error("a face model failed: {0}")]
    Model(String),
}

impl FaceError {
    fn run(error: impl std::fmt::Display) -> FaceError {
        FaceError::Model(error.to_string())
    }
}

/// The numbers of a model's output, in order.
fn floats(output: &tract_onnx::prelude::TValue) -> Result<Vec<f32>, FaceError> {
    let view = output.to_plain_array_view::<f32>().map_err(FaceError::run)?;
    Ok(view.iter().copied().collect())
}

/// The two models as plans, built once per process.
pub struct FaceModels {
    detector: onnx::Plan,
    embedder: onnx::Plan,
}

impl FaceModels {
    /// The process's models: checked and built on first use (or at the engine's start, see
    /// [`FaceModels::prepare`]), then shared. A failure is kept too, so it is met once.
    pub fn shared() -> Result<&'static FaceModels, FaceError> {
        static MODELS: OnceLock<Result<FaceModels, FaceError>> = OnceLock::new();
        MODELS.get_or_init(FaceModels::load).as_ref().map_err(Clone::clone)
    }

    /// Builds the process's models now, so that the first document does not wait for them.
    pub fn prepare() -> Result<(), FaceError> {
        FaceModels::shared().map(|_| ())
    }

    /// Checks and builds both models afresh (what [`FaceModels::shared`] does once; the
    /// benchmark times it).
    pub fn load() -> Result<FaceModels, FaceError> {
        let side = align::SIDE as usize;
        Ok(FaceModels {
            detector: built(models::DETECTOR, &[1, 3, detect::SIDE, detect::SIDE])?,
            embedder: built(models::EMBEDDER, &[1, 3, side, side])?,
        })
    }

    /// The detector alone, checked and built once per process: what the journey's quick look at
    /// the edge needs (`super::quick_look`), without the embedder's 10 MB and its plan.
    pub fn shared_detector() -> Result<&'static onnx::Plan, FaceError> {
        static DETECTOR: OnceLock<Result<onnx::Plan, FaceError>> = OnceLock::new();
        DETECTOR
            .get_or_init(|| built(models::DETECTOR, &[1, 3, detect::SIDE, detect::SIDE]))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The faces of `image`, surest first.
    pub fn faces(&self, image: &image::RgbImage) -> Result<Vec<detect::Face>, FaceError> {
        detect::faces(&self.detector, image)
    }

    /// The embedding of an aligned 112×112 crop.
    pub fn embedding(&self, crop: &image::RgbImage) -> Result<embed::Embedding, FaceError> {
        embed::embed(&self.embedder, crop)
    }
}

/// The plan of a shipped model, once its bytes are the ones shipped.
fn built(model: models::ModelFile, input: &[usize]) -> Result<onnx::Plan, FaceError> {
    let unavailable = |e: &dyn std::fmt::Display| FaceError::Unavailable(e.to_string());
    let bytes = model.verified().map_err(|e| unavailable(&e))?;
    onnx::plan(bytes, input).map_err(|e| unavailable(&e))
}
