//! The SSRF guard. Webhook URLs are chosen by clients and operators, and the notifier runs inside
//! our network: without this check a URL could make it call the cloud metadata service, an admin
//! port on loopback or a host of the private network, and report what answered.

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use url::{Host, Url};

/// Why a webhook destination is refused. The messages are single sentences meant for the person
/// who typed the URL (the gateway shows them as they are).
#[derive(Debug, thiserror::Error)]
pub enum DestinationError {
    #[error("The webhook URL is not a valid absolute URL.")]
    Malformed(#[source] url::ParseError),
    #[error("The webhook URL must use https.")]
    UnsupportedScheme,
    #[error("The webhook URL must use https; plain http is accepted only for allow-listed hosts.")]
    HttpNotAllowed,
    #[error("The webhook URL must not contain a user name or password.")]
    Credentials,
    #[error("The webhook URL has no host.")]
    NoHost,
    #[error("The webhook URL leads to {range}, which is refused unless an operator allow-lists its host.")]
    Forbidden {
        range: ForbiddenRange,
        /// Kept for the logs; not shown, since it may reveal how an internal name resolves.
        addr: IpAddr,
    },
    #[error("The webhook host {host} could not be resolved.")]
    Unresolvable {
        host: String,
        #[source]
        source: std::io::Error,
    },
    #[error("The webhook host {host} resolves to no address.")]
    NoAddress { host: String },
    #[error("The webhook URL is longer than {limit} characters.")]
    TooLong { limit: usize },
    #[error("The webhook URL's port {port} is refused: use 443, 80, or a port from 1024 to 65535 that no well-known service uses.")]
    Port { port: u16 },
}

/// The longest webhook URL accepted, in characters: every event row carries it, and no receiver
/// needs more (browsers and proxies commonly stop near this length too).
pub const MAX_URL_CHARS: usize = 2048;

impl DestinationError {
    /// Whether trying again later cannot help. DNS failures can be transient; a refused URL or
    /// address is a property of the destination and stays refused.
    pub fn is_permanent(&self) -> bool {
        !matches!(self, DestinationError::Unresolvable { .. } | DestinationError::NoAddress { .. })
    }
}

/// Ports of services that listen above 1023 and answer whoever reaches them: a webhook aimed at
/// one would make the notifier talk to a database, a broker or a cluster's control plane, and
/// report what answered. Web receivers use 443, 80, or a port of their own choosing elsewhere.
pub const SERVICE_PORTS: &[(u16, &str)] = &[
    (1433, "SQL Server"),
    (1521, "Oracle"),
    (1883, "MQTT"),
    (2049, "NFS"),
    (2181, "ZooKeeper"),
    (2375, "Docker"),
    (2376, "Docker (TLS)"),
    (2379, "etcd"),
    (2380, "etcd peers"),
    (3306, "MySQL"),
    (3389, "RDP"),
    (4222, "NATS"),
    (4369, "Erlang port mapper"),
    (5432, "PostgreSQL"),
    (5672, "AMQP"),
    (5984, "CouchDB"),
    (6379, "Redis"),
    (6443, "Kubernetes API"),
    (8200, "Vault"),
    (8300, "Consul"),
    (8500, "Consul HTTP"),
    (8883, "MQTT (TLS)"),
    (9042, "Cassandra"),
    (9092, "Kafka"),
    (9200, "Elasticsearch"),
    (9300, "Elasticsearch nodes"),
    (10250, "kubelet"),
    (11211, "memcached"),
    (15672, "RabbitMQ management"),
    (25672, "RabbitMQ nodes"),
    (27017, "MongoDB"),
];

/// Whether a webhook may be sent to `port`: 443, 80, or any of 1024 to 65535 but [`SERVICE_PORTS`].
pub fn port_is_allowed(port: u16) -> bool {
    matches!(port, 80 | 443) || (port >= 1024 && !SERVICE_PORTS.iter().any(|(p, _)| *p == port))
}

/// The address ranges a webhook may not reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForbiddenRange {
    Loopback,
    /// RFC 1918, and the deprecated IPv6 site-local range.
    Private,
    /// IPv6 fc00::/7.
    UniqueLocal,
    LinkLocal,
    /// Cloud instance metadata services (169.254.169.254, fd00:ec2::254): credentials live there.
    Metadata,
    /// 100.64.0.0/10, carrier-grade NAT: internal to the provider's network.
    SharedCgnat,
    Unspecified,
    Broadcast,
    Multicast,
    Documentation,
    /// Benchmarking, protocol assignments, future use, IPv4-compatible IPv6, discard-only, and
    /// 192.88.99.0/24 (6to4 relay anycast, deprecated: whichever relay answers).
    Reserved,
    /// Teredo (2001::/32) and local-use NAT64 (64:ff9b:1::/48): they lead to an IPv4 address
    /// that is obfuscated or placed by a local convention, so it cannot be judged.
    Tunnel,
}

