"""Every fenced Python block of README.md and docs/*.md runs, offline, on synthetic runs of the bundled sample
(``tests/synthetic_runs.py``) laid out where the examples look: ``data/demo/runs/*`` (run ids ``run-a``, ``run-b``,
``run-c``) and ``data/runs/*`` (those, ``main``, ``pr-123`` and ``my-run``). A block that cannot run here says
so in the line before its fence, ``<!-- not run: why -->`` (an API key, a download, your own file), and is
only checked to parse. The blocks of one file run in order in one namespace (a later block uses an earlier
one's ``runs``), in a subprocess of their own, each compiled under its file and line so a failure names them;
so a renamed or removed name in an example fails here."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from synthetic_runs import write_synthetic_run

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(
    r"^(?P<marker><!-- not run: (?P<why>[^>]*) -->\n)?```python\n(?P<code>.*?)^```", re.M | re.S
)

# What each file's blocks start with: the imports the prose around them implies.
PRELUDE = "import bench_nb\nimport bench_nb as bn\nimport polars as pl\n"

DRIVER = """
import json, sys, warnings
blocks = json.loads(sys.stdin.read())
namespace = {}
warnings.simplefilter("ignore")  # examples may warn (few haystacks, a judge audit's size): they must run
exec(compile(blocks[0], "<prelude>", "exec"), namespace)
for where, code in blocks[1:]:
    exec(compile(code, where, "exec"), namespace)
"""


def blocks(path: Path) -> list[tuple[int, str, str | None]]:
    """(line of the fence, code, why it is not run or None) of each ```python block of ``path``."""
    text = path.read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start("code"))  # the code's first line is the fence's line + 1
        out.append((line, m.group("code"), m.group("why")))
    return out


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("project")
    for folder in ("data/demo/runs", "data/runs"):
        for run_id, provider in (("run-a", "sqlite"), ("run-b", "full-context"), ("run-c", "no-memory")):
            write_synthetic_run(root / folder, provider, run_id=run_id, n_questions=40)
    for run_id, provider in (("main", "sqlite"), ("pr-123", "sqlite"), ("my-run", "sqlite")):
        write_synthetic_run(root / "data/runs", provider, run_id=run_id, n_questions=40, seed=len(run_id))
    return root


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_every_python_block_runs(path: Path, project: Path) -> None:
    found = blocks(path)
    for line, code, _ in found:
        ast.parse(code, f"{path.name}:{line}")  # even a block that is not run must be Python
    runnable = [(f"{path.relative_to(REPO)}:{line}", code) for line, code, why in found if why is None]
    if not runnable:
        pytest.skip(f"{path.name}: no runnable Python block")
    done = subprocess.run(
        [sys.executable, "-c", DRIVER],
        input=json.dumps([PRELUDE, *runnable]),
        cwd=project,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]


def test_the_blocks_not_run_say_why_and_are_few() -> None:
    skipped = [(p.name, line, why) for p in DOCS for line, _, why in blocks(p) if why is not None]
    assert all(why.strip() for _, _, why in skipped)
    total = sum(len(blocks(p)) for p in DOCS)
    assert len(skipped) <= total // 2, skipped
