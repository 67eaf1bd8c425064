//! End-to-end tests of the message layer: the spec's sample codes shipped with the project, the sample
//! documents' seals, and seals these tests sign themselves with the test authority's published key, intact
//! and tampered, so no tampered seal can ever come out `valid`.

use std::path::PathBuf;

use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, KeyPair, ECDSA_P384_SHA384_FIXED_SIGNING};

use super::message::{GS, RS, US};
use super::test_signing::{base32, header, seal, sign};
use super::trust::{CertificateLookup, CertificateSource, PublicKey};
use super::*;

const SAMPLE_CODES_JSON: &str = include_str!("../../../data/2ddoc/refcodes/refcodes-sample.json");

fn store(accept_test_ca: bool) -> TrustStore {
    TrustStore::build(&TrustOptions {
        accept_test_ca,
        extra_dir: None,
    })
    .expect("trust store")
}

/// An invoice message (type 01): name, address, postcode, town, country, invoice number, amount.
const INVOICE: &str = "10M/DEMO/VICTOR\x1d2215 RUE DE LA DEMONSTRATION\x1d241300125MARSEILLE\x1d26FR18E2026110077\x1d1D38,65";

fn analyse(payload: &[u8], trust: &TrustStore) -> TwoDDocFinding {
    analyse_payload(payload, trust).unwrap_or_else(|e| panic!("{e}: {}", payload.escape_ascii()))
}

fn malformation(payload: &[u8]) -> Malformation {
    match analyse_payload(payload, &store(true)) {
        Err(TwoDDocError::Malformed(m)) => m,
        other => panic!("expected a malformation for {}, got {other:?}", payload.escape_ascii()),
    }
}

// ---- the spec's sample codes shipped with the project ---------------------------------------------------

#[test]
fn shipped_sample_codes_parse_and_verify_with_the_test_authority() {
    let sample: serde_json::Value = serde_json::from_str(SAMPLE_CODES_JSON).expect("sample json");
    let codes = sample["codes"].as_array().expect("codes");
    assert_eq!(codes.len(), 3);
    let (accepted, refused) = (store(true), store(false));
    for code in codes {
        let raw = code["raw"].as_str().expect("raw").as_bytes();
        let finding = analyse(raw, &accepted);
        let h = &code["header"];
        let id = code["id"].as_str().unwrap_or_default();
        assert_eq!(
            finding.signature_status,
            SignatureStatus::Valid,
            "{id}: {}",
            finding.signature_detail
        );
        assert!(finding.trusted && finding.signature_verified(), "{id}");
        assert_eq!(
            finding.header.version.to_string(),
            h["version"].as_str().unwrap_or_default().trim_start_matches('0')
        );
        assert_eq!(finding.header.ca_id, h["caId"].as_str().unwrap_or_default());
        assert_eq!(finding.header.cert_id, h["certId"].as_str().unwrap_or_default());
        assert_eq!(finding.header.issue_date_raw, h["issueDateHex"].as_str().unwrap_or_default());
        assert_eq!(
            finding.header.signature_date_raw,
            h["signatureDateHex"].as_str().unwrap_or_default()
        );
        assert_eq!(finding.header.issue_date.map(|d| d.to_string()).as_deref(), h["issueDate"].as_str());
        assert_eq!(
            finding.header.signature_date.to_string(),
            h["signatureDate"].as_str().unwrap_or_default()
        );
        assert_eq!(finding.document_type_code, h["docType"].as_str().unwrap_or_default());
        assert_eq!(finding.header.perimeter.as_deref(), h["perimeter"].as_str());
        assert_eq!(finding.header.country.as_deref(), h["country"].as_str());
        assert_eq!(finding.signed_len as u64, code["signedLength"].as_u64().unwrap_or_default(), "{id}");
        let expected: BTreeMap<String, String> = serde_json::from_value(code["fields"].clone()).expect("fields");
        assert_eq!(finding.fields, expected, "{id}");
        assert_eq!(analyse(raw, &refused).signature_status, SignatureStatus::UntrustedAuthority, "{id}");
    }
}

