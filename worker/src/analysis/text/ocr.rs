//! OCR of page images with the Tesseract command-line program, run as a child process: a photographed or
//! scanned document has no text layer, and its printed data must still be compared with its seal. A subprocess
//! keeps Tesseract's C++ out of the worker's memory and lets a stuck run be killed.
//!
//! The image goes to Tesseract's standard input as PNG and the text comes back on its standard output, so nothing
//! of the document touches the disk. Every run is bounded: input size (large images are scaled down first),
//! wall time (the child is killed) and output size. The text read is never logged.
//!
//! OCR is most of a photographed page's analysis, and Tesseract's time follows the pixels it is given and the
//! models it loads: the page goes in grey, at the size its letters need and no larger ([`super::resolution`]),
//! to the French model alone.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

use image::{DynamicImage, GenericImageView, ImageFormat};
use thiserror::Error;
use wait_timeout::ChildExt;

use super::resolution;
use crate::analysis::grey;

/// Longest side an image is given to Tesseract with: a page photographed at 12 megapixels is still legible at
/// this size, and OCR time grows with the pixel count.
pub const MAX_SIDE: u32 = 3500;
/// Most text accepted from one run; a page of text is a few kilobytes, more means something is wrong.
pub const MAX_OUTPUT: usize = 1 << 20;
/// Time allowed to `tesseract --version` and `--list-langs` at probe time.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// How Tesseract is run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OcrOptions {
    /// The Tesseract executable, looked up in `PATH` when it has no directory.
    pub program: PathBuf,
    /// Tesseract's `-l` value: the trained languages, `+`-separated.
    pub languages: String,
    /// Wall time allowed to one image before the child is killed.
    pub timeout: Duration,
}

impl Default for OcrOptions {
    fn default() -> Self {
        OcrOptions {
            program: PathBuf::from("tesseract"),
            // French alone: a second language makes Tesseract read again, with the other model, every
            // word it is unsure of, and load both models (0.11 s of CPU against 0.05 s); on the
            // photographed attestation that is 60 ms of 420, for no word the comparison needs.
            languages: "fra".into(),
            timeout: Duration::from_secs(60),
        }
    }
}

/// Why an image gave no text. Messages name neither the image nor any text read from it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum OcrError {
    /// The program or a language's trained data is missing: OCR is off on this machine until it is installed.
    #[error("OCR unavailable: {0}")]
    Unavailable(String),
    #[error("OCR did not finish within {0:?}")]
    Timeout(Duration),
    #[error("OCR failed: {0}")]
    Failed(String),
}

/// Tesseract, checked once for presence and languages.
#[derive(Debug)]
pub struct Ocr {
    options: OcrOptions,
    /// The probe's outcome, kept so a machine without Tesseract fails fast instead of spawning for every image.
    probed: OnceLock<Result<(), OcrError>>,
}

impl Ocr {
    pub fn new(options: OcrOptions) -> Self {
        Ocr {
            options,
            probed: OnceLock::new(),
        }
    }

    pub fn options(&self) -> &OcrOptions {
        &self.options
    }

    /// Checks that the program runs and knows every configured language. The outcome is computed once and
    /// kept: call it at start to report a missing install, [`Ocr::image_text`] relies on it.
    pub fn probe(&self) -> Result<(), OcrError> {
        self.probed.get_or_init(|| probe_program(&self.options)).clone()
    }

    /// The text of `image`, an upright page, as Tesseract reads it (layout analysis on, `--psm 3`).
    /// Blocking: call it from a blocking thread.
    pub fn image_text(&self, image: &DynamicImage) -> Result<String, OcrError> {
        self.text_with_layout(image, "3", Size::ForItsLetters)
    }

    /// The text of `image`, a page that may be turned by a quarter or a half turn: Tesseract first
    /// finds the page's orientation from its letters (`--psm 1`, the `osd` trained data), then reads
    /// it straightened. One run, a quarter of a second more than [`Ocr::image_text`] on a photo,
    /// half what a separate orientation run costs.
    pub fn image_text_any_turn(&self, image: &DynamicImage) -> Result<String, OcrError> {
        self.text_with_layout(image, "1", Size::ForItsLetters)
    }

