"""How a run is executed (``ExecutionOptions``), the runner's defaults, and the provider settings a run may record
(what a run is run under is its ``runformat.spec.RunSpec``)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench_nb.benchmarks.registry import BenchmarkTraits
from bench_nb.errors import BenchNbError, ProviderError
from bench_nb.redaction import redact
from bench_nb.registry import did_you_mean
from bench_nb.runformat.format import PHASES
from bench_nb.runner.retry import RetryPolicy

DEFAULT_K = 10
DEFAULT_CONCURRENCY = 8
DEFAULT_ANSWERER = "extractive"
DEFAULT_JUDGES = BenchmarkTraits.default_judges  # contains first: extractive answers are whole sentences


DEFAULT_INDEXING_TIMEOUT_S = 600.0
DEFAULT_QUESTION_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class ExecutionOptions:
    """How a run is executed: what may change on any resume (what the run is run under is its
    ``runformat.spec.RunSpec``).

    Attributes:
        concurrency: how many tasks each phase runs at once (sliding window).
        phase_concurrency: per-phase overrides, e.g. ``{"answer": 4}`` for a rate-limited model.
        fail_fast: stop at the first question that fails after its retries.
        retry: how retryable errors are retried.
        indexing_timeout_s: how long ``await_indexing`` may take per container.
        question_timeout_s: the longest a question's search, answer or evaluation may take, retries included
            (``models.deadline``); then it fails with ``DeadlineExceeded``. None: no deadline.
        checkpoint_every_s: the least time between two compactions of the journal into checkpoint.json.
        progress: progress bars on/off; None decides from the environment (see ``runner.progress``).
        repeat: which repeat of the same settings this run is (``runner.repeats``): repeat i > 1 reads and writes
            its own LLM response cache, through a client of its own.
    """

    concurrency: int = DEFAULT_CONCURRENCY
    phase_concurrency: Mapping[str, int] = field(default_factory=dict)
    fail_fast: bool = False
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    indexing_timeout_s: float = DEFAULT_INDEXING_TIMEOUT_S
    question_timeout_s: float | None = DEFAULT_QUESTION_TIMEOUT_S
    checkpoint_every_s: float = 5.0
    progress: bool | None = None
    repeat: int = 1

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise BenchNbError(f"concurrency must be at least 1, not {self.concurrency}")
        if not self.indexing_timeout_s > 0:
            raise BenchNbError(f"indexing_timeout_s must be positive, not {self.indexing_timeout_s}")
        if self.question_timeout_s is not None and not self.question_timeout_s > 0:
            raise BenchNbError(f"question_timeout_s must be positive, not {self.question_timeout_s}")
        for phase, n in self.phase_concurrency.items():
            if phase not in PHASES:
                raise BenchNbError(
                    f"unknown phase {phase!r}{did_you_mean(phase, PHASES)} in phase_concurrency (phases: "
                    f"{', '.join(PHASES)})"
                )
            if n < 1:
                raise BenchNbError(f"concurrency of {phase} must be at least 1, not {n}")

    def limit(self, phase: str) -> int:
        """How many questions ``phase`` works on at once: its own limit, else ``concurrency``."""
        return int(self.phase_concurrency.get(phase, self.concurrency))


# -- provider settings -------------------------------------------------------------------------------------

# Words that make a setting's name a secret's (split on anything but letters and digits, and between a
# lower-case letter and a capital, so ``max_context_tokens`` is not one, ``api_key``, ``auth_token`` and
# ``dbPassword`` are), and parts that make any word one (``dbpassword``, ``clientsecret``).
_SECRET_WORDS = frozenset(
    {"key", "apikey", "token", "secret", "password", "passwd", "pwd", "credential", "credentials", "auth"}
    | {"authorization", "bearer", "cookie", "passphrase", "passcode"}
)
_SECRET_PARTS = ("password", "passwd", "passphrase", "secret", "credential", "apikey", "privatekey")

# Environment variables whose values are not secrets and are often passed on (``-s dir=$PWD``).
PLAIN_ENVIRONMENT = frozenset(
    {"PATH", "HOME", "PWD", "OLDPWD", "SHELL", "USER", "LOGNAME", "HOSTNAME", "LANG", "LANGUAGE", "TERM"}
    | {"TMPDIR", "TEMP", "TMP", "VIRTUAL_ENV", "PYTHONPATH", "EDITOR", "PAGER", "TZ", "DISPLAY"}
)
MIN_ENV_VALUE = 8  # shorter environment values are too common ("1", "true", "utf-8") to refuse


def _secret_name(name: str) -> bool:
    words = re.split(r"[^a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower())
    return any(w in _SECRET_WORDS or any(part in w for part in _SECRET_PARTS) for w in words)


def _strings(value: Any) -> list[str]:
    """Every string in ``value`` (nested lists and dicts included; numbers as they are written)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, int | float):
        return [str(value)]
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list | tuple | set):
        return [s for v in value for s in _strings(v)]
    return []