/// The seals of `shared/data/samples/manifest.json` (raw, signatureVerified, trusted, docType, field count).
const MANIFEST_SEALS: &[(&str, &str, bool, &str, usize)] = &[
    (
        "sample-avis-impot-v04-rfr-modifie",
        "DC04FR000001FFFF25F10401FR431,5\x1d442675C0111222345202546DEMO ALICE\x1d4731234567890124A310720264112900\x1fQINCHVGFG3EVKJD2CHPHO64W4LXDPSLTPJODEFXX42Z42622Z5L4CHFVGW7V63UR2IZTFPP3I5M33RF7JLTO33I5EX57XDR5JL7567I",
        false,
        "04",
        7,
    ),
    (
        "sample-bulletin-v03-montant-different",
        "DC03FR00000126482648060110MME/DEMONSTRATION/INES\x1d508901234580001453262A5426485501092020582210,05\x1d5920455,30\x1d5A2790,00\x1d5MDEMO CONSEIL SAS\x1f2AOQU3BQRHBHGUKLPJTWIESXRVLBD3MSKKCGKCSZGN5YRK5UUCN7BGJ7Z7M3BA6WBLQ4BGHTX63FOCECTGJZ3NO3TY75OPSJVBYKPPY",
        true,
        "06",
        9,
    ),
    (
        "sample-domicile-v03-photo",
        "DC03FR00000126382638000110M/TESTE/NOE\x1d20\x1d21\x1d221 RUE DU PILOTE\x1d23\x1d247501125PARIS\x1d26FR\x1fSSYNVSNMLWFQ7SM6XZMEDGWWNBDFT36MXEJWEV4MU3MGQ3I35CON5S2CRXMAS47BMWTT3JIZ65MIGNXTKY2DKMIJCWNXR64363UKXMY",
        true,
        "00",
        8,
    ),
    (
        "sample-facture-v04",
        "DC04FR000001264B264B0101FR10M/DEMO/VICTOR\x1d2215 RUE DE LA DEMONSTRATION\x1d241300125MARSEILLE\x1d26FR18E2026110077\x1d19EAU4410099\x1d1D38,65\x1fFKFCKRFCDIU4JOAD5YBKLIFOQJFIHTOGJNGFXU2FIH4MB6XEJRI4M3277LIRV4PTUUJE66AQ3Y4SVUAOKKAXQGZLVYV4VNBXDB2F54I",
        true,
        "01",
        8,
    ),
];

#[test]
fn sample_document_seals_give_their_manifest_findings() {
    let trust = store(true);
    for (name, raw, verified, doc_type, field_count) in MANIFEST_SEALS {
        let finding = analyse(raw.as_bytes(), &trust);
        assert_eq!(finding.signature_verified(), *verified, "{name}: {}", finding.signature_detail);
        assert!(finding.trusted, "{name}");
        assert_eq!(
            (finding.document_type_code.as_str(), finding.fields.len()),
            (*doc_type, *field_count),
            "{name}"
        );
        let domain = finding.to_domain(true);
        assert_eq!(
            (domain.signature_verified, domain.trusted, domain.read_status.as_str()),
            (*verified, true, "read")
        );
        let expected_status = if *verified { "valid" } else { "invalid" };
        assert_eq!(domain.signature_status.as_str(), expected_status, "{name}");
    }
}

// ---- seals signed here ----------------------------------------------------------------------------------

#[test]
fn own_seals_of_each_header_version_verify() {
    let trust = store(true);
    for version in [2, 3, 4] {
        let signed = format!("{}{INVOICE}", header(version, "FR000001", "264B", "264B", "01"));
        let finding = analyse(&seal(&signed), &trust);
        assert_eq!(
            finding.signature_status,
            SignatureStatus::Valid,
            "v{version}: {}",
            finding.signature_detail
        );
        assert_eq!(finding.header.version, version);
        assert_eq!(finding.signed_len, signed.len());
        assert_eq!(finding.fields.get("24").map(String::as_str), Some("13001"));
        assert_eq!(finding.fields.get("1D").map(String::as_str), Some("38,65"));
        assert_eq!(
            (finding.document_type.as_str(), finding.document_type_label.as_str()),
            ("facture", "Facture")
        );
        assert!(finding.non_conformities.is_empty());
    }
}

#[test]
fn a_value_changed_after_signing_is_invalid() {
    let trust = store(true);
    let signed = format!("{}{INVOICE}", header(4, "FR000001", "264B", "264B", "01"));
    let original = seal(&signed);
    let tampered_text = String::from_utf8(original.clone())
        .unwrap_or_default()
        .replace("1D38,65", "1D18,65");
    assert_ne!(tampered_text.as_bytes(), original.as_slice());
    let finding = analyse(tampered_text.as_bytes(), &trust);
    assert_eq!(finding.signature_status, SignatureStatus::Invalid);
    assert!(finding.trusted && !finding.signature_verified());
    assert_eq!(finding.fields.get("1D").map(String::as_str), Some("18,65"));
    // Every single-character change of the signed part is either malformed or invalid, never valid.
    for pos in 0..signed.len() {
        let mut altered = original.clone();
        altered[pos] = if altered[pos] == b'7' { b'8' } else { b'7' };
        if let Ok(finding) = analyse_payload(&altered, &trust) {
            // A changed signer id gives another status (unknown certificate, untrusted authority), never valid.
            assert_ne!(finding.signature_status, SignatureStatus::Valid, "change at {pos}");
        }
    }
    // The header is signed too: a later signature date breaks the seal.
    let redated = String::from_utf8(original).unwrap_or_default().replacen("264B264B", "264B264C", 1);
    assert_eq!(analyse(redated.as_bytes(), &trust).signature_status, SignatureStatus::Invalid);
}

