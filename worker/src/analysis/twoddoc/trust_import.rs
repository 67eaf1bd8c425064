//! `sceau admin trust import FILE`: a newer ANTS trust list replaces the one in use without a rebuild, once
//! its XAdES signature verifies (with Debian's `xmlsec1`) and it is not older than the list in use. The list
//! is written under the data directory (0600, atomically), where every worker reads it at start.
//!
//! Which signatures are accepted: one chaining to the ANTS signer root shipped in the binary
//! (`ants-tsl-signer-root.cer`), through the intermediate certificates the file carries or the operator
//! gives; or, as the shipped list is signed, by the very certificate that signed the shipped list. The
//! second rule exists because the ANTS list carries only its signing certificate, whose issuer (the ANTS
//! "Services Applicatifs" authority) is neither in the list nor shipped: without it no chain can be built.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::capabilities::{Program, ProgramCheck, TrustListOrigin, TrustListSummary};
use thiserror::Error;

use super::embedded;
use super::trust::{TrustOptions, TrustStore};
use super::trust_list::{self, TrustList, TrustListError};

/// The ANTS root the trust list's signing certificate must chain to.
const SIGNER_ROOT: &[u8] = include_bytes!("../../../data/2ddoc/ants-tsl-signer-root.cer");
const DSIG_NAMESPACE: &str = "http://www.w3.org/2000/09/xmldsig#";
/// The XAdES signed properties are referenced by their `Id`, which xmlsec1 must be told to index.
const XADES_ID_ATTR: &str = "http://uri.etsi.org/01903/v1.3.2#:SignedProperties";
/// Largest list accepted; the ANTS list is about 40 kB.
const MAX_SIZE: u64 = 16 << 20;

/// How the import runs.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// The xmlsec1 executable, looked up in `PATH` when it has no directory.
    pub xmlsec1: PathBuf,
    /// Intermediate certificates (DER or PEM) between the signing certificate and the ANTS root.
    pub intermediates: Vec<PathBuf>,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            xmlsec1: PathBuf::from("xmlsec1"),
            intermediates: Vec::new(),
        }
    }
}

/// Why a list was refused; nothing in use changed.
#[derive(Debug, Error)]
pub enum ImportError {
    #[error("{path} cannot be read: {reason}")]
    Read { path: PathBuf, reason: String },
    #[error("not an ANTS trust list: {0}")]
    NotATrustList(String),
    #[error("the trust list in use cannot be read: {0}")]
    InUse(TrustListError),
    #[error(
        "refused: this list (sequence {}, issued {}) is older than the one in use (sequence {}, issued {})",
        candidate.sequence, candidate.issued.format("%Y-%m-%d %H:%M:%S UTC"), current.sequence, current.issued.format("%Y-%m-%d %H:%M:%S UTC")
    )]
    Older {
        candidate: TrustListSummary,
        current: TrustListSummary,
    },
    #[error("xmlsec1 is needed to check the list's signature and cannot run ({0}); install it: apt-get install xmlsec1")]
    Xmlsec1Missing(String),
    #[error("refused: the list's XML signature does not verify against the ANTS signer root ({0})")]
    BadSignature(String),
    #[error("the list cannot be written to {path}: {reason}")]
    Write { path: PathBuf, reason: String },
}

/// How the accepted list's signature was trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SignerTrust {
    /// Its signing certificate chains to the shipped ANTS root.
    ChainToRoot,
    /// It is signed by the certificate that signed the shipped list.
    ShippedSigner,
}

/// An accepted import.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Imported {
    pub trust_list: TrustListSummary,
    pub replaced: TrustListSummary,
    pub signer: SignerTrust,
    pub path: PathBuf,
}

