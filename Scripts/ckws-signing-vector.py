#!/usr/bin/env python3
"""The known-answer vector for CKWS server-to-server request signing, made by an independent
implementation (Python's `cryptography`), for FerryCloudKitAuthTests.

CloudKit Web Services signs `{date}:{base64(sha256(body))}:{subpath}` with ECDSA P-256 / SHA-256
and sends the DER signature in base64 (X-Apple-CloudKit-Request-SignatureV1).

  Scripts/ckws-signing-vector.py verify      check the committed vector (default)
  Scripts/ckws-signing-vector.py generate    make a new key and signatures (ECDSA signatures are
                                             randomized: a new run gives new bytes; commit them)
  Scripts/ckws-signing-vector.py check PUBLIC_KEY_PEM DATE SUBPATH BODY_FILE SIGNATURE_BASE64
                                             verify a signature made elsewhere (the Swift Signer)

Needs `pip install cryptography`.
"""
import base64
import hashlib
import json
import os
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

VECTOR = os.path.join(os.path.dirname(__file__), "..", "Tests", "FerryCloudKitAuthTests", "Vectors",
                      "ckws-signing-vector.json")
DATE = "2026-11-25T07:00:00Z"
SUBPATH = "/database/1/iCloud.com.example.ferry/development/public/records/query"
BODY = '{"query":{"recordType":"Message","filterBy":[{"fieldName":"text","comparator":"EQUALS","fieldValue":{"value":"héllo 🚀"}}]}}'
NO_BODY_SUBPATH = "/database/1/iCloud.com.example.ferry/development/public/zones/list"


def body_hash(body: bytes) -> str:
    return base64.b64encode(hashlib.sha256(body).digest()).decode()


def message(date: str, hash_field: str, subpath: str) -> bytes:
    return f"{date}:{hash_field}:{subpath}".encode("utf-8")


def sign(key, msg: bytes) -> str:
    return base64.b64encode(key.sign(msg, ec.ECDSA(hashes.SHA256()))).decode()


def verifies(public_key, msg: bytes, signature: str) -> bool:
    try:
        public_key.verify(base64.b64decode(signature), msg, ec.ECDSA(hashes.SHA256()))
        return True
    except InvalidSignature:
        return False


def generate():
    key = ec.generate_private_key(ec.SECP256R1())
    private_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()).decode()
    sec1_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                 serialization.NoEncryption()).decode()
    public_pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    body = BODY.encode("utf-8")
    vector = {
        "comment": "Made by Scripts/ckws-signing-vector.py (Python cryptography); verified by FerryCloudKitAuthTests.",
        "keyID": "2f0a7b9c4d1e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8",
        "privateKeyPEM": private_pem,
        "privateKeySEC1PEM": sec1_pem,
        "publicKeyPEM": public_pem,
        "date": DATE,
        "subpath": SUBPATH,
        "body": BODY,
        "bodyHash": body_hash(body),
        "signature": sign(key, message(DATE, body_hash(body), SUBPATH)),
        "noBodySubpath": NO_BODY_SUBPATH,
        "noBodySignatureEmptyHashField": sign(key, message(DATE, "", NO_BODY_SUBPATH)),
        "noBodySignatureEmptyBodyHash": sign(key, message(DATE, body_hash(b""), NO_BODY_SUBPATH)),
    }
    with open(VECTOR, "w") as f:
        json.dump(vector, f, indent=2, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {os.path.normpath(VECTOR)}")
    verify()


def verify():
    with open(VECTOR) as f:
        v = json.load(f)
    key = serialization.load_pem_private_key(v["privateKeyPEM"].encode(), password=None)
    public = serialization.load_pem_public_key(v["publicKeyPEM"].encode())
    sec1 = serialization.load_pem_private_key(v["privateKeySEC1PEM"].encode(), password=None)
    assert sec1.private_numbers() == key.private_numbers(), "the SEC1 and PKCS #8 keys differ"
    assert key.public_key().public_numbers() == public.public_numbers(), "private and public keys differ"
    body = v["body"].encode("utf-8")
    assert v["bodyHash"] == body_hash(body), "bodyHash is not base64(sha256(body))"
    checks = [
        ("signature", message(v["date"], v["bodyHash"], v["subpath"])),
        ("noBodySignatureEmptyHashField", message(v["date"], "", v["noBodySubpath"])),
        ("noBodySignatureEmptyBodyHash", message(v["date"], body_hash(b""), v["noBodySubpath"])),
    ]
    for name, msg in checks:
        assert verifies(public, msg, v[name]), f"{name} does not verify"
    assert not verifies(public, message(v["date"], v["bodyHash"], v["subpath"] + "x"), v["signature"])
    print("vector verifies: 3 signatures")


def check(public_pem_path, date, subpath, body_path, signature):
    with open(public_pem_path, "rb") as f:
        public = serialization.load_pem_public_key(f.read())
    with open(body_path, "rb") as f:
        body = f.read()
    ok = verifies(public, message(date, body_hash(body), subpath), signature)
    if not ok and not body:
        ok = verifies(public, message(date, "", subpath), signature)
    print("signature verifies" if ok else "signature does NOT verify")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    args = sys.argv[1:] or ["verify"]
    if args[0] == "generate":
        generate()
    elif args[0] == "verify":
        verify()
    elif args[0] == "check" and len(args) == 6:
        check(*args[1:])
    else:
        sys.exit(__doc__)