#[test]
fn truncated_or_damaged_signatures_never_verify() {
    let trust = store(true);
    let signed = format!("{}{INVOICE}", header(4, "FR000001", "264B", "264B", "01"));
    let sealed = seal(&signed);
    let base32_len = sealed.len() - signed.len() - 1;
    assert_eq!(base32_len, 103, "64 bytes are 103 Base32 characters");
    // Cut in the Base32 text, even where Base32 cannot end (102 characters): the certificate is known, so the
    // seal stays trusted, but a signature of the wrong length is not checked, with the reason.
    for (cut, bytes) in [(8, 59), (2, 63), (1, 63)] {
        let finding = analyse(&sealed[..sealed.len() - cut], &trust);
        assert_eq!(
            (finding.signature_status, finding.trusted, finding.signature_verified()),
            (SignatureStatus::NotChecked, true, false),
            "cut by {cut}"
        );
        let reason = format!("the signature has {bytes} bytes, a P-256 key signs with 64");
        assert!(finding.signature_detail.contains(&reason), "{}", finding.signature_detail);
    }
    // The US and nothing after it, or no US at all.
    assert_eq!(malformation(&sealed[..signed.len() + 1]), Malformation::MissingSignature);
    assert_eq!(malformation(signed.as_bytes()), Malformation::MissingSignature);
    // A signature of the right Base32 form but another length (P-384 size for a P-256 key): not checked.
    let mut long = signed.clone().into_bytes();
    long.push(US);
    long.extend(base32(&[sign(signed.as_bytes()), vec![0; 32]].concat()).bytes());
    let finding = analyse(&long, &trust);
    assert_eq!((finding.signature_status, finding.trusted), (SignatureStatus::NotChecked, true));
    assert!(finding.signature_detail.contains("96 bytes"), "{}", finding.signature_detail);
    // One byte more than the key signs with, after a genuine signature.
    let mut one_more = signed.clone().into_bytes();
    one_more.push(US);
    one_more.extend(base32(&[sign(signed.as_bytes()), vec![0]].concat()).bytes());
    assert_eq!(analyse(&one_more, &trust).signature_status, SignatureStatus::NotChecked);
    // A truncated signature of an authority nobody trusts stays untrusted.
    let stranger = seal(&format!("{}{INVOICE}", header(4, "FR990001", "264B", "264B", "01")));
    let finding = analyse(&stranger[..stranger.len() - 8], &trust);
    assert_eq!(
        (finding.signature_status, finding.trusted),
        (SignatureStatus::UntrustedAuthority, false)
    );
    // Characters outside the Base32 alphabet.
    let mut bad = sealed.clone();
    let last = bad.len() - 1;
    bad[last] = b'1';
    assert!(matches!(malformation(&bad), Malformation::InvalidSignatureEncoding(_)));
    // Padding is not needed, but tolerated.
    let mut padded = sealed.clone();
    padded.push(b'=');
    assert_eq!(analyse(&padded, &trust).signature_status, SignatureStatus::Valid);
}

#[test]
fn signer_lookup_statuses() {
    let (accepted, refused) = (store(true), store(false));
    let signed_by = |ca_cert: &str| seal(&format!("{}{INVOICE}", header(4, ca_cert, "264B", "264B", "01")));
    // Unknown certificate of the (accepted) test authority.
    let finding = analyse(&signed_by("FR000002"), &accepted);
    assert_eq!(
        (finding.signature_status, finding.trusted),
        (SignatureStatus::UnknownCertificate, false)
    );
    // Unknown certificate of a real authority of the trust list.
    assert_eq!(
        analyse(&signed_by("FR03ZZZ9"), &accepted).signature_status,
        SignatureStatus::UnknownCertificate
    );
    // An authority nobody trusts.
    let finding = analyse(&signed_by("FR990001"), &accepted);
    assert_eq!(
        (finding.signature_status, finding.trusted),
        (SignatureStatus::UntrustedAuthority, false)
    );
    // The test authority when the operator does not accept it.
    let finding = analyse(&signed_by("FR000001"), &refused);
    assert_eq!(
        (finding.signature_status, finding.trusted),
        (SignatureStatus::UntrustedAuthority, false)
    );
    // A real certificate, but the test key did not sign for it.
    let finding = analyse(&signed_by("FR03EDF0"), &refused);
    assert_eq!((finding.signature_status, finding.trusted), (SignatureStatus::Invalid, true));
}

