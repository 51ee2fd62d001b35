//! Wallet signature verification for Hanson logins.
//!
//! Pure functions, no I/O. Two kinds of wallet are supported:
//!
//! * **EVM** accounts sign with EIP-191 `personal_sign`. The server recovers the
//!   signer's address from a 65-byte `r || s || v` signature and compares it to the
//!   claimed address. High-s signatures are **rejected** ([`SignatureError::HighS`]):
//!   every mainstream wallet emits low-s (EIP-2), and refusing the twin keeps each
//!   (message, signer) pair to exactly one accepted signature.
//! * **Alt-network** (Flow-style) accounts sign `USER_DOMAIN_TAG || message` with
//!   ECDSA on P-256 or secp256k1, hashed with SHA2-256 or SHA3-256. The server
//!   verifies against a known 64-byte `X || Y` public key. Both low-s and high-s
//!   signatures are **accepted** here, as standard ECDSA does: signers such as
//!   Python's `cryptography`/OpenSSL emit either form, and malleability is harmless
//!   because the signed nonce is single-use.
//!
//! Errors are values, never panics. [`SignatureError::kind`] splits them into
//! [`ErrorKind::Malformed`] (bad hex, wrong length, bad `v`, bad key encoding: the
//! service answers 422) and [`ErrorKind::Invalid`] (well-formed but not a valid
//! signature by that signer: 401).
//!
//! Hex conventions (see [`parse_hex`]): EVM signatures and addresses carry a `0x`
//! prefix; alt-network signatures and public keys are bare hex; alt addresses carry
//! `0x`.
//!
//! ```
//! use wallet_auth::*;
//!
//! // EVM login: recover the signer and compare with the claimed address.
//! let key = [0x11u8; 32];
//! let msg = b"Sign this message to authenticate with nonce: 42";
//! let claimed = to_checksum_address(&evm_address_from_private_key(&key)?);
//! let sig_hex = format!("0x{}", to_hex(&sign_personal(&key, msg)?));
//! let sig = parse_hex(&sig_hex, true)?;
//! assert_eq!(recover_personal_sign(msg, &sig)?, parse_evm_address(&claimed)?);
//!
//! // Alt login: verify against the account's registered key.
//! let (sig, pk) = sign_alt(&key, SignAlgo::P256, HashAlgo::Sha3_256, msg)?;
//! verify_alt_signature(&pk, "ECDSA_P256".parse()?, "SHA3_256".parse()?, msg, &sig)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use core::fmt;
use core::str::FromStr;

use k256::ecdsa::signature::hazmat::{PrehashSigner, PrehashVerifier};
use sha2::Sha256;
use sha3::{Digest, Keccak256, Sha3_256};

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/// Coarse class of a [`SignatureError`], for mapping to HTTP statuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Input is not a well-formed signature/key encoding (422).
    Malformed,
    /// Input is well-formed but does not prove control of the account (401).
    Invalid,
}

/// Why a signature was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SignatureError {
    /// Not valid hex, odd length, or missing/unexpected `0x` prefix. Malformed.
    BadHex,
    /// Byte length differs from what the scheme requires. Malformed.
    BadLength {
        /// Required length in bytes.
        expected: usize,
        /// Length received.
        got: usize,
    },
    /// EVM `v` byte not in {0, 1, 27, 28}. Malformed.
    BadRecoveryId(u8),
    /// Public key bytes are not a point on the curve. Malformed.
    BadPublicKey,
    /// `r` or `s` is zero or not below the curve order. Invalid.
    ScalarOutOfRange,
    /// EVM signature with `s` in the upper half of the order (malleable twin). Invalid.
    HighS,
    /// Recovery or verification failed: wrong key, wrong message, or forged. Invalid.
    Invalid,
}

impl SignatureError {
    /// Malformed (422) versus Invalid (401).
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::BadHex | Self::BadLength { .. } | Self::BadRecoveryId(_) | Self::BadPublicKey => ErrorKind::Malformed,
            Self::ScalarOutOfRange | Self::HighS | Self::Invalid => ErrorKind::Invalid,
        }
    }

    /// Shorthand for `kind() == ErrorKind::Malformed`.
    pub fn is_malformed(&self) -> bool {
        self.kind() == ErrorKind::Malformed
    }
}

