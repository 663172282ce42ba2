"""Keeping secrets out of everything a run writes: error messages are redacted before they are stored.

Keys come from the environment only and are never part of a run's settings; but an SDK's error text can
quote a header or a URL with a token in it. ``redact`` removes the values of environment variables whose
names look secret (``*KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``) and anything shaped like an API key
or a bearer token.
"""

from __future__ import annotations

import os
import re

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL", re.IGNORECASE)
_PATTERNS = (
    re.compile(r"\b(sk|pk|rk|key)-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{8,}"),
    re.compile(r"(?i)\b(api[_-]?key|access[_-]?token|token|secret|password)(\s*[=:]\s*)[^\s,;&'\"]+"),
)
REDACTED = "[redacted]"


def _env_secrets() -> list[str]:
    values = [v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= 8]
    return sorted(set(values), key=len, reverse=True)


def redact(text: str) -> str:
    """``text`` with secret-looking values replaced by ``[redacted]``."""
    for value in _env_secrets():
        text = text.replace(value, REDACTED)
    text = _PATTERNS[0].sub(REDACTED, text)
    text = _PATTERNS[1].sub("Bearer " + REDACTED, text)
    return _PATTERNS[2].sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)


def error_text(err: BaseException) -> str:
    """``"<Type>: <message>"`` of an error, redacted."""
    message = str(err).strip()
    return redact(f"{type(err).__name__}: {message}" if message else type(err).__name__)
