//! End-to-end tests of the MRZ text layer: ICAO specimens, the identity samples of the shared
//! manifest, zones produced by the encoder and then damaged, and the findings the engine gets.

use chrono::NaiveDate;
use domain::vocabulary::Severity;

use super::*;

fn d(y: i32, m: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, day).unwrap()
}

/// The manifest's `referenceDate`.
fn reference_date() -> NaiveDate {
    d(2026, 11, 22)
}

fn parse_ref(lines: &[&str]) -> Mrz {
    parse_at(lines, reference_date()).unwrap_or_else(|e| panic!("{lines:?}: {e}"))
}

fn codes(findings: &MrzFindings) -> Vec<&str> {
    findings.anomalies.iter().map(|a| a.code.as_str()).collect()
}

fn checks(mrz: &Mrz) -> Vec<(&'static str, bool)> {
    mrz.checks.iter().map(|c| (c.field.as_str(), c.ok)).collect()
}

/// A valid zone of `format` for a fictitious holder, to be adjusted by each test.
fn holder(format: MrzFormat) -> Mrz {
    let legacy = format == MrzFormat::FrenchIdLegacy;
    Mrz {
        format,
        lines: Vec::new(),
        document_code: if format == MrzFormat::Td3 { "P" } else { "ID" }.into(),
        issuing_state: "FRA".into(),
        surname: "DEMO".into(),
        given_names: "CAMILLE".into(),
        document_number: if legacy { "150675012345" } else { "X4RTBPFW4" }.into(),
        nationality: "FRA".into(),
        birth_date: Some(d(1990, 5, 5)),
        sex: Some(Sex::Female),
        expiry_date: if legacy { None } else { Some(d(2031, 6, 30)) },
        issue_month: if legacy { Some(d(2015, 6, 1)) } else { None },
        optional_data: if legacy { "750123" } else { "" }.into(),
        optional_data_2: String::new(),
        checks: Vec::new(),
        corrections: Vec::new(),
        unreadable: Vec::new(),
    }
}

/// Encodes, parses back, and checks that every field survived and every check digit holds.
fn round_trip(mrz: &Mrz) -> Mrz {
    let lines = encode(mrz);
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let parsed = parse_ref(&refs);
    assert_eq!(parsed.lines, lines);
    assert!(parsed.checks.iter().all(|c| c.ok), "{lines:?}: {:?}", parsed.checks);
    assert!(parsed.unreadable.is_empty() && parsed.corrections.is_empty(), "{parsed:?}");
    let expected = Mrz {
        lines: lines.clone(),
        checks: parsed.checks.clone(),
        ..mrz.clone()
    };
    assert_eq!(parsed, expected);
    parsed
}

/// `lines` with the character at (`line`, `column`) replaced.
fn with_char(lines: &[String], line: usize, column: usize, c: char) -> Vec<String> {
    let mut out = lines.to_vec();
    out[line].replace_range(column..column + 1, &c.to_string());
    out
}

fn parse_owned(lines: &[String]) -> Mrz {
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    parse_ref(&refs)
}

mod specimens {
    use super::*;

    #[test]
    fn icao_td3_specimen_verifies() {
        let mrz = parse_ref(&[
            "P<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<<<<<<<<<",
            "L898902C36UTO7408122F1204159ZE184226B<<<<<10",
        ]);
        assert_eq!(mrz.format, MrzFormat::Td3);
        assert_eq!((mrz.document_code.as_str(), mrz.issuing_state.as_str()), ("P", "UTO"));
        assert_eq!((mrz.surname.as_str(), mrz.given_names.as_str()), ("ERIKSSON", "ANNA MARIA"));
        assert_eq!((mrz.document_number.as_str(), mrz.nationality.as_str()), ("L898902C3", "UTO"));
        assert_eq!(
            (mrz.birth_date, mrz.sex, mrz.expiry_date),
            (Some(d(1974, 8, 12)), Some(Sex::Female), Some(d(2012, 4, 15)))
        );
        assert_eq!(mrz.optional_data, "ZE184226B");
        assert_eq!(
            checks(&mrz),
            [
                ("documentNumber", true),
                ("birthDate", true),
                ("expiryDate", true),
                ("personalNumber", true),
                ("composite", true)
            ]
        );
        let findings = findings(&mrz, reference_date());
        assert_eq!(findings.document_type.as_str(), "passeport");
        assert_eq!(findings.document_country, None, "Utopia is no country");
        assert!(findings.expired);
        assert_eq!(codes(&findings), ["document_expired", "mrz_unknown_country"]);
    }