/// Checks `file` and makes it the list in use under `data_dir`.
pub fn import(data_dir: &Path, file: &Path, options: &ImportOptions) -> Result<Imported, ImportError> {
    let xml = read_list(file)?;
    let summary = trust_list::summary(&xml, TrustListOrigin::Imported).map_err(|e| ImportError::NotATrustList(e.to_string()))?;
    let key_info = key_info_certificates(&xml).map_err(ImportError::NotATrustList)?;
    let candidate = TrustList {
        xml: xml.clone().into(),
        summary: summary.clone(),
    };
    TrustStore::build_with_list(&TrustOptions::default(), &candidate).map_err(|e| ImportError::NotATrustList(e.to_string()))?;
    let current = trust_list::in_use(Some(data_dir)).map_err(ImportError::InUse)?.summary;
    if trust_list::is_older(&summary, &current) {
        return Err(ImportError::Older {
            candidate: summary,
            current,
        });
    }
    let target = trust_list::imported_path(data_dir);
    let dir = target.parent().map(Path::to_path_buf).unwrap_or_else(|| data_dir.to_path_buf());
    let write_error = |e: std::io::Error| ImportError::Write {
        path: target.clone(),
        reason: e.to_string(),
    };
    common::private_fs::create_dir(&dir).map_err(write_error)?;
    // The bytes checked are the bytes kept: the signature is verified on the staged copy, then it is renamed.
    let staged = dir.join(format!(".ants-tsl.xml.{}.staged", std::process::id()));
    write_private(&staged, xml.as_bytes()).map_err(write_error)?;
    let verified = verify_signature(&dir, &staged, &key_info, options);
    let renamed = verified.and_then(|signer| {
        std::fs::rename(&staged, &target).map_err(write_error)?;
        sync_dir(&dir).map_err(write_error)?;
        Ok(signer)
    });
    if renamed.is_err() {
        let _ = std::fs::remove_file(&staged);
    }
    Ok(Imported {
        trust_list: summary,
        replaced: current,
        signer: renamed?,
        path: target,
    })
}

