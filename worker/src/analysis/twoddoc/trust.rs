//! The trust store: which authorities and signer certificates a seal may be verified with. It is built once
//! at start from the ANTS trust list and the certificates shipped in the project, plus an operator directory
//! (`SCEAU_TRUST_DIR`) and the spec's test authority FR00 when the operator accepts it.
//!
//! Naming rule of the operator directory: files `*.der` or `*.pem` (DER or PEM content either way), named
//! `<CA>.der` for an authority's CA certificate (`FR03.der`) or `<CA>_<certificate id>.der` for a signer
//! certificate (`FR03_EDF0.der`; the id is 4 characters `[A-Z0-9]`, or 5 hex digits for binary headers). A
//! signer certificate is used only if its subject CN is its id and a CA certificate of its authority (trust
//! list or directory) signed it; a CA certificate of the directory makes its authority trusted, which is the
//! operator's decision. Files breaking these rules are skipped with a warning ([`TrustStore::warnings`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use ring::signature::{self, UnparsedPublicKey, VerificationAlgorithm};
use thiserror::Error;
use x509_parser::asn1_rs::Tag;
use x509_parser::certificate::X509Certificate;
use x509_parser::oid_registry::{
    Oid, OID_EC_P256, OID_KEY_TYPE_EC_PUBLIC_KEY, OID_NIST_EC_P384, OID_PKCS1_RSAENCRYPTION, OID_PKCS1_SHA1WITHRSA,
    OID_PKCS1_SHA256WITHRSA, OID_PKCS1_SHA384WITHRSA, OID_PKCS1_SHA512WITHRSA, OID_SIG_ECDSA_WITH_SHA256, OID_SIG_ECDSA_WITH_SHA384,
};
use x509_parser::prelude::FromDer;
use x509_parser::x509::SubjectPublicKeyInfo;

use super::embedded;
use super::trust_list::{self, TrustList};
use common::capabilities::TrustListSummary;

/// The test authority of the specification (§3.3: `XX00` identifiers are reserved for tests).
pub const TEST_AUTHORITY: &str = "FR00";
const TEST_CERTIFICATE_ID: &str = "0001";
/// Namespace of the trust list's elements (ETSI TS 102 231 v2).
const TSL_NAMESPACE: &str = "http://uri.etsi.org/02231/v2#";

/// What the operator configured.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustOptions {
    /// Trust the test authority FR00 (`SCEAU_ACCEPT_TEST_CA`), for acceptance tests and demonstrations.
    pub accept_test_ca: bool,
    /// More certificates (`SCEAU_TRUST_DIR`), named as the module documentation says.
    pub extra_dir: Option<PathBuf>,
}

impl From<&common::config::Config> for TrustOptions {
    fn from(config: &common::config::Config) -> Self {
        TrustOptions {
            accept_test_ca: config.accept_test_ca,
            extra_dir: config.trust_dir.clone(),
        }
    }
}

/// Why no trust store could be built. Single unusable certificates are warnings, not errors.
#[derive(Debug, Error)]
pub enum TrustError {
    #[error("the ANTS trust list cannot be read: {0}")]
    TrustList(String),
    #[error("the trust directory {path} cannot be read: {source}")]
    Directory { path: PathBuf, source: std::io::Error },
}

/// A public key as ring takes it: the raw point for ECDSA, the DER `RSAPublicKey` for RSA.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PublicKey {
    EcdsaP256(Vec<u8>),
    EcdsaP384(Vec<u8>),
    Rsa(Vec<u8>),
    /// A key this verifier cannot use, described.
    Unsupported(String),
}

impl PublicKey {
    pub fn bytes(&self) -> &[u8] {
        match self {
            PublicKey::EcdsaP256(b) | PublicKey::EcdsaP384(b) | PublicKey::Rsa(b) => b,
            PublicKey::Unsupported(_) => &[],
        }
    }
}