impl fmt::Display for ForbiddenRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ForbiddenRange::Loopback => "a loopback address",
            ForbiddenRange::Private => "a private address",
            ForbiddenRange::UniqueLocal => "a private (unique local) address",
            ForbiddenRange::LinkLocal => "a link-local address",
            ForbiddenRange::Metadata => "the cloud metadata address",
            ForbiddenRange::SharedCgnat => "a shared (carrier-grade NAT) address",
            ForbiddenRange::Unspecified => "an unspecified address",
            ForbiddenRange::Broadcast => "the broadcast address",
            ForbiddenRange::Multicast => "a multicast address",
            ForbiddenRange::Documentation => "a documentation address",
            ForbiddenRange::Reserved => "a reserved address",
            ForbiddenRange::Tunnel => "a tunnelled or translated address",
        })
    }
}

/// The range `ip` belongs to if a webhook may not reach it, `None` for a public address.
pub fn forbidden_range(ip: IpAddr) -> Option<ForbiddenRange> {
    match ip {
        IpAddr::V4(v4) => forbidden_v4(v4),
        IpAddr::V6(v6) => forbidden_v6(v6),
    }
}

fn in_v4(ip: Ipv4Addr, net: [u8; 4], prefix: u32) -> bool {
    let mask = u32::MAX.checked_shl(32 - prefix).unwrap_or(0);
    u32::from(ip) & mask == u32::from(Ipv4Addr::from(net)) & mask
}

fn forbidden_v4(ip: Ipv4Addr) -> Option<ForbiddenRange> {
    use ForbiddenRange::*;
    // Ordered: the metadata address sits inside link-local and deserves its own name.
    const TABLE: &[([u8; 4], u32, ForbiddenRange)] = &[
        ([169, 254, 169, 254], 32, Metadata),
        ([255, 255, 255, 255], 32, Broadcast),
        ([0, 0, 0, 0], 8, Unspecified),
        ([127, 0, 0, 0], 8, Loopback),
        ([10, 0, 0, 0], 8, Private),
        ([172, 16, 0, 0], 12, Private),
        ([192, 168, 0, 0], 16, Private),
        ([169, 254, 0, 0], 16, LinkLocal),
        ([100, 64, 0, 0], 10, SharedCgnat),
        ([192, 0, 2, 0], 24, Documentation),
        ([198, 51, 100, 0], 24, Documentation),
        ([203, 0, 113, 0], 24, Documentation),
        ([224, 0, 0, 0], 4, Multicast),
        ([240, 0, 0, 0], 4, Reserved),
        ([192, 0, 0, 0], 24, Reserved),
        ([198, 18, 0, 0], 15, Reserved),
        ([192, 88, 99, 0], 24, Reserved),
    ];
    TABLE
        .iter()
        .find(|(net, prefix, _)| in_v4(ip, *net, *prefix))
        .map(|(_, _, range)| *range)
}