impl fmt::Display for SignatureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadHex => f.write_str("malformed hex"),
            Self::BadLength { expected, got } => {
                write!(f, "wrong length: expected {expected} bytes, got {got}")
            }
            Self::BadRecoveryId(v) => write!(f, "recovery byte v={v} not in {{0,1,27,28}}"),
            Self::BadPublicKey => f.write_str("public key is not a valid curve point"),
            Self::ScalarOutOfRange => f.write_str("signature r or s out of range"),
            Self::HighS => f.write_str("signature s is not in the lower half of the curve order"),
            Self::Invalid => f.write_str("signature verification failed"),
        }
    }
}

impl std::error::Error for SignatureError {}

/// Why an address string was rejected. All variants are malformed input.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AddressError {
    /// Does not start with `0x`.
    MissingPrefix,
    /// Wrong number of hex digits after `0x`.
    BadLength {
        /// Required number of hex digits.
        expected: usize,
        /// Number of characters received after `0x`.
        got: usize,
    },
    /// A character after `0x` is not a hex digit.
    BadHex,
    /// Mixed-case EVM address whose case does not match its EIP-55 checksum.
    BadChecksum,
}

impl fmt::Display for AddressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingPrefix => f.write_str("address must start with 0x"),
            Self::BadLength { expected, got } => {
                write!(f, "address must have {expected} hex digits after 0x, got {got}")
            }
            Self::BadHex => f.write_str("address contains a non-hex character"),
            Self::BadChecksum => f.write_str("address fails its EIP-55 checksum"),
        }
    }
}

impl std::error::Error for AddressError {}

/// A private key given to a signing helper is zero or not below the curve order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyError;

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("private key is zero or not below the curve order")
    }
}

impl std::error::Error for KeyError {}

/// Unrecognised algorithm name given to [`SignAlgo::from_str`] / [`HashAlgo::from_str`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownAlgorithm(pub String);

impl fmt::Display for UnknownAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown algorithm {:?}", self.0)
    }
}

impl std::error::Error for UnknownAlgorithm {}

// ---------------------------------------------------------------------------
// Hex
// ---------------------------------------------------------------------------

fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Decode hex into bytes.
///
/// With `strip_0x = true` the string must start with a lowercase `0x` (EVM style),
/// which is removed. With `strip_0x = false` the whole string must be bare hex
/// (alt-network style); a `0x` prefix is then rejected as [`SignatureError::BadHex`].
/// Digits may be any case; an odd number of digits is rejected. Length is not
/// checked here: the verifiers report [`SignatureError::BadLength`].
pub fn parse_hex(s: &str, strip_0x: bool) -> Result<Vec<u8>, SignatureError> {
    let digits = if strip_0x { s.strip_prefix("0x").ok_or(SignatureError::BadHex)? } else { s };
    let b = digits.as_bytes();
    if b.len() % 2 != 0 {
        return Err(SignatureError::BadHex);
    }
    b.chunks_exact(2)
        .map(|p| match (hex_val(p[0]), hex_val(p[1])) {
            (Some(hi), Some(lo)) => Ok((hi << 4) | lo),
            _ => Err(SignatureError::BadHex),
        })
        .collect()
}

/// Lowercase hex without prefix.
pub fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

