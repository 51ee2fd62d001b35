//! Garbage in, error out: no input may panic.

use wallet_auth::*;

/// Small deterministic PRNG so the test needs no extra dependency.
struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

#[test]
fn random_inputs_never_panic() {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let algos = [SignAlgo::P256, SignAlgo::Secp256k1];
    let hashes = [HashAlgo::Sha2_256, HashAlgo::Sha3_256];
    for i in 0..400 {
        let len = [0, 1, 63, 64, 65, 66, 128][i % 7];
        let mut sig = rng.bytes(len);
        if len == 65 {
            sig[64] = [0, 1, 27, 28][i % 4];
        }
        let _ = recover_personal_sign(b"m", &sig);
        let pk = rng.bytes([64, 64, 65, 63][i % 4]);
        let _ = verify_alt_signature(&pk, algos[i % 2], hashes[(i / 2) % 2], b"m", &rng.bytes(64));
        let key: [u8; 32] = rng.bytes(32).try_into().unwrap();
        let _ = sign_personal(&key, b"m");
        let _ = sign_alt(&key, algos[i % 2], hashes[i % 2], b"m");
        // Arbitrary (possibly non-UTF-8-boundary-friendly) strings.
        let s: String = rng.bytes(44).iter().map(|&b| char::from_u32(u32::from(b) * 7 + 40).unwrap_or('?')).collect();
        let _ = parse_evm_address(&s);
        let _ = parse_evm_address(&format!("0x{}", &s));
        let _ = parse_alt_address(&s);
        let _ = parse_hex(&s, i % 2 == 0);
    }
    // Recovering with a valid key point on random valid-range scalars succeeds or errs cleanly.
    let ok = sign_personal(&[1u8; 32], b"m").unwrap();
    assert!(recover_personal_sign(b"m", &ok).is_ok());
}