fn in_v6(ip: Ipv6Addr, net: Ipv6Addr, prefix: u32) -> bool {
    let mask = u128::MAX.checked_shl(128 - prefix).unwrap_or(0);
    u128::from(ip) & mask == u128::from(net) & mask
}

fn forbidden_v6(ip: Ipv6Addr) -> Option<ForbiddenRange> {
    use ForbiddenRange::*;
    let bits = u128::from(ip);
    if ip.is_unspecified() {
        return Some(Unspecified);
    }
    if ip.is_loopback() {
        return Some(Loopback);
    }
    // Prefixes that embed an IPv4 address reach that address (directly on a dual-stack host, or
    // through a NAT64 or 6to4 gateway): judge them by the address they carry.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return forbidden_v4(v4);
    }
    let low_v4 = || Ipv4Addr::from((bits & 0xffff_ffff) as u32);
    if in_v6(ip, Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0), 96) {
        return forbidden_v4(low_v4());
    }
    // SIIT (::ffff:0:a.b.c.d) translates to the address in its low 32 bits.
    if in_v6(ip, Ipv6Addr::new(0, 0, 0, 0, 0xffff, 0, 0, 0), 96) {
        return forbidden_v4(low_v4());
    }
    if in_v6(ip, Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0), 16) {
        return forbidden_v4(Ipv4Addr::from(((bits >> 80) & 0xffff_ffff) as u32));
    }
    const TABLE: &[(Ipv6Addr, u32, ForbiddenRange)] = &[
        (Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254), 128, Metadata),
        // IPv4-compatible addresses (deprecated); `::` and `::1` were handled above.
        (Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0, 0), 96, Reserved),
        (Ipv6Addr::new(0x100, 0, 0, 0, 0, 0, 0, 0), 64, Reserved),
        (Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, 0, 0), 48, Tunnel),
        (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 32, Tunnel),
        (Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0), 7, UniqueLocal),
        (Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0), 10, LinkLocal),
        (Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, 0), 10, Private),
        (Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0), 8, Multicast),
        (Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0), 32, Documentation),
        (Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0), 20, Documentation),
    ];
    TABLE
        .iter()
        .find(|(net, prefix, _)| in_v6(ip, *net, *prefix))
        .map(|(_, _, range)| *range)
}