/// Parse `0x` + exactly `N * 2` hex digits (any case) into `N` bytes.
fn parse_prefixed_fixed<const N: usize>(s: &str) -> Result<[u8; N], AddressError> {
    let digits = s.strip_prefix("0x").ok_or(AddressError::MissingPrefix)?;
    let b = digits.as_bytes();
    if b.len() != N * 2 {
        return Err(AddressError::BadLength { expected: N * 2, got: digits.chars().count() });
    }
    let mut out = [0u8; N];
    for (o, p) in out.iter_mut().zip(b.chunks_exact(2)) {
        match (hex_val(p[0]), hex_val(p[1])) {
            (Some(hi), Some(lo)) => *o = (hi << 4) | lo,
            _ => return Err(AddressError::BadHex),
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// EVM
// ---------------------------------------------------------------------------

/// secp256k1 group order n, big-endian.
const SECP256K1_N: [u8; 32] = [
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 0xba, 0xae, 0xdc, 0xe6, 0xaf, 0x48,
    0xa0, 0x3b, 0xbf, 0xd2, 0x5e, 0x8c, 0xd0, 0x36, 0x41, 0x41,
];

/// floor(n / 2) for secp256k1; s above this is "high".
const SECP256K1_HALF_N: [u8; 32] = [
    0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x5d, 0x57, 0x6e, 0x73, 0x57, 0xa4,
    0x50, 0x1d, 0xdf, 0xe9, 0x2f, 0x46, 0x68, 0x1b, 0x20, 0xa0,
];

fn keccak256(data: &[u8]) -> [u8; 32] {
    Keccak256::digest(data).into()
}

/// EIP-191 version 0x45 hash:
/// `keccak256("\x19Ethereum Signed Message:\n" + decimal(len) + message)`.
pub fn personal_sign_hash(message: &[u8]) -> [u8; 32] {
    let mut h = Keccak256::new();
    h.update(b"\x19Ethereum Signed Message:\n");
    h.update(message.len().to_string().as_bytes());
    h.update(message);
    h.finalize().into()
}

fn address_of(vk: &k256::ecdsa::VerifyingKey) -> [u8; 20] {
    let point = vk.to_sec1_point(false);
    // Uncompressed SEC1 is 0x04 || X || Y; the address hashes X || Y only.
    let xy = point.as_bytes().get(1..).unwrap_or_default();
    let h = keccak256(xy);
    let mut out = [0u8; 20];
    out.copy_from_slice(&h[12..]);
    out
}

/// Recover the Ethereum address that produced an EIP-191 `personal_sign` signature.
///
/// `signature` is the raw 65 bytes `r || s || v` with `v` in {0, 1, 27, 28}.
/// Rejects `r`/`s` of zero or `>= n`, and high-s (see crate docs). The caller must
/// compare the returned address with the claimed one: any well-formed signature
/// recovers *some* address.
pub fn recover_personal_sign(message: &[u8], signature: &[u8]) -> Result<[u8; 20], SignatureError> {
    let sig: &[u8; 65] = signature.try_into().map_err(|_| SignatureError::BadLength { expected: 65, got: signature.len() })?;
    let (rs, v) = sig.split_at(64);
    let (r, s) = rs.split_at(32);
    let recid = match v[0] {
        0 | 27 => 0,
        1 | 28 => 1,
        other => return Err(SignatureError::BadRecoveryId(other)),
    };
    let zero = [0u8; 32];
    // Big-endian byte slices compare like the integers they encode.
    if r == zero || s == zero || r >= &SECP256K1_N[..] || s >= &SECP256K1_N[..] {
        return Err(SignatureError::ScalarOutOfRange);
    }
    if s > &SECP256K1_HALF_N[..] {
        return Err(SignatureError::HighS);
    }
    let sig = k256::ecdsa::Signature::from_slice(rs).map_err(|_| SignatureError::ScalarOutOfRange)?;
    let recid = k256::ecdsa::RecoveryId::from_byte(recid).ok_or(SignatureError::BadRecoveryId(v[0]))?;
    let hash = personal_sign_hash(message);
    // Recovery yields a key for which the signature verifies by construction, so
    // no separate verify step; it fails only if r is not an x-coordinate.
    let vk = k256::ecdsa::VerifyingKey::recover_from_prehash(&hash, &sig, recid).map_err(|_| SignatureError::Invalid)?;
    Ok(address_of(&vk))
}

/// EIP-55 mixed-case checksum encoding, with `0x` prefix.
pub fn to_checksum_address(addr: &[u8; 20]) -> String {
    let lower = to_hex(addr);
    let h = keccak256(lower.as_bytes());
    let mut out = String::with_capacity(42);
    out.push_str("0x");
    for (i, c) in lower.chars().enumerate() {
        let byte = h[i / 2];
        let nibble = if i % 2 == 0 { byte >> 4 } else { byte & 0x0f };
        out.push(if nibble >= 8 { c.to_ascii_uppercase() } else { c });
    }
    out
}

/// Parse an EVM address: `0x` + 40 hex digits.
///
/// All-lowercase or all-uppercase digits are accepted without a checksum (the
/// sender opted out of EIP-55); mixed case must match the EIP-55 checksum exactly.
pub fn parse_evm_address(s: &str) -> Result<[u8; 20], AddressError> {
    let addr = parse_prefixed_fixed::<20>(s)?;
    let digits = &s[2..];
    let has_lower = digits.bytes().any(|c| c.is_ascii_lowercase());
    let has_upper = digits.bytes().any(|c| c.is_ascii_uppercase());
    if has_lower && has_upper && to_checksum_address(&addr)[2..] != *digits {
        return Err(AddressError::BadChecksum);
    }
    Ok(addr)
}

/// Ethereum address for a secp256k1 private key (tests, demos, load generation).
pub fn evm_address_from_private_key(key: &[u8; 32]) -> Result<[u8; 20], KeyError> {
    let sk = k256::ecdsa::SigningKey::from_slice(key).map_err(|_| KeyError)?;
    Ok(address_of(sk.verifying_key()))
}

/// EIP-191 `personal_sign` with a raw private key: returns `r || s || v`, low-s,
/// `v` in {27, 28}. Deterministic (RFC 6979), so it matches other RFC 6979 signers.
pub fn sign_personal(key: &[u8; 32], message: &[u8]) -> Result<[u8; 65], KeyError> {
    let sk = k256::ecdsa::SigningKey::from_slice(key).map_err(|_| KeyError)?;
    // k256 normalises to low-s and flips the recovery id to match.
    let (sig, recid) = sk.sign_prehash_recoverable(&personal_sign_hash(message));
    let mut out = [0u8; 65];
    out[..64].copy_from_slice(&sig.to_bytes());
    out[64] = 27 + (recid.to_byte() & 1);
    Ok(out)
}

// ---------------------------------------------------------------------------
// Alt network (Flow-style)
// ---------------------------------------------------------------------------

const fn pad_tag(tag: &[u8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    let mut i = 0;
    while i < tag.len() {
        out[i] = tag[i];
        i += 1;
    }
    out
}

/// Domain tag prepended to user messages before hashing: UTF-8 `FLOW-V0.0-user`
/// right-padded with zero bytes to 32 bytes.
pub const USER_DOMAIN_TAG: [u8; 32] = pad_tag(b"FLOW-V0.0-user");

/// Signature curve of an alt-network account key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SignAlgo {
    /// ECDSA over NIST P-256 (`ECDSA_P256`).
    P256,
    /// ECDSA over secp256k1 (`ECDSA_secp256k1`).
    Secp256k1,
}

impl SignAlgo {
    /// Canonical name, as accepted by `FromStr`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::P256 => "ECDSA_P256",
            Self::Secp256k1 => "ECDSA_secp256k1",
        }
    }
}

impl FromStr for SignAlgo {
    type Err = UnknownAlgorithm;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "ECDSA_P256" => Ok(Self::P256),
            "ECDSA_secp256k1" => Ok(Self::Secp256k1),
            _ => Err(UnknownAlgorithm(s.to_owned())),
        }
    }
}

