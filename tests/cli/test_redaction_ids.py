"""Redaction matches secrets, not ids that merely contain "key" (issue 31: the command line printed the run
``key-value-store-1`` as ``[redacted]``). A key of the same shape family is still redacted, by shape alone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bench_nb.redaction import REDACTED, redact

SRC = Path(__file__).resolve().parents[2] / "src"
MAILGUN_STYLE = "key-3ax6xnjp29jd6fds4gc373sgvjxteol0"  # a key shape: "key-" and 32 random letters and digits
IDS = ("key-value-store-1", "key-value-store", "monkey-key-store-2024", "key-rotation-notes-v12")


def _clean_env() -> dict[str, str]:
    """No secret-named variables, so only the shapes can redact."""
    keep = {
        k: v for k, v in os.environ.items() if not any(w in k.upper() for w in ("KEY", "TOKEN", "SECRET"))
    }
    return {**keep, "PYTHONPATH": str(SRC)}


def test_ids_containing_key_are_kept_and_key_shapes_redacted() -> None:
    for run_id in IDS:
        assert redact(f"run {run_id} failed") == f"run {run_id} failed"
    for secret in (MAILGUN_STYLE, "sk-proj-abcdefghijk", "sk-test-SECRET-do-not-store-4242"):
        text = redact(f"401: invalid key {secret} (check your settings)")
        assert secret not in text and REDACTED in text and text.endswith("(check your settings)")


def _status(cwd: Path, run_id: str) -> subprocess.CompletedProcess[str]:
    run_dir = cwd / "runs" / run_id
    run_dir.mkdir(parents=True)
    (run_dir / "checkpoint.json").write_text("{\n")  # damaged: the error line names the file
    return subprocess.run(
        [sys.executable, "-m", "bench_nb", "status", f"runs/{run_id}"],
        cwd=cwd,
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_command_line_prints_an_id_with_key_intact_and_still_redacts_a_key(tmp_path: Path) -> None:
    proc = _status(tmp_path, "key-value-store-1")
    assert proc.returncode == 1
    assert "runs/key-value-store-1/checkpoint.json" in proc.stderr, proc.stderr
    assert REDACTED not in proc.stderr + proc.stdout
    proc = _status(tmp_path, MAILGUN_STYLE)
    assert proc.returncode == 1 and "checkpoint.json" in proc.stderr, proc.stderr
    assert MAILGUN_STYLE not in proc.stderr + proc.stdout
    assert f"runs/{REDACTED}/checkpoint.json" in proc.stderr