    #[test]
    fn icao_td1_specimen_verifies() {
        let mrz = parse_ref(&[
            "I<UTOD231458907<<<<<<<<<<<<<<<",
            "7408122F1204159UTO<<<<<<<<<<<6",
            "ERIKSSON<<ANNA<MARIA<<<<<<<<<<",
        ]);
        assert_eq!(mrz.format, MrzFormat::Td1);
        assert_eq!((mrz.document_code.as_str(), mrz.document_number.as_str()), ("I", "D23145890"));
        assert_eq!((mrz.surname.as_str(), mrz.given_names.as_str()), ("ERIKSSON", "ANNA MARIA"));
        assert_eq!((mrz.birth_date, mrz.expiry_date), (Some(d(1974, 8, 12)), Some(d(2012, 4, 15))));
        assert_eq!(
            checks(&mrz),
            [
                ("documentNumber", true),
                ("birthDate", true),
                ("expiryDate", true),
                ("composite", true)
            ]
        );
        assert_eq!(findings(&mrz, reference_date()).document_type.as_str(), "carte_identite");
    }

    #[test]
    fn icao_td2_specimen_verifies() {
        let mrz = parse_ref(&["I<UTOERIKSSON<<ANNA<MARIA<<<<<<<<<<<", "D231458907UTO7408122F1204159<<<<<<<6"]);
        assert_eq!(mrz.format, MrzFormat::Td2);
        assert_eq!((mrz.document_number.as_str(), mrz.surname.as_str()), ("D23145890", "ERIKSSON"));
        assert_eq!(
            checks(&mrz),
            [
                ("documentNumber", true),
                ("birthDate", true),
                ("expiryDate", true),
                ("composite", true)
            ]
        );
    }

    #[test]
    fn icao_td1_long_document_number_continues_in_optional_data() {
        // ICAO 9303 part 5's example of a 12-character number: filler in the check digit place,
        // the last 3 characters and the check digit at the start of the optional data.
        let mrz = parse_ref(&[
            "I<UTOD23145890<7349<<<<<<<<<<<",
            "3407127M9507122UTO<<<<<<<<<<<2",
            "STEVENSON<<PETER<JOHN<<<<<<<<<",
        ]);
        assert_eq!(mrz.document_number, "D23145890734");
        assert_eq!(mrz.optional_data, "");
        assert_eq!(
            checks(&mrz),
            [
                ("documentNumber", true),
                ("birthDate", true),
                ("expiryDate", true),
                ("composite", true)
            ]
        );
        let again = round_trip(&Mrz {
            optional_data: "OPT".into(),
            ..mrz
        });
        assert_eq!(again.lines[0], "I<UTOD23145890<7349<OPT<<<<<<<");
    }

    #[test]
    fn long_document_number_digit_excludes_the_filler() {
        // Belgian card (PRADO BEL-BO-11005): `600001795015` has check digit 2, which counting the
        // filler in the check digit place would make 3.
        let card = round_trip(&Mrz {
            issuing_state: "BEL".into(),
            document_number: "600001795015".into(),
            ..holder(MrzFormat::Td1)
        });
        assert!(card.lines[0].starts_with("IDBEL600001795<0152<"), "{:?}", card.lines);
    }

    #[test]
    fn icao_td2_long_document_number_continues_in_optional_data() {
        let mrz = parse_ref(&["I<UTOSTEVENSON<<PETER<JOHN<<<<<<<<<<", "D23145890<UTO3407127M95071227349<<<8"]);
        assert_eq!((mrz.document_number.as_str(), mrz.optional_data.as_str()), ("D23145890734", ""));
        assert_eq!((mrz.surname.as_str(), mrz.given_names.as_str()), ("STEVENSON", "PETER JOHN"));
        assert_eq!(
            checks(&mrz),
            [
                ("documentNumber", true),
                ("birthDate", true),
                ("expiryDate", true),
                ("composite", true)
            ]
        );
    }
}