def _environment_name(text: str) -> str | None:
    """The environment variable whose value ``text`` is (at least ``MIN_ENV_VALUE`` characters), if any."""
    stripped = text.strip()
    if len(stripped) < MIN_ENV_VALUE:
        return None
    for name, value in os.environ.items():
        if name not in PLAIN_ENVIRONMENT and not name.startswith("LC_") and value.strip() == stripped:
            return name
    return None


def check_provider_settings(provider: str, settings: Mapping[str, Any]) -> dict[str, Any]:
    """``settings`` as a dict, refused (``ProviderError``) when one would carry a secret into the run.

    Refused, naming the setting but never its value (keys come from the environment):

    - a name that is a secret's (``api_key``, ``token``, ``password``, ``passphrase``, ``dbPassword``, ...);
    - a value equal to the value of any environment variable (``-s x=$DB_PASS``; at least ``MIN_ENV_VALUE``
      characters, and not one of the ``PLAIN_ENVIRONMENT`` variables such as ``$HOME``);
    - a value shaped like a credential (see ``bench_nb.redaction``: ``sk-...``, ``sk_live_...``, ``ghp_...``,
      ``AKIA...``, ``Bearer ...``, ``Basic ...``, ``password=...``), a ``user:password@`` in a URL, or the
      value of a ``*KEY*``/``*TOKEN*``/``*SECRET*``/``*PASSWORD*`` environment variable anywhere in it.

    What this cannot catch is in docs/runner.md ("Guarantees").
    """
    for name, value in settings.items():
        if _secret_name(name):
            raise ProviderError(
                f"provider {provider!r}: setting {name!r} names a secret; keys and tokens are read from the "
                "environment (e.g. SUPERMEMORY_API_KEY), never passed as settings, so they are never written "
                "to a run"
            )
        for text in _strings(value):
            env = _environment_name(text)
            if env is not None:
                raise ProviderError(
                    f"provider {provider!r}: the value of setting {name!r} is the value of the environment "
                    f"variable {env}; settings are written to the run, so they never carry what the "
                    "environment holds (a provider reads its keys from the environment itself)"
                )
            if redact(text) != text:  # a credential's shape, a URL's password
                raise ProviderError(
                    f"provider {provider!r}: the value of setting {name!r} looks like a key or token; keys "
                    "and tokens are read from the environment, never passed as settings"
                )
    return dict(settings)


def split_provider_settings(
    settings: Mapping[str, Any] | None, providers: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """Each provider's own settings: ``KEY`` goes to every provider, ``PROVIDER.KEY`` to that one (and wins).

    Setting names are identifiers, so ``PROVIDER`` is everything before the last dot (a plugin
    ``pkg.mod:Class`` works too). Raises ``ProviderError`` for a ``PROVIDER.`` that is not in ``providers``
    and for a setting that would carry a secret (``check_provider_settings``).
    """
    shared: dict[str, Any] = {}
    own: dict[str, dict[str, Any]] = {p: {} for p in providers}
    for key, value in (settings or {}).items():
        prefix, dot, name = key.rpartition(".")
        if not dot:
            shared[key] = value
        elif prefix in own and name:
            own[prefix][name] = value
        else:
            raise ProviderError(
                f"setting {key!r} is for provider {prefix!r}, which is not "
                + (
                    f"among this run's providers ({', '.join(providers)})"
                    if len(providers) > 1
                    else f"this run's provider ({providers[0]!r})"
                )
                + "; write PROVIDER.KEY=VALUE with one of them, or KEY=VALUE for all"
            )
    return {p: check_provider_settings(p, shared | own[p]) for p in providers}
