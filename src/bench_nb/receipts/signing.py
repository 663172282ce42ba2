"""Ed25519 signatures of a receipt, with the ``cryptography`` package (extra ``sign``); no crypto of our own.

Keys are PEM files: a PKCS#8 private key (``openssl genpkey -algorithm ed25519 -out key.pem``) and its
SubjectPublicKeyInfo public key (``openssl pkey -in key.pem -pubout -out key.pub.pem``). A signature is over
the receipt's canonical body bytes; the receipt carries it and the raw public key, base64.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from bench_nb.errors import ReceiptError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

ALGORITHM = "Ed25519"


def _crypto() -> Any:
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError as err:  # pragma: no cover - the extra is installed in CI
        raise ReceiptError(
            "signing and checking signatures need the cryptography package: pip install 'bench_nb[sign]'"
        ) from err
    return serialization, ed25519


def load_private_key(path: str | Path) -> Ed25519PrivateKey:
    """The Ed25519 private key of an unencrypted PEM file.

    Raises:
        ReceiptError: the file is unreadable, not PEM, encrypted or not an Ed25519 key.
    """
    serialization, ed25519 = _crypto()
    try:
        key = serialization.load_pem_private_key(Path(path).read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as err:
        raise ReceiptError(f"{path}: not a readable unencrypted PEM private key ({err})") from None
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        raise ReceiptError(f"{path}: not an Ed25519 private key")
    return cast("Ed25519PrivateKey", key)  # the isinstance above, with the class _crypto imports on first use


def load_public_key(path: str | Path) -> Ed25519PublicKey:
    """The Ed25519 public key of a PEM file.

    Raises:
        ReceiptError: the file is unreadable, not PEM or not an Ed25519 key.
    """
    serialization, ed25519 = _crypto()
    try:
        key = serialization.load_pem_public_key(Path(path).read_bytes())
    except (OSError, ValueError, TypeError) as err:
        raise ReceiptError(f"{path}: not a readable PEM public key ({err})") from None
    if not isinstance(key, ed25519.Ed25519PublicKey):
        raise ReceiptError(f"{path}: not an Ed25519 public key")
    return cast("Ed25519PublicKey", key)  # the isinstance above, with the class _crypto imports on first use


def raw_public_key(key: Ed25519PublicKey) -> bytes:
    """The public key's 32 raw bytes."""
    serialization, _ = _crypto()
    return bytes(key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))


def key_id(raw: bytes) -> str:
    """A short name for a public key: the first 16 hex digits of the sha256 of its 32 raw bytes."""
    return hashlib.sha256(raw).hexdigest()[:16]


def sign(body: bytes, key: Ed25519PrivateKey) -> dict[str, str]:
    """The receipt's ``signature`` member: algorithm, public key and signature of ``body``, base64."""
    return {
        "algorithm": ALGORITHM,
        "publicKey": base64.b64encode(raw_public_key(key.public_key())).decode("ascii"),
        "value": base64.b64encode(key.sign(body)).decode("ascii"),
    }


def _canonical_b64(text: Any, name: str) -> bytes:
    """``text`` decoded from base64, refused unless it is the one encoding of its bytes: a decoder ignores the
    unused low bits of the last character, so without this check a changed character could still verify."""
    raw = base64.b64decode(str(text), validate=True)
    if base64.b64encode(raw).decode("ascii") != text:
        raise ValueError(f"{name} is not canonical base64")
    return raw


def check_signature(body: bytes, signature: Any, trusted: Ed25519PublicKey | None, where: str) -> str:
    """Check ``signature`` over ``body``: against ``trusted`` when given (the key must be the one that
    signed), else against the key the receipt carries (which shows the receipt is intact, not who signed it).
    Returns the signing key's id. Raises ``ReceiptError`` naming what failed."""
    _, ed25519 = _crypto()
    from cryptography.exceptions import InvalidSignature

    if not isinstance(signature, dict) or signature.get("algorithm") != ALGORITHM:
        raise ReceiptError(f"{where}: signature is not an {ALGORITHM} signature")
    try:
        carried = _canonical_b64(signature.get("publicKey"), "publicKey")
        value = _canonical_b64(signature.get("value"), "value")
        embedded = ed25519.Ed25519PublicKey.from_public_bytes(carried)
    except ValueError as err:
        raise ReceiptError(f"{where}: signature is malformed ({err})") from None
    if trusted is not None and raw_public_key(trusted) != carried:
        raise ReceiptError(
            f"{where}: signed by key {key_id(carried)}, not by the public key given ({key_id(raw_public_key(trusted))})"
        )
    try:
        (trusted or embedded).verify(value, body)
    except InvalidSignature:
        raise ReceiptError(
            f"{where}: the signature does not match the receipt (it was changed after signing)"
        ) from None
    return key_id(carried)