/// The identity samples of `shared/data/samples/manifest.json` with an MRZ, written out so the
/// tests do not depend on the shared directory (a second test reads the manifest itself).
mod samples {
    use super::*;

    struct Sample {
        path: &'static str,
        lines: &'static [&'static str],
        format: MrzFormat,
        number: &'static str,
        surname: &'static str,
        given: &'static str,
        birth: NaiveDate,
        expiry: Option<NaiveDate>,
        country: &'static str,
        document_type: &'static str,
        age: u32,
        failing: &'static [&'static str],
        anomalies: &'static [&'static str],
    }

    fn samples() -> Vec<Sample> {
        vec![
            Sample {
                path: "identite/sample-cni-ancienne-valide.png",
                lines: &["IDFRAESSAYE<<<<<<<<<<<<<<<<<<<131022", "1809131055122JULIE<<<<<<<<<8507077F7"],
                format: MrzFormat::FrenchIdLegacy,
                number: "180913105512",
                surname: "ESSAYE",
                given: "JULIE",
                birth: d(1985, 7, 7),
                expiry: None,
                country: "FRA",
                document_type: "carte_identite",
                age: 41,
                failing: &[],
                anomalies: &[],
            },
            Sample {
                path: "identite/sample-cni-td1-valide.png",
                lines: &[
                    "IDFRAD3MX7KQ280<<<<<<<<<<<<<<<",
                    "9112012F3409154FRA<<<<<<<<<<<0",
                    "DEMO<<LOUISE<ANNE<<<<<<<<<<<<<",
                ],
                format: MrzFormat::Td1,
                number: "D3MX7KQ28",
                surname: "DEMO",
                given: "LOUISE ANNE",
                birth: d(1991, 12, 1),
                expiry: Some(d(2034, 9, 15)),
                country: "FRA",
                document_type: "carte_identite",
                age: 34,
                failing: &[],
                anomalies: &[],
            },
            Sample {
                path: "identite/sample-id-td1-bel-expiree.jpg",
                lines: &[
                    "IDBEL6012345670<<<<<<<<<<<<<<<",
                    "9005053F2509013BEL<<<<<<<<<<<8",
                    "PILOTE<<EMMA<<<<<<<<<<<<<<<<<<",
                ],
                format: MrzFormat::Td1,
                number: "601234567",
                surname: "PILOTE",
                given: "EMMA",
                birth: d(1990, 5, 5),
                expiry: Some(d(2025, 9, 1)),
                country: "BEL",
                document_type: "carte_identite",
                age: 36,
                failing: &[],
                anomalies: &["document_expired"],
            },
            Sample {
                path: "identite/sample-passeport-td3-cle-fausse.png",
                lines: &[
                    "P<FRATESTEUR<<MARTIN<<<<<<<<<<<<<<<<<<<<<<<<",
                    "22QR112235FRA6610300M3207073<<<<<<<<<<<<<<08",
                ],
                format: MrzFormat::Td3,
                number: "22QR11223",
                surname: "TESTEUR",
                given: "MARTIN",
                birth: d(1966, 10, 30),
                expiry: Some(d(2032, 7, 7)),
                country: "FRA",
                document_type: "passeport",
                age: 60,
                failing: &["documentNumber", "composite"],
                anomalies: &["mrz_check_digit_mismatch", "mrz_composite_mismatch"],
            },
            Sample {
                path: "identite/sample-passeport-td3-valide.jpg",
                lines: &[
                    "P<FRADEMONSTRATION<<ETIENNE<<<<<<<<<<<<<<<<<",
                    "21XY543215FRA7904222M3103094<<<<<<<<<<<<<<08",
                ],
                format: MrzFormat::Td3,
                number: "21XY54321",
                surname: "DEMONSTRATION",
                given: "ETIENNE",
                birth: d(1979, 4, 22),
                expiry: Some(d(2031, 3, 9)),
                country: "FRA",
                document_type: "passeport",
                age: 47,
                failing: &[],
                anomalies: &[],
            },
        ]
    }

    #[test]
    fn every_sample_gives_its_manifest_findings() {
        for sample in samples() {
            let mrz = parse_ref(sample.lines);
            let context = sample.path;
            assert_eq!(mrz.format, sample.format, "{context}");
            assert_eq!(mrz.document_number, sample.number, "{context}");
            assert_eq!(
                (mrz.surname.as_str(), mrz.given_names.as_str()),
                (sample.surname, sample.given),
                "{context}"
            );
            assert_eq!((mrz.birth_date, mrz.expiry_date), (Some(sample.birth), sample.expiry), "{context}");
            let failing: Vec<&str> = mrz.checks.iter().filter(|c| !c.ok).map(|c| c.field.as_str()).collect();
            assert_eq!(failing, sample.failing, "{context}");
            assert!(mrz.unreadable.is_empty() && mrz.corrections.is_empty(), "{context}");
            let findings = findings(&mrz, reference_date());
            assert_eq!(findings.document_type.as_str(), sample.document_type, "{context}");
            assert_eq!(findings.document_country.as_deref(), Some(sample.country), "{context}");
            assert_eq!(findings.holder_age, Some(sample.age), "{context}");
            assert_eq!(codes(&findings), sample.anomalies, "{context}");
        }
    }

    #[test]
    fn valid_samples_round_trip_through_the_encoder() {
        for sample in samples().iter().filter(|s| s.failing.is_empty()) {
            let mrz = parse_ref(sample.lines);
            assert_eq!(encode(&mrz), sample.lines, "{}", sample.path);
        }
    }

    #[test]
    fn legacy_sample_validity_follows_the_15_year_rule() {
        let mrz = parse_ref(samples()[0].lines);
        assert_eq!(mrz.issue_month, Some(d(2018, 9, 1)));
        assert_eq!(mrz.optional_data, "131022");
        assert_eq!(checks(&mrz), [("documentNumber", true), ("birthDate", true), ("composite", true)]);
        let findings = findings(&mrz, reference_date());
        // The manifest's validUntil, 2033-09-03, is within the issue month's anniversary.
        assert_eq!(findings.valid_until, Some(d(2033, 9, 29)));
        assert!(!findings.expired);
    }

    /// Reads the shared manifest itself (`shared/` sits beside the project, as on CI), so a
    /// sample added there is not left untested.
    #[test]
    fn manifest_identity_samples_match() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/samples/manifest.json");
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e} (the reference data must sit beside the project)"));
        let manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
        let reference = NaiveDate::parse_from_str(manifest["referenceDate"].as_str().unwrap(), "%Y-%m-%d").unwrap();
        let mut seen = 0;
        for file in manifest["files"].as_array().unwrap() {
            let expected = &file["expected"]["mrz"];
            let Some(lines) = expected["mrzLines"].as_array() else { continue };
            seen += 1;
            let lines: Vec<&str> = lines.iter().map(|l| l.as_str().unwrap()).collect();
            let mrz = parse_at(&lines, reference).unwrap();
            let context = file["path"].as_str().unwrap();
            let text = |key: &str| expected[key].as_str().map(str::to_owned);
            let date = |key: &str| text(key).map(|s| NaiveDate::parse_from_str(&s, "%Y-%m-%d").unwrap());
            assert_eq!(Some(mrz.format.as_str().to_owned()), text("mrzType"), "{context}");
            assert_eq!(Some(mrz.document_code.clone()), text("documentCode"), "{context}");
            assert_eq!(Some(mrz.issuing_state.clone()), text("issuingCountry"), "{context}");
            assert_eq!(Some(mrz.document_number.clone()), text("documentNumber"), "{context}");
            assert_eq!(Some(mrz.surname.clone()), text("surname"), "{context}");
            assert_eq!(Some(mrz.given_names.clone()), text("givenNames"), "{context}");
            assert_eq!(Some(mrz.nationality.clone()), text("nationality"), "{context}");
            assert_eq!(mrz.sex.map(|s| s.as_char().to_string()), text("sex"), "{context}");
            assert_eq!(mrz.birth_date, date("birthDate"), "{context}");
            assert_eq!(mrz.expiry_date, date("expiryDate"), "{context}");
            for (field, ok) in expected["checkDigits"].as_object().unwrap() {
                let check = mrz.checks.iter().find(|c| c.field.as_str() == field).map(|c| c.ok);
                assert_eq!(check, ok.as_bool(), "{context} {field}");
            }
            assert_eq!(Some(mrz.all_checks_ok()), expected["checkDigitsValid"].as_bool(), "{context}");
            let findings = findings(&mrz, reference);
            assert_eq!(Some(findings.expired), expected["expired"].as_bool(), "{context}");
            assert_eq!(
                findings.holder_age.map(u64::from),
                expected["ageAtReferenceDate"].as_u64(),
                "{context}"
            );
            assert_eq!(findings.holder_age.map(|age| age < 18), expected["minor"].as_bool(), "{context}");
            assert_eq!(
                findings.document_country,
                file["expected"]["documentCountry"].as_str().map(str::to_owned),
                "{context}"
            );
            if let Some(until) = date("validUntil") {
                let ours = findings.valid_until.unwrap();
                assert!(
                    ours >= until && ours.format("%Y-%m").to_string() == until.format("%Y-%m").to_string(),
                    "{context}"
                );
            }
            let rejected = findings.anomalies.iter().any(|a| a.severity == Severity::Reject);
            assert_eq!(rejected, file["verdict"] == "non_conforme", "{context}");
        }
        assert!(seen >= 5, "the manifest lists at least the five MRZ samples");
    }
}

