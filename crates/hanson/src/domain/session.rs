//! Login sessions: a wallet logged in to one provider, and the rules a session lives by.

use serde::Deserialize;

use super::address::{parse_wallet_address, WalletType};
use super::ids::{ProviderId, SessionId, WalletId};
use super::siwe::{PublicUrl, SiweMessage};
use super::time::Micros;
use crate::error::{Error, Result, Validator};

/// Nonces are valid for five minutes.
pub(crate) const NONCE_TTL_MICROS: i64 = 5 * 60 * 1_000_000;

/// The text a wallet signs to log in with `nonce`.
pub(crate) fn login_message(nonce: &str) -> String {
    format!("Sign this message to authenticate with nonce: {nonce}")
}

/// How a nonce's message is worded: the spec's one line, or Sign-In with Ethereum (EIP-4361).
pub(crate) enum MessageFormat {
    Spec,
    Siwe { chain_id: u64 },
}

impl MessageFormat {
    /// `message_format` (`spec`, the default, or `siwe`) and `chain_id` (SIWE only, default 1)
    /// of a nonce request for a wallet of `kind`; SIWE needs the service's public URL.
    pub(crate) fn from_fields(
        format: Option<&str>,
        chain_id: Option<i64>,
        kind: Option<WalletType>,
        public_url: Option<&PublicUrl>,
        v: &mut Validator,
    ) -> MessageFormat {
        match format {
            None | Some("spec") => {
                if chain_id.is_some() {
                    v.push("chain_id", "is only for message_format siwe");
                }
                MessageFormat::Spec
            }
            Some("siwe") => {
                if kind == Some(WalletType::Alt) {
                    v.push("message_format", "siwe is for EVM wallets; alt-network wallets sign the spec's message");
                }
                if public_url.is_none() {
                    v.push("message_format", "siwe needs the server's --public-url, which is not set");
                }
                match chain_id.map(u64::try_from) {
                    None => MessageFormat::Siwe { chain_id: 1 },
                    Some(Ok(id)) if id >= 1 => MessageFormat::Siwe { chain_id: id },
                    Some(_) => {
                        v.push("chain_id", "must be a positive integer");
                        MessageFormat::Siwe { chain_id: 1 }
                    }
                }
            }
            Some(_) => {
                v.push("message_format", "must be spec or siwe");
                MessageFormat::Spec
            }
        }
    }
}

/// A provider id: a UUID in its hyphenated form (36 characters), as documented.
pub(crate) fn provider_id_field(value: Option<&str>, v: &mut Validator) -> String {
    match value.map(|text| uuid::Uuid::parse_str(text).ok().filter(|_| text.len() == 36).ok_or(())) {
        Some(Ok(id)) => id.to_string(),
        Some(Err(_)) => {
            v.push("provider_id", "must be a UUID");
            String::new()
        }
        None => {
            v.push("provider_id", "is required");
            String::new()
        }
    }
}

pub(crate) fn address_field(value: Option<&str>, field: &str, v: &mut Validator) -> Option<(String, WalletType)> {
    match value.map(parse_wallet_address) {
        Some(Ok(parsed)) => Some(parsed),
        Some(Err(message)) => {
            v.push(field, message);
            None
        }
        None => {
            v.push(field, "is required");
            None
        }
    }
}

fn invalid_message(detail: &'static str) -> Error {
    Error::AuthFailed { code: "invalid_message", detail }
}

/// What a differing or invalid field of a presented SIWE message is reported as.
fn mismatch_detail(field: &str) -> &'static str {
    match field {
        "domain" => "the message's domain is not this service's",
        "address" => "the message's address is not the wallet's",
        "uri" => "the message's URI is not this service's",
        "chain_id" => "the message's chain ID is not the one issued for this nonce",
        "nonce" => "the message's nonce is not this login's",
        "issued_at" => "the message's issued-at time is not the one issued for this nonce",
        "expiration_time" => "the message has expired or its expiration time was changed",
        _ => "the message is not the one issued for this nonce",
    }
}

fn invalid_signature() -> Error {
    Error::AuthFailed { code: "invalid_signature", detail: "the signature does not prove control of this wallet" }
}

