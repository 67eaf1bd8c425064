//! Where settings come from, each a figment provider: `sceau.toml`, the `SCEAU_*` variables and
//! the binary's flags. Variables and flags are text, read by the same readers as the file (see
//! [`super::de`]), so the three agree on every value.

use figment::value::{Dict, Map, Value};
use figment::{Error, Metadata, Profile, Provider};
use serde::de::{self, Deserialize, Deserializer, Visitor};

/// Settings that carry a credential, which may also be read from a file named by
/// `SCEAU_<KEY>_FILE` (a Docker or Kubernetes secret), so the credential never sits in the
/// environment a `docker inspect` or `/proc/<pid>/environ` shows.
pub const FROM_FILE: &[&str] = &["amqp_url", "redis_url", "smtp_url", "external_engine_token"];

/// Settings given as text by name (`SCEAU_WORKERS`), as variables or flags.
pub struct Texts {
    name: &'static str,
    values: Vec<(String, String)>,
}

impl Texts {
    /// `pairs` whose names are settings: `SCEAU_` and the setting's key in upper case. Names of
    /// no setting are refused when `strict`, and left out otherwise (the environment holds
    /// variables of other programs that happen to start with `SCEAU_`).
    pub fn new(
        name: &'static str,
        pairs: impl IntoIterator<Item = (String, String)>,
        keys: &[&str],
        strict: bool,
    ) -> Result<Texts, String> {
        let mut values = Vec::new();
        for (var, value) in pairs {
            let key = var.strip_prefix("SCEAU_").map(str::to_ascii_lowercase);
            let from_file = key
                .as_deref()
                .and_then(|k| k.strip_suffix("_file"))
                .filter(|k| FROM_FILE.contains(k));
            if let Some(key) = from_file {
                values.push((key.to_owned(), read_secret(&var, &value)?));
                continue;
            }
            match key {
                Some(key) if keys.contains(&key.as_str()) => values.push((key, value)),
                _ if strict => return Err(format!("unknown setting {var}")),
                _ => {}
            }
        }
        Ok(Texts { name, values })
    }
}

impl Provider for Texts {
    fn metadata(&self) -> Metadata {
        Metadata::named(self.name)
    }

    fn data(&self) -> Result<Map<Profile, Dict>, Error> {
        let dict: Dict = self.values.iter().map(|(k, v)| (k.clone(), Value::from(v.clone()))).collect();
        Ok(Profile::Default.collect(dict))
    }
}

/// The first line of the file at `path`, without its line end; the message names the variable,
/// never the content.
fn read_secret(var: &str, path: &str) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{var}: cannot read {path}: {e}"))?;
    let value = text.lines().next().unwrap_or_default().trim().to_owned();
    if value.is_empty() {
        return Err(format!("{var}: {path} is empty"));
    }
    Ok(value)
}

/// The keys of a struct as serde reads them (renames applied): what it asks of a deserializer.
pub fn keys_of<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    struct Fields(Option<&'static [&'static str]>);

    impl<'de> Deserializer<'de> for &mut Fields {
        type Error = de::value::Error;

        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("only the field names are read"))
        }

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            self.0 = Some(fields);
            Err(de::Error::custom("only the field names are read"))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
            unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
        }
    }

    let mut fields = Fields(None);
    let _ = T::deserialize(&mut fields);
    fields.0.unwrap_or(&[])
}