#[test]
fn the_certificate_period_is_checked_against_the_signature_date() {
    // The test key as an ordinary signer FR98/0001 (period 2012-11-01 to 2015-11-01, period checked).
    let trust = store(false).with_signer(TrustStore::test_certificate_as("FR98", "0001", false));
    let signed_on = |day: &str| seal(&format!("{}{INVOICE}", header(4, "FR980001", day, day, "01")));
    // 0x125E = 2012-11-15 and 0x16A2 = 2015-11-12 (after 2015-11-01), 0x1200 = 2012-08-13 (before).
    assert_eq!(analyse(&signed_on("125E"), &trust).signature_status, SignatureStatus::Valid);
    let expired = analyse(&signed_on("16A2"), &trust);
    assert_eq!(
        (expired.signature_status, expired.trusted),
        (SignatureStatus::CertificateExpired, true)
    );
    assert!(expired.signature_detail.contains("expired"), "{}", expired.signature_detail);
    let early = analyse(&signed_on("1200"), &trust);
    assert_eq!(early.signature_status, SignatureStatus::CertificateExpired);
    assert!(early.signature_detail.contains("not yet valid"), "{}", early.signature_detail);
    assert_eq!(early.to_domain(true).signature_status, SignatureStatus::CertificateExpired);
    assert!(!early.to_domain(true).signature_verified);
    // An altered seal is invalid even when the certificate has expired too.
    let mut altered = signed_on("16A2");
    let at = altered.iter().position(|b| *b == b'V').unwrap_or_default();
    altered[at] = b'W';
    assert_eq!(analyse(&altered, &trust).signature_status, SignatureStatus::Invalid);
    // The test authority itself is exempt: its reference codes are signed after 2015.
    let test_authority = seal(&format!("{}{INVOICE}", header(4, "FR000001", "264B", "264B", "01")));
    assert_eq!(analyse(&test_authority, &store(true)).signature_status, SignatureStatus::Valid);
}

#[test]
fn annex_after_the_signature_is_read_but_not_signed() {
    let trust = store(true);
    let signed = format!("{}{INVOICE}", header(4, "FR000001", "264B", "264B", "01"));
    let mut with_annex = seal(&signed);
    with_annex.push(GS);
    with_annex.extend(b"01SERIAL42\x1d0912");
    // The annex follows the message rules: 09 (page count) has exactly 4 characters.
    let finding = analyse_payload(&with_annex, &trust);
    let wrong_length = |f: &Result<TwoDDocFinding, TwoDDocError>| matches!(f, Err(TwoDDocError::Malformed(Malformation::WrongLength { ref id, offset, .. })) if id == "09" && *offset > signed.len());
    assert!(wrong_length(&finding), "{finding:?}");
    let mut with_annex = seal(&signed);
    with_annex.push(GS);
    with_annex.extend(b"01SERIAL42\x1d090002");
    let finding = analyse(&with_annex, &trust);
    assert_eq!(finding.signature_status, SignatureStatus::Valid);
    let annex: Vec<_> = finding.annex.iter().map(|f| (f.id.as_str(), f.value.as_str())).collect();
    assert_eq!(annex, [("01", "SERIAL42"), ("09", "0002")]);
    assert!(!finding.fields.contains_key("01"), "annex values are not signed data");
}

#[test]
fn structural_faults_are_malformed_with_their_reason() {
    let h4 = header(4, "FR000001", "264B", "264B", "01");
    assert_eq!(malformation(&seal(&h4)), Malformation::EmptyMessage);
    let unknown_type = malformation(&seal(&format!("{}{INVOICE}", header(4, "FR000001", "264B", "264B", "99"))));
    assert!(matches!(unknown_type, Malformation::UnknownDocumentType { .. }));
    let perimeter = malformation(&seal(&format!("DC04FR000001264B264B0102FR{INVOICE}")));
    assert_eq!(perimeter, Malformation::UnknownPerimeter("02".into()));
    assert!(matches!(
        malformation(&seal(&format!("DC01FR000001264B264B01{INVOICE}"))),
        Malformation::UnsupportedVersion(_)
    ));
    // A control character inside a value leaves no field to trust: still malformed.
    assert!(matches!(
        malformation(&seal(&format!("{h4}10M/DEMO\x00X\x1d2413001"))),
        Malformation::InvalidCharacter { byte: 0, .. }
    ));
}

