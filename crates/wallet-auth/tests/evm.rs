//! EIP-191 / EIP-55 tests against published vectors, plus attack cases.

use wallet_auth::*;

fn hex32(s: &str) -> [u8; 32] {
    parse_hex(s, true).unwrap().try_into().unwrap()
}

const WEB3_KEY: &str = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318";
const WEB3_ADDR: &str = "0x2c7536e3605d9c16a7a3d7b1898e529396a65c23";
// web3.js docs, web3.eth.accounts.sign('Some data', WEB3_KEY).
const WEB3_HASH: &str = "0x1da44b586eb0729ff70a73c326926f6ed5a25f5b056e7f47fbc6e58d86871655";
const WEB3_SIG: &str =
    "0xb91467e570a6466aa9e9876cbcd013baba02900b8979d43fe208a4a4f339f5fd6007e74cd82e037b800186422fc2da167c747ef045e5d18a5f5d4300f8e1a0291c";
// viem docs, signMessage({ message: 'hello world' }) with the first anvil account.
const VIEM_SIG: &str =
    "0xa461f509887bd19e312c0c58467ce8ff8e300d3c1a90b608a760c5b80318eaf15fe57c96f9175d6cd4daad4663763baa7e78836e067d0163e9a2ccf2ff753f5b1b";
const VIEM_ADDR: &str = "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266";

/// secp256k1 order n, for building high-s twins.
const N: [u8; 32] = [
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 0xba, 0xae, 0xdc, 0xe6, 0xaf, 0x48,
    0xa0, 0x3b, 0xbf, 0xd2, 0x5e, 0x8c, 0xd0, 0x36, 0x41, 0x41,
];

