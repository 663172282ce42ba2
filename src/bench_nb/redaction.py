"""Keeping secrets out of everything bench_nb writes or prints: error messages are redacted where they are
recorded, before they are stored or shown.

Keys come from the environment only and are never part of a run's settings; but an SDK's error text can
quote a header or a URL with a token in it, and some gateways echo the whole API key in a 401's message.
``error_text(err)`` is the one way an error becomes recorded text: the runner's checkpoint (``bench-nb run``),
rejudge's and the judge audit's failures, the LLM client's ``ModelError``, the ROI store's ``error`` columns
(SQLite and Postgres, inside the store's writes), the run store's and the frames' ``error`` column and the
command line's ``error:`` line all go through it (or through ``redact`` on text they already hold).

``redact`` removes the values of environment variables whose
names look secret (``*KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``, ``*PASSPHRASE*``, ...)
and anything shaped like a credential: API keys (``sk-...``, ``sk_live_...``, ``key-`` and 16+ random letters and
digits, not an id like ``key-value-store-1``), GitHub and GitLab tokens,
AWS access key ids, Google API keys, Slack tokens, JWTs, private keys, ``Bearer ...`` and ``Basic ...``
credentials, ``password=...``-style assignments and a URL's password (``postgresql://user:password@host``).
What it cannot catch is listed in docs/runner.md.
"""

from __future__ import annotations

import base64
import binascii
import os
import re

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL", re.IGNORECASE)
# Credential shapes, each redacted as a whole.
_SHAPES = re.compile(
    "|".join(
        (
            r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{8,}",  # OpenAI/Anthropic-style keys
            # Mailgun-style "key-<random>": one run of 16+ letters and digits with a digit in it, so an id that
            # merely starts with the word ("key-value-store-1") is not a key
            r"\bkey-(?=[A-Za-z]*\d)[A-Za-z0-9]{16,}\b",
            r"\b(?:sk|pk|rk|whsec)_(?:live|test)_[A-Za-z0-9]{8,}",  # Stripe
            r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}",  # GitHub tokens
            r"\bgithub_pat_[A-Za-z0-9_]{20,}",
            r"\bglpat-[A-Za-z0-9_\-]{20,}",  # GitLab
            r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b",  # AWS access key ids
            r"\bAIza[0-9A-Za-z_\-]{35}",  # Google API keys
            r"\bxox[abposr]-[A-Za-z0-9\-]{10,}",  # Slack
            r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]+",  # JWTs
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----",
        )
    )
)
_URL_PASSWORD = re.compile(r"(://[^/\s@:]*:)[^/\s@]+@")  # the password of scheme://user:password@host
_BEARER = re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{8,}")
_BASIC = re.compile(r"(?i)\bbasic\s+([A-Za-z0-9+/]{4,}={0,2})")
_ASSIGNED = re.compile(
    r"(?i)([A-Za-z0-9_]*(?:api[_-]?key|access[_-]?token|token|secret|password|passwd|passphrase|pwd))"
    r"(\s*[=:]\s*)[^\s,;&'\"]+"
)
REDACTED = "[redacted]"


def _env_secrets() -> list[str]:
    values = [v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= 8]
    return sorted(set(values), key=len, reverse=True)


def _is_basic_credentials(encoded: str) -> bool:
    """``Basic <base64 of user:password>``: the text after "Basic" decodes to something with a colon."""
    try:
        decoded = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    return ":" in decoded and decoded.isprintable()


def redact(text: str) -> str:
    """``text`` with secret-looking values replaced by ``[redacted]``."""
    for value in _env_secrets():
        text = text.replace(value, REDACTED)
    text = _SHAPES.sub(REDACTED, text)
    text = _URL_PASSWORD.sub(rf"\1{REDACTED}@", text)
    text = _BEARER.sub("Bearer " + REDACTED, text)
    text = _BASIC.sub(
        lambda m: "Basic " + REDACTED if _is_basic_credentials(m.group(1)) else m.group(0), text
    )
    return _ASSIGNED.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)


def error_text(err: BaseException) -> str:
    """``"<Type>: <message>"`` of an error, redacted."""
    message = str(err).strip()
    return redact(f"{type(err).__name__}: {message}" if message else type(err).__name__)