/// Where a certificate came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CertificateSource {
    TrustList,
    Embedded,
    Directory,
    TestAuthority,
}

/// A certificate that signs seals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignerCertificate {
    pub ca_id: String,
    pub cert_id: String,
    pub key: PublicKey,
    pub not_before: DateTime<Utc>,
    pub not_after: DateTime<Utc>,
    /// The spec's test authority: its period is not checked (see the signature module).
    pub test_authority: bool,
    pub source: CertificateSource,
}

/// An authority whose certificates are trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authority {
    pub id: String,
    pub name: String,
    /// The keys of its CA certificates, which must have signed its signer certificates.
    pub ca_keys: Vec<PublicKey>,
    pub source: CertificateSource,
}

/// What the store knows of a header's signer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CertificateLookup<'a> {
    UntrustedAuthority,
    UnknownCertificate,
    Found(&'a SignerCertificate),
}

/// Authorities and signer certificates; build it once and share it.
#[derive(Debug, Clone, Default)]
pub struct TrustStore {
    authorities: BTreeMap<String, Authority>,
    certificates: BTreeMap<(String, String), SignerCertificate>,
    warnings: Vec<String>,
    /// The identity of the trust list the authorities come from.
    list: Option<TrustListSummary>,
}

impl TrustStore {
    /// The store for `options`: the shipped trust list and certificates, then the operator's.
    pub fn build(options: &TrustOptions) -> Result<TrustStore, TrustError> {
        let shipped = trust_list::shipped().map_err(|e| TrustError::TrustList(e.to_string()))?;
        Self::build_with_list(options, &shipped)
    }

    /// The store for `options` on `list` (the list in use, see [`trust_list::in_use`]), then the shipped
    /// certificates and the operator's.
    pub fn build_with_list(options: &TrustOptions, list: &TrustList) -> Result<TrustStore, TrustError> {
        let mut store = TrustStore::default();
        store.load_trust_list(&list.xml)?;
        store.list = Some(list.summary.clone());
        // Authorities first, so every signer finds the CA key it must chain to.
        let (cas, signers): (Vec<_>, Vec<_>) = embedded::CERTIFICATES.iter().partition(|(name, _)| !name.contains('_'));
        for (name, der) in cas.into_iter().chain(signers) {
            store.add_named(name, der, CertificateSource::Embedded);
        }
        if options.accept_test_ca {
            store.add_test_authority();
        }
        if let Some(dir) = &options.extra_dir {
            store.load_directory(dir)?;
        }
        for warning in &store.warnings {
            tracing::warn!(target: "twoddoc::trust", "{warning}");
        }
        Ok(store)
    }

