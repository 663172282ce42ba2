"""Issue 38's gate defects, each a test named after it: a NEW run with most questions failed or left
unfinished passed; a receipt's signature was never checked; ``--margin nan`` passed anything; a run id of
``--store`` was read from a local folder of the same name; ``bench-nb receipt .`` crashed. The sides are
receipts (a real run's receipt, its questions spread over 10 haystacks and resealed) and real run directories."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import bench_nb as bn
from bench_nb.errors import ReceiptError
from bench_nb.receipts.canonical import canonical_json, sha256_hex
from bench_nb.receipts.receipt import Receipt
from bench_nb.receipts.signing import sign


@pytest.fixture(scope="module")
def template(mb_example: Path) -> dict[str, Any]:
    return bn.make_receipt(mb_example / "data" / "runs" / "fx-compare-supermemory").body


def body_of(
    template: dict[str, Any], scores: list[float | None], statuses: list[str] | None = None
) -> dict[str, Any]:
    """A receipt body of ``len(scores)`` questions over 10 haystacks (question i in haystack i % 10)."""
    body = copy.deepcopy(template)
    q0 = body["questions"][0]
    body["questions"] = [
        q0
        | {
            "id": f"q{i:03d}",
            "haystack": f"h{i % 10}",
            "score": s,
            "status": (statuses or ["evaluated"] * len(scores))[i],
            "unscored": False,
            "searchMs": 100 + i % 7,
        }
        for i, s in enumerate(scores)
    ]
    return body


def sealed(body: dict[str, Any], path: Path, signature: dict[str, str] | None = None) -> Path:
    path.write_bytes(Receipt(body, sha256_hex(canonical_json(body)), signature).to_bytes())
    return path


def base_scores(n: int = 200) -> list[float | None]:
    rng = np.random.default_rng(38)
    return [float(x) for x in (rng.random(n) < 0.75)]


def test_gate_counts_failed_new_questions_as_wrong(template: dict[str, Any], tmp_path: Path) -> None:
    """80% of NEW's questions failed; the 20% it answered are as good as BASE's. Pairing only the questions
    both scored passed it; each failed question now counts as wrong for NEW, and the summary names them."""
    scores = base_scores()
    base = sealed(body_of(template, scores), tmp_path / "base.receipt.json")
    failed = [i % 5 != 0 for i in range(len(scores))]
    new_body = body_of(
        template,
        [None if f else s for f, s in zip(failed, scores, strict=True)],
        ["failed" if f else "evaluated" for f in failed],
    )
    new = sealed(new_body, tmp_path / "new.receipt.json")
    g = bn.gate(base, new)
    assert g.verdict == "worse" and g.exit_code == 1
    assert g.rows["counted_wrong"][0] == 160 and len(g.counted_wrong) == 160
    assert set(g.counted_wrong.values()) == {"failed"}
    assert (
        "**Counted as wrong for NEW:** 160 questions (160 failed; first: q001, q002, q003, q004, q006, ...)"
        in (g.markdown())
    )


def test_gate_counts_unfinished_new_questions_as_wrong(template: dict[str, Any], tmp_path: Path) -> None:
    """NEW killed at 43%: 86 of 200 questions evaluated (as well as BASE), the rest unfinished or absent."""
    scores = base_scores()
    base = sealed(body_of(template, scores), tmp_path / "base.receipt.json")
    statuses = ["evaluated"] * 86 + ["search"] * 80 + ["pending"] * 34
    new_body = body_of(template, scores[:86] + [None] * 114, statuses)
    new = sealed(new_body, tmp_path / "new.receipt.json")
    g = bn.gate(base, new)
    assert g.verdict == "worse" and g.exit_code == 1
    assert g.rows["counted_wrong"][0] == 114
    assert sorted(set(g.counted_wrong.values())) == ["pending", "search"]


def test_gate_counts_unscored_new_questions_as_wrong_and_names_them(
    template: dict[str, Any], tmp_path: Path
) -> None:
    scores = [1.0] * 100
    base = sealed(body_of(template, scores), tmp_path / "base.receipt.json")
    new_body = body_of(template, [None if i < 3 else 1.0 for i in range(100)])
    for q in new_body["questions"][:3]:
        q["unscored"] = True
    g = bn.gate(base, sealed(new_body, tmp_path / "new.receipt.json"), margin=0.05)
    assert g.rows["counted_wrong"][0] == 3 and g.rows["new"][0] == pytest.approx(0.97)
    assert g.counted_wrong == {"q000": "unscored", "q001": "unscored", "q002": "unscored"}


def test_latency_gate_names_new_questions_with_no_latency(template: dict[str, Any], tmp_path: Path) -> None:
    """For latency a missing value cannot be counted as anything: the gate cannot compare (exit 2), naming
    them."""
    scores = base_scores(100)
    base = sealed(body_of(template, scores), tmp_path / "base.receipt.json")
    new_body = body_of(template, scores)
    for q in new_body["questions"][:40]:
        q["searchMs"] = None
    g = bn.gate(base, sealed(new_body, tmp_path / "new.receipt.json"), metric="latency_ms", margin=0.5)
    assert g.verdict == "incomparable" and g.exit_code == 2
    assert g.reasons == [
        "NEW has no search latency for 40 questions (40 evaluated; first: q000, q001, q002, q003, q004, ...) "
        "that BASE has: the gate cannot tell how slow they were"
    ]


def _keys(tmp_path: Path, name: str) -> tuple[Any, Path]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    public = tmp_path / f"{name}.pub.pem"
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return key, public


def test_gate_checks_a_receipts_signature(template: dict[str, Any], tmp_path: Path) -> None:
    """A random signature, a stale one over an edited body and ``"signature": "abc"`` all passed the gate."""
    key, public = _keys(tmp_path, "team")
    other, other_public = _keys(tmp_path, "other")
    scores = base_scores(100)
    body = body_of(template, scores)
    signed = sealed(body, tmp_path / "signed.receipt.json", sign(canonical_json(body), key))
    new = sealed(body_of(template, scores), tmp_path / "new.receipt.json")
    assert bn.gate(signed, signed, public_key=public).verdict == "not worse"
    with pytest.raises(ReceiptError, match=r"signed by key .*; give the public key it must be signed with"):
        bn.gate(signed, new)  # signed, and no key to check who signed it: refused
    with pytest.raises(ReceiptError, match="not by the public key given"):
        bn.gate(signed, new, public_key=other_public)
    edited = copy.deepcopy(body)
    edited["questions"][0]["score"] = 0.0
    stale = sealed(edited, tmp_path / "stale.receipt.json", sign(canonical_json(body), key))
    with pytest.raises(ReceiptError, match="does not match the receipt"):
        bn.gate(stale, new, public_key=public)
    with pytest.raises(ReceiptError, match="does not match the receipt"):
        bn.gate(stale, new)
    forged = sealed(body, tmp_path / "forged.receipt.json", sign(canonical_json(body), other))
    with pytest.raises(ReceiptError, match="not by the public key given"):
        bn.gate(forged, new, public_key=public)
    path = tmp_path / "abc.receipt.json"
    envelope = {"receipt": body, "sha256": sha256_hex(canonical_json(body)), "signature": "abc"}
    path.write_bytes(canonical_json(envelope))
    with pytest.raises(ReceiptError, match="not an Ed25519 signature"):
        bn.gate(path, new)
    with pytest.raises(ReceiptError, match=r"new\.receipt\.json: not signed, and a public key was given"):
        bn.gate(signed, new, public_key=public)  # with a key, every receipt must be signed by it


@pytest.mark.parametrize("margin", [math_nan := float("nan"), float("inf"), 1e308, -0.01, 1.0])
def test_gate_refuses_a_non_finite_or_absurd_margin(
    template: dict[str, Any], tmp_path: Path, margin: float
) -> None:
    scores = base_scores(100)
    base = sealed(body_of(template, scores), tmp_path / "base.receipt.json")
    worse = sealed(body_of(template, [0.0] * 100), tmp_path / "worse.receipt.json")
    with pytest.raises(ValueError, match="margin must be"):
        bn.gate(base, worse, margin=margin)
    if margin != 1.0:
        with pytest.raises(ValueError, match="margin must be"):
            bn.gate(base, worse, metric="latency_ms", margin=margin)
    assert math_nan != math_nan


def cli(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench_nb", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        timeout=300,
    )


def test_gate_cli_margin_nan_or_a_receipt_without_settings_is_one_error_line_exit_2(
    template: dict[str, Any], tmp_path: Path
) -> None:
    base = sealed(body_of(template, base_scores(100)), tmp_path / "base.receipt.json")
    worse = sealed(body_of(template, [0.0] * 100), tmp_path / "worse.receipt.json")
    done = cli("gate", base, worse, "--margin", "nan")
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("error: margin must be") and done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr and done.stdout == ""
    body = body_of(template, base_scores(100))
    del body["settings"]  # hash-valid, but not a receipt: exit 2 with one error line, not 1 ("worse")
    done = cli("gate", sealed(body, tmp_path / "nosettings.receipt.json"), worse)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.endswith("nosettings.receipt.json: not a receipt: 'settings' is missing\n")
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: ")


def test_gate_reads_a_store_run_not_a_local_folder_of_the_same_name(
    make_run: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``gate --store S m-sql`` read ``./m-sql`` when such a folder existed here: the store's run is meant."""
    answers = {f"q{i}": "x" for i in range(1, 6)}
    good = make_run("m-sql", answers=answers, primary_scores=dict.fromkeys(answers, 1))
    store = tmp_path / "store"
    bn.export_runs([good], store)
    here = tmp_path / "here"
    here.mkdir()
    shutil.copytree(good, here / "m-sql")  # a local folder of the same name, graded all wrong
    checkpoint = here / "m-sql" / "checkpoint.json"
    data = json.loads(checkpoint.read_text())
    for q in data["questions"].values():
        q["phases"]["evaluate"]["score"] = 0
    checkpoint.write_text(json.dumps(data))
    monkeypatch.chdir(here)
    g = bn.gate("m-sql", "m-sql", store=store)
    assert g.base.kind == "store run" and g.new.kind == "store run"
    assert g.rows["base"][0] == 1.0
    other = bn.gate(
        "m-sql", here / "m-sql", store=store
    )  # a path that is no run id of the store: read from disk
    assert other.new.kind == "run" and other.rows["new"][0] == 0.0


def test_receipt_of_dot_writes_beside_the_run(mb_example: Path, tmp_path: Path) -> None:
    run = tmp_path / "my-run"
    shutil.copytree(mb_example / "data" / "runs" / "fx-compare-supermemory", run)
    done = cli("receipt", ".", cwd=run)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "my-run.receipt.json").is_file()
    assert bn.verify_receipt(tmp_path / "my-run.receipt.json").ok
