//! Rasterisation of a PDF's first page with poppler's `pdftoppm`, run as a child process: many 2D-Doc PDFs
//! (energy bills, tax notices) draw the DataMatrix with vector paths, which only a renderer turns into pixels
//! the image search can read. A subprocess keeps poppler's C++ out of the worker's memory and lets a stuck
//! render be killed.
//!
//! Every run is bounded: the page is rendered at most [`MAX_SIDE`] pixels on its longest side (enforced by
//! pdftoppm itself), the child is killed after [`RenderOptions::timeout`], and the image read back is decoded
//! within limits. The PDF and the image live in a private directory (mode 0700) that is removed afterwards,
//! whatever happened. Nothing pdftoppm prints is kept or logged: errors name exit codes only.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{BufReader, ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use image::{DynamicImage, ImageFormat, ImageReader};
use ring::rand::{SecureRandom, SystemRandom};
use wait_timeout::ChildExt;

/// Longest side, in pixels, of a rendered page. The DataMatrix search works on images of at most this side
/// (`decode::MAX_SIDE`, larger ones are scaled down first), so rendering more pixels would only cost time and
/// memory. An A4 or Letter page at the default 200 dpi (about 1650×2340) is rendered at the requested dpi.
pub const MAX_SIDE: u32 = 3000;
/// Largest image file accepted back from pdftoppm: an uncompressed [`MAX_SIDE`]² page, even if written in
/// RGB rather than grey, plus room for the TIFF headers.
const MAX_OUTPUT_BYTES: u64 = 3 * (MAX_SIDE as u64) * (MAX_SIDE as u64) + (1 << 20);

/// Programs found missing (or not executable), so a machine without poppler-utils pays for one failed
/// launch, not one per seal-less PDF. Installing poppler-utils takes effect at the next start.
static MISSING: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

/// How pdftoppm is run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderOptions {
    /// The pdftoppm executable, looked up in `PATH` when it has no directory.
    pub program: PathBuf,
    /// Rendering resolution. At 200 dpi a 0.4 mm module spans three pixels (symbols with modules down to
    /// 0.28 mm still decode); a page too large for [`MAX_SIDE`] at this resolution is rendered at a lower one.
    pub dpi: u32,
    /// Wall time allowed to one render before the child is killed.
    pub timeout: Duration,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            program: PathBuf::from("pdftoppm"),
            dpi: 200,
            timeout: Duration::from_secs(20),
        }
    }
}

/// Why a page was not rendered. Messages name neither the document nor anything read from it.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The program is missing or does not run: rendering is off on this machine until poppler-utils is
    /// installed.
    #[error("PDF rendering unavailable: {0}")]
    Unavailable(String),
    #[error("PDF rendering did not finish in time")]
    Timeout,
    #[error("PDF rendering failed: {0}")]
    Failed(String),
    /// pdftoppm ran but its image could not be read back.
    #[error("the rendered page could not be read: {0}")]
    Image(String),
}

/// The first page of the PDF `bytes`, rendered in grey at `options.dpi` (lower for a page over [`MAX_SIDE`]).
/// For the tests: the service renders through [`render_with_page_size`] with the size its one parse read.
#[cfg(test)]
pub fn render_first_page(bytes: &[u8], options: &RenderOptions) -> Result<DynamicImage, RenderError> {
    render_with_page_size(bytes, super::pdf::first_page_size(bytes), options)
}

/// Checks that the program runs (`pdftoppm -v`), to report a missing install before any document needs it.
pub fn probe(options: &RenderOptions) -> Result<(), RenderError> {
    let status = run(&options.program, &[OsString::from("-v")], options.timeout)?;
    if status.success() {
        Ok(())
    } else {
        Err(RenderError::Unavailable(format!(
            "`{} -v` exited with {status}",
            options.program.display()
        )))
    }
}

/// The first page of the PDF `bytes`, whose MediaBox (width, height in points) is already known, rendered in
/// grey at `options.dpi` (lower for a page over [`MAX_SIDE`]); with `None`, pdftoppm scales the page to
/// [`MAX_SIDE`]. Blocking: call it from a blocking thread.
pub(super) fn render_with_page_size(
    bytes: &[u8],
    page_size: Option<(f64, f64)>,
    options: &RenderOptions,
) -> Result<DynamicImage, RenderError> {
    render_in(&std::env::temp_dir(), bytes, page_size, options)
}