    /// What the store knows of the signer `ca_id`/`cert_id`.
    pub fn lookup(&self, ca_id: &str, cert_id: &str) -> CertificateLookup<'_> {
        if !self.authorities.contains_key(ca_id) {
            return CertificateLookup::UntrustedAuthority;
        }
        match self.certificates.get(&(ca_id.to_string(), cert_id.to_string())) {
            Some(cert) => CertificateLookup::Found(cert),
            None => CertificateLookup::UnknownCertificate,
        }
    }

    pub fn authorities(&self) -> impl Iterator<Item = &Authority> {
        self.authorities.values()
    }

    pub fn certificates(&self) -> impl Iterator<Item = &SignerCertificate> {
        self.certificates.values()
    }

    /// The identity (sequence number, dates, origin) of the trust list in use.
    pub fn trust_list(&self) -> Option<&TrustListSummary> {
        self.list.as_ref()
    }

    /// Certificates and trust-list entries that were skipped, and why.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn load_trust_list(&mut self, xml: &str) -> Result<(), TrustError> {
        let doc = roxmltree::Document::parse(xml).map_err(|e| TrustError::TrustList(e.to_string()))?;
        let providers: Vec<_> = doc
            .descendants()
            .filter(|n| n.has_tag_name((TSL_NAMESPACE, "TrustServiceProvider")))
            .collect();
        if providers.is_empty() {
            return Err(TrustError::TrustList("it names no trust service provider".into()));
        }
        for provider in providers {
            self.add_provider(provider);
        }
        Ok(())
    }

    fn add_provider(&mut self, provider: roxmltree::Node<'_, '_>) {
        let names = |element: &'static str| -> Vec<String> {
            descendants(provider, element)
                .flat_map(|n| descendants(n, "Name"))
                .filter_map(|n| n.text().map(|t| t.trim().to_string()))
                .collect()
        };
        let Some(id) = names("TSPTradeName").into_iter().find(|n| is_authority_id(n)) else {
            self.warn(format!("trust list: a provider has no authority id ({:?})", names("TSPName")));
            return;
        };
        let name = names("TSPName").into_iter().next().unwrap_or_else(|| id.clone());
        let mut ca_keys = Vec::new();
        for service in descendants(provider, "TSPService") {
            let status = descendants(service, "ServiceStatus")
                .find_map(|n| n.text())
                .unwrap_or_default()
                .trim();
            if !(status.ends_with("/inaccord") || status.ends_with("/granted")) {
                self.warn(format!("trust list: a service of {id} has status '{status}', not trusted"));
                continue;
            }
            for text in descendants(service, "X509Certificate").filter_map(|n| n.text()) {
                match ca_key_from_base64(text, &id) {
                    Ok(key) => ca_keys.push(key),
                    Err(why) => self.warn(format!("trust list: a certificate of {id} is unusable: {why}")),
                }
            }
        }
        if ca_keys.is_empty() {
            self.warn(format!("trust list: authority {id} has no usable certificate"));
            return;
        }
        self.authorities.insert(
            id.clone(),
            Authority {
                id,
                name,
                ca_keys,
                source: CertificateSource::TrustList,
            },
        );
    }

    /// Adds a certificate named by the naming rule; a problem becomes a warning.
    fn add_named(&mut self, name: &str, der: &[u8], source: CertificateSource) {
        let result = match parse_name(name) {
            Some((ca_id, None)) => self.add_authority_certificate(ca_id, der, source),
            Some((ca_id, Some(cert_id))) => self.add_signer(ca_id, cert_id, der, source),
            None => Err("the name is neither <CA> nor <CA>_<certificate id>".to_string()),
        };
        if let Err(why) = result {
            self.warn(format!("certificate {name} skipped: {why}"));
        }
    }

    fn add_authority_certificate(&mut self, ca_id: &str, der: &[u8], source: CertificateSource) -> Result<(), String> {
        if ca_id == TEST_AUTHORITY {
            return Err("the test authority is accepted by configuration only".into());
        }
        let key = ca_key(der, ca_id)?;
        match (self.authorities.get_mut(ca_id), source) {
            (Some(authority), _) => {
                // The shipped copy of a trust-list certificate changes nothing; a renewal adds a key.
                if !authority.ca_keys.contains(&key) {
                    authority.ca_keys.push(key);
                }
                Ok(())
            }
            // Only the trust list names authorities; a shipped CA certificate without an entry stays unused.
            (None, CertificateSource::Embedded) => Err(format!("authority {ca_id} is not in the trust list")),
            (None, _) => {
                let authority = Authority {
                    id: ca_id.into(),
                    name: format!("{ca_id} (operator)"),
                    ca_keys: vec![key],
                    source,
                };
                self.authorities.insert(ca_id.into(), authority);
                Ok(())
            }
        }
    }

    fn add_signer(&mut self, ca_id: &str, cert_id: &str, der: &[u8], source: CertificateSource) -> Result<(), String> {
        if ca_id == TEST_AUTHORITY {
            return Err("the test authority is accepted by configuration only".into());
        }
        let authority = self
            .authorities
            .get(ca_id)
            .ok_or_else(|| format!("authority {ca_id} is not trusted"))?;
        let cert = parse_certificate(der)?;
        check_common_name(&cert, cert_id)?;
        if !authority.ca_keys.iter().any(|ca| issued_by(&cert, ca)) {
            return Err(format!("no CA certificate of {ca_id} signed it"));
        }
        let key = (ca_id.to_string(), cert_id.to_string());
        if self.certificates.contains_key(&key) {
            return Err("a certificate with this id is already loaded".into());
        }
        let signer = signer_certificate(&cert, ca_id, cert_id, source, false)?;
        self.certificates.insert(key, signer);
        Ok(())
    }

    /// FR00 has no CA certificate to chain to: the spec publishes certificate 0001 and its private key, so it
    /// proves nothing about a document and is trusted by configuration alone.
    fn add_test_authority(&mut self) {
        let result = parse_certificate(embedded::TEST_CERTIFICATE)
            .and_then(|cert| signer_certificate(&cert, TEST_AUTHORITY, TEST_CERTIFICATE_ID, CertificateSource::TestAuthority, true));
        match result {
            Ok(cert) => {
                let authority = Authority {
                    id: TEST_AUTHORITY.into(),
                    name: "Test authority of the 2D-Doc specification".into(),
                    ca_keys: Vec::new(),
                    source: CertificateSource::TestAuthority,
                };
                self.authorities.insert(TEST_AUTHORITY.into(), authority);
                self.certificates.insert((TEST_AUTHORITY.into(), TEST_CERTIFICATE_ID.into()), cert);
            }
            Err(why) => self.warn(format!("test certificate unusable: {why}")),
        }
    }

    fn load_directory(&mut self, dir: &Path) -> Result<(), TrustError> {
        let io_error = |source| TrustError::Directory {
            path: dir.to_path_buf(),
            source,
        };
        let mut files = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(io_error)? {
            let path = entry.map_err(io_error)?.path();
            let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
            let stem = path.file_stem().and_then(|s| s.to_str()).map(str::to_string);
            if let (Some("der" | "pem"), Some(stem)) = (ext.as_deref(), stem) {
                files.push((stem, path));
            }
        }
        // Authorities before signers, as for the shipped certificates; sorted for reproducible warnings.
        files.sort_by_key(|(stem, _)| (stem.contains('_'), stem.clone()));
        for (stem, path) in files {
            match std::fs::read(&path).map_err(|e| e.to_string()).and_then(|bytes| der_of(&bytes)) {
                Ok(der) => self.add_named(&stem, &der, CertificateSource::Directory),
                Err(why) => self.warn(format!("{} skipped: {why}", path.display())),
            }
        }
        Ok(())
    }

    fn warn(&mut self, warning: String) {
        self.warnings.push(warning);
    }
}

