//! `scripts/bench --purge`: a company holding 100,000 images, written before the service starts
//! through the store and blob store's own functions (a result and its image each, recorded within
//! the default retention, a few hundred waiting for a review), and the reference the purge is
//! measured against: as many files of the same size in a directory of the same shape, deleted one
//! after the other in one thread.
//!
//! `cargo bench --bench purge_seed -- seed <database> <blob dir> <company id> <images> <floor dir>`
//! prints one JSON line (images, pending, seconds); the files are not flushed (the caller syncs).
//! `cargo bench --bench purge_seed -- floor <floor dir>` deletes every file under it and prints
//! one JSON line with the seconds it took.

use chrono::{Duration, Utc};
use common::blobs::BlobStore;
use common::crypto::envelope::MasterKeys;
use common::document::FileKind;
use common::store::{consultations, workflows, RepoError, Store};
use domain::analysis::AnalysisReport;
use domain::ids::{CompanyId, ConsultationId};
use domain::vocabulary::{DocumentCategory, DocumentType, ImageSide, ReviewStatus, Verdict};
use std::path::Path;
use std::sync::Arc;

/// The size of each image (and of its twin, within the few bytes of the seal): the purge's cost
/// is per file, not per byte, and 100,000 files of this size cost the seed a few hundred megabytes.
const IMAGE_BYTES: usize = 2048;
/// One result in this many waits for a review: its image must survive the purge.
const PENDING_EVERY: usize = 333;

fn seed(
    database: &Path,
    blob_dir: &Path,
    company: &CompanyId,
    images: usize,
    floor: &Path,
) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    let began = std::time::Instant::now();
    let store = Store::open(database)?;
    let blobs = BlobStore::new(blob_dir.to_owned(), Arc::new(MasterKeys::ephemeral()))?;
    let names: Vec<String> = (0..images).map(|_| BlobStore::new_name()).collect();
    for name in &names {
        // On the database's file system: not flushed here, synced by the caller before timing.
        blobs.put_then_record_here(&store, name, "purge-bench", vec![7; IMAGE_BYTES])?;
        let twin = floor.join(&name[..2]).join(name);
        std::fs::create_dir_all(twin.parent().ok_or("a shard directory")?)?;
        std::fs::write(twin, [7; IMAGE_BYTES])?;
    }
    let company = company.clone();
    let pending = store.write_here_announced(None, move |tx| -> Result<usize, RepoError> {
        let workflow = workflows::default_batch(tx, &company, DocumentCategory::Identite)?;
        let report = AnalysisReport {
            verdict: Verdict::Conforme,
            document_type: DocumentType::CarteIdentite,
            document_country: Some("FRA".into()),
            anomalies: vec![],
            two_d_doc: None,
            holder_age: None,
            pages: 1,
            checks: vec![],
            face_match: None,
        };
        let now = Utc::now();
        let mut pending = 0;
        for (i, blob) in names.into_iter().enumerate() {
            // Spread over the last 20 days: all within the default 30, all due at 0.
            let at = now - Duration::seconds((i as i64 * 17) % (20 * 86_400));
            let id = ConsultationId::generate(at);
            let waits = i % PENDING_EVERY == 0;
            pending += usize::from(waits);
            consultations::insert(
                tx,
                &consultations::NewConsultation {
                    id: &id,
                    company: &company,
                    workflow_id: &workflow,
                    external_ref: None,
                    category: DocumentCategory::Identite,
                    report: &report,
                    decision: None,
                    review_status: waits.then_some(ReviewStatus::Pending),
                    batch_item_id: None,
                    verification_id: None,
                    analyzed_at: at,
                    now: at,
                },
            )?;
            let image = consultations::ImageFile {
                side: ImageSide::Recto,
                blob,
                kind: FileKind::Png,
            };
            consultations::add_image(tx, &id, &image, at)?;
        }
        Ok(pending)
    })?;
    Ok(serde_json::json!({ "images": images, "pending": pending, "seconds": began.elapsed().as_secs_f64() }))
}

/// Deletes every file of the twin directory, one after the other: the floor of any purge.
fn floor(dir: &Path) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    let mut files = Vec::new();
    for shard in std::fs::read_dir(dir)? {
        for file in std::fs::read_dir(shard?.path())? {
            files.push(file?.path());
        }
    }
    let began = std::time::Instant::now();
    for file in &files {
        std::fs::remove_file(file)?;
    }
    Ok(serde_json::json!({ "files": files.len(), "seconds": began.elapsed().as_secs_f64() }))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let out = match args.as_slice() {
        [mode, database, blob_dir, company, images, floor_dir] if mode == "seed" => seed(
            Path::new(database),
            Path::new(blob_dir),
            &company.parse()?,
            images.parse()?,
            Path::new(floor_dir),
        )?,
        [mode, dir] if mode == "floor" => floor(Path::new(dir))?,
        _ => return Err("usage: purge_seed seed <database> <blob dir> <company id> <images> <floor dir> | floor <dir>".into()),
    };
    println!("{out}");
    Ok(())
}
