"""Operating-system errors on the command line: one line naming the file and the cause, exit 1, no traceback,
and no temporary file left behind (issue 31: permission and disk-full errors were raw tracebacks, and a failed
report write left ``.NAME.html.tmp``).

The disk-full case is real: the command runs under a file-size limit (``RLIMIT_FSIZE``, SIGXFSZ ignored, so a
write past it fails with EFBIG as a full disk fails with ENOSPC).
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


def _bench_nb(cwd: Path, *args: str, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        assert limit is not None
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    return subprocess.run(
        [sys.executable, "-m", "bench_nb", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(SRC), "BENCH_NB_QUIET": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=None if limit is None else limited,
    )


def _errors(stderr: str) -> list[str]:
    """stderr's lines but its warnings (a 3-question run warns that one haystack decides nothing)."""
    return [line for line in stderr.strip().splitlines() if not line.startswith("warning: ")]


def test_a_full_disk_is_one_line_naming_the_file(tmp_path: Path) -> None:
    done = _bench_nb(
        tmp_path, "run", "-p", "sqlite", "-b", "sample", "--limit", "3", "-r", "full", limit=3000
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    [line] = _errors(done.stderr)
    assert line.startswith("error: ") and "full/checkpoint.json" in line, line
    assert "the file is too large (a file-size limit)" in line
    assert not [p for p in tmp_path.rglob("*.tmp")]  # the checkpoint's temporary file was removed


def test_a_path_that_cannot_be_made_is_one_line_naming_it(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    done = _bench_nb(
        tmp_path, "run", "-p", "sqlite", "-b", "sample", "--limit", "1", "--runs-dir", "a-file/runs"
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    [line] = _errors(done.stderr)
    assert line.startswith("error: a-file/runs/") and line.endswith(": Not a directory"), line


WRITE = """
import resource, signal, sys
from pathlib import Path
sys.path.insert(0, {src!r})
from bench_nb.reports.index import _write
from bench_nb.runformat.journal import write_atomic

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (1000, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
for write in (lambda p: write_atomic(p, b"x" * 5000, durable=False), lambda p: _write(p, "x" * 5000)):
    try:
        write(Path(sys.argv[1]))
    except OSError as err:
        print(err.errno, err.filename)
"""


def test_a_failed_page_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    """The report page and the report index are written with ``write_atomic``: cut short, it removes its
    temporary file, and the page it would have replaced is still whole."""
    page = tmp_path / "compare.html"
    page.write_text("the previous page")
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(WRITE).format(src=str(SRC)), str(page)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stdout.split("\n")[:2] == [f"27 {page}"] * 2, done.stdout + done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["compare.html"]
    assert page.read_text() == "the previous page"
