"""The LLM prober and judge against the local LLM API test server (real SDK, real HTTP on 127.0.0.1)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from bench_nb.errors import ModelError
from bench_nb.models.client import LLMClient
from bench_nb.models.settings import ClientSettings
from bench_nb.providers.sqlite import SqliteProvider
from bench_nb.roi import RoiStore, deployment_usage, import_memories, roi_results_df, run_roi, usage_df
from bench_nb.roi.llm import LLMProber, LLMRoiJudge
from bench_nb.roi.probers import ProberFailed
from llm_server import Fault, LLMServer, Reply, fake_token_count, llm_server, request_text

__all__ = ["llm_server"]
MODEL = "gpt-4o-mini"
KEY = "sk-test-roi-SECRET-1234"


@pytest.fixture
def client(llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> LLMClient:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    settings = ClientSettings(
        timeout_s=2.0,
        max_retries=1,
        backoff_initial_s=0.01,
        backoff_max_s=0.02,
        cache_path=None,
        openai_base_url=llm_server.openai_base_url,
    )
    return LLMClient(settings)


def prober_responder(path: str, body: dict[str, Any]) -> str:
    """Writes a question for every id in the request, plus one for an id it was not given."""
    ids = re.findall(r"^id: (\S+)$", request_text(body), flags=re.M)
    questions = [{"id": i, "question": f"What should a new teammate know about {i}?"} for i in ids]
    questions.append({"id": "invented-id", "question": "Is this made up?"})
    return json.dumps({"questions": questions})


def verdict(with_memory: bool, without_memory: bool, confidence: float = 0.9) -> Reply:
    return Reply(
        json.dumps(
            {
                "with_memory": with_memory,
                "without_memory": without_memory,
                "confidence": confidence,
                "explanation": "scripted",
            }
        )
    )


def test_llm_prober_and_judge_with_a_failed_judgment(
    jsonl_file: Path, db: Path, tmp_path: Path, client: LLMClient, llm_server: LLMServer
) -> None:
    import_memories(jsonl_file, db, admin=True)
    llm_server.responder = prober_responder
    opts = {
        "prober": LLMProber(MODEL, client=client),
        "judge": LLMRoiJudge(MODEL, client=client),
        "pool_size": 4,
        "provider": SqliteProvider(tmp_path / "p"),
    }
    generated = run_roi("alice", db, **opts)
    assert generated.status == "generating" and generated.generated is not None
    assert (generated.generated.added, generated.generated.dropped) == (4, 1)  # the invented id is dropped
    prober_call = llm_server.calls[-1]
    assert prober_call.body["response_format"] == {"type": "json_object"}
    assert "a-team-private" in request_text(prober_call.body)  # the newest memory was given
    with RoiStore(db) as store:
        probes = store.active_probes("alice")
    assert {p.mode for p in probes} == {"llm"} and {p.model for p in probes} == {MODEL}
    assert "invented-id" not in {p.memory_id for p in probes}

    llm_server.reset()
    llm_server.script(
        verdict(True, False),
        verdict(True, True),
        Reply("I think the agent probably needed memory."),  # not JSON: this judgment fails
        Fault("400"),  # the call itself fails
    )
    run = run_roi("alice", db, **opts)
    s = run.summary()
    assert (s.status, s.probes, s.judged, s.failed) == ("done", 4, 2, 2)
    assert (s.with_memory, s.without_memory, s.exclusive, s.exclusive_rate) == (2, 1, 1, 0.5)
    assert s.judge == f"llm:{MODEL}" and s.probe_mode == "llm"
    results = roi_results_df("alice", db, run_id=run.run_id)
    errors = list(results.loc[results["status"] == "failed", "error"])
    assert sum("unreadable verdict" in e for e in errors) == 1 and sum("HTTP 400" in e for e in errors) == 1
    judged = results[results["status"] == "judged"]
    assert set(judged["confidence"]) == {0.9}
    # each judge prompt carries the probe, the reference memory and what was surfaced
    first = request_text(llm_server.calls[0].body)
    assert "Question: What should a new teammate know about" in first and "Surfaced memories:" in first

    # metering: one event per billed call (the 400 billed nothing), with the server's token counts
    usage = usage_df("alice", db)
    assert list(usage["purpose"]) == ["prober", "judge", "judge", "judge"]
    judge_calls = [c for c in llm_server.calls if c.outcome == "ok"]
    assert list(usage["input_tokens"][1:]) == [fake_token_count(request_text(c.body)) for c in judge_calls]
    assert deployment_usage(db)["judge"]["calls"] == 3
    # no key anywhere in the store (the database file and its write-ahead log; every row on Postgres)
    if isinstance(db, Path):
        files = list(db.parent.glob(db.name + "*"))
        assert db in files and not any(KEY.encode() in f.read_bytes() for f in files)
    else:
        with RoiStore(db) as store:
            for table in ("memories", "probes", "runs", "recalls", "results", "usage_events", "import_log"):
                sql = f"SELECT count(*) FROM {table} x WHERE x::text LIKE ?"
                assert store.execute(sql, (f"%{KEY}%",)).fetchone()[0] == 0


def test_an_unreadable_prober_reply_is_metered_and_fails_the_generation(
    jsonl_file: Path, db: Path, tmp_path: Path, client: LLMClient, llm_server: LLMServer
) -> None:
    import_memories(jsonl_file, db, admin=True)
    llm_server.script(Reply("Here are some questions!"))
    with pytest.raises(ProberFailed, match="unreadable reply"):
        run_roi("alice", db, prober=LLMProber(MODEL, client=client), provider=SqliteProvider(tmp_path / "p"))
    with RoiStore(db) as store:
        (gen,) = store.runs("alice")
        assert (gen["kind"], gen["status"]) == ("generate", "failed")
        assert store.active_probes("alice") == []
    assert list(usage_df("alice", db)["purpose"]) == ["prober"]


def test_no_key_fails_before_any_recall(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelError, match=r"OPENAI_API_KEY is not set.*--deterministic"):
        LLMRoiJudge(MODEL)


@pytest.fixture
def roi_cli(
    jsonl_file: Path, db: Path, llm_server: LLMServer, monkeypatch: pytest.MonkeyPatch
) -> Callable[..., Result]:
    """``bench-nb roi ...`` run through click against the local LLM server, the memories imported into ``db``
    and the prober's replies scripted."""
    from click.testing import CliRunner

    from bench_nb.cli import cli

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.openai_base_url)
    monkeypatch.setenv("BENCH_NB_LLM_CACHE", "off")
    llm_server.responder = prober_responder

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(cli, ["roi", *args], catch_exceptions=False)

    invoke("import", str(jsonl_file), "--db", str(db), "--admin")
    return invoke


