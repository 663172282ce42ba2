"""``bench-nb gate``, ``bench-nb receipt`` and ``bench-nb verify`` run as a user runs them: the real CLI in
subprocesses, on the demo's runs (made by ``bench-nb demo --runs-only``)."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import bench_nb as bn

pytestmark = pytest.mark.slow  # each command is a subprocess (the demo's runs take ~15 s to make)


def cli(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench_nb", *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=300,
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("gate") / "runs"
    done = cli("demo", "--runs-only", "--runs-dir", root)
    assert done.returncode == 0, done.stderr
    # the same providers on fewer questions: a different question set
    short = cli(
        "run", "-p", "sqlite", "-b", "sample", "-m", "extractive", "-j", "contains,f1", "--limit", "20",
        "-r", "short-sqlite", "--runs-dir", root,
    )  # fmt: skip
    assert short.returncode == 0, short.stderr
    return root


def test_gate_passes_a_run_against_itself_and_fails_the_no_memory_run(runs: Path) -> None:
    same = cli("gate", runs / "demo-sqlite", runs / "demo-sqlite")
    assert same.returncode == 0, same.stdout + same.stderr
    assert (
        "## bench-nb gate: ✅ not worse" in same.stdout and "| all | 50 | 4 | 72.0% | 72.0% |" in same.stdout
    )
    worse = cli("gate", runs / "demo-sqlite", runs / "demo-no-memory")
    assert worse.returncode == 1, worse.stdout + worse.stderr
    assert "❌ worse" in worse.stdout and "−58.0 pts" in worse.stdout and "**What to do:**" in worse.stdout


def test_gate_exits_2_naming_why_runs_cannot_be_compared(runs: Path, tmp_path: Path) -> None:
    other = cli("gate", runs / "demo-sqlite", runs / "short-sqlite")
    assert other.returncode == 2, other.stdout + other.stderr
    assert "different question sets: BASE has 50 questions, NEW 20; 30 only in BASE" in other.stdout
    # a copy graded by another primary judge
    copy = tmp_path / "regraded"
    shutil.copytree(runs / "demo-sqlite", copy)
    assert cli("rejudge", copy, "--primary", "f1").returncode == 0
    judged = cli("gate", runs / "demo-sqlite", copy, "--json")
    assert judged.returncode == 2
    out = json.loads(judged.stdout)
    assert out["verdict"] == "incomparable" and out["exitCode"] == 2
    assert any("different judges: BASE is graded by 'contains', NEW by 'f1'" in r for r in out["reasons"])
    assert any(r.startswith("different settings fingerprints") for r in out["reasons"])


def test_gate_json_summary_file_and_latency(runs: Path, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    done = cli(
        "gate", runs / "demo-sqlite", runs / "demo-no-memory", "--metric", "latency_ms", "--json",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr  # no memory searches faster: not worse
    out = json.loads(done.stdout)
    assert (
        out["metric"] == "latency_ms" and out["rows"][0]["change"] < -0.5
    )  # measured latencies: no memory is far faster
    assert summary.read_text().startswith("## bench-nb gate: ✅ not worse")


def test_gate_against_a_receipt_and_a_store_run(runs: Path, tmp_path: Path) -> None:
    receipt = tmp_path / "base.receipt.json"
    assert cli("receipt", runs / "demo-sqlite", "-o", receipt).returncode == 0
    done = cli("gate", receipt, runs / "demo-no-memory")
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"BASE is a receipt, sha256 `{bn.verify_receipt(receipt).sha256}`" in done.stdout
    assert cli("gate", receipt, runs / "demo-sqlite").returncode == 0
    store = tmp_path / "store"
    assert cli("export", runs / "demo-sqlite", runs / "demo-no-memory", "--to", store).returncode == 0
    done = cli("gate", "demo-sqlite", runs / "demo-no-memory", "--store", store)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "BASE `" in done.stdout and "demo-sqlite`" in done.stdout
    broken = tmp_path / "broken.receipt.json"
    broken.write_bytes(receipt.read_bytes().replace(b'"score":1', b'"score":0', 1))
    done = cli("gate", broken, runs / "demo-sqlite")
    assert done.returncode == 2 and "sha256" in done.stderr and "does not match" in done.stderr


def test_verify_passes_untouched_and_names_the_question_after_one_verdict_is_edited(
    runs: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "demo-sqlite"
    shutil.copytree(runs / "demo-sqlite", copy)
    made = cli("receipt", copy)
    assert made.returncode == 0, made.stderr
    receipt = tmp_path / "demo-sqlite.receipt.json"
    ok = cli("verify", receipt)  # the run beside it
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "every number recomputed from" in ok.stdout
    # one verdict of judgments.jsonl edited
    lines = (copy / "judgments.jsonl").read_text().splitlines()
    first = json.loads(lines[3])
    flipped = {**first, "score": 1 - first["score"], "label": "edited"}
    lines[3] = json.dumps(flipped)
    (copy / "judgments.jsonl").write_text("\n".join(lines) + "\n")
    bad = cli("verify", receipt, copy)
    assert bad.returncode == 1
    assert f"question {first['questionId']}: its verdicts differ" in bad.stderr
    # an answer edited in the checkpoint
    other = tmp_path / "other"
    shutil.copytree(runs / "demo-sqlite", other)
    ck = json.loads((other / "checkpoint.json").read_text())
    qid = sorted(ck["questions"])[0]
    ck["questions"][qid]["phases"]["answer"]["hypothesis"] = "something else"
    (other / "checkpoint.json").write_text(json.dumps(ck, indent=2))
    bad = cli("verify", receipt, other)
    assert bad.returncode == 1 and f"question {qid}: its answer differ" in bad.stderr


def test_verify_recomputes_from_a_store(runs: Path, tmp_path: Path) -> None:
    receipt = tmp_path / "r.receipt.json"
    assert cli("receipt", runs / "demo-no-memory", "-o", receipt).returncode == 0
    store = tmp_path / "store"
    assert cli("export", runs / "demo-no-memory", "--to", store).returncode == 0
    done = cli("verify", receipt, "--store", store)
    assert done.returncode == 0, done.stdout + done.stderr
    made = bn.make_receipt("demo-no-memory", store=store)
    assert made.to_bytes() == receipt.read_bytes()  # the same receipt from the store as from the directory


def _keys(tmp_path: Path, name: str) -> tuple[Path, Path]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    private, public = tmp_path / f"{name}.pem", tmp_path / f"{name}.pub.pem"
    private.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return private, public


def test_a_signed_receipt_fails_with_the_wrong_key_or_any_changed_byte(runs: Path, tmp_path: Path) -> None:
    key, pub = _keys(tmp_path, "ours")
    _, other_pub = _keys(tmp_path, "theirs")
    receipt = tmp_path / "signed.receipt.json"
    made = cli("receipt", runs / "demo-no-memory", "-o", receipt, "--sign", key)
    assert made.returncode == 0 and "(signed)" in made.stdout, made.stderr
    ok = cli("verify", receipt, runs / "demo-no-memory", "--public-key", pub)
    assert ok.returncode == 0 and "signed by the key given" in ok.stdout, ok.stderr
    wrong = cli("verify", receipt, runs / "demo-no-memory", "--public-key", other_pub)
    assert wrong.returncode == 1 and "not by the public key given" in wrong.stderr
    data = receipt.read_bytes()
    changed = tmp_path / "changed.receipt.json"
    changed.write_bytes(data.replace(b'"score":0', b'"score":1', 1))
    assert cli("verify", changed, "--public-key", pub).returncode == 1
    # bytes changed one at a time (the file checks only: canonical form, hash, signature): every byte of the
    # hash and signature, and 300 seeded positions of the rest
    assert bn.verify_receipt(data, public_key=pub).ok
    tail = data.rindex(b'"sha256":')
    positions = sorted({*random.Random(29).sample(range(tail), 300), *range(tail, len(data))})
    for i in positions:
        for new in {data[i] ^ 0x01, ord(" ")} - {data[i]}:
            check = bn.verify_receipt(data[:i] + bytes([new]) + data[i + 1 :], public_key=pub)
            assert not check.ok, (i, chr(data[i]))
    unsigned = tmp_path / "unsigned.receipt.json"
    assert cli("receipt", runs / "demo-no-memory", "-o", unsigned).returncode == 0
    done = cli("verify", unsigned, "--public-key", pub)
    assert done.returncode == 1 and "not signed" in done.stderr