/// Parses a signature's hex; malformed input is a 422, never a 401.
fn signature_bytes(text: &str, with_prefix: bool, expected_len: usize, v: &mut Validator) -> Vec<u8> {
    match wallet_auth::parse_hex(text, with_prefix) {
        Ok(bytes) if bytes.len() == expected_len => bytes,
        _ => {
            let form = if with_prefix { "0x followed by 130 hex digits" } else { "128 hex digits without 0x" };
            v.push("signature", format!("must be {form}"));
            Vec::new()
        }
    }
}

/// A login as sent: an EIP-191 signature of the nonce's message, or an alt-network
/// account key's signature (`wallet_type` alt).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub(crate) struct LoginInput {
    #[schema(required = true, nullable = false, pattern = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")]
    pub(crate) provider_id: Option<String>,
    /// EVM address (0x + 40 hex, EIP-55 checked when mixed-case), or for `wallet_type` alt an
    /// alt account address (0x + 16 hex).
    #[schema(required = true, nullable = false, pattern = "^0x([0-9a-fA-F]{40}|[0-9a-fA-F]{16})$")]
    pub(crate) wallet_address: Option<String>,
    /// EVM: 0x + 65 bytes hex (v in 0, 1, 27, 28; high-s rejected). Alt: 64 bytes r||s hex without 0x.
    #[schema(required = true, nullable = false, pattern = "^(0x[0-9a-fA-F]{130}|[0-9a-fA-F]{128})$")]
    pub(crate) signature: Option<String>,
    #[schema(required = true, nullable = false, min_length = 1, max_length = 128)]
    pub(crate) nonce: Option<String>,
    /// `evm` (default) or `alt`.
    #[schema(pattern = "^(evm|alt)$")]
    pub(crate) wallet_type: Option<String>,
    /// Alt wallets: the EVM address the account maps to.
    #[schema(pattern = "^0x[0-9a-fA-F]{40}$")]
    pub(crate) alt_evm_address: Option<String>,
    /// Alt wallets: the account key that signed.
    #[schema(minimum = 0)]
    pub(crate) key_id: Option<i64>,
    /// Optional: the message the wallet signed, as the nonce's `message` gave it. When sent,
    /// it must be that message; for a Sign-In with Ethereum nonce a differing or expired field
    /// is a 401 `invalid_message` naming the field.
    #[schema(max_length = 4096)]
    pub(crate) message: Option<String>,
}

/// The alt-network part of a login.
#[derive(Debug, Clone)]
pub(crate) struct AltLogin {
    pub(crate) evm_address: String,
    pub(crate) key_id: i64,
}

/// A well-formed login, its signature not yet checked.
#[derive(Debug, Clone)]
pub(crate) struct Login {
    pub(crate) provider_id: String,
    pub(crate) address: String,
    pub(crate) wallet_type: WalletType,
    pub(crate) nonce: String,
    pub(crate) signature: Vec<u8>,
    pub(crate) alt: Option<AltLogin>,
    /// The message the client says it signed, if it sent one.
    pub(crate) message: Option<String>,
}

impl LoginInput {
    pub(crate) fn validate(self) -> Result<Login> {
        let mut v = Validator::default();
        let provider_id = provider_id_field(self.provider_id.as_deref(), &mut v);
        let address = address_field(self.wallet_address.as_deref(), "wallet_address", &mut v);
        let nonce = self.nonce.clone().unwrap_or_default();
        if nonce.is_empty() || nonce.chars().count() > 128 {
            v.push("nonce", "is required");
        }
        let is_alt = match self.wallet_type.as_deref() {
            None | Some("evm") => false,
            Some("alt") => true,
            Some(_) => {
                v.push("wallet_type", "must be evm or alt");
                false
            }
        };
        let signature_text = self.signature.clone().unwrap_or_default();
        let signature =
            if is_alt { signature_bytes(&signature_text, false, 64, &mut v) } else { signature_bytes(&signature_text, true, 65, &mut v) };
        let mut alt = None;
        if is_alt {
            let evm_address = match self.alt_evm_address.as_deref().map(parse_wallet_address) {
                Some(Ok((a, WalletType::Evm))) => Some(a),
                Some(_) => {
                    v.push("alt_evm_address", "must be 0x followed by 40 hex digits");
                    None
                }
                None => {
                    v.push("alt_evm_address", "is required for alt wallets");
                    None
                }
            };
            let key_id = self.key_id.filter(|k| *k >= 0);
            if key_id.is_none() {
                v.push("key_id", "is required for alt wallets and must be a non-negative integer");
            }
            if let (Some(evm_address), Some(key_id)) = (evm_address, key_id) {
                alt = Some(AltLogin { evm_address, key_id });
            }
        }
        if let Some((_, kind)) = &address {
            if (*kind == WalletType::Alt) != is_alt {
                v.push(
                    "wallet_address",
                    if is_alt { "alt wallets have 0x + 16 hex digit addresses" } else { "EVM wallets have 0x + 40 hex digit addresses" },
                );
            }
        }
        if self.message.as_ref().is_some_and(|m| m.len() > 4096) {
            v.push("message", "must be at most 4096 bytes");
        }
        v.finish()?;
        let (address, wallet_type) = address.ok_or_else(|| Error::internal("validated address missing"))?;
        Ok(Login { provider_id, address, wallet_type, nonce, signature, alt, message: self.message })
    }
}

