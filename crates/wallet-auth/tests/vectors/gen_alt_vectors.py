#!/usr/bin/env python3
"""Generate alt-network (Flow-style) signature vectors with an independent
implementation (pyca/cryptography, i.e. OpenSSL) for wallet-auth's tests.

    pip install cryptography
    python3 gen_alt_vectors.py   # writes alt_vectors.json beside this file

Signed bytes are USER_DOMAIN_TAG || message, hashed by OpenSSL itself (not by us)
with the account's hash algorithm. OpenSSL nonces are random, so re-running gives
different (equally valid) signatures; the checked-in JSON is what the tests use.
Private keys are throwaway test keys.
"""
import json
import os

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)
from cryptography.exceptions import InvalidSignature

TAG = b"FLOW-V0.0-user".ljust(32, b"\x00")
CURVES = {
    "ECDSA_P256": (ec.SECP256R1(),
                   0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551),
    "ECDSA_secp256k1": (ec.SECP256K1(),
                        0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141),
}
HASHES = {"SHA2_256": hashes.SHA256, "SHA3_256": hashes.SHA3_256}

# Fixed test keys (any value in [1, n) works on both curves).
KEYS = [
    0x1F2E3D4C5B6A79880123456789ABCDEF0F1E2D3C4B5A69788796A5B4C3D2E1F0,
    0x0000000000000000000000000000000000000000000000000000000000000007,
    0x7A5D3C1B9E8F60412233445566778899AABBCCDDEEFF00112233445566778899,
]
NONCES = ["b1c0ffee", "9f8e7d6c5b4a39281706f5e4d3c2b1a0", "00000000000000000000000000000001"]


def message(nonce):
    return f"Sign this message to authenticate with nonce: {nonce}"


def pub_hex(priv):
    nums = priv.public_key().public_numbers()
    return nums.x.to_bytes(32, "big").hex() + nums.y.to_bytes(32, "big").hex()


def sign(priv, hash_name, msg):
    der = priv.sign(TAG + msg.encode(), ec.ECDSA(HASHES[hash_name]()))
    r, s = decode_dss_signature(der)
    return r, s


def sig_hex(r, s):
    return r.to_bytes(32, "big").hex() + s.to_bytes(32, "big").hex()


def openssl_verifies(priv, hash_name, msg, r, s):
    try:
        priv.public_key().verify(encode_dss_signature(r, s), TAG + msg.encode(),
                                 ec.ECDSA(HASHES[hash_name]()))
        return True
    except InvalidSignature:
        return False


def main():
    vectors = []
    for sign_algo, hash_name in [("ECDSA_P256", "SHA3_256"), ("ECDSA_secp256k1", "SHA2_256")]:
        curve, n = CURVES[sign_algo]
        privs = [ec.derive_private_key(k, curve) for k in KEYS]

        def add(name, priv_signer, pub_owner, msg_signed, msg_claimed, r, s, valid):
            assert openssl_verifies(pub_owner, hash_name, msg_claimed, r, s) == valid, name
            vectors.append({
                "name": f"{sign_algo}/{hash_name}/{name}",
                "sign_algo": sign_algo,
                "hash_algo": hash_name,
                "private_key": f"{priv_signer.private_numbers().private_value:064x}",
                "public_key": pub_hex(pub_owner),
                "message": msg_claimed,
                "signature": sig_hex(r, s),
                "high_s": s > n // 2,
                "valid": valid,
            })

        for i, (priv, nonce) in enumerate(zip(privs, NONCES)):
            msg = message(nonce)
            r, s = sign(priv, hash_name, msg)
            add(f"valid-{i}", priv, priv, msg, msg, r, s, True)
            if i == 0:
                # The malleable twin is plain-ECDSA valid; wallet-auth accepts it for alt.
                add("valid-twin", priv, priv, msg, msg, r, n - s, True)

        msg = message(NONCES[0])
        r, s = sign(privs[0], hash_name, msg)
        # Signed by key 0, presented with key 1's public key.
        add("wrong-key", privs[0], privs[1], msg, msg, r, s, False)
        # Signature over one nonce, presented for another.
        add("tampered-message", privs[0], privs[0], msg, message("b1c0ffef"), r, s, False)
        # Signature without the domain tag must not verify.
        der = privs[0].sign(msg.encode(), ec.ECDSA(HASHES[hash_name]()))
        r2, s2 = decode_dss_signature(der)
        add("no-domain-tag", privs[0], privs[0], msg, msg, r2, s2, False)

    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "alt_vectors.json")
    with open(out, "w") as f:
        json.dump({
            "generator": "gen_alt_vectors.py (pyca/cryptography)",
            "domain_tag_hex": TAG.hex(),
            "vectors": vectors,
        }, f, indent=2)
        f.write("\n")
    print(f"wrote {len(vectors)} vectors to {out}")


if __name__ == "__main__":
    main()