    /// [`Ocr::image_text`] (or, with `any_turn`, [`Ocr::image_text_any_turn`]) of `image` at the size
    /// it is given, not brought to the size its letters need: for a second, closer reading of a page
    /// the caller enlarged because the first missed its small print.
    ///
    /// This reading adds the English model to the configured ones: alone, the French one reads some
    /// capitals and digits of identifiers as each other ("X4RTBPFW4" as "X4RTBPFWA4"), and a second
    /// reading is rare enough to afford a second model.
    pub fn image_text_as_given(&self, image: &DynamicImage, any_turn: bool) -> Result<String, OcrError> {
        self.text_with_layout(image, if any_turn { "1" } else { "3" }, Size::AsGiven)
    }

    fn text_with_layout(&self, image: &DynamicImage, psm: &str, size: Size) -> Result<String, OcrError> {
        self.probe()?;
        let png = encode_png(image, size)?;
        let languages = match size {
            Size::ForItsLetters => self.options.languages.clone(),
            Size::AsGiven if self.options.languages.split('+').any(|l| l == "eng") => self.options.languages.clone(),
            Size::AsGiven => format!("{}+eng", self.options.languages),
        };
        let args = ["stdin", "stdout", "-l", languages.as_str(), "--psm", psm];
        let output = run(&self.options, &args, Some(png), self.options.timeout)?;
        if !output.success {
            return Err(OcrError::Failed(format!("tesseract exited with {}", output.status)));
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }
}

fn probe_program(options: &OcrOptions) -> Result<(), OcrError> {
    let version = run(options, &["--version"], None, PROBE_TIMEOUT).map_err(unavailable)?;
    if !version.success {
        return Err(OcrError::Unavailable(format!("`--version` exited with {}", version.status)));
    }
    let listed = run(options, &["--list-langs"], None, PROBE_TIMEOUT).map_err(unavailable)?;
    if !listed.success {
        return Err(OcrError::Unavailable(format!("`--list-langs` exited with {}", listed.status)));
    }
    // Tesseract 4 prints the list on stderr, 5 on stdout; the first line is a header either way.
    let text = [listed.stdout.as_slice(), listed.stderr.as_slice()].concat();
    let text = String::from_utf8_lossy(&text);
    let installed: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("List of available languages"))
        .skip(1)
        .map(str::trim)
        .collect();
    let wanted: Vec<&str> = options.languages.split('+').map(str::trim).filter(|l| !l.is_empty()).collect();
    if wanted.is_empty() {
        return Err(OcrError::Unavailable("no OCR language configured".into()));
    }
    let missing: Vec<&str> = wanted.into_iter().filter(|w| !installed.contains(w)).collect();
    if !missing.is_empty() {
        return Err(OcrError::Unavailable(format!(
            "tesseract has no trained data for {} (install tesseract-ocr-<lang>)",
            missing.join(", ")
        )));
    }
    Ok(())
}

/// A failure at probe time means OCR cannot work at all, whatever went wrong.
fn unavailable(error: OcrError) -> OcrError {
    match error {
        OcrError::Unavailable(m) | OcrError::Failed(m) => OcrError::Unavailable(m),
        OcrError::Timeout(t) => OcrError::Unavailable(format!("tesseract did not answer within {t:?}")),
    }
}

/// The size a page goes to Tesseract at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Size {
    /// Scaled down to the size its letters need ([`resolution`]).
    ForItsLetters,
    /// As the caller gave it (within [`MAX_SIDE`]).
    AsGiven,
}

/// Grey PNG of `image`, scaled down when larger than [`MAX_SIDE`], then to the size its letters need (see
/// [`resolution`]) unless `size` says otherwise: colour does not help Tesseract, grey makes the pipe several
/// times lighter, and Tesseract's time follows the pixel count.
fn encode_png(image: &DynamicImage, size: Size) -> Result<Vec<u8>, OcrError> {
    let (w, h) = image.dimensions();
    if w == 0 || h == 0 {
        return Err(OcrError::Failed("empty image".into()));
    }
    let grey = if w.max(h) > MAX_SIDE {
        image.resize(MAX_SIDE, MAX_SIDE, image::imageops::FilterType::Triangle).into_luma8()
    } else {
        grey::levels(image)
    };
    let grey = match size {
        Size::ForItsLetters => resolution::scaled_for_ocr(grey),
        Size::AsGiven => grey,
    };
    let mut png = Vec::new();
    DynamicImage::ImageLuma8(grey)
        .write_to(&mut std::io::Cursor::new(&mut png), ImageFormat::Png)
        .map_err(|e| OcrError::Failed(format!("the image could not be encoded as PNG: {e}")))?;
    Ok(png)
}

