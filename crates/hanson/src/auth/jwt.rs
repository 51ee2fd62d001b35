//! Access tokens: JWT through `jsonwebtoken` with the algorithm pinned to HS256. The header
//! must say exactly HS256, and exp, aud and iss are required; anything else is rejected.

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

pub(crate) const ISSUER: &str = "hanson";

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
pub(crate) enum JwtError {
    Malformed,
    Algorithm,
    Signature,
    Expired,
    Issuer,
}

/// The signing key, set up once per process.
#[derive(Clone)]
pub struct JwtKey {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
}

impl JwtKey {
    pub fn new(secret: &[u8]) -> Self {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.set_required_spec_claims(&["exp", "aud", "iss"]);
        validation.set_issuer(&[ISSUER]);
        validation.leeway = 0;
        // Expiry is checked in `decode` against the caller's clock (jsonwebtoken reads the system clock).
        validation.validate_exp = false;
        // The audience is the session's provider, which the caller matches after the session lookup.
        validation.validate_aud = false;
        JwtKey { encoding: EncodingKey::from_secret(secret), decoding: DecodingKey::from_secret(secret), validation }
    }

    pub fn encode(&self, claims: &Claims) -> String {
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), claims, &self.encoding).expect("HS256 signing cannot fail")
    }

    /// Verifies signature, algorithm, issuer and expiry (`now` in seconds). The audience is
    /// returned in the claims for the caller to match against the session's provider.
    pub(crate) fn decode(&self, token: &str, now: i64) -> Result<Claims, JwtError> {
        let claims = jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation).map_err(|e| classify(token, e.kind()))?.claims;
        // Hand-written: the token expires at `exp` by the caller's `now`, not by jsonwebtoken's clock.
        if claims.exp <= now {
            return Err(JwtError::Expired);
        }
        Ok(claims)
    }
}

fn classify(token: &str, kind: &ErrorKind) -> JwtError {
    match kind {
        ErrorKind::InvalidAlgorithm | ErrorKind::MissingAlgorithm => JwtError::Algorithm,
        ErrorKind::InvalidSignature => JwtError::Signature,
        ErrorKind::InvalidIssuer => JwtError::Issuer,
        ErrorKind::ExpiredSignature => JwtError::Expired,
        ErrorKind::Json(_) if names_another_algorithm(token) => JwtError::Algorithm,
        _ => JwtError::Malformed,
    }
}

/// Hand-written: jsonwebtoken cannot parse a header naming an algorithm it does not know
/// (`none` among them), so such a header is told apart from a malformed one here.
fn names_another_algorithm(token: &str) -> bool {
    use base64::Engine;
    let Some(header) = token.split('.').next() else { return false };
    let Ok(bytes) = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(header) else { return false };
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else { return false };
    value.get("alg").and_then(|a| a.as_str()).is_some_and(|alg| alg != "HS256")
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine;

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

    #[test]
    fn only_hs256_and_the_required_claims_are_accepted() {
        let key = JwtKey::new(b"secret");
        // Correctly signed with the same secret, but under HS512.
        let hs512 = jsonwebtoken::encode(&Header::new(Algorithm::HS512), &claims(100), &EncodingKey::from_secret(b"secret")).unwrap();
        assert_eq!(key.decode(&hs512, 0), Err(JwtError::Algorithm));
        // `none` with the real signature still attached.
        let token = key.encode(&claims(100));
        let parts: Vec<&str> = token.split('.').collect();
        let none_header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none"}"#);
        assert_eq!(key.decode(&format!("{none_header}.{}.{}", parts[1], parts[2]), 0), Err(JwtError::Algorithm));
        // Missing iss or aud: signed correctly, still refused.
        for missing in ["iss", "aud", "exp"] {
            let mut value = serde_json::to_value(claims(100)).unwrap();
            value.as_object_mut().unwrap().remove(missing);
            let token = jsonwebtoken::encode(&Header::new(Algorithm::HS256), &value, &EncodingKey::from_secret(b"secret")).unwrap();
            assert_eq!(key.decode(&token, 0), Err(JwtError::Malformed), "{missing}");
        }
    }
}
