//! The client's address, as rate limits and the audit log see it. Behind a reverse proxy the TCP
//! peer is the proxy, so when (and only when) the peer is one of `SCEAU_TRUSTED_PROXIES`, the
//! address comes from `X-Forwarded-For`: read from the right, since each proxy appends the address
//! it saw, skipping the trusted proxies themselves. A client can write anything on the left of the
//! header, never on the right of what a trusted proxy appended; from any other peer the header is
//! ignored.

use axum::extract::{ConnectInfo, FromRef, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{Extensions, HeaderMap};
use ipnet::IpNet;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// The networks of the reverse proxies in front of the gateway.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    pub fn new(networks: Vec<IpNet>) -> Self {
        Self(networks)
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        self.0.iter().any(|net| net.contains(&ip))
    }
}

/// The address of the client behind a request; `None` only when the request did not come through
/// the server's accept loop (in-process tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddr(pub Option<IpAddr>);

impl ClientAddr {
    pub fn of(extensions: &Extensions, headers: &HeaderMap, trusted: &TrustedProxies) -> Self {
        let peer = extensions.get::<ConnectInfo<SocketAddr>>().map(|ConnectInfo(addr)| addr.ip());
        Self(peer.map(|peer| client_addr(peer, headers, trusted)))
    }

    /// The key of the address in the edge's limits (see [`limit_key`]).
    pub fn limit_key(&self) -> Option<String> {
        self.0.map(limit_key)
    }

    /// The address as the audit log records it.
    pub fn for_audit(&self) -> Option<String> {
        self.0.map(|ip| ip.to_string())
    }
}

/// Any state that holds the trusted proxies (the gateway's `AppState`) extracts the client.
impl<S: Send + Sync> FromRequestParts<S> for ClientAddr
where
    Arc<TrustedProxies>: FromRef<S>,
{
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Infallible> {
        let trusted = Arc::<TrustedProxies>::from_ref(state);
        Ok(Self::of(&parts.extensions, &parts.headers, &trusted))
    }
}

/// The client behind a connection from `peer`: the peer itself unless it is a trusted proxy, else
/// the right-most address of `X-Forwarded-For` that is not a trusted proxy (or, when every one is,
/// the left-most). An entry that is not an address ends the walk at the last good one: a trusted
/// proxy never appends one, so it came from further left, where anything may be written.
pub fn client_addr(peer: IpAddr, headers: &HeaderMap, trusted: &TrustedProxies) -> IpAddr {
    let mut client = peer.to_canonical();
    if !trusted.contains(client) {
        return client;
    }
    // Several header lines are one list, in order (RFC 9110, 5.3).
    let forwarded: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .collect();
    for entry in forwarded.iter().rev() {
        let Some(ip) = parse_entry(entry) else { break };
        client = ip;
        if !trusted.contains(ip) {
            break;
        }
    }
    client
}

/// The key of `ip` in the edge's limits (rate limits, connections): an IPv6 client usually holds a
/// whole /64 and can pick any address in it, so the /64 is one key.
pub fn limit_key(ip: IpAddr) -> String {
    match ip.to_canonical() {
        IpAddr::V4(ip) => ip.to_string(),
        IpAddr::V6(ip) => {
            let prefix = ip.segments();
            format!("{:x}:{:x}:{:x}:{:x}::/64", prefix[0], prefix[1], prefix[2], prefix[3])
        }
    }
}

/// `192.0.2.1`, `192.0.2.1:443`, `2001:db8::1` or `[2001:db8::1]:443`.
fn parse_entry(entry: &str) -> Option<IpAddr> {
    let entry = entry.trim();
    entry
        .parse::<IpAddr>()
        .or_else(|_| entry.parse::<SocketAddr>().map(|s| s.ip()))
        .ok()
        .map(|ip| ip.to_canonical())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn trusted(cidrs: &[&str]) -> TrustedProxies {
        TrustedProxies::new(cidrs.iter().map(|c| c.parse().unwrap()).collect())
    }

    fn forwarded(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append("x-forwarded-for", HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn the_header_is_ignored_from_an_untrusted_peer() {
        let h = forwarded(&["198.51.100.7"]);
        assert_eq!(client_addr(ip("203.0.113.9"), &h, &TrustedProxies::default()), ip("203.0.113.9"));
        assert_eq!(client_addr(ip("203.0.113.9"), &h, &trusted(&["10.0.0.0/8"])), ip("203.0.113.9"));
    }

    #[test]
    fn the_right_most_untrusted_address_is_the_client() {
        let proxies = trusted(&["10.0.0.0/8", "127.0.0.1/32"]);
        // The client wrote a fake first entry; the proxy appended what it saw.
        let h = forwarded(&["1.1.1.1, 198.51.100.7"]);
        assert_eq!(client_addr(ip("10.1.2.3"), &h, &proxies), ip("198.51.100.7"));
        // Two proxies in a row, on two header lines.
        let h = forwarded(&["6.6.6.6, 198.51.100.7", "10.9.9.9"]);
        assert_eq!(client_addr(ip("127.0.0.1"), &h, &proxies), ip("198.51.100.7"));
        // Ports and brackets are dropped, IPv4-mapped IPv6 peers are IPv4.
        let h = forwarded(&["[2001:db8::5]:4711"]);
        assert_eq!(client_addr(ip("::ffff:10.0.0.1"), &h, &proxies), ip("2001:db8::5"));
        let h = forwarded(&["198.51.100.7:55000"]);
        assert_eq!(client_addr(ip("10.0.0.1"), &h, &proxies), ip("198.51.100.7"));
    }

    #[test]
    fn garbage_or_an_all_trusted_chain_stops_at_the_last_good_address() {
        let proxies = trusted(&["10.0.0.0/8"]);
        assert_eq!(client_addr(ip("10.0.0.1"), &forwarded(&["unknown"]), &proxies), ip("10.0.0.1"));
        assert_eq!(
            client_addr(ip("10.0.0.1"), &forwarded(&["unknown, 10.0.0.2"]), &proxies),
            ip("10.0.0.2")
        );
        assert_eq!(client_addr(ip("10.0.0.1"), &HeaderMap::new(), &proxies), ip("10.0.0.1"));
    }

    #[test]
    fn an_ipv6_client_is_limited_by_its_64() {
        let a = ClientAddr(Some(ip("2001:db8:1:2:aaaa::1")));
        let b = ClientAddr(Some(ip("2001:db8:1:2:bbbb::9")));
        assert_eq!(a.limit_key(), b.limit_key());
        assert_eq!(a.limit_key().as_deref(), Some("2001:db8:1:2::/64"));
        assert_eq!(ClientAddr(Some(ip("192.0.2.1"))).limit_key().as_deref(), Some("192.0.2.1"));
        assert_eq!(a.for_audit().as_deref(), Some("2001:db8:1:2:aaaa::1"));
    }
}