mod generated {
    use super::*;

    #[test]
    fn every_layout_round_trips() {
        for format in [MrzFormat::Td1, MrzFormat::Td2, MrzFormat::Td3, MrzFormat::FrenchIdLegacy] {
            let mrz = round_trip(&holder(format));
            let findings = findings(&mrz, reference_date());
            assert_eq!(codes(&findings), Vec::<&str>::new(), "{format:?}");
            assert_eq!(findings.holder_age, Some(36));
        }
        round_trip(&Mrz {
            given_names: "JEAN PIERRE".into(),
            surname: "DE LA CRUZ".into(),
            ..holder(MrzFormat::Td3)
        });
        round_trip(&Mrz {
            optional_data: "AB12".into(),
            optional_data_2: "XYZ".into(),
            ..holder(MrzFormat::Td1)
        });
        round_trip(&Mrz {
            document_number: "AB123456789".into(),
            optional_data: "Q".into(),
            ..holder(MrzFormat::Td2)
        });
        round_trip(&Mrz {
            document_code: "IR".into(),
            sex: Some(Sex::Unspecified),
            ..holder(MrzFormat::Td1)
        });
    }

    #[test]
    fn german_d_is_deu() {
        let mrz = round_trip(&Mrz {
            document_code: "ID".into(),
            issuing_state: "D".into(),
            nationality: "D".into(),
            ..holder(MrzFormat::Td1)
        });
        assert!(mrz.lines[0].starts_with("IDD<<"), "{:?}", mrz.lines);
        let findings = findings(&mrz, reference_date());
        assert_eq!(findings.document_country.as_deref(), Some("DEU"));
        assert!(findings.anomalies.is_empty());
        let passport = round_trip(&Mrz {
            issuing_state: "D".into(),
            nationality: "D".into(),
            ..holder(MrzFormat::Td3)
        });
        assert_eq!(
            super::findings(&passport, reference_date()).document_country.as_deref(),
            Some("DEU")
        );
    }