struct Output {
    success: bool,
    status: String,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// Runs the program with `input` on its stdin, reading stdout and stderr on their own threads so a full pipe
/// cannot block the child, and kills it when `timeout` passes.
fn run(options: &OcrOptions, args: &[&str], input: Option<Vec<u8>>, timeout: Duration) -> Result<Output, OcrError> {
    let started = Instant::now();
    let mut child = Command::new(&options.program)
        .args(args)
        .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Tesseract's OpenMP threads fight each other and the worker's other jobs on a small machine: one
        // thread per run is faster there, and concurrency comes from running several jobs.
        .env("OMP_THREAD_LIMIT", "1")
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => OcrError::Unavailable(format!("the program {} was not found", options.program.display())),
            _ => OcrError::Failed(format!("tesseract could not be started: {e}")),
        })?;

    let writer = match (input, child.stdin.take()) {
        (Some(bytes), Some(mut stdin)) => Some(thread::spawn(move || {
            // A child that dies early closes the pipe: the write error is not the failure to report.
            let _ = stdin.write_all(&bytes);
        })),
        _ => None,
    };
    let stdout = child
        .stdout
        .take()
        .map(|pipe| thread::spawn(move || read_bounded(pipe, MAX_OUTPUT)));
    let stderr = child.stderr.take().map(|pipe| thread::spawn(move || read_bounded(pipe, 64 * 1024)));

    let remaining = timeout.saturating_sub(started.elapsed());
    let status = match child.wait_timeout(remaining) {
        Ok(Some(status)) => status,
        // The pipe threads are left to end on their own: they finish when the pipes close, and joining them
        // could wait on a process the kill did not reach.
        Ok(None) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(OcrError::Timeout(timeout));
        }
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(OcrError::Failed(format!("waiting for tesseract failed: {e}")));
        }
    };
    if let Some(w) = writer {
        let _ = w.join();
    }
    let (stdout, out_overflow) = joined(stdout);
    let (stderr, _) = joined(stderr);
    if out_overflow {
        return Err(OcrError::Failed(format!("tesseract wrote more than {MAX_OUTPUT} bytes")));
    }
    Ok(Output {
        success: status.success(),
        status: status.to_string(),
        stdout,
        stderr,
    })
}

type Reader = Option<thread::JoinHandle<(Vec<u8>, bool)>>;

fn joined(reader: Reader) -> (Vec<u8>, bool) {
    reader.and_then(|h| h.join().ok()).unwrap_or_default()
}

