"""Two report builds at once in one working directory: each kernel has its own connection files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from notebook_files import write_notebook

import bench_nb


def test_two_builds_in_one_working_directory_both_succeed(tmp_path: Path) -> None:
    # A kernel over IPC names its sockets after its `ip`; by default that is "kernel-ipc" in the working
    # directory, so two builds there shared socket files and one failed.
    write_notebook(
        tmp_path / "slow.ipynb", "import time\ntime.sleep(3)\nprint('done', label)", params="label = 'x'"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(bench_nb.__file__).resolve().parents[1])}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bench_nb",
                "report",
                "slow.ipynb",
                "-p",
                "label",
                name,
                "-o",
                f"{name}.html",
            ],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("one", "two")
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    for name, proc, (_out, err) in zip(("one", "two"), procs, outs, strict=True):
        assert proc.returncode == 0, err[-3000:]
        assert f"done {name}" in (tmp_path / f"{name}.html").read_text()
    # No kernel socket or connection file is left in the working directory.
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("kernel")) == []