/// Whether xmlsec1 runs, for `sceau doctor` and `/readyz`.
pub fn probe_xmlsec1(program: &Path) -> ProgramCheck {
    let (available, detail) = match Command::new(program).arg("--version").output() {
        Ok(out) if out.status.success() => (true, String::from_utf8_lossy(&out.stdout).trim().to_string()),
        Ok(out) => (false, format!("`{} --version` exited with {}", program.display(), out.status)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (false, format!("the program {} was not found", program.display())),
        Err(e) => (false, format!("{} cannot run: {e}", program.display())),
    };
    ProgramCheck {
        program: Program::Xmlsec1,
        available,
        detail,
    }
}

fn read_list(file: &Path) -> Result<String, ImportError> {
    let read_error = |reason: String| ImportError::Read {
        path: file.to_path_buf(),
        reason,
    };
    let size = std::fs::metadata(file).map_err(|e| read_error(e.to_string()))?.len();
    if size > MAX_SIZE {
        return Err(read_error(format!("{size} bytes, more than a trust list ({MAX_SIZE} at most)")));
    }
    let bytes = std::fs::read(file).map_err(|e| read_error(e.to_string()))?;
    String::from_utf8(bytes).map_err(|_| ImportError::NotATrustList("not UTF-8 text".into()))
}

/// The DER of the certificates in the signature's `KeyInfo` (the signing certificate, perhaps with its
/// issuers), after checking the signature's place: the signed reference subtracts every `ds:Signature`
/// from the digest, so content hidden inside one would be read by the trust store yet never be signed.
/// One signature, a child of the root, holding nothing of the trust list's vocabulary.
fn key_info_certificates(xml: &str) -> Result<Vec<Vec<u8>>, String> {
    let doc = roxmltree::Document::parse(xml).map_err(|e| e.to_string())?;
    let signatures: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name((DSIG_NAMESPACE, "Signature")))
        .collect();
    let [signature] = signatures.as_slice() else {
        return Err(format!("{} XML signatures, one expected", signatures.len()));
    };
    if signature.parent_element() != Some(doc.root_element()) {
        return Err("its XML signature is not a child of the list's root".into());
    }
    if signature
        .descendants()
        .any(|n| n.tag_name().namespace() == doc.root_element().tag_name().namespace())
    {
        return Err("its XML signature holds trust list elements".into());
    }
    let certificates = signature
        .children()
        .filter(|n| n.has_tag_name((DSIG_NAMESPACE, "KeyInfo")))
        .flat_map(|k| k.descendants())
        .filter(|n| n.has_tag_name((DSIG_NAMESPACE, "X509Certificate")))
        .map(|n| {
            let compact: String = n.text().unwrap_or_default().chars().filter(|c| !c.is_ascii_whitespace()).collect();
            data_encoding::BASE64
                .decode(compact.as_bytes())
                .map_err(|e| format!("a certificate of its signature is not base64: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if certificates.is_empty() {
        return Err("its signature's KeyInfo holds no certificate".into());
    }
    Ok(certificates)
}

/// Runs xmlsec1 on the staged list: first against the ANTS root, then, for the certificate that signed the
/// shipped list, on that certificate alone (see the module documentation).
fn verify_signature(dir: &Path, staged: &Path, key_info: &[Vec<u8>], options: &ImportOptions) -> Result<SignerTrust, ImportError> {
    verify_with_root(SIGNER_ROOT, dir, staged, key_info, options)
}

fn verify_with_root(
    root_der: &[u8],
    dir: &Path,
    staged: &Path,
    key_info: &[Vec<u8>],
    options: &ImportOptions,
) -> Result<SignerTrust, ImportError> {
    let root = dir.join(".ants-tsl-signer-root.der");
    write_private(&root, root_der).map_err(|e| ImportError::Write {
        path: root.clone(),
        reason: e.to_string(),
    })?;
    let mut chain: Vec<OsString> = vec!["--trusted-der".into(), root.clone().into()];
    for intermediate in &options.intermediates {
        let flag = if is_pem(intermediate) {
            "--untrusted-pem"
        } else {
            "--untrusted-der"
        };
        chain.push(flag.into());
        chain.push(intermediate.clone().into());
    }
    let to_root = xmlsec1_verify(&options.xmlsec1, &chain, staged);
    let _ = std::fs::remove_file(&root);
    let why = match to_root? {
        Ok(()) => return Ok(SignerTrust::ChainToRoot),
        Err(why) => why,
    };
    // Only when KeyInfo holds that one certificate alone is it the key xmlsec1 verifies with below.
    if key_info_certificates(embedded::TSL_XML).ok().as_deref() != Some(key_info) {
        return Err(ImportError::BadSignature(format!(
            "{why}; if a new ANTS certificate signed it, give its issuing authority's certificate with --intermediate"
        )));
    }
    let insecure: Vec<OsString> = vec!["--insecure".into()];
    match xmlsec1_verify(&options.xmlsec1, &insecure, staged)? {
        Ok(()) => Ok(SignerTrust::ShippedSigner),
        Err(why) => Err(ImportError::BadSignature(why)),
    }
}

/// `Ok(Err(why))` when xmlsec1 ran and refused the signature.
fn xmlsec1_verify(program: &Path, key_args: &[OsString], file: &Path) -> Result<Result<(), String>, ImportError> {
    let output = Command::new(program)
        .arg("--verify")
        .arg("--enabled-key-data")
        .arg("x509")
        .arg("--id-attr:Id")
        .arg(XADES_ID_ATTR)
        .args(key_args)
        .arg(file)
        .output()
        .map_err(|e| ImportError::Xmlsec1Missing(format!("{}: {e}", program.display())))?;
    if output.status.success() {
        return Ok(Ok(()));
    }
    Ok(Err(xmlsec1_reason(&String::from_utf8_lossy(&output.stderr))))
}

/// The telling part of xmlsec1's error output: the certificate error, else the references count.
fn xmlsec1_reason(stderr: &str) -> String {
    if let Some(msg) = stderr.lines().find_map(|l| l.split_once("msg=").map(|(_, m)| m.trim().to_string())) {
        return format!("certificate: {msg}");
    }
    if let Some(line) = stderr.lines().find(|l| l.starts_with("SignedInfo References")) {
        return format!("digest mismatch, {}", line.trim());
    }
    stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("xmlsec1 refused it")
        .trim()
        .to_string()
}

fn is_pem(path: &Path) -> bool {
    std::fs::read(path).is_ok_and(|b| b.starts_with(b"-----BEGIN"))
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = common::private_fs::file_options().open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data_dir(label: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("sceau-trust-import-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn the_shipped_list_has_one_signature_at_the_root() {
        let certs = key_info_certificates(embedded::TSL_XML).unwrap();
        assert!(certs.len() == 1 && certs[0].len() > 500, "one DER certificate");
    }

    #[test]
    fn content_hidden_in_a_second_signature_is_refused() {
        let hidden = embedded::TSL_XML.replacen(
            "</tsl:TrustServiceProviderList>",
            "</tsl:TrustServiceProviderList><ds:Signature><tsl:TrustServiceProvider/></ds:Signature>",
            1,
        );
        assert!(key_info_certificates(&hidden).unwrap_err().contains("2 XML signatures"));
    }

    #[test]
    fn the_shipped_list_imports_and_a_tampered_one_does_not() {
        let dir = data_dir("unit");
        let file = dir.join("candidate.xml");
        std::fs::write(&file, embedded::TSL_XML).unwrap();
        let imported = import(&dir, &file, &ImportOptions::default()).expect("the shipped list is accepted");
        assert_eq!(imported.signer, SignerTrust::ShippedSigner);
        let written = std::fs::metadata(trust_list::imported_path(&dir)).unwrap();
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(written.permissions().mode() & 0o777, 0o600);

        let tampered = embedded::TSL_XML.replacen("2026-05-11T14:00:00Z", "2026-05-11T14:00:01Z", 1);
        std::fs::write(&file, tampered).unwrap();
        match import(&dir, &file, &ImportOptions::default()) {
            Err(ImportError::BadSignature(why)) => assert!(why.contains("digest"), "{why}"),
            other => panic!("a tampered list must be refused: {other:?}"),
        }
        let left: Vec<_> = std::fs::read_dir(dir.join("trust"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from("ants-tsl.xml")], "no staged file left");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A root, an intermediate and a signer made with the openssl command, and a document xmlsec1 signs
    /// with the signer: the chain rule, which the ANTS list cannot exercise (its intermediate is not shipped).
    #[test]
    fn a_signature_chaining_to_the_root_needs_its_intermediate() {
        let dir = data_dir("chain");
        let sh = |script: &str| {
            let out = Command::new("sh").arg("-c").arg(script).current_dir(&dir).output().unwrap();
            assert!(out.status.success(), "{script}: {}", String::from_utf8_lossy(&out.stderr));
        };
        sh("openssl req -x509 -newkey rsa:2048 -nodes -keyout root.key -out root.pem -days 30 -subj /CN=Root             -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign");
        sh("printf 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign\n' > ca.ext &&             openssl req -newkey rsa:2048 -nodes -keyout inter.key -out inter.csr -subj /CN=Inter &&             openssl x509 -req -in inter.csr -CA root.pem -CAkey root.key -CAcreateserial -out inter.pem -days 30 -extfile ca.ext");
        sh("printf 'keyUsage=critical,digitalSignature\n' > ee.ext &&             openssl req -newkey rsa:2048 -nodes -keyout signer.key -out signer.csr -subj /CN=Signer &&             openssl x509 -req -in signer.csr -CA inter.pem -CAkey inter.key -CAcreateserial -out signer.pem -days 30 -extfile ee.ext");
        sh("openssl x509 -in root.pem -outform DER -out root.der && openssl x509 -in signer.pem -outform DER -out signer.der");
        let template = r#"<doc><data>list</data><ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:SignedInfo><ds:CanonicalizationMethod Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/><ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/><ds:Reference URI=""><ds:Transforms><ds:Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/></ds:Transforms><ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/><ds:DigestValue/></ds:Reference></ds:SignedInfo><ds:SignatureValue/><ds:KeyInfo><ds:X509Data/></ds:KeyInfo></ds:Signature></doc>"#;
        std::fs::write(dir.join("template.xml"), template).unwrap();
        sh("xmlsec1 --sign --privkey-pem signer.key,signer.pem --output signed.xml template.xml");
        let root = std::fs::read(dir.join("root.der")).unwrap();
        let signer = vec![std::fs::read(dir.join("signer.der")).unwrap()];
        let signed = dir.join("signed.xml");

        let alone = verify_with_root(&root, &dir, &signed, &signer, &ImportOptions::default());
        match alone {
            Err(ImportError::BadSignature(why)) => assert!(why.contains("--intermediate"), "{why}"),
            other => panic!("no chain without the intermediate: {other:?}"),
        }
        let with_intermediate = ImportOptions {
            intermediates: vec![dir.join("inter.pem")],
            ..ImportOptions::default()
        };
        let chained = verify_with_root(&root, &dir, &signed, &signer, &with_intermediate).expect("chains to the root");
        assert_eq!(chained, SignerTrust::ChainToRoot);
        // The same signature against another root (the shipped ANTS one) is refused.
        assert!(matches!(
            verify_with_root(SIGNER_ROOT, &dir, &signed, &signer, &with_intermediate),
            Err(ImportError::BadSignature(_))
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn without_xmlsec1_the_import_says_how_to_install_it() {
        let dir = data_dir("noxmlsec");
        let file = dir.join("candidate.xml");
        std::fs::write(&file, embedded::TSL_XML).unwrap();
        let options = ImportOptions {
            xmlsec1: "/nonexistent/xmlsec1".into(),
            ..ImportOptions::default()
        };
        let error = import(&dir, &file, &options).unwrap_err();
        assert!(error.to_string().contains("apt-get install xmlsec1"), "{error}");
        assert!(!trust_list::imported_path(&dir).exists());
        assert!(!probe_xmlsec1(Path::new("/nonexistent/xmlsec1")).available);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