fn render_in(root: &Path, bytes: &[u8], page_size: Option<(f64, f64)>, options: &RenderOptions) -> Result<DynamicImage, RenderError> {
    if let Some(missing) = known_missing(&options.program) {
        return Err(missing);
    }
    if options.dpi == 0 {
        return Err(RenderError::Failed("the resolution must be positive".into()));
    }
    let started = Instant::now();
    let dir = PrivateDir::create(root)?;
    let input = dir.path.join("page.pdf");
    let prefix = dir.path.join("page");
    write_private(&input, bytes)?;

    let mut args: Vec<OsString> = ["-q", "-f", "1", "-l", "1"].map(OsString::from).to_vec();
    match resolution(page_size, options.dpi) {
        Some(dpi) => args.extend(["-r".into(), format!("{dpi:.3}").into()]),
        // Page size unknown (lopdf could not read it): let pdftoppm fit the page into the bound itself.
        None => args.extend(["-scale-to".into(), MAX_SIDE.to_string().into()]),
    }
    // The crop box is the hard bound, enforced by the renderer: lopdf and poppler may read a malformed file
    // differently, and poppler allocates only the cropped area. It does not cut a page sized as computed above.
    let side = OsString::from(MAX_SIDE.to_string());
    args.extend(["-W".into(), side.clone(), "-H".into(), side]);
    // Uncompressed grey TIFF: PNG output is RGB whatever `-gray` says (poppler 22) and its compression costs
    // ten times the rendering itself (0.4 s against 0.04 s for an A4 page).
    args.extend(["-gray", "-tiff", "-tiffcompression", "none", "-singlefile"].map(OsString::from));
    args.extend([input.into_os_string(), prefix.into_os_string()]);

    let remaining = options.timeout.saturating_sub(started.elapsed());
    let status = run(&options.program, &args, remaining)?;
    if !status.success() {
        return Err(RenderError::Failed(format!(
            "pdftoppm exited with {status}{}",
            exit_meaning(status)
        )));
    }
    read_image(&dir.path.join("page.tif"))
    // `dir` is dropped here, or at any `?` above: the directory goes with it.
}

/// The resolution that renders a `page_size` page (in points) at `dpi`, or less when its longest side would
/// exceed [`MAX_SIDE`]; `None` when the size is unknown or absurd.
fn resolution(page_size: Option<(f64, f64)>, dpi: u32) -> Option<f64> {
    let (w, h) = page_size?;
    // Both checked: `f64::max` would pass over a NaN.
    let longest = w.max(h);
    if !(w.is_finite() && h.is_finite()) || longest <= 0.0 {
        return None;
    }
    let fitting = f64::from(MAX_SIDE) * 72.0 / longest;
    // Rounded down to the 1/1000 dpi printed on the command line, so the page never exceeds the bound.
    let dpi = f64::from(dpi).min((fitting * 1000.0).floor() / 1000.0);
    (dpi >= 0.001).then_some(dpi)
}

/// pdftoppm's documented exit codes, in words.
fn exit_meaning(status: ExitStatus) -> &'static str {
    match status.code() {
        Some(1) => " (the PDF could not be opened)",
        Some(2) => " (the image could not be written)",
        Some(3) => " (PDF permissions)",
        Some(99) => " (other error)",
        _ => "",
    }
}

/// The error for a program an earlier launch found missing, if it was.
fn known_missing(program: &Path) -> Option<RenderError> {
    let missing = MISSING.lock().unwrap_or_else(PoisonError::into_inner);
    missing.contains(program).then(|| {
        RenderError::Unavailable(format!(
            "{} could not be run at an earlier attempt; scripts/system-deps installs poppler-utils",
            program.display()
        ))
    })
}