/// Spec departures the message zone can be read past: each is a non-conformity with its reason, and the
/// signature is checked over the bytes before US all the same (issue 13, item 1).
#[test]
fn message_departures_are_non_conformities_and_the_signature_is_still_checked() {
    let trust = store(true);
    let h4 = header(4, "FR000001", "264B", "264B", "01");
    let read = |message: &str| analyse(&seal(&format!("{h4}{message}")), &trust);
    let cases: [(&str, &[&str]); 5] = [
        // An identifier §7 does not define; its value runs to the next GS, and reading goes on after it.
        (
            "10M/DEMO\x1dZZ12\x1d2413001",
            &["data identifier 'ZZ' at offset 35 is not defined by the specification (§7), which forbids undefined identifiers (§3.4.4)"],
        ),
        // A fixed value cut short by GS, then one running past its length (the rest is no identifier).
        (
            "241300\x1d25MARSEILLE",
            &["data identifier '24' at offset 26 has 4 characters, the specification allows exactly 5"],
        ),
        (
            "10M/DEMO\x1d24130012",
            &["data identifier '2' at offset 42 is not defined by the specification"],
        ),
        // A fixed value marked truncated, and an IBAN under its minimum.
        (
            "2413001\x1e10M/DEMO",
            &["fixed-length field '24' at offset 26 is marked truncated, which the specification forbids"],
        ),
        // Two departures in one seal: two non-conformities.
        (
            "31FR76\x1dZZ9\x1d10M/DEMO",
            &[
                "data identifier '31' at offset 26 has 4 characters, the specification allows 14 to 38",
                "data identifier 'ZZ' at offset 33 is not defined",
            ],
        ),
    ];
    for (message, reasons) in cases {
        let finding = read(message);
        let shown = message.escape_debug();
        assert_eq!(
            (finding.signature_status, finding.trusted),
            (SignatureStatus::Valid, true),
            "{shown}: {}",
            finding.signature_detail
        );
        assert_eq!(
            finding.non_conformities.len(),
            reasons.len(),
            "{shown}: {:?}",
            finding.non_conformities
        );
        for (found, reason) in finding.non_conformities.iter().zip(reasons) {
            assert!(found.starts_with(reason), "{shown}: {found}");
        }
    }
    // What could be delimited is read: the fields after the undefined one, the short value as it stands.
    let finding = read("10M/DEMO\x1dZZ12\x1d2413001");
    assert_eq!(finding.fields.get("24").map(String::as_str), Some("13001"));
    assert!(
        !finding.fields.contains_key("ZZ"),
        "an undefined identifier has no meaning to report"
    );
    let finding = read("241300\x1d25MARSEILLE");
    assert_eq!(finding.fields.get("24").map(String::as_str), Some("1300"));
    assert_eq!(finding.fields.get("25").map(String::as_str), Some("MARSEILLE"));
    // A departure does not make an altered seal acceptable: it is still invalid.
    let sealed = seal(&format!("{h4}10M/DEMO\x1dZZ12\x1d2413001"));
    let altered = String::from_utf8(sealed).unwrap_or_default().replacen("ZZ12", "ZZ13", 1);
    let finding = analyse(altered.as_bytes(), &trust);
    assert_eq!((finding.signature_status, finding.trusted), (SignatureStatus::Invalid, true));
    assert_eq!(finding.non_conformities.len(), 1);
    // An issue date FFFF on a type whose §6 entry requires one (01, invoice): verified, one non-conformity.
    let undated = analyse(&seal(&format!("{}{INVOICE}", header(4, "FR000001", "FFFF", "264B", "01"))), &trust);
    assert_eq!((undated.signature_status, undated.trusted), (SignatureStatus::Valid, true));
    assert_eq!(
        undated.non_conformities,
        ["document type 01 requires an issue date (§6), the header has none (FFFF)"]
    );
}

#[test]
fn truncated_values_are_marked() {
    let signed = format!("{}10M/DEMO/VICT\x1e2413001", header(4, "FR000001", "264B", "264B", "01"));
    let finding = analyse(&seal(&signed), &store(true));
    assert_eq!(finding.signature_status, SignatureStatus::Valid);
    assert!(finding.message[0].truncated && !finding.message[1].truncated);
    assert_eq!(finding.fields.get("10").map(String::as_str), Some("M/DEMO/VICT"));
    assert_eq!(finding.signed_len, signed.len());
    assert!(signed.contains(char::from(RS)), "RS is part of the signed data");
}

