#!/usr/bin/env python3
"""Encrypt the secret part of a notification for the dispatcher's `decrypt` extension.

The provider keeps the alert text (and anything else private) out of the request record: it
encrypts a JSON object with AES-256-GCM and sends only the ciphertext, which the dispatcher
decrypts and deep-merges into the payload.

    python3 encrypt_payload.py --key-file news.key [--key-id 2026-11] '{"aps": {"alert": {"title": "..."}}}'

prints the fields to put in the payload, e.g. {"encrypted": "<base64>", "key-id": "2026-11"}.
The record is base64 of nonce (12 random bytes) | ciphertext | tag (16 bytes), no associated data.
A key file holds base64 of 32 random bytes: python3 -c 'import os,base64; print(base64.b64encode(os.urandom(32)).decode())'
Needs the `cryptography` package (Debian: python3-cryptography).
"""
import argparse
import base64
import json
import os
import sys

from cryptography.hazmat.primitives.ciphers.aead import AESGCM


def encrypt(key: bytes, secret: dict) -> str:
    """Base64 of nonce | ciphertext | tag for the compact JSON of `secret`."""
    nonce = os.urandom(12)  # never reuse a nonce with the same key
    plaintext = json.dumps(secret, separators=(",", ":")).encode()
    return base64.b64encode(nonce + AESGCM(key).encrypt(nonce, plaintext, None)).decode()


def read_key(path: str) -> bytes:
    """The 32-byte key in a base64 key file."""
    with open(path) as handle:
        key = base64.b64decode(handle.read().strip(), validate=True)
    if len(key) != 32:
        raise SystemExit(f"{path}: expected base64 of 32 bytes, found {len(key)} bytes")
    return key


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--key-file", required=True, help="file holding base64 of a 256-bit key")
    parser.add_argument("--key-id", help="the key's id, when the dispatcher has several keys")
    parser.add_argument("--field", default="encrypted", help="payload key of the ciphertext")
    parser.add_argument("secret", help="the JSON object to encrypt (merged into the payload on decryption)")
    arguments = parser.parse_args()
    secret = json.loads(arguments.secret)
    if not isinstance(secret, dict):
        raise SystemExit("the secret must be a JSON object")
    fields = {arguments.field: encrypt(read_key(arguments.key_file), secret)}
    if arguments.key_id:
        fields["key-id"] = arguments.key_id
    json.dump(fields, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