fn descendants<'a, 'input>(node: roxmltree::Node<'a, 'input>, name: &'static str) -> impl Iterator<Item = roxmltree::Node<'a, 'input>> {
    node.descendants().filter(move |n| n.has_tag_name((TSL_NAMESPACE, name)))
}

/// `FR03`: a country code then two characters.
fn is_authority_id(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 4 && b[..2].iter().all(u8::is_ascii_uppercase) && b[2..].iter().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

/// Splits `<CA>` or `<CA>_<certificate id>`.
fn parse_name(name: &str) -> Option<(&str, Option<&str>)> {
    let (ca_id, cert_id) = match name.split_once('_') {
        Some((ca, cert)) => (ca, Some(cert)),
        None => (name, None),
    };
    let valid_cert = |c: &str| {
        let alnum = c.len() == 4 && c.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
        alnum || (c.len() == 5 && c.bytes().all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(&b)))
    };
    (is_authority_id(ca_id) && cert_id.is_none_or(valid_cert)).then_some((ca_id, cert_id))
}

/// The DER of a certificate file, whether it holds DER or PEM.
fn der_of(bytes: &[u8]) -> Result<Vec<u8>, String> {
    if !bytes.starts_with(b"-----BEGIN") {
        return Ok(bytes.to_vec());
    }
    let (_, pem) = x509_parser::pem::parse_x509_pem(bytes).map_err(|e| format!("not a PEM certificate: {e}"))?;
    match pem.label.as_str() {
        "CERTIFICATE" => Ok(pem.contents),
        other => Err(format!("PEM block '{other}' is not a certificate")),
    }
}