#[test]
fn undated_documents_and_type_rules() {
    let trust = store(true);
    // Type 04 (income tax) is undated: FFFF is the rule, a date a non-conformity.
    let tax = "431,5\x1d442675C0111222345202546DEMO ALICE\x1d4731234567890124A310720264112900";
    let undated = analyse(&seal(&format!("{}{tax}", header(4, "FR000001", "FFFF", "25F1", "04"))), &trust);
    assert_eq!((undated.header.issue_date, undated.header.issue_date_raw.as_str()), (None, "FFFF"));
    assert_eq!(undated.header.signature_date.to_string(), "2026-08-05");
    assert_eq!(undated.document_type.as_str(), "avis_imposition");
    assert!(undated.non_conformities.is_empty());
    let dated = analyse(&seal(&format!("{}{tax}", header(4, "FR000001", "25F1", "25F1", "04"))), &trust);
    assert_eq!(dated.non_conformities.len(), 1, "{:?}", dated.non_conformities);
    assert_eq!(
        dated.signature_status,
        SignatureStatus::Valid,
        "a non-conformity does not change the signature"
    );
}

#[test]
fn binary_seals() {
    // Binary v04 (spec §3.3.4): header, one block, then 0xFF, the length and the raw signature.
    let mut signed = vec![0xDC, 0x04];
    signed.extend(c40::encode("FRA").unwrap_or_default());
    signed.extend(c40::encode("FR0000001").unwrap_or_default());
    signed.extend([0xA9, 0x67, 0x4A]); // 10 November 2026: 11102026
    signed.extend([0xA9, 0x67, 0x4A]);
    signed.extend([0x07, 0x00, 0x01]);
    signed.extend([0x0A, 0x04, 0x5A, 0x94, 0xB3, 0xDE]);
    let signature = sign(&signed);
    let mut payload = signed.clone();
    payload.extend([0xFF, 64]);
    payload.extend(&signature);
    payload.extend([0xAF, 0x00]); // annex: a presence marker
    let finding = analyse(&payload, &store(true));
    assert_eq!(
        (finding.header.encoding, finding.header.cert_id.as_str()),
        (HeaderEncoding::Binary, "00001")
    );
    assert_eq!(finding.header.issue_date.map(|d| d.to_string()).as_deref(), Some("2026-11-10"));
    assert_eq!(finding.fields.get("0A").map(String::as_str), Some("5A94B3DE"));
    assert_eq!((finding.annex.len(), finding.signed_len), (1, signed.len()));
    // No certificate 00001 of FR00 is known (binary ids have five digits): the signed bytes still check out.
    assert_eq!(finding.signature_status, SignatureStatus::UnknownCertificate);
    let key = TrustStore::test_certificate_as("FR00", "00001", true).key;
    assert_eq!(signature::check_signature(&key, &signed, &signature), Ok(true));
    // Faults of the binary framing.
    assert_eq!(malformation(&signed), Malformation::MissingSignature);
    assert!(matches!(
        malformation(&payload[..payload.len() - 10]),
        Malformation::TruncatedBlock { .. }
    ));
    let mut second_signature = payload.clone();
    second_signature.extend([0xFF, 0x00]);
    assert!(matches!(malformation(&second_signature), Malformation::UnknownIdentifier { .. }));
}

#[test]
fn p384_signatures_verify_with_the_fixed_encoding() {
    let rng = SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P384_SHA384_FIXED_SIGNING, &rng).expect("key");
    let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P384_SHA384_FIXED_SIGNING, pkcs8.as_ref(), &rng).expect("key");
    let key = PublicKey::EcdsaP384(pair.public_key().as_ref().to_vec());
    let data = b"DC04FR04INT01E6D1E6DL101FRL0X";
    let sig = pair.sign(&rng, data).expect("signature").as_ref().to_vec();
    assert_eq!(sig.len(), 96);
    assert_eq!(signature::check_signature(&key, data, &sig), Ok(true));
    assert_eq!(signature::check_signature(&key, b"DC04 altered", &sig), Ok(false));
    assert_eq!(signature::check_signature(&key, data, &sig[..64]), Ok(false));
    assert_eq!(signature::check_signature(&PublicKey::Rsa(vec![0x30, 0x00]), data, &sig), Ok(false));
    assert!(signature::check_signature(&PublicKey::Unsupported("Ed25519".into()), data, &sig).is_err());
}

#[test]
fn not_a_two_d_doc() {
    let trust = store(true);
    for payload in [&b"https://example.org"[..], b"", b"D", b"dc04"] {
        let err = analyse_payload(payload, &trust).expect_err("not a seal");
        assert!(matches!(err, TwoDDocError::NotTwoDDoc(_)), "{err:?}");
        assert_eq!(err.to_domain(), None);
    }
}

