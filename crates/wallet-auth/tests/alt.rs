//! Alt-network (Flow-style) verification against vectors from pyca/cryptography.

use serde::Deserialize;
use wallet_auth::*;

#[derive(Deserialize)]
struct File {
    domain_tag_hex: String,
    vectors: Vec<Vector>,
}

#[derive(Deserialize)]
struct Vector {
    name: String,
    sign_algo: String,
    hash_algo: String,
    private_key: String,
    public_key: String,
    message: String,
    signature: String,
    high_s: bool,
    valid: bool,
}

fn load() -> File {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/alt_vectors.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

const ALL: [(SignAlgo, HashAlgo); 4] = [
    (SignAlgo::P256, HashAlgo::Sha2_256),
    (SignAlgo::P256, HashAlgo::Sha3_256),
    (SignAlgo::Secp256k1, HashAlgo::Sha2_256),
    (SignAlgo::Secp256k1, HashAlgo::Sha3_256),
];

#[test]
fn domain_tag_matches_generator() {
    assert_eq!(parse_hex(&load().domain_tag_hex, false).unwrap(), USER_DOMAIN_TAG.to_vec());
    assert_eq!(&USER_DOMAIN_TAG[..14], b"FLOW-V0.0-user");
    assert!(USER_DOMAIN_TAG[14..].iter().all(|&b| b == 0));
}

#[test]
fn python_vectors_verify_exactly() {
    let file = load();
    let (mut ok, mut bad, mut high) = (0, 0, 0);
    for v in &file.vectors {
        let sa: SignAlgo = v.sign_algo.parse().unwrap();
        let ha: HashAlgo = v.hash_algo.parse().unwrap();
        let pk = parse_hex(&v.public_key, false).unwrap();
        let sig = parse_hex(&v.signature, false).unwrap();
        let res = verify_alt_signature(&pk, sa, ha, v.message.as_bytes(), &sig);
        if v.valid {
            assert_eq!(res, Ok(()), "{}", v.name);
            ok += 1;
            high += usize::from(v.high_s);
        } else {
            assert_eq!(res, Err(SignatureError::Invalid), "{}", v.name);
            bad += 1;
        }
    }
    // The file must exercise both outcomes and high-s acceptance on both curves.
    assert!(ok >= 6 && bad >= 4 && high >= 2, "ok={ok} bad={bad} high={high}");
}

#[test]
fn python_public_keys_match_ours() {
    for v in load().vectors.iter().filter(|v| v.valid) {
        let key: [u8; 32] = parse_hex(&v.private_key, false).unwrap().try_into().unwrap();
        let (_, pk) = sign_alt(&key, v.sign_algo.parse().unwrap(), v.hash_algo.parse().unwrap(), b"").unwrap();
        assert_eq!(pk.to_vec(), parse_hex(&v.public_key, false).unwrap(), "{}", v.name);
    }
}

#[test]
fn round_trip_all_combinations() {
    let key = [0x42u8; 32];
    let msg = b"Sign this message to authenticate with nonce: 0123456789abcdef";
    for (sa, ha) in ALL {
        let (sig, pk) = sign_alt(&key, sa, ha, msg).unwrap();
        assert_eq!(verify_alt_signature(&pk, sa, ha, msg, &sig), Ok(()), "{sa} {ha}");
        // Wrong message, wrong hash and wrong curve all fail.
        assert_eq!(verify_alt_signature(&pk, sa, ha, b"other", &sig), Err(SignatureError::Invalid));
        let other_ha = if ha == HashAlgo::Sha2_256 { HashAlgo::Sha3_256 } else { HashAlgo::Sha2_256 };
        assert_eq!(verify_alt_signature(&pk, sa, other_ha, msg, &sig), Err(SignatureError::Invalid));
        let other_sa = if sa == SignAlgo::P256 { SignAlgo::Secp256k1 } else { SignAlgo::P256 };
        // The point is (almost surely) not on the other curve.
        assert!(verify_alt_signature(&pk, other_sa, ha, msg, &sig).is_err());
        // Wrong key.
        let (_, pk2) = sign_alt(&[0x43u8; 32], sa, ha, msg).unwrap();
        assert_eq!(verify_alt_signature(&pk2, sa, ha, msg, &sig), Err(SignatureError::Invalid));
    }
}

#[test]
fn lengths_and_points_are_malformed() {
    let (sig, pk) = sign_alt(&[7u8; 32], SignAlgo::P256, HashAlgo::Sha3_256, b"m").unwrap();
    let f = |pk: &[u8], sig: &[u8]| verify_alt_signature(pk, SignAlgo::P256, HashAlgo::Sha3_256, b"m", sig);
    assert_eq!(f(&pk, &sig[..63]), Err(SignatureError::BadLength { expected: 64, got: 63 }));
    assert_eq!(f(&pk[..63], &sig), Err(SignatureError::BadLength { expected: 64, got: 63 }));
    let mut with_prefix = vec![4u8];
    with_prefix.extend_from_slice(&pk);
    assert!(f(&with_prefix, &sig).unwrap_err().is_malformed());
    // Off-curve point and all-zero point.
    let mut off = pk;
    off[63] ^= 1;
    assert_eq!(f(&off, &sig), Err(SignatureError::BadPublicKey));
    assert_eq!(f(&[0u8; 64], &sig), Err(SignatureError::BadPublicKey));
    for sa in [SignAlgo::P256, SignAlgo::Secp256k1] {
        let e = verify_alt_signature(&[0u8; 64], sa, HashAlgo::Sha2_256, b"m", &sig).unwrap_err();
        assert!(e.is_malformed());
    }
    // Zero / overflowing scalars are well-formed but invalid.
    assert_eq!(f(&pk, &[0u8; 64]), Err(SignatureError::ScalarOutOfRange));
    assert_eq!(f(&pk, &[0xffu8; 64]), Err(SignatureError::ScalarOutOfRange));
    assert_eq!(SignatureError::ScalarOutOfRange.kind(), ErrorKind::Invalid);
}

#[test]
fn algo_names_round_trip() {
    for sa in [SignAlgo::P256, SignAlgo::Secp256k1] {
        assert_eq!(sa.as_str().parse::<SignAlgo>(), Ok(sa));
    }
    for ha in [HashAlgo::Sha2_256, HashAlgo::Sha3_256] {
        assert_eq!(ha.as_str().parse::<HashAlgo>(), Ok(ha));
    }
    assert_eq!("ECDSA_P256".parse::<SignAlgo>(), Ok(SignAlgo::P256));
    assert_eq!("ECDSA_secp256k1".parse::<SignAlgo>(), Ok(SignAlgo::Secp256k1));
    assert_eq!("SHA3_256".parse::<HashAlgo>(), Ok(HashAlgo::Sha3_256));
    assert!("ecdsa_p256".parse::<SignAlgo>().is_err());
    assert!("KECCAK_256".parse::<HashAlgo>().is_err());
}

#[test]
fn alt_addresses() {
    assert_eq!(parse_alt_address("0x01cf0e2f2f715450"), Ok([0x01, 0xcf, 0x0e, 0x2f, 0x2f, 0x71, 0x54, 0x50]));
    assert_eq!(parse_alt_address("0x01CF0E2F2F715450").unwrap()[1], 0xcf);
    assert_eq!(parse_alt_address("01cf0e2f2f715450"), Err(AddressError::MissingPrefix));
    assert_eq!(parse_alt_address("0x01cf0e2f2f7154"), Err(AddressError::BadLength { expected: 16, got: 14 }));
    assert_eq!(parse_alt_address("0x01cf0e2f2f71545g"), Err(AddressError::BadHex));
}
