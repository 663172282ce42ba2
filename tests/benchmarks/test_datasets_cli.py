from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench_nb.benchmarks import (
    get_benchmark_spec,
    load_benchmark,
    read_custom,
    register_benchmark,
    write_custom,
)
from bench_nb.cli import cli
from bench_nb.errors import BenchNbError


def _run(*args: str) -> tuple[int, str, str]:
    """Exit code, stdout, and stderr plus the BenchNbError that ``bench-nb`` would print as ``error: ...``."""
    result = CliRunner().invoke(cli, list(args))
    err = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        assert isinstance(result.exception, BenchNbError), result.exception
        err += f"error: {result.exception}"
    return result.exit_code, result.stdout, err


def test_datasets_is_registered() -> None:
    code, out, _ = _run("datasets", "--help")
    assert code == 0 and "list" in out and "download" in out and "verify" in out


def test_list_shows_pins_and_cache_state(tmp_path: Path) -> None:
    (tmp_path / "locomo").mkdir()
    (tmp_path / "locomo" / "locomo10.json").write_text("[]", encoding="utf-8")
    code, out, _ = _run("datasets", "list", "--cache-dir", str(tmp_path))
    assert code == 0
    assert f"cached at {tmp_path / 'locomo' / 'locomo10.json'}; sha256 79fa87e9" in out
    assert "longmemeval (alias longmemeval-oracle)" in out
    assert "sample: " in out and "bundled with the package" in out


def test_verify_a_pinned_file(locomo_path: Path) -> None:
    code, out, _ = _run("datasets", "verify", str(locomo_path))
    assert code == 0
    assert "benchmark: locomo" in out and "pin: matches" in out
    assert "holds: 1986 questions, 10 haystacks, 272 sessions, 5882 messages" in out
    assert "adversarial: 446" in out


def test_verify_reports_a_mismatch_and_bad_records(tmp_path: Path) -> None:
    doc = json.loads(write_custom(load_benchmark("sample"), tmp_path / "s.json").read_text(encoding="utf-8"))
    doc["questions"][0]["answer"] = ""
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    code, out, err = _run("datasets", "verify", str(path), "--sha256", "00" * 32)
    assert code == 1
    assert "benchmark: custom" in out and f"pin: MISMATCH, expected {'00' * 32}" in out
    assert "holds: 49 questions" in out
    assert "[question conv-1-q1] (field answer): empty answer" in err


def test_verify_the_bundled_sample_by_name() -> None:
    code, out, _ = _run("datasets", "verify", "sample")
    assert code == 0 and "holds: 50 questions, 4 haystacks" in out and "(abstention: 7)" in out


def test_verify_a_name_that_is_not_downloaded(tmp_path: Path) -> None:
    code, _, err = _run("datasets", "verify", "locomo", "--cache-dir", str(tmp_path))
    assert code == 1 and "not downloaded; run `bench-nb datasets download locomo`" in err


@pytest.mark.usefixtures("scratch_registry")
def test_download_into_the_cache(file_server, tmp_path: Path) -> None:
    bundled = get_benchmark_spec("sample").bundled
    assert bundled is not None
    body = bundled.read_bytes()
    sha = hashlib.sha256(body).hexdigest()
    file_server.files["sample.json"] = body
    register_benchmark("remote", read_custom, url=file_server.url("sample.json"), sha256=sha)
    code, out, _ = _run("datasets", "download", "remote", "--cache-dir", str(tmp_path))
    assert code == 0 and f"sha256 {sha} (verified)" in out
    assert (tmp_path / "remote" / "sample.json").read_bytes() == body
    code, out, _ = _run("datasets", "verify", "remote", "--cache-dir", str(tmp_path))
    assert code == 0 and "pin: matches" in out
    register_benchmark(
        "remote", read_custom, url=file_server.url("sample.json"), sha256="1" * 64, replace=True
    )
    code, _, err = _run("datasets", "download", "remote", "--cache-dir", str(tmp_path), "--force")
    assert code == 1 and f"expected {'1' * 64}, got {sha}" in err


@pytest.mark.slow
def test_the_real_command_prints_one_error_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "bench_nb", "datasets", "verify", "locomo", "--cache-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert proc.stderr.strip() == "error: locomo: not downloaded; run `bench-nb datasets download locomo`"