#[test]
fn domain_mapping() {
    let malformed = TwoDDocError::Malformed(Malformation::EmptyMessage).to_domain().expect("reported");
    assert_eq!((malformed.present, malformed.read_status.as_str()), (true, "malformed"));
    assert_eq!(malformed.signature_status, SignatureStatus::NotChecked);
    assert!(!malformed.signature_verified && !malformed.trusted && !malformed.data_matches);
    assert_eq!(malformed.read_status_message.as_deref(), Some("the message zone holds no data"));
    let unreadable = unreadable("code too blurred to decode");
    assert_eq!(unreadable.read_status.as_str(), "unreadable");
    let finding = analyse(
        &seal(&format!("{}{INVOICE}", header(4, "FR000001", "264B", "264B", "01"))),
        &store(true),
    );
    let read = finding.to_domain(false);
    assert_eq!((read.read_status.as_str(), read.signature_status.as_str()), ("read", "valid"));
    assert!(read.signature_verified && read.trusted && !read.data_matches && read.read_status_message.is_none());
    let json = serde_json::to_value(&finding).expect("json");
    assert_eq!(json["signatureStatus"], "valid");
    assert_eq!(json["header"]["signatureDate"], "2026-11-03");
    for status in [
        SignatureStatus::Valid,
        SignatureStatus::Invalid,
        SignatureStatus::UnknownCertificate,
        SignatureStatus::UntrustedAuthority,
        SignatureStatus::CertificateExpired,
        SignatureStatus::NotChecked,
    ] {
        assert_eq!(serde_json::to_value(status).ok(), Some(serde_json::Value::from(status.as_str())));
    }
}

#[test]
fn reader_line_endings_are_ignored() {
    let mut sealed = seal(&format!("{}{INVOICE}", header(3, "FR000001", "264B", "264B", "01")));
    sealed.extend(b"\r\n");
    assert_eq!(analyse(&sealed, &store(true)).signature_status, SignatureStatus::Valid);
}

// ---- the trust store ------------------------------------------------------------------------------------

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/2ddoc")
}

#[test]
fn every_shipped_signer_certificate_belongs_to_an_authority_of_the_trust_list() {
    let trust = store(false);
    assert!(trust.warnings().is_empty(), "{:#?}", trust.warnings());
    let authorities: BTreeMap<_, _> = trust.authorities().map(|a| (a.id.as_str(), a.source)).collect();
    assert!(authorities.values().all(|s| *s == CertificateSource::TrustList));
    let files: Vec<String> = std::fs::read_dir(data_dir().join("certs"))
        .expect("certs dir")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    let signers: Vec<&String> = files.iter().filter(|f| f.contains('_')).collect();
    assert_eq!(trust.certificates().count(), signers.len());
    for file in signers {
        let (ca, cert) = file.trim_end_matches(".der").split_once('_').unwrap_or_default();
        assert!(authorities.contains_key(ca), "{file}");
        assert!(
            matches!(trust.lookup(ca, cert), CertificateLookup::Found(c) if c.source == CertificateSource::Embedded),
            "{file}"
        );
    }
    let mut kinds = BTreeMap::<&str, usize>::new();
    for cert in trust.certificates() {
        let kind = match cert.key {
            PublicKey::EcdsaP256(_) => "p256",
            PublicKey::EcdsaP384(_) => "p384",
            PublicKey::Rsa(_) => "rsa",
            PublicKey::Unsupported(ref what) => panic!("{}_{}: {what}", cert.ca_id, cert.cert_id),
        };
        *kinds.entry(kind).or_default() += 1;
    }
    assert_eq!(kinds, BTreeMap::from([("p256", 222), ("p384", 4), ("rsa", 3)]));
}

#[test]
fn the_embedded_list_mirrors_the_data_directory() {
    let mut files: Vec<String> = std::fs::read_dir(data_dir().join("certs"))
        .expect("certs dir")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    files.sort();
    let mut listed: Vec<String> = embedded::CERTIFICATES.iter().map(|(n, _)| format!("{n}.der")).collect();
    listed.sort();
    assert_eq!(files, listed, "regenerate embedded.rs after changing worker/data/2ddoc/certs");
    for (name, der) in embedded::CERTIFICATES {
        assert_eq!(
            std::fs::read(data_dir().join("certs").join(format!("{name}.der"))).ok().as_deref(),
            Some(*der)
        );
    }
}

#[test]
fn the_test_authority_only_when_accepted() {
    assert!(matches!(store(false).lookup("FR00", "0001"), CertificateLookup::UntrustedAuthority));
    let accepted = store(true);
    let CertificateLookup::Found(cert) = accepted.lookup("FR00", "0001") else {
        panic!("FR00/0001 missing")
    };
    assert!(cert.test_authority && matches!(cert.key, PublicKey::EcdsaP256(_)));
    assert_eq!(cert.not_after.date_naive().to_string(), "2015-11-01");
}