/// Runs the program with no input and its output discarded (it may quote the document), killing it when
/// `timeout` passes.
fn run(program: &Path, args: &[OsString], timeout: Duration) -> Result<ExitStatus, RenderError> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| match e.kind() {
            ErrorKind::NotFound | ErrorKind::PermissionDenied => {
                MISSING.lock().unwrap_or_else(PoisonError::into_inner).insert(program.to_path_buf());
                RenderError::Unavailable(format!(
                    "{} could not be run ({e}); scripts/system-deps installs poppler-utils",
                    program.display()
                ))
            }
            _ => RenderError::Failed(format!("pdftoppm could not be started: {e}")),
        })?;
    match child.wait_timeout(timeout) {
        Ok(Some(status)) => Ok(status),
        Ok(None) => {
            let _ = child.kill();
            let _ = child.wait();
            Err(RenderError::Timeout)
        }
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            Err(RenderError::Failed(format!("waiting for pdftoppm failed: {e}")))
        }
    }
}

/// The page image pdftoppm wrote, decoded within limits that fit what it was asked for.
fn read_image(path: &Path) -> Result<DynamicImage, RenderError> {
    let file = File::open(path).map_err(|e| RenderError::Image(format!("pdftoppm wrote no image: {}", e.kind())))?;
    let len = file.metadata().map_err(|e| RenderError::Image(e.kind().to_string()))?.len();
    if len > MAX_OUTPUT_BYTES {
        return Err(RenderError::Image(format!(
            "the image file is larger than {MAX_OUTPUT_BYTES} bytes"
        )));
    }
    let mut reader = ImageReader::with_format(BufReader::new(file), ImageFormat::Tiff);
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(MAX_OUTPUT_BYTES);
    reader.limits(limits);
    reader.decode().map_err(|e| RenderError::Image(e.to_string()))
}

/// Writes the document readable by its owner only, refusing to follow or reuse an existing file.
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), RenderError> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
        .open(path)
        .and_then(|mut f| f.write_all(bytes))
        .map_err(|e| RenderError::Failed(format!("the PDF could not be written to the temporary directory: {e}")))
}

/// A fresh directory only the worker's user can enter, removed with everything in it when dropped (on every
/// return path, panics included), so no document outlives its render.
struct PrivateDir {
    path: PathBuf,
}