impl fmt::Display for SignAlgo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Hash applied to `USER_DOMAIN_TAG || message` before ECDSA.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HashAlgo {
    /// SHA2-256 (`SHA2_256`).
    Sha2_256,
    /// SHA3-256 (`SHA3_256`), the FIPS 202 variant, not Keccak.
    Sha3_256,
}

impl HashAlgo {
    /// Canonical name, as accepted by `FromStr`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sha2_256 => "SHA2_256",
            Self::Sha3_256 => "SHA3_256",
        }
    }
}

impl FromStr for HashAlgo {
    type Err = UnknownAlgorithm;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "SHA2_256" => Ok(Self::Sha2_256),
            "SHA3_256" => Ok(Self::Sha3_256),
            _ => Err(UnknownAlgorithm(s.to_owned())),
        }
    }
}

impl fmt::Display for HashAlgo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Hash of `USER_DOMAIN_TAG || message` under `hash_algo`.
pub fn alt_message_hash(hash_algo: HashAlgo, message: &[u8]) -> [u8; 32] {
    match hash_algo {
        HashAlgo::Sha2_256 => Sha256::new().chain_update(USER_DOMAIN_TAG).chain_update(message).finalize().into(),
        HashAlgo::Sha3_256 => Sha3_256::new().chain_update(USER_DOMAIN_TAG).chain_update(message).finalize().into(),
    }
}