def test_the_cli_runs_the_llm_prober_and_judge(
    roi_cli: Callable[..., Result], db: Path, llm_server: LLMServer
) -> None:
    args = ("run", "--owner", "bob", "--db", str(db), "--model", MODEL, "--json", "--own-key")
    generated = json.loads(roi_cli(*args).output)
    assert generated["status"] == "generating" and generated["probes"] == 4
    llm_server.script(verdict(True, False), verdict(True, False), verdict(False, False), verdict(True, True))
    run = json.loads(roi_cli(*args).output)
    assert (run["probes"], run["judged"], run["exclusive"], run["exclusive_rate"]) == (4, 4, 2, 0.5)
    assert run["probe_mode"] == "llm" and run["judge"] == f"llm:{MODEL}"
    usage = usage_df("bob", db)
    assert len(usage) == 5 and usage["own_key"].all()
    assert deployment_usage(db) == {
        p: {"calls": 0, "input_tokens": 0, "output_tokens": 0} for p in ("prober", "judge")
    }


def test_roi_run_exits_1_when_no_probe_was_judged(
    roi_cli: Callable[..., Result], db: Path, llm_server: LLMServer
) -> None:
    """Issue 38: ``roi run`` exited 0 when every judgment failed (nothing measured)."""
    args = ("run", "--owner", "bob", "--db", str(db), "--model", MODEL, "--json")
    generated = roi_cli(*args)
    assert generated.exit_code == 0 and json.loads(generated.output)["probes"] == 4
    llm_server.script(*[Reply("no verdict here")] * 4)  # every judgment unreadable
    result = roi_cli(*args)
    assert result.exit_code == 1
    run = json.loads(result.stdout)
    assert (run["probes"], run["judged"], run["failed"]) == (4, 0, 4)
    assert f"error: run {run['run_id']}: no probe was judged (4 of 4 failed" in result.stderr