    #[test]
    fn holder_born_in_2012_is_a_minor() {
        let mrz = round_trip(&Mrz {
            birth_date: Some(d(2012, 3, 14)),
            ..holder(MrzFormat::Td1)
        });
        assert_eq!(mrz.lines[1].get(0..6), Some("120314"));
        assert_eq!(findings(&mrz, reference_date()).holder_age, Some(14));
    }

    #[test]
    fn organisations_and_refugees_have_no_country_and_no_anomaly() {
        for state in ["UNO", "XXA", "XXB"] {
            let mrz = round_trip(&Mrz {
                issuing_state: state.into(),
                ..holder(MrzFormat::Td3)
            });
            let findings = findings(&mrz, reference_date());
            assert_eq!(findings.document_country, None, "{state}");
            assert!(findings.anomalies.is_empty(), "{state}");
        }
        let british = round_trip(&Mrz {
            issuing_state: "GBD".into(),
            ..holder(MrzFormat::Td3)
        });
        assert_eq!(findings(&british, reference_date()).document_country.as_deref(), Some("GBR"));
    }

    #[test]
    fn document_codes_map_to_document_types() {
        let type_of = |format: MrzFormat, code: &str| {
            let mrz = round_trip(&Mrz {
                document_code: code.into(),
                ..holder(format)
            });
            findings(&mrz, reference_date()).document_type
        };
        assert_eq!(type_of(MrzFormat::Td3, "P").as_str(), "passeport");
        assert_eq!(type_of(MrzFormat::Td3, "PD").as_str(), "passeport");
        assert_eq!(type_of(MrzFormat::Td1, "ID").as_str(), "carte_identite");
        assert_eq!(type_of(MrzFormat::Td1, "I").as_str(), "carte_identite");
        assert_eq!(type_of(MrzFormat::Td2, "I").as_str(), "carte_identite");
        assert_eq!(type_of(MrzFormat::Td1, "IR").as_str(), "titre_sejour");
        assert_eq!(type_of(MrzFormat::Td1, "AR").as_str(), "titre_sejour");
        assert_eq!(type_of(MrzFormat::Td1, "AC").as_str(), "autre_identite");
        assert_eq!(type_of(MrzFormat::FrenchIdLegacy, "ID").as_str(), "carte_identite");
    }