fn sec1_uncompressed(public_key: &[u8]) -> Result<[u8; 65], SignatureError> {
    if public_key.len() != 64 {
        return Err(SignatureError::BadLength { expected: 64, got: public_key.len() });
    }
    let mut out = [0u8; 65];
    out[0] = 0x04;
    out[1..].copy_from_slice(public_key);
    Ok(out)
}

/// Verify an alt-network user signature.
///
/// `public_key` is 64 bytes `X || Y`; `signature` is 64 bytes `r || s`. The signed
/// bytes are `USER_DOMAIN_TAG || message`, hashed with `hash_algo`. Both low-s and
/// high-s are accepted (see crate docs).
pub fn verify_alt_signature(
    public_key: &[u8],
    sign_algo: SignAlgo,
    hash_algo: HashAlgo,
    message: &[u8],
    signature: &[u8],
) -> Result<(), SignatureError> {
    let sec1 = sec1_uncompressed(public_key)?;
    if signature.len() != 64 {
        return Err(SignatureError::BadLength { expected: 64, got: signature.len() });
    }
    let hash = alt_message_hash(hash_algo, message);
    match sign_algo {
        SignAlgo::P256 => {
            let vk = p256::ecdsa::VerifyingKey::from_sec1_bytes(&sec1).map_err(|_| SignatureError::BadPublicKey)?;
            let sig = p256::ecdsa::Signature::from_slice(signature).map_err(|_| SignatureError::ScalarOutOfRange)?;
            vk.verify_prehash(&hash, &sig).map_err(|_| SignatureError::Invalid)
        }
        SignAlgo::Secp256k1 => {
            let vk = k256::ecdsa::VerifyingKey::from_sec1_bytes(&sec1).map_err(|_| SignatureError::BadPublicKey)?;
            let sig = k256::ecdsa::Signature::from_slice(signature).map_err(|_| SignatureError::ScalarOutOfRange)?;
            // k256's verifier refuses high-s; normalising first gives plain ECDSA.
            vk.verify_prehash(&hash, &sig.normalize_s()).map_err(|_| SignatureError::Invalid)
        }
    }
}

/// Sign `USER_DOMAIN_TAG || message` (tests, demos, load generation).
///
/// Returns `(r || s, X || Y)`. Deterministic (RFC 6979); secp256k1 output is low-s.
pub fn sign_alt(
    private_key: &[u8; 32],
    sign_algo: SignAlgo,
    hash_algo: HashAlgo,
    message: &[u8],
) -> Result<([u8; 64], [u8; 64]), KeyError> {
    let hash = alt_message_hash(hash_algo, message);
    let mut sig_out = [0u8; 64];
    let mut pk_out = [0u8; 64];
    match sign_algo {
        SignAlgo::P256 => {
            let sk = p256::ecdsa::SigningKey::from_slice(private_key).map_err(|_| KeyError)?;
            let sig: p256::ecdsa::Signature = sk.sign_prehash(&hash).map_err(|_| KeyError)?;
            sig_out.copy_from_slice(&sig.to_bytes());
            let point = sk.verifying_key().to_sec1_point(false);
            pk_out.copy_from_slice(point.as_bytes().get(1..).ok_or(KeyError)?);
        }
        SignAlgo::Secp256k1 => {
            let sk = k256::ecdsa::SigningKey::from_slice(private_key).map_err(|_| KeyError)?;
            let sig: k256::ecdsa::Signature = sk.sign_prehash(&hash).map_err(|_| KeyError)?;
            sig_out.copy_from_slice(&sig.to_bytes());
            let point = sk.verifying_key().to_sec1_point(false);
            pk_out.copy_from_slice(point.as_bytes().get(1..).ok_or(KeyError)?);
        }
    }
    Ok((sig_out, pk_out))
}

/// Parse an alt-network address: `0x` + exactly 16 hex digits (any case).
pub fn parse_alt_address(s: &str) -> Result<[u8; 8], AddressError> {
    parse_prefixed_fixed::<8>(s)
}
