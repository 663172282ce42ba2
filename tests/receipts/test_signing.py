"""A receipt's signature is checked byte for byte: its base64 fields must be the one encoding of their bytes."""

from __future__ import annotations

import base64
import string

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bench_nb.errors import ReceiptError
from bench_nb.receipts.signing import check_signature, sign

B64 = string.ascii_uppercase + string.ascii_lowercase + string.digits + "+/"


def test_a_changed_unused_bit_of_the_last_base64_character_does_not_verify() -> None:
    key = Ed25519PrivateKey.generate()
    body = b'{"run":"x"}'
    signature = sign(body, key)
    assert check_signature(body, signature, key.public_key(), "r")
    # 64 bytes are 86 base64 characters and '=='; the 86th holds 2 bits of the signature and 4 unused ones
    value = signature["value"]
    last = value.rstrip("=")[-1]
    twin = B64[B64.index(last) ^ 1]
    changed = value[:85] + twin + value[86:]
    assert changed != value and base64.b64decode(changed) == base64.b64decode(
        value
    )  # a lenient decoder agrees
    with pytest.raises(ReceiptError, match="not canonical base64"):
        check_signature(body, signature | {"value": changed}, key.public_key(), "r")
    key_text = signature["publicKey"]  # 32 bytes: 43 characters and '=', 2 unused bits in the last
    twin_key = key_text[:42] + B64[B64.index(key_text[42]) ^ 1] + key_text[43:]
    with pytest.raises(ReceiptError, match="not canonical base64"):
        check_signature(body, signature | {"publicKey": twin_key}, None, "r")
