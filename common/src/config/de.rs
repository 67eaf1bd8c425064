//! How each setting is read from what a person writes: a TOML value or the text of a variable
//! (`SCEAU_WORKERS=3` arrives as text, `workers = 3` as a number; both mean 3). Every reader
//! trims, and an empty text means "unset" where a setting is optional.

use serde::de::{Deserializer, Error};
use serde::Deserialize;
use std::str::FromStr;
use std::time::Duration;

/// A value given natively or as text.
#[derive(Deserialize)]
#[serde(untagged)]
enum Given<T> {
    Native(T),
    Text(String),
}

/// A value of `T`, natively or as text parsed with `FromStr`; the text is quoted in the error
/// (no secret is read through this).
pub fn lenient<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr + Deserialize<'de>,
{
    match Given::<T>::deserialize(d)? {
        Given::Native(v) => Ok(v),
        Given::Text(text) => text
            .trim()
            .parse()
            .map_err(|_| D::Error::custom(format!("{text:?} is not a valid value"))),
    }
}

/// A boolean: `true`/`false`, or the words people put in variables (`1`, `yes`, `on`, `0`, `no`,
/// `off`, empty).
pub fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    match Given::<bool>::deserialize(d)? {
        Given::Native(v) => Ok(v),
        Given::Text(text) => match text.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Ok(true),
            "0" | "false" | "no" | "off" | "" => Ok(false),
            _ => Err(D::Error::custom(format!("{text:?} is not a boolean"))),
        },
    }
}

/// A scalar a person may have written where text is meant (`token = 12345` in the file).
#[derive(Deserialize)]
#[serde(untagged)]
enum Scalar {
    Text(String),
    Whole(i64),
    Number(f64),
    Flag(bool),
}

/// Optional text: an empty or blank value is unset.
pub fn text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let given = Option::<Scalar>::deserialize(d)?;
    Ok(given
        .map(|scalar| match scalar {
            Scalar::Text(s) => s,
            Scalar::Whole(n) => n.to_string(),
            Scalar::Number(n) => n.to_string(),
            Scalar::Flag(b) => b.to_string(),
        })
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty()))
}

/// A text setting that has a default: a blank value keeps it blank (the caller decides).
pub fn plain<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(text(d)?.unwrap_or_default())
}

/// An optional value parsed from text whose parser explains its own error (and does not echo the
/// value); blank is unset.
pub fn parsed<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr<Err = String>,
{
    text(d)?.map(|t| t.parse().map_err(D::Error::custom)).transpose()
}

/// An optional path: blank is unset.
pub fn path<'de, D: Deserializer<'de>>(d: D) -> Result<Option<std::path::PathBuf>, D::Error> {
    Ok(text(d)?.map(std::path::PathBuf::from))
}

/// Whole seconds, at least one.
pub fn seconds<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    Ok(Duration::from_secs(lenient::<D, u64>(d)?.max(1)))
}

/// Milliseconds, at least one.
pub fn millis<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    Ok(Duration::from_millis(lenient::<D, u64>(d)?.max(1)))
}

/// A comma-separated list, lower-cased (host names).
pub fn hosts<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    Ok(plain(d)?
        .split(',')
        .map(|h| h.trim().to_ascii_lowercase())
        .filter(|h| !h.is_empty())
        .collect())
}

/// Comma-separated CIDRs (a bare address is one host). Host bits set under the prefix are
/// refused: `10.0.0.1/8` is more likely a typo than a wish to trust all of 10/8.
pub fn cidrs<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<ipnet::IpNet>, D::Error> {
    plain(d)?
        .split(',')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(|c| {
            let net = match c.parse::<ipnet::IpNet>() {
                Ok(net) => net,
                Err(_) => c
                    .parse::<std::net::IpAddr>()
                    .map(ipnet::IpNet::from)
                    .map_err(|_| D::Error::custom(format!("{c:?} is not a CIDR (such as 10.0.0.0/8 or fd00::/8)")))?,
            };
            if net.trunc() != net {
                return Err(D::Error::custom(format!("{c:?} has host bits set; did you mean {}?", net.trunc())));
            }
            Ok(net)
        })
        .collect()
}