    #[test]
    fn visas_have_no_composite() {
        for format in [MrzFormat::Td2, MrzFormat::Td3] {
            let mrz = round_trip(&Mrz {
                document_code: "V".into(),
                optional_data: "ENTRIES2".into(),
                ..holder(format)
            });
            assert_eq!(
                checks(&mrz),
                [("documentNumber", true), ("birthDate", true), ("expiryDate", true)],
                "{format:?}"
            );
            assert_eq!(findings(&mrz, reference_date()).document_type.as_str(), "autre_identite");
        }
    }
}

mod damaged {
    use super::*;

    /// Each field check digit of each layout, by (line, column), with the field it guards.
    fn digit_positions(format: MrzFormat) -> Vec<(MrzField, usize, usize)> {
        use MrzField::*;
        match format {
            MrzFormat::Td1 => vec![(DocumentNumber, 0, 14), (BirthDate, 1, 6), (ExpiryDate, 1, 14), (Composite, 1, 29)],
            MrzFormat::Td2 => vec![(DocumentNumber, 1, 9), (BirthDate, 1, 19), (ExpiryDate, 1, 27), (Composite, 1, 35)],
            MrzFormat::Td3 => vec![
                (DocumentNumber, 1, 9),
                (BirthDate, 1, 19),
                (ExpiryDate, 1, 27),
                (PersonalNumber, 1, 42),
                (Composite, 1, 43),
            ],
            MrzFormat::FrenchIdLegacy => vec![(DocumentNumber, 1, 12), (BirthDate, 1, 33), (Composite, 1, 35)],
        }
    }

    fn other_digit(c: char) -> char {
        if c == '3' {
            '4'
        } else {
            '3'
        }
    }

