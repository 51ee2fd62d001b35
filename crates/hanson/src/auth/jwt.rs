//! Access tokens: JWT with the algorithm pinned to HS256. The header must say exactly HS256,
//! and exp, aud and iss are required; anything else is rejected before the claims are read.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

pub const ISSUER: &str = "hanson";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// Wallet id.
    pub sub: String,
    /// Session id.
    pub sid: String,
    /// Provider id.
    pub aud: String,
    pub iss: String,
    pub iat: i64,
    pub exp: i64,
    pub jti: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JwtError {
    Malformed,
    Algorithm,
    Signature,
    Expired,
    Issuer,
}

#[derive(Deserialize)]
struct Header {
    alg: String,
}

/// The signing key, set up once per process.
#[derive(Clone)]
pub struct JwtKey {
    mac: Hmac<Sha256>,
}

impl JwtKey {
    pub fn new(secret: &[u8]) -> Self {
        JwtKey { mac: Hmac::<Sha256>::new_from_slice(secret).expect("HMAC accepts any key length") }
    }

    fn sign(&self, signing_input: &[u8]) -> Vec<u8> {
        let mut mac = self.mac.clone();
        mac.update(signing_input);
        mac.finalize().into_bytes().to_vec()
    }

    pub fn encode(&self, claims: &Claims) -> String {
        let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
        let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(claims).expect("claims serialize"));
        let signing_input = format!("{header}.{payload}");
        let signature = URL_SAFE_NO_PAD.encode(self.sign(signing_input.as_bytes()));
        format!("{signing_input}.{signature}")
    }

    /// Verifies signature, algorithm, issuer and expiry (`now` in seconds). The audience is
    /// returned in the claims for the caller to match against the session's provider.
    pub fn decode(&self, token: &str, now: i64) -> Result<Claims, JwtError> {
        let mut parts = token.split('.');
        let (Some(header_b64), Some(payload_b64), Some(signature_b64), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(JwtError::Malformed);
        };
        let header_bytes = URL_SAFE_NO_PAD.decode(header_b64).map_err(|_| JwtError::Malformed)?;
        let header: Header = serde_json::from_slice(&header_bytes).map_err(|_| JwtError::Malformed)?;
        if header.alg != "HS256" {
            return Err(JwtError::Algorithm);
        }
        let signature = URL_SAFE_NO_PAD.decode(signature_b64).map_err(|_| JwtError::Malformed)?;
        let mut mac = self.mac.clone();
        mac.update(header_b64.as_bytes());
        mac.update(b".");
        mac.update(payload_b64.as_bytes());
        mac.verify_slice(&signature).map_err(|_| JwtError::Signature)?;
        let payload = URL_SAFE_NO_PAD.decode(payload_b64).map_err(|_| JwtError::Malformed)?;
        let claims: Claims = serde_json::from_slice(&payload).map_err(|_| JwtError::Malformed)?;
        if claims.iss != ISSUER {
            return Err(JwtError::Issuer);
        }
        if claims.exp <= now {
            return Err(JwtError::Expired);
        }
        Ok(claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(exp: i64) -> Claims {
        Claims { sub: "w".into(), sid: "s".into(), aud: "p".into(), iss: ISSUER.into(), iat: 0, exp, jti: "j".into() }
    }

    #[test]
    fn round_trip_and_rejections() {
        let key = JwtKey::new(b"secret");
        let token = key.encode(&claims(100));
        assert_eq!(key.decode(&token, 99), Ok(claims(100)));
        assert_eq!(key.decode(&token, 100), Err(JwtError::Expired));
        assert_eq!(JwtKey::new(b"other").decode(&token, 0), Err(JwtError::Signature));
        let parts: Vec<&str> = token.split('.').collect();
        let none_header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
        assert_eq!(key.decode(&format!("{none_header}.{}.", parts[1]), 0), Err(JwtError::Algorithm));
        let forged = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&claims(i64::MAX)).unwrap());
        assert_eq!(key.decode(&format!("{}.{forged}.{}", parts[0], parts[2]), 0), Err(JwtError::Signature));
        assert_eq!(key.decode("a.b", 0), Err(JwtError::Malformed));
        let mut wrong_issuer = claims(100);
        wrong_issuer.iss = "someone".into();
        assert_eq!(key.decode(&key.encode(&wrong_issuer), 0), Err(JwtError::Issuer));
    }
}