/// Compares hosts the way an operator means them: case-insensitive, trailing dot ignored, IPv6
/// with or without brackets and in any spelling.
fn same_host(a: &str, b: &str) -> bool {
    fn norm(h: &str) -> String {
        let h = h.trim().trim_end_matches('.');
        let h = h.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(h);
        h.to_ascii_lowercase()
    }
    let (a, b) = (norm(a), norm(b));
    match (a.parse::<IpAddr>(), b.parse::<IpAddr>()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

fn host_is_allowed(host: &str, allow_hosts: &[String]) -> bool {
    allow_hosts.iter().any(|allowed| same_host(allowed, host))
}

/// Whether the operator exempted this URL's host from the guard.
pub fn is_allow_listed(url: &Url, allow_hosts: &[String]) -> bool {
    url.host_str().is_some_and(|host| host_is_allowed(host, allow_hosts))
}

/// Checks a webhook URL before it is stored and before each send: at most [`MAX_URL_CHARS`],
/// absolute, https (http only for allow-listed hosts), no credentials, a port [`port_is_allowed`]
/// (allow-listed hosts exempt), and no literal address or `localhost` name that the guard would
/// refuse anyway, so the mistake is reported when the URL is set rather than hours later.
pub fn validate_url(url: &str, allow_hosts: &[String]) -> Result<Url, DestinationError> {
    if url.chars().count() > MAX_URL_CHARS {
        return Err(DestinationError::TooLong { limit: MAX_URL_CHARS });
    }
    let parsed = Url::parse(url.trim()).map_err(DestinationError::Malformed)?;
    if !matches!(parsed.scheme(), "https" | "http") {
        return Err(DestinationError::UnsupportedScheme);
    }
    let host = parsed.host().ok_or(DestinationError::NoHost)?;
    let allowed = is_allow_listed(&parsed, allow_hosts);
    if parsed.scheme() == "http" && !allowed {
        return Err(DestinationError::HttpNotAllowed);
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        // Credentials in the URL would be sent in clear to whoever answers, and stored in logs.
        return Err(DestinationError::Credentials);
    }
    if !allowed {
        if let Some(port) = parsed.port_or_known_default().filter(|p| !port_is_allowed(*p)) {
            return Err(DestinationError::Port { port });
        }
        match host {
            Host::Ipv4(ip) => check_addr(IpAddr::V4(ip))?,
            Host::Ipv6(ip) => check_addr(IpAddr::V6(ip))?,
            Host::Domain(name) => {
                // RFC 6761: these names always resolve to loopback.
                let name = name.trim_end_matches('.').to_ascii_lowercase();
                if name == "localhost" || name.ends_with(".localhost") {
                    return Err(DestinationError::Forbidden {
                        range: ForbiddenRange::Loopback,
                        addr: IpAddr::V4(Ipv4Addr::LOCALHOST),
                    });
                }
            }
        }
    }
    Ok(parsed)
}

fn check_addr(ip: IpAddr) -> Result<(), DestinationError> {
    match forbidden_range(ip) {
        Some(range) => Err(DestinationError::Forbidden { range, addr: ip }),
        None => Ok(()),
    }
}

/// Refuses the whole set if any address is forbidden: the connector may pick any of them, and
/// a name mixing public and private answers is exactly what a rebinding attack looks like.
fn check_all(addrs: &[SocketAddr]) -> Result<(), DestinationError> {
    addrs.iter().try_for_each(|a| check_addr(a.ip()))
}

async fn lookup(host: &str, port: u16) -> Result<Vec<SocketAddr>, DestinationError> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(|source| DestinationError::Unresolvable {
            host: host.to_owned(),
            source,
        })?
        .collect();
    if addrs.is_empty() {
        return Err(DestinationError::NoAddress { host: host.to_owned() });
    }
    Ok(addrs)
}

/// Resolves the URL's host and checks every address it resolves to, unless the host is
/// allow-listed. Called at every send: a name that was public when the URL was set may point
/// inside since.
pub async fn resolve_checked(url: &Url, allow_hosts: &[String]) -> Result<Vec<SocketAddr>, DestinationError> {
    let host = url.host().ok_or(DestinationError::NoHost)?;
    let port = url.port_or_known_default().ok_or(DestinationError::UnsupportedScheme)?;
    let addrs = match host {
        Host::Ipv4(ip) => vec![SocketAddr::new(IpAddr::V4(ip), port)],
        Host::Ipv6(ip) => vec![SocketAddr::new(IpAddr::V6(ip), port)],
        Host::Domain(name) => lookup(name, port).await?,
    };
    if !is_allow_listed(url, allow_hosts) {
        check_all(&addrs)?;
    }
    Ok(addrs)
}

/// The HTTP client's DNS resolver: the addresses the client connects to are the ones this guard
/// checked in the same lookup, so a name that re-resolves to an internal address between our
/// check and the connection (DNS rebinding) is still refused. Literal-address URLs never reach a
/// resolver; `resolve_checked` covers them.
pub(crate) struct GuardedResolver {
    allow_hosts: Arc<[String]>,
}

impl GuardedResolver {
    pub(crate) fn new(allow_hosts: &[String]) -> Self {
        Self {
            allow_hosts: allow_hosts.into(),
        }
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        let allowed = host_is_allowed(&host, &self.allow_hosts);
        Box::pin(async move {
            // Port 0: the connector puts the URL's port in.
            let addrs = lookup(&host, 0).await?;
            if !allowed {
                check_all(&addrs)?;
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn v4(s: &str) -> Option<ForbiddenRange> {
        forbidden_range(IpAddr::V4(s.parse().expect("test address")))
    }

    fn v6(s: &str) -> Option<ForbiddenRange> {
        forbidden_range(IpAddr::V6(s.parse().expect("test address")))
    }

    #[test]
    fn ipv4_ranges() {
        use ForbiddenRange::*;
        let cases = [
            ("127.0.0.1", Some(Loopback)),
            ("127.255.255.254", Some(Loopback)),
            ("10.0.0.1", Some(Private)),
            ("10.255.255.255", Some(Private)),
            ("172.16.0.1", Some(Private)),
            ("172.31.255.255", Some(Private)),
            ("172.15.255.255", None),
            ("172.32.0.0", None),
            ("192.168.1.1", Some(Private)),
            ("192.169.0.1", None),
            ("169.254.169.254", Some(Metadata)),
            ("169.254.0.1", Some(LinkLocal)),
            ("100.64.0.1", Some(SharedCgnat)),
            ("100.127.255.255", Some(SharedCgnat)),
            ("100.63.255.255", None),
            ("100.128.0.0", None),
            ("0.0.0.0", Some(Unspecified)),
            ("0.1.2.3", Some(Unspecified)),
            ("255.255.255.255", Some(Broadcast)),
            ("224.0.0.1", Some(Multicast)),
            ("239.255.255.250", Some(Multicast)),
            ("192.0.2.10", Some(Documentation)),
            ("198.51.100.7", Some(Documentation)),
            ("203.0.113.200", Some(Documentation)),
            ("240.0.0.1", Some(Reserved)),
            ("198.18.0.1", Some(Reserved)),
            ("192.0.0.8", Some(Reserved)),
            // 6to4 relay anycast (RFC 7526): whichever relay answers, on the operator's path.
            ("192.88.99.1", Some(Reserved)),
            ("192.88.99.255", Some(Reserved)),
            ("192.88.98.255", None),
            ("192.88.100.0", None),
            ("8.8.8.8", None),
            ("1.1.1.1", None),
            ("93.184.216.34", None),
            ("11.0.0.1", None),
        ];
        for (ip, expected) in cases {
            assert_eq!(v4(ip), expected, "{ip}");
        }
    }

    #[test]
    fn ipv6_ranges() {
        use ForbiddenRange::*;
        let cases = [
            ("::1", Some(Loopback)),
            ("::", Some(Unspecified)),
            ("fc00::1", Some(UniqueLocal)),
            ("fd12:3456:789a::1", Some(UniqueLocal)),
            ("fd00:ec2::254", Some(Metadata)),
            ("fe80::1", Some(LinkLocal)),
            ("febf::1", Some(LinkLocal)),
            ("fec0::1", Some(Private)),
            ("ff02::1", Some(Multicast)),
            ("2001:db8::1", Some(Documentation)),
            ("3fff::1", Some(Documentation)),
            ("100::1", Some(Reserved)),
            ("::127.0.0.1", Some(Reserved)),
            // IPv4-mapped, NAT64 and 6to4 forms are judged by the IPv4 address they carry.
            ("::ffff:127.0.0.1", Some(Loopback)),
            ("::ffff:10.1.2.3", Some(Private)),
            ("::ffff:169.254.169.254", Some(Metadata)),
            ("::ffff:192.168.0.1", Some(Private)),
            ("::ffff:8.8.8.8", None),
            ("64:ff9b::a00:1", Some(Private)),
            ("64:ff9b::808:808", None),
            ("2002:7f00:1::", Some(Loopback)),
            ("2002:a9fe:a9fe::1", Some(Metadata)),
            ("2002:808:808::1", None),
            ("2002:c058:6301::1", Some(Reserved)),
            // SIIT (::ffff:0:0/96, RFC 7915) carries its IPv4 address in the low 32 bits.
            ("::ffff:0:7f00:1", Some(Loopback)),
            ("::ffff:0:a01:203", Some(Private)),
            ("::ffff:0:a9fe:a9fe", Some(Metadata)),
            ("::ffff:0:c058:6301", Some(Reserved)),
            ("::ffff:0:808:808", None),
            // Local-use NAT64 (64:ff9b:1::/48, RFC 8215): where the IPv4 address sits depends on
            // the operator's prefix length, so the whole range is refused.
            ("64:ff9b:1::1", Some(Tunnel)),
            ("64:ff9b:1::a00:1", Some(Tunnel)),
            ("64:ff9b:1:ffff:ffff:ffff:ffff:ffff", Some(Tunnel)),
            ("64:ff9b:2::1", None),
            // Teredo (2001::/32): the client address is obfuscated and the relay is anyone's.
            ("2001::1", Some(Tunnel)),
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", Some(Tunnel)),
            ("2001:0:ffff:ffff:ffff:ffff:ffff:ffff", Some(Tunnel)),
            ("2001:1::1", None),
            ("2001:db8::2", Some(Documentation)),
            ("2606:4700:4700::1111", None),
            ("2a00:1450:4007:80c::200e", None),
        ];
        for (ip, expected) in cases {
            assert_eq!(v6(ip), expected, "{ip}");
        }
    }

    fn no_hosts() -> Vec<String> {
        Vec::new()
    }

    #[test]
    fn accepts_public_https_urls() {
        let url = validate_url("https://hooks.example.com/sceau?x=1", &no_hosts()).expect("valid");
        assert_eq!(url.host_str(), Some("hooks.example.com"));
        assert!(validate_url("https://8.8.8.8:8443/hook", &no_hosts()).is_ok());
        assert!(validate_url("  https://[2606:4700::1]/hook ", &no_hosts()).is_ok());
    }

    #[test]
    fn refuses_malformed_or_insecure_urls() {
        let none = no_hosts();
        let err = |u: &str| validate_url(u, &none).expect_err(u);
        assert!(matches!(err("/relative/path"), DestinationError::Malformed(_)));
        assert!(matches!(err("not a url"), DestinationError::Malformed(_)));
        assert!(matches!(err("https://"), DestinationError::Malformed(_)));
        assert!(matches!(err("http://hooks.example.com/"), DestinationError::HttpNotAllowed));
        assert!(matches!(err("ftp://hooks.example.com/"), DestinationError::UnsupportedScheme));
        assert!(matches!(err("file:///etc/passwd"), DestinationError::UnsupportedScheme));
        assert!(matches!(err("mailto:a@example.com"), DestinationError::UnsupportedScheme));
        assert!(matches!(err("https://user:pw@hooks.example.com/"), DestinationError::Credentials));
        assert!(matches!(err("https://user@hooks.example.com/"), DestinationError::Credentials));
    }

    #[test]
    fn refuses_internal_literals_and_localhost() {
        let none = no_hosts();
        let range = |u: &str| match validate_url(u, &none) {
            Err(DestinationError::Forbidden { range, .. }) => range,
            other => panic!("{u}: {other:?}"),
        };
        assert_eq!(range("https://127.0.0.1/"), ForbiddenRange::Loopback);
        assert_eq!(range("https://2130706433/"), ForbiddenRange::Loopback);
        assert_eq!(range("https://0x7f.1/"), ForbiddenRange::Loopback);
        assert_eq!(range("https://169.254.169.254/latest/meta-data"), ForbiddenRange::Metadata);
        assert_eq!(range("https://10.0.0.5:8443/"), ForbiddenRange::Private);
        assert_eq!(range("https://[::1]/"), ForbiddenRange::Loopback);
        assert_eq!(range("https://[::ffff:192.168.0.1]/"), ForbiddenRange::Private);
        assert_eq!(range("https://[fe80::1]/"), ForbiddenRange::LinkLocal);
        assert_eq!(range("https://localhost/"), ForbiddenRange::Loopback);
        assert_eq!(range("https://LocalHost./"), ForbiddenRange::Loopback);
        assert_eq!(range("https://api.localhost/"), ForbiddenRange::Loopback);
    }

    #[test]
    fn urls_longer_than_the_limit_are_refused() {
        let none = no_hosts();
        let base = "https://hooks.example.com/";
        let at_limit = format!("{base}{}", "a".repeat(MAX_URL_CHARS - base.len()));
        assert_eq!(at_limit.chars().count(), MAX_URL_CHARS);
        assert!(validate_url(&at_limit, &none).is_ok());
        let over = format!("{at_limit}a");
        assert!(matches!(
            validate_url(&over, &none),
            Err(DestinationError::TooLong { limit: MAX_URL_CHARS })
        ));
        // Characters, not bytes: a long internationalised path is measured as the user sees it.
        let accented = format!("{base}{}", "é".repeat(MAX_URL_CHARS - base.len()));
        assert!(validate_url(&accented, &none).is_ok());
        let msg = validate_url(&over, &none).expect_err("too long").to_string();
        assert_eq!(msg, "The webhook URL is longer than 2048 characters.");
    }

    #[test]
    fn translated_literals_are_refused_when_set() {
        let none = no_hosts();
        let range = |u: &str| match validate_url(u, &none) {
            Err(DestinationError::Forbidden { range, .. }) => range,
            other => panic!("{u}: {other:?}"),
        };
        assert_eq!(range("https://[::ffff:0:a9fe:a9fe]/"), ForbiddenRange::Metadata);
        assert_eq!(range("https://[64:ff9b:1::a00:1]/"), ForbiddenRange::Tunnel);
        assert_eq!(range("https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/"), ForbiddenRange::Tunnel);
        assert_eq!(range("https://192.88.99.1/"), ForbiddenRange::Reserved);
        let msg = validate_url("https://[2001::1]/", &none).expect_err("teredo").to_string();
        assert!(msg.starts_with("The webhook URL leads to ") && msg.ends_with('.'), "{msg}");
    }

    #[test]
    fn allow_listed_hosts_may_use_http_and_internal_addresses() {
        let allow = vec!["127.0.0.1".to_owned(), "Receiver.Internal".to_owned(), "::1".to_owned()];
        assert!(validate_url("http://127.0.0.1:8080/hook", &allow).is_ok());
        assert!(validate_url("http://receiver.internal./hook", &allow).is_ok());
        assert!(validate_url("http://[0:0::1]:9000/hook", &allow).is_ok());
        // Allow-listing one host exempts that host only.
        assert!(matches!(
            validate_url("http://127.0.0.2/hook", &allow),
            Err(DestinationError::HttpNotAllowed)
        ));
        assert!(matches!(
            validate_url("https://127.0.0.2/hook", &allow),
            Err(DestinationError::Forbidden { .. })
        ));
        // Credentials stay refused even for allow-listed hosts.
        assert!(matches!(
            validate_url("http://a:b@127.0.0.1/", &allow),
            Err(DestinationError::Credentials)
        ));
    }

    #[test]
    fn only_web_ports_and_unregistered_high_ports_are_allowed() {
        let none = no_hosts();
        assert!(validate_url("https://hooks.example.com/", &none).is_ok());
        assert!(validate_url("https://hooks.example.com:443/", &none).is_ok());
        assert!(validate_url("https://hooks.example.com:8443/", &none).is_ok());
        assert!(validate_url("https://hooks.example.com:65535/", &none).is_ok());
        for refused in [22, 25, 80 - 1, 444, 1023, 5432, 6379, 2375, 9200, 11211, 27017] {
            let url = format!("https://hooks.example.com:{refused}/");
            assert!(
                matches!(validate_url(&url, &none), Err(DestinationError::Port { port }) if port == refused),
                "{url}"
            );
        }
        // An operator's allow-listed host is exempt, as from the address ranges.
        let allow = vec!["127.0.0.1".to_owned()];
        assert!(validate_url("http://127.0.0.1:6379/hook", &allow).is_ok());
        let msg = validate_url("https://hooks.example.com:6379/", &none)
            .expect_err("redis")
            .to_string();
        assert!(msg.ends_with('.') && !msg.contains(". "), "{msg}");
    }

    #[test]
    fn the_contract_tester_knows_the_same_service_ports() {
        let hooks = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/schemathesis_hooks.py"))
            .expect("scripts/schemathesis_hooks.py");
        let start = hooks.find("_SERVICE_PORTS = {").expect("the hooks list the service ports");
        let end = start + hooks[start..].find('}').expect("a closed set");
        let listed: Vec<u16> = hooks[start + "_SERVICE_PORTS = {".len()..end]
            .split(|c: char| !c.is_ascii_digit())
            .filter(|n| !n.is_empty())
            .map(|n| n.parse().expect("a port"))
            .collect();
        let ours: Vec<u16> = SERVICE_PORTS.iter().map(|(port, _)| *port).collect();
        assert_eq!(
            listed, ours,
            "scripts/schemathesis_hooks.py must refuse the ports the notifier refuses"
        );
    }

    #[test]
    fn messages_are_single_sentences() {
        let none = no_hosts();
        for url in ["nope", "http://example.com", "https://u:p@example.com", "https://10.1.1.1"] {
            let msg = validate_url(url, &none).expect_err(url).to_string();
            assert!(msg.starts_with("The webhook "), "{msg}");
            assert!(msg.ends_with('.'), "{msg}");
            assert_eq!(msg.matches(". ").count(), 0, "{msg}");
        }
        let msg = validate_url("https://10.1.1.1", &none).expect_err("private").to_string();
        assert_eq!(
            msg,
            "The webhook URL leads to a private address, which is refused unless an operator allow-lists its host."
        );
    }

    #[tokio::test]
    async fn resolution_is_checked_unless_allow_listed() {
        let url = Url::parse("https://localhost:8443/hook").expect("url");
        match resolve_checked(&url, &no_hosts()).await {
            Err(DestinationError::Forbidden {
                range: ForbiddenRange::Loopback,
                ..
            }) => {}
            other => panic!("{other:?}"),
        }
        let addrs = resolve_checked(&url, &["localhost".to_owned()]).await.expect("allow-listed");
        assert!(addrs.iter().all(|a| a.port() == 8443 && a.ip().is_loopback()));

        let literal = Url::parse("https://169.254.169.254/").expect("url");
        assert!(matches!(
            resolve_checked(&literal, &no_hosts()).await,
            Err(DestinationError::Forbidden {
                range: ForbiddenRange::Metadata,
                ..
            })
        ));
        let public = Url::parse("https://8.8.8.8/").expect("url");
        let addrs = resolve_checked(&public, &no_hosts()).await.expect("public literal");
        assert_eq!(addrs, vec!["8.8.8.8:443".parse::<SocketAddr>().expect("addr")]);
    }

    #[tokio::test]
    async fn unresolvable_names_are_retryable() {
        let url = Url::parse("https://no-such-host.invalid/").expect("url");
        let err = resolve_checked(&url, &no_hosts()).await.expect_err("unresolvable");
        assert!(!err.is_permanent(), "{err:?}");
    }

    #[tokio::test]
    async fn the_client_resolver_refuses_internal_answers() {
        let resolver = GuardedResolver::new(&[]);
        let name = Name::from_str("localhost").expect("name");
        let err = match resolver.resolve(name).await {
            Err(e) => e,
            Ok(_) => panic!("localhost must be refused"),
        };
        assert!(matches!(
            err.downcast_ref::<DestinationError>(),
            Some(DestinationError::Forbidden {
                range: ForbiddenRange::Loopback,
                ..
            })
        ));

        let resolver = GuardedResolver::new(&["localhost".to_owned()]);
        let name = Name::from_str("localhost").expect("name");
        match resolver.resolve(name).await {
            Ok(addrs) => assert!(addrs.into_iter().all(|a| a.ip().is_loopback())),
            Err(e) => panic!("allow-listed localhost refused: {e}"),
        }
    }
}
