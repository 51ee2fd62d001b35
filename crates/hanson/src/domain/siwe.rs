//! Sign-In with Ethereum (EIP-4361) login messages: what the server issues for a nonce, and
//! the field-by-field check of a message a client says it signed.

use super::time::{format_micros, parse_timestamp, Micros};

/// The line a wallet shows under the domain, saying what the signature is for.
const STATEMENT: &str = "Sign in to Hanson. This request does not trigger a blockchain transaction or cost any gas fees.";

/// Where the service is reached: the message's `domain` (host and port) and `URI`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicUrl {
    /// `host` or `host:port`, as EIP-4361's domain (an authority, no scheme).
    pub domain: String,
    /// The URL as configured, without a trailing slash.
    pub uri: String,
}

impl PublicUrl {
    /// `https://host[:port]` or `http://host[:port]`, without path, query or user info.
    pub fn parse(text: &str) -> Result<PublicUrl, String> {
        let bad = || format!("{text:?} is not an http:// or https:// URL of a host (and port), without a path");
        let url = url::Url::parse(text.trim()).map_err(|_| bad())?;
        let host = url.host_str().filter(|_| matches!(url.scheme(), "http" | "https")).ok_or_else(bad)?;
        if url.path() != "/" || url.query().is_some() || url.fragment().is_some() || !url.username().is_empty() {
            return Err(bad());
        }
        let domain = match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_string(),
        };
        Ok(PublicUrl { domain, uri: url.as_str().trim_end_matches('/').to_string() })
    }
}

/// An EIP-4361 message, as issued for one nonce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SiweMessage {
    pub(crate) domain: String,
    /// EIP-55 checksummed, as the standard requires.
    pub(crate) address: String,
    pub(crate) statement: String,
    pub(crate) uri: String,
    pub(crate) version: String,
    pub(crate) chain_id: u64,
    pub(crate) nonce: String,
    pub(crate) issued_at: String,
    pub(crate) expiration_time: String,
}

/// RFC 3339 in UTC to the second, as wallets show it.
fn to_the_second(micros: Micros) -> String {
    let text = format_micros(micros.div_euclid(1_000_000) * 1_000_000);
    format!("{}Z", &text[..19])
}

impl SiweMessage {
    /// The message for `nonce`, issued at `issued_at`, valid until `expires_at`.
    pub(crate) fn new(url: &PublicUrl, address: &str, chain_id: u64, nonce: &str, issued_at: Micros, expires_at: Micros) -> SiweMessage {
        SiweMessage {
            domain: url.domain.clone(),
            address: address.to_string(),
            statement: STATEMENT.to_string(),
            uri: url.uri.clone(),
            version: "1".to_string(),
            chain_id,
            nonce: nonce.to_string(),
            issued_at: to_the_second(issued_at),
            expiration_time: to_the_second(expires_at),
        }
    }

    /// The exact text to sign (EIP-4361's ABNF, with a statement and an expiration time).
    pub(crate) fn render(&self) -> String {
        format!(
            "{} wants you to sign in with your Ethereum account:\n{}\n\n{}\n\nURI: {}\nVersion: {}\nChain ID: {}\nNonce: {}\nIssued At: {}\nExpiration Time: {}",
            self.domain,
            self.address,
            self.statement,
            self.uri,
            self.version,
            self.chain_id,
            self.nonce,
            self.issued_at,
            self.expiration_time
        )
    }

    /// Parses [`render`](Self::render)'s layout; None for any other text.
    pub(crate) fn parse(text: &str) -> Option<SiweMessage> {
        let mut lines = text.split('\n');
        let domain = lines.next()?.strip_suffix(" wants you to sign in with your Ethereum account:")?.to_string();
        let address = lines.next()?.to_string();
        if !lines.next()?.is_empty() {
            return None;
        }
        let statement = lines.next()?.to_string();
        if !lines.next()?.is_empty() {
            return None;
        }
        let mut field = |name: &str| lines.next()?.strip_prefix(name)?.strip_prefix(": ").map(str::to_string);
        let message = SiweMessage {
            domain,
            address,
            statement,
            uri: field("URI")?,
            version: field("Version")?,
            chain_id: field("Chain ID")?.parse().ok()?,
            nonce: field("Nonce")?,
            issued_at: field("Issued At")?,
            expiration_time: field("Expiration Time")?,
        };
        lines.next().is_none().then_some(message)
    }

