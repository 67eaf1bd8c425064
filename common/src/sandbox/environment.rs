//! The environment a child starts with: an allow-list, not the service's environment less a few
//! secrets. A parser that went wrong can read its own environment, and the service's holds the
//! broker's and Redis's passwords, the object store's keys, the engine's token; a variable added
//! to the service tomorrow must not reach a child unless it is named here.

use std::ffi::OsString;

/// Variables passed on as the service has them: where programs are, the locale Tesseract and
/// poppler read, the time zone, Tesseract's models, and the log filter of the child's own lines.
const PASSED: &[&str] = &["PATH", "LANG", "LANGUAGE", "TZ", "TESSDATA_PREFIX", "RUST_LOG", "RUST_BACKTRACE"];
/// Prefixes of variables passed on: the locale's categories.
const PASSED_PREFIXES: &[&str] = &["LC_"];

/// Test-only: when the service has this variable, its children accept the task that tries to
/// leave the sandbox (see [`super::escape`]). No client can set a service's environment.
pub const ESCAPE_HOOK: &str = "SCEAU_TEST_SANDBOX_ESCAPE";

/// Whether a variable of the service's environment is passed to its children.
fn passed(name: &str) -> bool {
    PASSED.contains(&name) || name == ESCAPE_HOOK || PASSED_PREFIXES.iter().any(|prefix| name.starts_with(prefix))
}

/// The variables of `environment` a child gets.
pub fn allowed(environment: impl IntoIterator<Item = (OsString, OsString)>) -> Vec<(OsString, OsString)> {
    environment
        .into_iter()
        .filter(|(name, _)| name.to_str().is_some_and(passed))
        .collect()
}

/// Fewer malloc arenas than one per thread: each reserves address space the child's limit counts.
pub const MALLOC_ARENAS: (&str, &str) = ("MALLOC_ARENA_MAX", "2");

/// The service's own allocator (mimalloc) reserves its arenas 1 GiB at a time by default, before
/// the child sets its address-space limit: a page-count child (1 GiB) then started above its limit,
/// so its next mapping, even its stack growing, failed, and a release build died of SIGSEGV on the
/// first large stack frame (inflating a PDF stream). Reserved 64 MiB at a time, the limit bounds
/// what the child really uses.
pub const MIMALLOC_ARENA_RESERVE: (&str, &str) = ("MIMALLOC_ARENA_RESERVE", "64MiB");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_named_variables_pass() {
        let service = [
            ("PATH", "/usr/bin"),
            ("LC_ALL", "C.UTF-8"),
            ("TESSDATA_PREFIX", "/usr/share/tesseract-ocr/5/tessdata"),
            ("SCEAU_AMQP_URL", "amqp://guest:secret@mq/"),
            ("SCEAU_EXTERNAL_ENGINE_TOKEN", "tok"),
            ("SCEAU_MASTER_KEY_FILE", "/run/secrets/key"),
            ("AWS_SECRET_ACCESS_KEY", "k"),
            ("HOME", "/root"),
            ("SCEAU_DATA_DIR", "/var/lib/sceau"),
        ]
        .map(|(name, value)| (OsString::from(name), OsString::from(value)));
        let names: Vec<OsString> = allowed(service).into_iter().map(|(name, _)| name).collect();
        assert_eq!(names, ["PATH", "LC_ALL", "TESSDATA_PREFIX"]);
    }
}