impl Login {
    /// The message this login's signature must be over: the nonce's Sign-In with Ethereum
    /// message (`issued`) if it had one, else the spec's. A message the client sent must be
    /// that one, and a SIWE message must not have expired at `now`.
    fn signed_message(&self, issued: Option<&str>, now: Micros) -> Result<String> {
        let Some(issued) = issued else {
            let message = login_message(&self.nonce);
            if self.message.as_ref().is_some_and(|m| *m != message) {
                return Err(invalid_message("the message is not the one issued for this nonce"));
            }
            return Ok(message);
        };
        let issued_fields = SiweMessage::parse(issued).ok_or_else(|| Error::internal("a stored SIWE message does not parse"))?;
        let presented = match &self.message {
            Some(text) => SiweMessage::parse(text).ok_or_else(|| invalid_message("the message is not an EIP-4361 message"))?,
            None => issued_fields.clone(),
        };
        if let Some(field) = issued_fields.mismatch(&presented, now) {
            return Err(invalid_message(mismatch_detail(field)));
        }
        Ok(issued.to_string())
    }

    /// The signature proves control of the wallet: an EVM signature recovers to the
    /// address; an alt signature verifies with the wallet's registered, unrevoked `alt_key`.
    /// `issued` is the nonce's Sign-In with Ethereum message, if it had one.
    pub(crate) fn verify(&self, alt_key: Option<&AltKey>, issued: Option<&str>, now: Micros) -> Result<()> {
        let message = self.signed_message(issued, now)?;
        if self.alt.is_some() {
            let key = alt_key
                .filter(|k| !k.revoked)
                .ok_or(Error::AuthFailed { code: "invalid_signature", detail: "the account key is unknown or revoked" })?;
            let public_key = wallet_auth::parse_hex(&key.public_key, false).map_err(|_| invalid_signature())?;
            let sign_algo = key.sign_algo.parse().map_err(|_| invalid_signature())?;
            let hash_algo = key.hash_algo.parse().map_err(|_| invalid_signature())?;
            wallet_auth::verify_alt_signature(&public_key, sign_algo, hash_algo, message.as_bytes(), &self.signature)
                .map_err(|_| invalid_signature())
        } else {
            let recovered = wallet_auth::recover_personal_sign(message.as_bytes(), &self.signature).map_err(|_| invalid_signature())?;
            if wallet_auth::to_hex(&recovered) != self.address[2..] {
                return Err(invalid_signature());
            }
            Ok(())
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Session {
    pub(crate) id: SessionId,
    pub(crate) provider_id: ProviderId,
    pub(crate) wallet_id: WalletId,
    pub(crate) expires_at: Micros,
    pub(crate) revoked: bool,
}

/// An alt-network account key a provider registered for a wallet address.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub(crate) struct AltKey {
    pub(crate) wallet_address: String,
    pub(crate) key_id: i64,
    pub(crate) public_key: String,
    pub(crate) sign_algo: String,
    pub(crate) hash_algo: String,
    pub(crate) revoked: bool,
}

impl Session {
    /// A trade's session must exist, be unrevoked and belong to the access token's wallet
    /// and provider.
    pub(crate) fn is_live_for(&self, wallet_id: &str, provider_id: &str) -> bool {
        !self.revoked && self.wallet_id == wallet_id && self.provider_id == provider_id
    }
}