/// Reads up to `limit` bytes, then drains the rest so the child is not blocked on a full pipe; the flag says the
/// limit was passed.
fn read_bounded(mut pipe: impl Read, limit: usize) -> (Vec<u8>, bool) {
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    let mut overflow = false;
    loop {
        match pipe.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = limit.saturating_sub(kept.len());
                if n > room {
                    overflow = true;
                }
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    (kept, overflow)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::orientation::Turn;
    use std::os::unix::fs::PermissionsExt;

    fn samples() -> PathBuf {
        let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/samples"));
        assert!(dir.is_dir(), "reference data missing at {}", dir.display());
        dir
    }

    fn tesseract() -> Ocr {
        let ocr = Ocr::new(OcrOptions::default());
        if let Err(e) = ocr.probe() {
            panic!("tesseract with fra is required for these tests (apt-get install tesseract-ocr tesseract-ocr-fra): {e}");
        }
        ocr
    }

    /// A shell script standing in for Tesseract, to test the failure paths.
    fn fake_program(name: &str, body: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("sceau-ocr-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    fn options(program: PathBuf, timeout: Duration) -> OcrOptions {
        OcrOptions {
            program,
            languages: "fra".into(),
            timeout,
        }
    }

    #[test]
    fn reads_the_photographed_attestation() {
        let ocr = tesseract();
        let image = image::open(samples().join("administratif/sample-domicile-v03-photo.jpg")).unwrap();
        let started = Instant::now();
        let text = ocr.image_text(&image).unwrap();
        eprintln!("OCR of the 1555x2072 photo took {:?}", started.elapsed());
        let folded = super::super::normalise::fold(&text);
        for expected in ["MONSIEUR NOE TESTE", "1 RUE DU PILOTE", "75011 PARIS", "ATTESTATION DE DOMICILE"] {
            assert!(folded.contains(expected), "{expected:?} not read");
        }
    }

    #[test]
    fn reads_a_turned_page_without_being_told_how() {
        let ocr = tesseract();
        let upright = image::open(samples().join("administratif/sample-domicile-v03-photo.jpg")).unwrap();
        for turn in [Turn::Quarter, Turn::Half, Turn::ThreeQuarters] {
            let folded = super::super::normalise::fold(&ocr.image_text_any_turn(&turn.apply(&upright)).unwrap());
            for expected in ["MONSIEUR NOE TESTE", "75011 PARIS", "ATTESTATION DE DOMICILE"] {
                assert!(folded.contains(expected), "{turn:?}: {expected:?} not read");
            }
        }
    }

    #[test]
    fn scales_down_huge_images() {
        let image = DynamicImage::new_rgb8(MAX_SIDE * 2, 10);
        let png = encode_png(&image, Size::ForItsLetters).unwrap();
        let back = image::load_from_memory(&png).unwrap();
        assert_eq!(back.dimensions().0, MAX_SIDE);
        assert!(encode_png(&DynamicImage::new_rgb8(0, 0), Size::AsGiven).is_err());
    }

    #[test]
    fn a_missing_program_or_language_is_unavailable() {
        let missing = Ocr::new(options(PathBuf::from("/nonexistent/tesseract"), Duration::from_secs(5)));
        assert!(matches!(missing.probe(), Err(OcrError::Unavailable(_))));
        let image = DynamicImage::new_luma8(10, 10);
        assert!(matches!(missing.image_text(&image), Err(OcrError::Unavailable(_))));

        let _ = tesseract();
        let opts = OcrOptions {
            languages: "fra+xyz".into(),
            ..OcrOptions::default()
        };
        match Ocr::new(opts).probe() {
            Err(OcrError::Unavailable(m)) => assert!(m.contains("xyz"), "{m}"),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn a_stuck_run_is_killed() {
        let script = "case \"$1\" in --version) echo 'tesseract 5.3.0';; --list-langs) printf 'List of available languages in \"/x\" (2):\\neng\\nfra\\n';; *) cat >/dev/null; exec sleep 30;; esac";
        let ocr = Ocr::new(options(fake_program("slow", script), Duration::from_millis(500)));
        ocr.probe().unwrap();
        let started = Instant::now();
        let result = ocr.image_text(&DynamicImage::new_luma8(10, 10));
        assert_eq!(result, Err(OcrError::Timeout(Duration::from_millis(500))));
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn failures_and_floods_are_errors() {
        let probe = "case \"$1\" in --version) echo v;; --list-langs) printf 'List of available languages (2):\\neng\\nfra\\n';; *) ";
        let failing = Ocr::new(options(
            fake_program("fail", &format!("{probe} cat >/dev/null; exit 3;; esac")),
            Duration::from_secs(10),
        ));
        assert!(matches!(
            failing.image_text(&DynamicImage::new_luma8(10, 10)),
            Err(OcrError::Failed(_))
        ));
        let flood = format!("{probe} cat >/dev/null; head -c 3000000 /dev/zero;; esac");
        let flooding = Ocr::new(options(fake_program("flood", &flood), Duration::from_secs(20)));
        assert!(matches!(
            flooding.image_text(&DynamicImage::new_luma8(10, 10)),
            Err(OcrError::Failed(_))
        ));
        let no_fra = "case \"$1\" in --version) echo v;; --list-langs) printf 'List of available languages (1):\\neng\\n';; esac";
        let without = Ocr::new(options(fake_program("nofra", no_fra), Duration::from_secs(10)));
        assert!(matches!(without.probe(), Err(OcrError::Unavailable(_))));
    }
}