#[test]
fn operator_directory() {
    let dir = std::env::temp_dir().join(format!("sceau-trust-{}-{}", std::process::id(), line!()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let certs = data_dir().join("certs");
    let read = |name: &str| std::fs::read(certs.join(name)).expect("cert");
    let pem = |der: &[u8]| {
        let b64 = data_encoding::BASE64.encode(der);
        let lines: Vec<&str> = b64.as_bytes().chunks(64).filter_map(|c| std::str::from_utf8(c).ok()).collect();
        format!("-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n", lines.join("\n"))
    };
    let write = |name: &str, bytes: &[u8]| std::fs::write(dir.join(name), bytes).expect("write");
    write("FR03_EDF0.pem", pem(&read("FR03_EDF0.der")).as_bytes()); // valid chain, but already shipped
    write("FR03_ABCD.der", &read("FR03_EDF1.der")); // CN EDF1 under another name
    write("FR04_EDF2.der", &read("FR03_EDF2.der")); // signed by FR03, claimed for FR04
    write("FR99_0001.der", &read("FR03_EDF3.der")); // unknown authority
    write("FR00_0002.der", &read("FR03_EDF4.der")); // the test authority is configuration only
    write("junk.der", b"not a certificate");
    write("FR03_EDF5.der", b"not a certificate");
    write("README.txt", b"ignored: neither .der nor .pem");
    let trust = TrustStore::build(&TrustOptions {
        accept_test_ca: false,
        extra_dir: Some(dir.clone()),
    })
    .expect("store");
    let warnings = trust.warnings().join("\n");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(trust.warnings().len(), 7, "{warnings}");
    for expected in [
        "FR03_EDF0 skipped: a certificate with this id is already loaded",
        "FR03_ABCD skipped: its subject CN is Some(\"EDF1\"), not ABCD",
        "FR04_EDF2 skipped: no CA certificate of FR04 signed it",
        "FR99_0001 skipped: authority FR99 is not trusted",
        "FR00_0002 skipped: the test authority is accepted by configuration only",
        "junk skipped: the name is neither",
        "FR03_EDF5 skipped: not an X.509 certificate",
    ] {
        assert!(warnings.contains(expected), "missing '{expected}' in:\n{warnings}");
    }
    assert!(matches!(trust.lookup("FR03", "ABCD"), CertificateLookup::UnknownCertificate));
    let missing = TrustOptions {
        accept_test_ca: false,
        extra_dir: Some(PathBuf::from("/nonexistent/sceau-trust")),
    };
    assert!(matches!(TrustStore::build(&missing), Err(TrustError::Directory { .. })));
}

#[test]
fn an_operator_certificate_extends_the_store() {
    // A signer certificate missing from the shipped set is used once in the directory: a store with the trust
    // list only stands for a release that lacks it.
    let der = std::fs::read(data_dir().join("certs/FR03_EDF0.der")).expect("cert");
    let mut trust = TrustStore::trust_list_only();
    assert!(matches!(trust.lookup("FR03", "EDF0"), CertificateLookup::UnknownCertificate));
    trust.add_for_test("FR03_EDF0", &der);
    assert!(trust.warnings().is_empty(), "{:?}", trust.warnings());
    let CertificateLookup::Found(cert) = trust.lookup("FR03", "EDF0") else {
        panic!("FR03/EDF0 not added")
    };
    assert_eq!((cert.source, cert.test_authority), (CertificateSource::Directory, false));
    assert_eq!(cert.not_after.date_naive().to_string(), "2019-08-31");
}

#[test]
fn arbitrary_input_never_panics_and_prefixes_never_verify() {
    let trust = store(true);
    let sealed = seal(&format!("{}{INVOICE}", header(4, "FR000001", "264B", "264B", "01")));
    for len in 0..sealed.len() {
        if let Ok(finding) = analyse_payload(&sealed[..len], &trust) {
            assert_ne!(finding.signature_status, SignatureStatus::Valid, "prefix of {len} bytes");
        }
    }
    // Deterministic pseudo-random payloads over the bytes that matter to the parser.
    let alphabet = b"DC0412FRABZ9 \x1d\x1e\x1f\xdc\xff\x00=";
    let mut state: u64 = 0x2D_D0C5;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut binary_header = vec![0xDC, 0x04, 0x7B, 0xA7, 0x7B, 0x9D, 0x20, 0x0F, 0x2D, 0x0A];
    binary_header.extend([0xA9, 0x67, 0x4A, 0xA9, 0x67, 0x4A, 0x07, 0x00, 0x01]);
    for round in 0..6000 {
        let len = (next() % 200) as usize;
        let mut payload = match round % 3 {
            0 => binary_header.clone(),
            _ => b"DC04FR000001264B264B0101FR".to_vec(),
        };
        payload.extend((0..len).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]));
        let _ = analyse_payload(&payload, &trust);
    }
}