impl PrivateDir {
    fn create(root: &Path) -> Result<PrivateDir, RenderError> {
        let failed = |what: String| RenderError::Failed(format!("the temporary directory could not be created: {what}"));
        // An absolute path keeps pdftoppm from reading a relative root starting with `-` as an option.
        let root = std::path::absolute(root).map_err(|e| failed(e.to_string()))?;
        let random = SystemRandom::new();
        // A random name, created exclusively: nobody can predict it to plant a file or a link first.
        for _ in 0..4 {
            let mut raw = [0u8; 16];
            random.fill(&mut raw).map_err(|_| failed("no randomness available".into()))?;
            let path = root.join(format!("sceau-render-{}", data_encoding::HEXLOWER.encode(&raw)));
            let mut builder = DirBuilder::new();
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            match builder.create(&path) {
                Ok(()) => return Ok(PrivateDir { path }),
                Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(failed(e.to_string())),
            }
        }
        Err(failed("every name tried exists".into()))
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.path) {
            tracing::warn!(error = %e, "a temporary render directory could not be removed");
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use lopdf::{dictionary, Document, Object, Stream};
    use rxing::{BarcodeFormat, Writer};
    use std::os::unix::fs::PermissionsExt;

    /// Fails the test unless pdftoppm runs: a machine without it would silently lose vector-drawn seals.
    pub(crate) fn require_pdftoppm() {
        if let Err(e) = probe(&RenderOptions::default()) {
            panic!("pdftoppm (poppler-utils) is required for these tests: run scripts/system-deps ({e})");
        }
    }

    /// A one-page PDF with `media_box` (points) whose content stream is `content`.
    pub(crate) fn pdf_with_content(media_box: (i64, i64), content: String) -> Vec<u8> {
        let mut doc = Document::with_version("1.5");
        let pages_id = doc.new_object_id();
        let content_id = doc.add_object(Stream::new(dictionary! {}, content.into_bytes()));
        let page_id = doc.add_object(dictionary! { "Type" => "Page", "Parent" => pages_id, "Contents" => content_id });
        doc.objects.insert(
            pages_id,
            Object::Dictionary(dictionary! {
                "Type" => "Pages", "Kids" => vec![page_id.into()], "Count" => 1,
                "MediaBox" => vec![0.into(), 0.into(), media_box.0.into(), media_box.1.into()],
            }),
        );
        let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
        doc.trailer.set("Root", catalog_id);
        let mut out = Vec::new();
        doc.save_to(&mut out).expect("save pdf");
        out
    }

    /// An A4 page drawing the DataMatrix of `payload` with one filled rectangle (`re f`) per dark module of
    /// `module` points, top left at (300, 780), as vector-drawing PDF generators do.
    pub(crate) fn vector_symbol_pdf(payload: &str, module: f64) -> Vec<u8> {
        let m = rxing::datamatrix::DataMatrixWriter
            .encode(payload, &BarcodeFormat::DATA_MATRIX, 0, 0)
            .expect("encode");
        let mut content = String::from("0 g\n");
        for y in 0..m.height() {
            for x in 0..m.width() {
                if m.get(x, y) {
                    let (px, py) = (300.0 + f64::from(x) * module, 780.0 - f64::from(y + 1) * module);
                    content.push_str(&format!("{px:.3} {py:.3} {module:.3} {module:.3} re f\n"));
                }
            }
        }
        pdf_with_content((595, 842), content)
    }

    /// A directory of the test's own under the system temporary directory, removed at the end.
    struct TestRoot(PathBuf);

    impl TestRoot {
        fn new(name: &str) -> TestRoot {
            let path = std::env::temp_dir().join(format!("sceau-render-test-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&path);
            std::fs::create_dir_all(&path).expect("test root");
            TestRoot(path)
        }

        fn entries(&self) -> usize {
            std::fs::read_dir(&self.0).expect("read test root").count()
        }
    }

    impl Drop for TestRoot {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn a4() -> Vec<u8> {
        pdf_with_content((595, 842), "0 g 100 100 200 200 re f".into())
    }

    #[test]
    fn renders_the_page_in_grey_at_the_requested_resolution() {
        require_pdftoppm();
        let root = TestRoot::new("a4");
        let img = render_in(&root.0, &a4(), Some((595.0, 842.0)), &RenderOptions::default()).expect("render");
        // 595×842 pt at 200 dpi, give or take pdftoppm's rounding.
        assert!(
            img.width().abs_diff(1653) <= 2 && img.height().abs_diff(2339) <= 2,
            "{}×{}",
            img.width(),
            img.height()
        );
        assert!(matches!(img, DynamicImage::ImageLuma8(_)), "{:?}", img.color());
        // The square drawn at (100, 100) pt is black in the raster, the corner white.
        let grey = img.to_luma8();
        let (x, y) = (200 * 200 / 72, (842 - 200) * 200 / 72);
        assert_eq!(grey.get_pixel(x, y).0[0], 0);
        assert_eq!(grey.get_pixel(5, 5).0[0], 255);
        assert_eq!(root.entries(), 0, "the private directory is removed");
        // The public entry point reads the page size itself.
        let img = render_first_page(&a4(), &RenderOptions::default()).expect("render");
        assert!(img.width().abs_diff(1653) <= 2, "{}", img.width());
    }

    #[test]
    fn large_or_unsized_pages_are_bounded() {
        require_pdftoppm();
        let poster = pdf_with_content((14400, 7200), "0 g 0 0 100 100 re f".into());
        let img = render_first_page(&poster, &RenderOptions::default()).expect("render");
        assert!(
            img.width() <= MAX_SIDE && img.width() >= MAX_SIDE - 2 && img.height() <= MAX_SIDE / 2 + 1,
            "{}×{}",
            img.width(),
            img.height()
        );
        // Size unknown: pdftoppm fits the page itself.
        let root = TestRoot::new("unsized");
        let img = render_in(&root.0, &a4(), None, &RenderOptions::default()).expect("render");
        assert_eq!(img.height(), MAX_SIDE);
        // Lied-about size (a parser differential): the crop box still bounds the raster.
        let img = render_in(&root.0, &poster, Some((595.0, 842.0)), &RenderOptions::default()).expect("render");
        assert!(
            img.width() <= MAX_SIDE && img.height() <= MAX_SIDE,
            "{}×{}",
            img.width(),
            img.height()
        );
        assert_eq!(root.entries(), 0);
    }

    #[test]
    fn resolution_fits_the_bound() {
        assert_eq!(resolution(Some((595.0, 842.0)), 200), Some(200.0));
        let dpi = resolution(Some((14400.0, 7200.0)), 200).expect("dpi");
        assert!(dpi <= 15.0 && 14400.0 * dpi / 72.0 <= f64::from(MAX_SIDE), "{dpi}");
        assert_eq!(resolution(None, 200), None);
        assert_eq!(resolution(Some((f64::NAN, 1.0)), 200), None);
        assert_eq!(resolution(Some((0.0, 0.0)), 200), None);
        assert_eq!(resolution(Some((1e300, 1.0)), 200), None);
    }

    #[test]
    fn garbage_is_an_error_and_leaves_nothing_behind() {
        require_pdftoppm();
        let root = TestRoot::new("garbage");
        let error = render_in(&root.0, b"not a pdf at all", None, &RenderOptions::default()).expect_err("garbage");
        assert!(
            matches!(error, RenderError::Failed(ref m) if m.contains("could not be opened")),
            "{error}"
        );
        assert_eq!(root.entries(), 0);
        assert!(render_first_page(b"", &RenderOptions::default()).is_err());
        let zero_dpi = RenderOptions {
            dpi: 0,
            ..RenderOptions::default()
        };
        assert!(matches!(render_first_page(&a4(), &zero_dpi), Err(RenderError::Failed(_))));
    }

    #[test]
    fn a_missing_program_is_unavailable() {
        let missing = RenderOptions {
            program: PathBuf::from("/nonexistent/pdftoppm"),
            ..RenderOptions::default()
        };
        assert!(matches!(probe(&missing), Err(RenderError::Unavailable(_))));
        assert!(known_missing(&missing.program).is_some(), "remembered: no launch per PDF");
        let root = TestRoot::new("missing");
        assert!(matches!(
            render_in(&root.0, &a4(), None, &missing),
            Err(RenderError::Unavailable(_))
        ));
        assert_eq!(root.entries(), 0);
    }

    #[test]
    fn a_render_past_its_time_is_killed() {
        require_pdftoppm();
        let root = TestRoot::new("timeout");
        // pdftoppm itself with 1 ms: killed, or done in time if the machine is that fast; never a panic.
        let hurried = RenderOptions {
            timeout: Duration::from_millis(1),
            ..RenderOptions::default()
        };
        match render_in(&root.0, &a4(), None, &hurried) {
            Err(RenderError::Timeout) | Ok(_) => {}
            Err(other) => panic!("unexpected {other}"),
        }
        assert_eq!(root.entries(), 0);

        // A program that hangs is killed at the deadline.
        let bin = TestRoot::new("timeout-bin");
        let script = bin.0.join("hang");
        std::fs::write(&script, "#!/bin/sh\nexec sleep 30\n").expect("script");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let hanging = RenderOptions {
            program: script,
            timeout: Duration::from_millis(300),
            ..RenderOptions::default()
        };
        let started = Instant::now();
        assert!(matches!(render_in(&root.0, &a4(), None, &hanging), Err(RenderError::Timeout)));
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
        assert_eq!(root.entries(), 0);
    }

    #[test]
    fn the_private_directory_is_owner_only_and_removed() {
        let root = TestRoot::new("private");
        let dir = PrivateDir::create(&root.0).expect("create");
        let mode = std::fs::metadata(&dir.path).expect("metadata").permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        write_private(&dir.path.join("page.pdf"), b"%PDF").expect("write");
        let file_mode = std::fs::metadata(dir.path.join("page.pdf")).expect("metadata").permissions().mode();
        assert_eq!(file_mode & 0o077, 0);
        assert!(
            write_private(&dir.path.join("page.pdf"), b"again").is_err(),
            "an existing file is not reused"
        );
        drop(dir);
        assert_eq!(root.entries(), 0);
    }

    #[test]
    fn an_image_that_is_not_a_tiff_is_an_image_error() {
        let root = TestRoot::new("image");
        let path = root.0.join("page.tif");
        std::fs::write(&path, b"II*\0garbage").expect("write");
        assert!(matches!(read_image(&path), Err(RenderError::Image(_))));
        assert!(matches!(read_image(&root.0.join("absent.tif")), Err(RenderError::Image(_))));
    }
}