fn parse_certificate(der: &[u8]) -> Result<X509Certificate<'_>, String> {
    match X509Certificate::from_der(der) {
        Ok(([], cert)) => Ok(cert),
        Ok(_) => Err("trailing bytes after the certificate".into()),
        Err(e) => Err(format!("not an X.509 certificate: {e}")),
    }
}

/// The subject CN of a 2D-Doc certificate is its identifier (`FR03`, `EDF0`); a mismatch means a misnamed file.
fn check_common_name(cert: &X509Certificate<'_>, expected: &str) -> Result<(), String> {
    let cn = cert.subject().iter_common_name().next().and_then(|a| a.as_str().ok());
    match cn {
        Some(cn) if cn == expected => Ok(()),
        other => Err(format!("its subject CN is {other:?}, not {expected}")),
    }
}

fn ca_key_from_base64(text: &str, ca_id: &str) -> Result<PublicKey, String> {
    let compact: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let der = data_encoding::BASE64
        .decode(compact.as_bytes())
        .map_err(|e| format!("bad base64: {e}"))?;
    ca_key(&der, ca_id)
}

fn ca_key(der: &[u8], ca_id: &str) -> Result<PublicKey, String> {
    let cert = parse_certificate(der)?;
    check_common_name(&cert, ca_id)?;
    match public_key(cert.public_key()) {
        PublicKey::Unsupported(what) => Err(format!("unsupported CA key {what}")),
        key => Ok(key),
    }
}

fn signer_certificate(
    cert: &X509Certificate<'_>,
    ca_id: &str,
    cert_id: &str,
    source: CertificateSource,
    test_authority: bool,
) -> Result<SignerCertificate, String> {
    let time = |t: i64| DateTime::<Utc>::from_timestamp(t, 0).ok_or_else(|| format!("validity time {t} out of range"));
    Ok(SignerCertificate {
        ca_id: ca_id.into(),
        cert_id: cert_id.into(),
        key: public_key(cert.public_key()),
        not_before: time(cert.validity().not_before.timestamp())?,
        not_after: time(cert.validity().not_after.timestamp())?,
        test_authority,
        source,
    })
}

fn public_key(spki: &SubjectPublicKeyInfo<'_>) -> PublicKey {
    let algorithm = &spki.algorithm.algorithm;
    let bytes = spki.subject_public_key.data.to_vec();
    if *algorithm == OID_PKCS1_RSAENCRYPTION {
        return PublicKey::Rsa(bytes);
    }
    if *algorithm != OID_KEY_TYPE_EC_PUBLIC_KEY {
        return PublicKey::Unsupported(format!("algorithm {}", algorithm.to_id_string()));
    }
    let Some(parameters) = spki.algorithm.parameters.as_ref() else {
        return PublicKey::Unsupported("EC key without curve parameters".into());
    };
    // A named curve is an OID; explicit parameters are a SEQUENCE (`as_oid` alone does not check the tag).
    let curve: Option<Oid<'_>> = (parameters.tag() == Tag::Oid).then(|| parameters.as_oid().ok()).flatten();
    match curve {
        Some(c) if c == OID_EC_P256 => PublicKey::EcdsaP256(bytes),
        Some(c) if c == OID_NIST_EC_P384 => PublicKey::EcdsaP384(bytes),
        Some(c) => PublicKey::Unsupported(format!("EC curve {}", c.to_id_string())),
        None if is_explicit_curve(parameters.data, &P256_EXPLICIT) => PublicKey::EcdsaP256(bytes),
        None if is_explicit_curve(parameters.data, &P384_EXPLICIT) => PublicKey::EcdsaP384(bytes),
        None => PublicKey::Unsupported("EC key with unknown explicit curve parameters".into()),
    }
}