    /// The first field of `presented` that differs from this issued message, or that makes it
    /// invalid at `now` (expired, or issued in the future); None when it is this message.
    pub(crate) fn mismatch(&self, presented: &SiweMessage, now: Micros) -> Option<&'static str> {
        let checks: [(&'static str, bool); 9] = [
            ("domain", presented.domain == self.domain),
            ("address", presented.address == self.address),
            ("statement", presented.statement == self.statement),
            ("uri", presented.uri == self.uri),
            ("version", presented.version == self.version),
            ("chain_id", presented.chain_id == self.chain_id),
            ("nonce", presented.nonce == self.nonce),
            ("issued_at", presented.issued_at == self.issued_at && parse_timestamp(&presented.issued_at).is_some_and(|t| t <= now)),
            (
                "expiration_time",
                presented.expiration_time == self.expiration_time && parse_timestamp(&presented.expiration_time).is_some_and(|t| t > now),
            ),
        ];
        checks.into_iter().find(|(_, ok)| !ok).map(|(name, _)| name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url() -> PublicUrl {
        PublicUrl::parse("https://markets.example.com").unwrap()
    }

    #[test]
    fn public_urls_give_domain_and_uri() {
        assert_eq!(url(), PublicUrl { domain: "markets.example.com".into(), uri: "https://markets.example.com".into() });
        let local = PublicUrl::parse("http://127.0.0.1:8080/").unwrap();
        assert_eq!(local, PublicUrl { domain: "127.0.0.1:8080".into(), uri: "http://127.0.0.1:8080".into() });
        for bad in ["ftp://x.example", "https://x.example/app", "https://u@x.example", "x.example", "https://x.example/?a=1"] {
            assert!(PublicUrl::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn renders_eip_4361_and_parses_back() {
        let issued = 1_780_000_000_123_456;
        let m = SiweMessage::new(&url(), "0xAb5801a7D398351b8bE11C439e05C5B3259aeC9B", 1, "0123456789abcdef", issued, issued + 300_000_000);
        let text = m.render();
        assert_eq!(
            text,
            "markets.example.com wants you to sign in with your Ethereum account:\n\
             0xAb5801a7D398351b8bE11C439e05C5B3259aeC9B\n\n\
             Sign in to Hanson. This request does not trigger a blockchain transaction or cost any gas fees.\n\n\
             URI: https://markets.example.com\nVersion: 1\nChain ID: 1\nNonce: 0123456789abcdef\n\
             Issued At: 2026-05-28T20:26:40Z\nExpiration Time: 2026-05-28T20:31:40Z"
        );
        assert_eq!(SiweMessage::parse(&text), Some(m.clone()));
        assert_eq!(m.mismatch(&m, issued), None);
        assert_eq!(SiweMessage::parse(&format!("{text}\nResources:")), None);
        assert_eq!(SiweMessage::parse("Sign this message to authenticate with nonce: 00"), None);
    }

    #[test]
    fn every_tampered_field_is_named() {
        let issued = 1_780_000_000_000_000;
        let m =
            SiweMessage::new(&url(), "0xAb5801a7D398351b8bE11C439e05C5B3259aeC9B", 10, "0123456789abcdef", issued, issued + 300_000_000);
        let tamper = |f: &dyn Fn(&mut SiweMessage)| {
            let mut t = m.clone();
            f(&mut t);
            m.mismatch(&t, issued)
        };
        assert_eq!(tamper(&|t| t.domain = "evil.example".into()), Some("domain"));
        assert_eq!(tamper(&|t| t.uri = "https://evil.example".into()), Some("uri"));
        assert_eq!(tamper(&|t| t.chain_id = 1), Some("chain_id"));
        assert_eq!(tamper(&|t| t.nonce = "ffffffffffffffff".into()), Some("nonce"));
        assert_eq!(tamper(&|t| t.expiration_time = "2099-01-01T00:00:00Z".into()), Some("expiration_time"));
        assert_eq!(m.mismatch(&m, issued + 300_000_000), Some("expiration_time"), "expired");
        assert_eq!(m.mismatch(&m, issued - 1_000_000), Some("issued_at"), "not yet issued");
    }
}