    #[test]
    fn every_wrong_check_digit_is_reported_alone() {
        for format in [MrzFormat::Td1, MrzFormat::Td2, MrzFormat::Td3, MrzFormat::FrenchIdLegacy] {
            let lines = encode(&holder(format));
            for (field, line, column) in digit_positions(format) {
                let original = lines[line].as_bytes()[column] as char;
                let mrz = parse_owned(&with_char(&lines, line, column, other_digit(original)));
                let failing: Vec<MrzField> = mrz.checks.iter().filter(|c| !c.ok).map(|c| c.field).collect();
                // A field digit is also covered by the composite (except the personal number's
                // in TD3 and every digit of the French legacy card, whose composite covers
                // both lines whole).
                let expected_code = if field == MrzField::Composite {
                    "mrz_composite_mismatch"
                } else {
                    "mrz_check_digit_mismatch"
                };
                assert_eq!(failing.first(), Some(&field), "{format:?} {field:?}");
                let found = findings(&mrz, reference_date());
                assert!(
                    codes(&found).contains(&expected_code),
                    "{format:?} {field:?}: {:?}",
                    found.anomalies
                );
                assert!(
                    found.anomalies.iter().all(|a| a.severity == Severity::Reject),
                    "{format:?} {field:?}"
                );
            }
        }
    }

    #[test]
    fn a_changed_field_breaks_its_digit_and_the_composite() {
        let lines = encode(&holder(MrzFormat::Td3));
        // The birth year pushed back by ten years, the digit left as it was.
        let forged = parse_owned(&with_char(&lines, 1, 13, '8'));
        assert_eq!(forged.birth_date, Some(d(1980, 5, 5)));
        assert_eq!(forged.check(MrzField::BirthDate), Some(false));
        assert_eq!(forged.check(MrzField::Composite), Some(false));
        let found = findings(&forged, reference_date());
        assert_eq!(codes(&found), ["mrz_check_digit_mismatch", "mrz_composite_mismatch"]);
        assert!(found.anomalies[0].message.contains("(birthDate)"), "{}", found.anomalies[0].message);
    }

    #[test]
    fn expiry_before_the_reference_date_is_reported() {
        let expired = round_trip(&Mrz {
            expiry_date: Some(d(2026, 11, 21)),
            ..holder(MrzFormat::Td1)
        });
        let found = findings(&expired, reference_date());
        assert!(found.expired);
        assert_eq!(codes(&found), ["document_expired"]);
        assert_eq!(found.anomalies[0].severity, Severity::Reject);
        let last_day = round_trip(&Mrz {
            expiry_date: Some(reference_date()),
            ..holder(MrzFormat::Td1)
        });
        assert!(!findings(&last_day, reference_date()).expired, "valid through its expiry date");
    }

    #[test]
    fn legacy_card_issued_to_a_minor_expires_after_10_years() {
        let minor = Mrz {
            document_number: "150675012345".into(),
            birth_date: Some(d(2001, 5, 10)),
            ..holder(MrzFormat::FrenchIdLegacy)
        };
        let mrz = round_trip(&minor);
        let found = findings(&mrz, reference_date());
        assert_eq!(found.valid_until, Some(d(2025, 6, 29)));
        assert!(found.expired);
        assert_eq!(codes(&found), ["document_expired"]);
        let adult = round_trip(&holder(MrzFormat::FrenchIdLegacy));
        assert_eq!(findings(&adult, reference_date()).valid_until, Some(d(2030, 6, 29)));
    }

    #[test]
    fn ocr_confusions_in_typed_fields_are_undone_and_recorded() {
        let lines = encode(&holder(MrzFormat::Td3));
        // `O` for `0` and `S` for `5` in the birth date, `1` for `I` in the given names.
        let edits = [(1, 15, 'O'), (1, 16, 'S'), (0, 14, '1')];
        let misread = edits
            .iter()
            .fold(lines.clone(), |acc, &(line, column, c)| with_char(&acc, line, column, c));
        let mrz = parse_owned(&misread);
        assert_eq!(mrz.given_names, "CAMILLE");
        assert_eq!(mrz.birth_date, Some(d(1990, 5, 5)));
        assert_eq!(mrz.lines, lines);
        let fixed: Vec<(MrzField, char, char)> = mrz.corrections.iter().map(|c| (c.field, c.read, c.corrected)).collect();
        assert_eq!(
            fixed,
            [
                (MrzField::GivenNames, '1', 'I'),
                (MrzField::BirthDate, 'O', '0'),
                (MrzField::BirthDate, 'S', '5'),
            ]
        );
        assert!(mrz.all_checks_ok());
        assert!(findings(&mrz, reference_date()).anomalies.is_empty());
    }