/// Prime, generator x coordinate and order of a curve, as big-endian bytes.
struct CurveConstants {
    prime: &'static str,
    generator_x: &'static str,
    order: &'static str,
}

const P256_EXPLICIT: CurveConstants = CurveConstants {
    prime: "ffffffff00000001000000000000000000000000ffffffffffffffffffffffff",
    generator_x: "6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296",
    order: "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551",
};

const P384_EXPLICIT: CurveConstants = CurveConstants {
    prime: "fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffeffffffff0000000000000000ffffffff",
    generator_x: "aa87ca22be8b05378eb1c71ef320ad746e1d3b628ba79b9859f741e082542a385502f25dbf55296c3a545e3872760ab7",
    order: "ffffffffffffffffffffffffffffffffffffffffffffffffc7634d81f4372ddf581a0db248b0a77aecec196accc52973",
};

/// Signer certificates of 2012 spell the P-256 parameters out (RFC 3279 `specifiedCurve`) instead of naming
/// the curve; the parameters are the curve when its prime, generator and order all appear in them.
fn is_explicit_curve(parameters: &[u8], curve: &CurveConstants) -> bool {
    let contains = |hex: &str| {
        let needle = data_encoding::HEXLOWER.decode(hex.as_bytes()).unwrap_or_default();
        !needle.is_empty() && parameters.windows(needle.len()).any(|w| w == needle.as_slice())
    };
    contains(curve.prime) && contains(curve.generator_x) && contains(curve.order)
}

/// Whether `ca` signed `cert`: the chain check that makes a signer certificate belong to its authority.
fn issued_by(cert: &X509Certificate<'_>, ca: &PublicKey) -> bool {
    let oid = &cert.signature_algorithm.algorithm;
    let algorithm: &dyn VerificationAlgorithm = match ca {
        PublicKey::Rsa(_) if *oid == OID_PKCS1_SHA256WITHRSA => &signature::RSA_PKCS1_2048_8192_SHA256,
        PublicKey::Rsa(_) if *oid == OID_PKCS1_SHA384WITHRSA => &signature::RSA_PKCS1_2048_8192_SHA384,
        PublicKey::Rsa(_) if *oid == OID_PKCS1_SHA512WITHRSA => &signature::RSA_PKCS1_2048_8192_SHA512,
        // Authorities of 2012 signed with SHA-1; the trust list still names them, so their old signers verify.
        PublicKey::Rsa(_) if *oid == OID_PKCS1_SHA1WITHRSA => &signature::RSA_PKCS1_2048_8192_SHA1_FOR_LEGACY_USE_ONLY,
        PublicKey::EcdsaP256(_) if *oid == OID_SIG_ECDSA_WITH_SHA256 => &signature::ECDSA_P256_SHA256_ASN1,
        PublicKey::EcdsaP256(_) if *oid == OID_SIG_ECDSA_WITH_SHA384 => &signature::ECDSA_P256_SHA384_ASN1,
        PublicKey::EcdsaP384(_) if *oid == OID_SIG_ECDSA_WITH_SHA256 => &signature::ECDSA_P384_SHA256_ASN1,
        PublicKey::EcdsaP384(_) if *oid == OID_SIG_ECDSA_WITH_SHA384 => &signature::ECDSA_P384_SHA384_ASN1,
        _ => return false,
    };
    let tbs: &[u8] = cert.tbs_certificate.as_ref();
    UnparsedPublicKey::new(algorithm, ca.bytes())
        .verify(tbs, &cert.signature_value.data)
        .is_ok()
}