/// Big-endian a - b (a >= b).
fn sub_be(a: &[u8; 32], b: &[u8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    let mut borrow = 0i16;
    for i in (0..32).rev() {
        let mut d = i16::from(a[i]) - i16::from(b[i]) - borrow;
        borrow = if d < 0 {
            d += 256;
            1
        } else {
            0
        };
        out[i] = d as u8;
    }
    out
}

fn high_s_twin(sig: &[u8]) -> Vec<u8> {
    let mut t = sig.to_vec();
    let s_twin = sub_be(&N, &sig[32..64]);
    t[32..64].copy_from_slice(&s_twin);
    t[64] = if sig[64] == 27 { 28 } else { 27 };
    t
}

#[test]
fn web3js_hash_matches_published() {
    assert_eq!(personal_sign_hash(b"Some data"), hex32(WEB3_HASH));
}

#[test]
fn web3js_key_derives_published_address() {
    let addr = evm_address_from_private_key(&hex32(WEB3_KEY)).unwrap();
    assert_eq!(addr, parse_evm_address(WEB3_ADDR).unwrap());
}

#[test]
fn web3js_sign_matches_published_signature() {
    // Both RFC 6979, so our signature must equal the published one byte for byte.
    let sig = sign_personal(&hex32(WEB3_KEY), b"Some data").unwrap();
    assert_eq!(sig.to_vec(), parse_hex(WEB3_SIG, true).unwrap());
}

#[test]
fn web3js_published_signature_recovers_address() {
    let sig = parse_hex(WEB3_SIG, true).unwrap();
    let addr = recover_personal_sign(b"Some data", &sig).unwrap();
    assert_eq!(addr, parse_evm_address(WEB3_ADDR).unwrap());
}

#[test]
fn viem_signature_recovers_address() {
    let sig = parse_hex(VIEM_SIG, true).unwrap();
    let addr = recover_personal_sign(b"hello world", &sig).unwrap();
    assert_eq!(addr, parse_evm_address(VIEM_ADDR).unwrap());
    assert_eq!(to_checksum_address(&addr), "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266");
}

#[test]
fn v_zero_one_accepted_like_27_28() {
    let mut sig = parse_hex(VIEM_SIG, true).unwrap();
    sig[64] -= 27;
    let addr = recover_personal_sign(b"hello world", &sig).unwrap();
    assert_eq!(addr, parse_evm_address(VIEM_ADDR).unwrap());
}

#[test]
fn round_trip_sign_recover() {
    let key = [0x11u8; 32];
    let addr = evm_address_from_private_key(&key).unwrap();
    for msg in [&b""[..], b"x", b"Sign this message to authenticate with nonce: 42"] {
        let sig = sign_personal(&key, msg).unwrap();
        assert!(sig[64] == 27 || sig[64] == 28);
        assert_eq!(recover_personal_sign(msg, &sig).unwrap(), addr);
    }
}

#[test]
fn high_s_twin_rejected() {
    for (msg, sig) in [(&b"Some data"[..], WEB3_SIG), (b"hello world", VIEM_SIG)] {
        let sig = parse_hex(sig, true).unwrap();
        let twin = high_s_twin(&sig);
        let err = recover_personal_sign(msg, &twin).unwrap_err();
        assert_eq!(err, SignatureError::HighS);
        assert_eq!(err.kind(), ErrorKind::Invalid);
    }
}

#[test]
fn truncated_signature_is_malformed() {
    let sig = parse_hex(WEB3_SIG, true).unwrap();
    let err = recover_personal_sign(b"Some data", &sig[..64]).unwrap_err();
    assert_eq!(err, SignatureError::BadLength { expected: 65, got: 64 });
    assert!(err.is_malformed());
    let mut long = sig.clone();
    long.push(0);
    assert!(recover_personal_sign(b"Some data", &long).unwrap_err().is_malformed());
    assert!(recover_personal_sign(b"Some data", &[]).unwrap_err().is_malformed());
}

#[test]
fn wrong_message_recovers_other_address() {
    let sig = parse_hex(WEB3_SIG, true).unwrap();
    let want = parse_evm_address(WEB3_ADDR).unwrap();
    // Recovery may yield some other key or fail outright; either way not the signer.
    match recover_personal_sign(b"Some datA", &sig) {
        Ok(addr) => assert_ne!(addr, want),
        Err(e) => assert_eq!(e.kind(), ErrorKind::Invalid),
    }
}

#[test]
fn bad_v_rejected() {
    let mut sig = parse_hex(WEB3_SIG, true).unwrap();
    for v in [2u8, 3, 26, 29, 35, 36, 255] {
        sig[64] = v;
        let err = recover_personal_sign(b"Some data", &sig).unwrap_err();
        assert_eq!(err, SignatureError::BadRecoveryId(v));
        assert!(err.is_malformed());
    }
}

#[test]
fn r_s_out_of_range_rejected() {
    let good = parse_hex(WEB3_SIG, true).unwrap();
    let cases: [(usize, [u8; 32]); 4] = [(0, [0; 32]), (32, [0; 32]), (0, N), (0, [0xff; 32])];
    for (off, val) in cases {
        let mut sig = good.clone();
        sig[off..off + 32].copy_from_slice(&val);
        assert_eq!(recover_personal_sign(b"Some data", &sig).unwrap_err(), SignatureError::ScalarOutOfRange);
    }
    // s = n is out of range, not merely high.
    let mut sig = good.clone();
    sig[32..64].copy_from_slice(&N);
    assert_eq!(recover_personal_sign(b"Some data", &sig).unwrap_err(), SignatureError::ScalarOutOfRange);
}

#[test]
fn r_not_an_x_coordinate_is_invalid() {
    // x = 5 is not on secp256k1 (5^3 + 7 = 132 is a non-residue mod p).
    let mut sig = parse_hex(WEB3_SIG, true).unwrap();
    sig[..32].copy_from_slice(&[0; 32]);
    sig[31] = 5;
    let err = recover_personal_sign(b"Some data", &sig).unwrap_err();
    assert_eq!(err, SignatureError::Invalid);
}

#[test]
fn eip55_examples_valid() {
    for a in [
        "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
        "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
        "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
        "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
        // EIP-55 all-caps / all-lower examples.
        "0x52908400098527886E0F7030069857D2E4169EE7",
        "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
        "0xde709f2102306220921060314715629080e2fb77",
        "0x27b1fdb04752bbc536007a920d24acb045561c26",
    ] {
        let addr = parse_evm_address(a).unwrap_or_else(|e| panic!("{a}: {e}"));
        if a[2..].bytes().any(|c| c.is_ascii_lowercase()) && a[2..].bytes().any(|c| c.is_ascii_uppercase()) {
            assert_eq!(to_checksum_address(&addr), a);
        }
    }
}

#[test]
fn eip55_flipped_case_invalid() {
    // Flip one letter's case in each mixed-case example.
    for a in [
        "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD",
        "0xFB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
        "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6Fb",
        "0xd1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
    ] {
        assert_eq!(parse_evm_address(a).unwrap_err(), AddressError::BadChecksum, "{a}");
    }
}

#[test]
fn upper_and_lower_case_accepted() {
    let lower = parse_evm_address("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed").unwrap();
    let upper = parse_evm_address("0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED").unwrap();
    assert_eq!(lower, upper);
    assert_eq!(to_checksum_address(&lower), "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed");
}

#[test]
fn malformed_addresses() {
    use AddressError::*;
    let cases: &[(&str, AddressError)] = &[
        ("5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", MissingPrefix),
        ("0X5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", MissingPrefix),
        ("0x5aaeb6053f3e94c9b9a09f33669435e7ef1bea", BadLength { expected: 40, got: 38 }),
        ("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed00", BadLength { expected: 40, got: 42 }),
        ("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaeg", BadHex),
        ("0x", BadLength { expected: 40, got: 0 }),
        ("", MissingPrefix),
        // 40 bytes but multi-byte chars: never a byte-boundary panic.
        ("0x5aaeb6053f3e94c9b9a09f33669435e7ef1bea\u{e9}", BadHex),
    ];
    for (s, want) in cases {
        assert_eq!(&parse_evm_address(s).unwrap_err(), want, "{s:?}");
    }
}

#[test]
fn parse_hex_prefix_rules() {
    assert_eq!(parse_hex("0xdeadBEEF", true).unwrap(), vec![0xde, 0xad, 0xbe, 0xef]);
    assert_eq!(parse_hex("deadbeef", false).unwrap(), vec![0xde, 0xad, 0xbe, 0xef]);
    assert_eq!(parse_hex("0x", true).unwrap(), Vec::<u8>::new());
    assert_eq!(parse_hex("deadbeef", true), Err(SignatureError::BadHex));
    assert_eq!(parse_hex("0xdeadbeef", false), Err(SignatureError::BadHex));
    assert_eq!(parse_hex("0xabc", true), Err(SignatureError::BadHex));
    assert_eq!(parse_hex("zz", false), Err(SignatureError::BadHex));
    assert_eq!(parse_hex("\u{e9}\u{e9}", false), Err(SignatureError::BadHex));
    assert!(SignatureError::BadHex.is_malformed());
}

#[test]
fn invalid_private_keys_rejected() {
    assert_eq!(evm_address_from_private_key(&[0; 32]), Err(KeyError));
    assert_eq!(evm_address_from_private_key(&N), Err(KeyError));
    assert_eq!(sign_personal(&[0xff; 32], b"x"), Err(KeyError));
}