    #[test]
    fn document_numbers_are_not_guessed() {
        let lines = encode(&holder(MrzFormat::Td3));
        // `X4RTBPFW4`: an 8 read for the B stays an 8, and the check digit catches it. (An O
        // for a 4 would not be caught: their values differ by 20, invisible modulo 10.)
        let mrz = parse_owned(&with_char(&lines, 1, 4, '8'));
        assert_eq!(mrz.document_number, "X4RT8PFW4");
        assert!(mrz.corrections.is_empty());
        assert_eq!(mrz.check(MrzField::DocumentNumber), Some(false));
    }

    #[test]
    fn unreadable_characters_are_a_warning_not_a_mismatch() {
        let lines = encode(&holder(MrzFormat::Td1));
        // The expiry date's digit is also under the composite: neither can be decided.
        let mrz = parse_owned(&with_char(&lines, 1, 14, '?'));
        assert_eq!(mrz.unreadable, [MrzField::ExpiryDate, MrzField::Composite]);
        assert_eq!(mrz.check(MrzField::ExpiryDate), None);
        assert_eq!(mrz.check(MrzField::Composite), None);
        assert_eq!(mrz.check(MrzField::BirthDate), Some(true));
        let found = findings(&mrz, reference_date());
        assert_eq!(codes(&found), ["mrz_unreadable_field"]);
        assert_eq!(found.anomalies[0].severity, Severity::Warning);
        assert!(!mrz.all_checks_ok());

        let accented = parse_owned(&with_char(&lines, 2, 2, 'É'));
        assert_eq!(accented.unreadable, [MrzField::Surname]);
        assert_eq!(accented.unreadable.len(), 1);
        assert_eq!(accented.lines[2].chars().count(), 30);
    }

    #[test]
    fn impossible_dates_are_unreadable() {
        let lines = encode(&holder(MrzFormat::Td3));
        let mrz = parse_owned(&with_char(&lines, 1, 15, '1'));
        // Month 15: no date, the field flagged, and its digit (still computable) fails.
        assert_eq!(mrz.birth_date, None);
        assert!(mrz.unreadable.contains(&MrzField::BirthDate));
        let found = findings(&mrz, reference_date());
        assert_eq!(found.holder_age, None);
        assert!(codes(&found).contains(&"mrz_unreadable_field"));
    }

    #[test]
    fn surrounding_whitespace_case_and_blank_lines_are_tolerated() {
        let lines = encode(&holder(MrzFormat::Td1));
        let messy = format!("\n  {}  \n\n{}\t\n {} ", lines[0].to_lowercase(), lines[1], lines[2]);
        let mrz = parse_ref(&[messy.as_str()]);
        assert_eq!(mrz.lines, lines);
        assert!(mrz.all_checks_ok());
        let separate = parse_ref(&["", lines[0].as_str(), " ", lines[1].as_str(), lines[2].as_str(), ""]);
        assert_eq!(separate.lines, lines);
    }

    #[test]
    fn garbage_never_panics() {
        let inputs: Vec<Vec<String>> = vec![
            vec!["é".repeat(30), "ß".repeat(30), "<".repeat(30)],
            vec!["<".repeat(44), "<".repeat(44)],
            vec!["?".repeat(36), "?".repeat(36)],
            vec!["IDFRA".into(), "1".into()],
            vec![format!("IDFRA{}", "9".repeat(31)), "9".repeat(36)],
            vec![format!("I<UTO{}<{}", "A".repeat(9), "Z".repeat(15)), "1".repeat(30), "0".repeat(30)],
            vec![format!("I<UTO{}<{}", "A".repeat(9), "<".repeat(15)), "<".repeat(30), "<".repeat(30)],
        ];
        for input in &inputs {
            let refs: Vec<&str> = input.iter().map(String::as_str).collect();
            if let Ok(mrz) = parse_at(&refs, reference_date()) {
                let _ = findings(&mrz, reference_date());
                let _ = encode(&mrz);
            }
        }
    }
}