#[cfg(test)]
impl TrustStore {
    /// Adds a signer (and its authority) without the chain check, for tests that need a key they hold.
    pub(crate) fn with_signer(mut self, cert: SignerCertificate) -> Self {
        let authority = Authority {
            id: cert.ca_id.clone(),
            name: "test".into(),
            ca_keys: Vec::new(),
            source: CertificateSource::Directory,
        };
        self.authorities.entry(cert.ca_id.clone()).or_insert(authority);
        self.certificates.insert((cert.ca_id.clone(), cert.cert_id.clone()), cert);
        self
    }

    /// The test certificate's key and period, as a signer of any authority.
    pub(crate) fn test_certificate_as(ca_id: &str, cert_id: &str, test_authority: bool) -> SignerCertificate {
        let cert = parse_certificate(embedded::TEST_CERTIFICATE).expect("test certificate");
        signer_certificate(&cert, ca_id, cert_id, CertificateSource::Directory, test_authority).expect("test certificate")
    }

    /// The authorities of the shipped trust list and no certificate.
    pub(crate) fn trust_list_only() -> TrustStore {
        let mut store = TrustStore::default();
        store.load_trust_list(embedded::TSL_XML).expect("trust list");
        store
    }

    /// Adds a named certificate as the operator directory would.
    pub(crate) fn add_for_test(&mut self, name: &str, der: &[u8]) {
        self.add_named(name, der, CertificateSource::Directory);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_the_naming_rule() {
        assert_eq!(parse_name("FR03"), Some(("FR03", None)));
        assert_eq!(parse_name("FR03_EDF0"), Some(("FR03", Some("EDF0"))));
        assert_eq!(parse_name("FR01_1234F"), Some(("FR01", Some("1234F"))));
        for bad in ["fr03", "F03", "FR03_", "FR03_EDF", "FR03_1234G", "FR03_EDF0_X", "12AB", "FR03-EDF0"] {
            assert_eq!(parse_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn explicit_curve_parameters() {
        let der = embedded::CERTIFICATES
            .iter()
            .find(|(n, _)| *n == "FR01_SFR0")
            .map(|(_, d)| *d)
            .unwrap_or_default();
        let cert = parse_certificate(der).unwrap();
        assert!(matches!(public_key(cert.public_key()), PublicKey::EcdsaP256(ref p) if p.len() == 65));
        assert!(!is_explicit_curve(b"\x30\x00", &P256_EXPLICIT));
    }

    #[test]
    fn trust_list_authorities() {
        let mut store = TrustStore::default();
        store.load_trust_list(embedded::TSL_XML).unwrap();
        let ids: Vec<_> = store.authorities.keys().map(String::as_str).collect();
        assert_eq!(ids, ["FR01", "FR03", "FR04", "FR05", "FR06", "FR07", "FR09"]);
        assert!(store
            .authorities
            .values()
            .all(|a| a.ca_keys.len() == 1 && matches!(a.ca_keys[0], PublicKey::Rsa(_))));
        assert_eq!(
            store.authorities.get("FR03").map(|a| a.name.as_str()),
            Some("CERTIGNA (CERTIGNA - DHIMYOTIS)")
        );
        assert!(store.warnings.is_empty(), "{:?}", store.warnings);
        assert!(matches!(
            TrustStore::default().load_trust_list("<a/>"),
            Err(TrustError::TrustList(_))
        ));
        assert!(matches!(TrustStore::default().load_trust_list("<a"), Err(TrustError::TrustList(_))));
    }

    #[test]
    fn a_withdrawn_service_is_not_trusted() {
        let xml = embedded::TSL_XML.replacen("Svcstatus/inaccord", "Svcstatus/withdrawn", 1);
        let mut store = TrustStore::default();
        store.load_trust_list(&xml).unwrap();
        assert!(!store.authorities.contains_key("FR01"));
        assert_eq!(store.authorities.len(), 6);
        assert!(
            store.warnings.iter().any(|w| w.contains("FR01") && w.contains("withdrawn")),
            "{:?}",
            store.warnings
        );
    }
}
