"""Shared fixtures.

``shared_data`` finds the real datasets (``../shared/data`` beside the checkout, or $BENCH_NB_SHARED_DATA).
Without them the tests that need them skip with the reason; with BENCH_NB_REQUIRE_SHARED=1 (set by .ci/run)
they fail instead, so CI always runs them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from needs import need

REPO = Path(__file__).resolve().parents[1]


def _shared_root() -> Path:
    return Path(os.environ.get("BENCH_NB_SHARED_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    root = _shared_root()
    need(
        root.is_dir(),
        f"shared datasets not found at {root} (set BENCH_NB_SHARED_DATA)",
        env="BENCH_NB_REQUIRE_SHARED",
    )
    return root


@pytest.fixture(scope="session")
def mb_example(shared_data: Path) -> Path:
    path = shared_data / "memorybench" / "example"
    need(path.is_dir(), f"MemoryBench example run not found at {path}", env="BENCH_NB_REQUIRE_SHARED")
    return path


@pytest.fixture(scope="session")
def locomo_path(shared_data: Path) -> Path:
    path = shared_data / "locomo" / "locomo10.json"
    need(path.is_file(), f"LoCoMo not found at {path}", env="BENCH_NB_REQUIRE_SHARED")
    return path


@pytest.fixture(scope="session")
def longmemeval_path(shared_data: Path) -> Path:
    path = shared_data / "longmemeval" / "longmemeval_oracle.json"
    need(path.is_file(), f"LongMemEval oracle not found at {path}", env="BENCH_NB_REQUIRE_SHARED")
    return path


@pytest.fixture(scope="session")
def locomo_audit(shared_data: Path) -> Path:
    """The public LoCoMo audit's files: errors.json, fc-baseline/<run>/eval_results.json, ap-baseline/v1."""
    path = shared_data / "locomo-audit"
    need(
        (path / "errors.json").is_file(),
        f"LoCoMo audit data not found at {path}",
        env="BENCH_NB_REQUIRE_SHARED",
    )
    return path


@pytest.fixture(scope="session")
def harness_results(shared_data: Path) -> Path:
    """Other harnesses' published per-question results: zep/zep_locomo_grades.json, mem0/results.json."""
    path = shared_data / "harness-results"
    need((path / "zep").is_dir(), f"harness results not found at {path}", env="BENCH_NB_REQUIRE_SHARED")
    return path


# --- the browser harness (tests/lab_browser.py): a real JupyterLab in headless Chromium, no network ------------


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's Chromium (skips without it; fails instead under BENCH_NB_REQUIRE_BROWSER=1, as in CI)."""
    from lab_browser import chromium_path

    path = chromium_path()
    need(
        path is not None,
        "headless Chromium not installed (apt-get install chromium)",
        env="BENCH_NB_REQUIRE_BROWSER",
    )
    try:
        import playwright  # noqa: F401
    except ImportError:
        need(False, "playwright not installed (pip install -e '.[dev]')", env="BENCH_NB_REQUIRE_BROWSER")
    assert path is not None
    return path


@pytest.fixture(scope="session")
def browser_proxy() -> Iterator[tuple[int, list[str]]]:
    """The recording proxy every browser request goes through: (port, the requests that tried to leave)."""
    from lab_browser import recording_proxy

    with recording_proxy() as proxy:
        yield proxy


@pytest.fixture(scope="module")
def chromium_browser(chromium: str, browser_proxy: tuple[int, list[str]]) -> Iterator[Any]:
    """A Playwright ``Browser`` on Debian's Chromium, its network going nowhere (one per test module).

    Not one per session: Playwright's sync API keeps an asyncio loop marked as running in the main thread while
    it lives, and every later test that starts a loop of its own (anyio.run, asyncio.run) would fail with
    "Cannot run the event loop while another loop is running"."""
    from lab_browser import chromium_browser as launch

    with launch(chromium, browser_proxy[0]) as browser:
        yield browser


@pytest.fixture(scope="session")
def jupyter_lab(chromium: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A JupyterLab server from this venv on 127.0.0.1 with a token (``lab_browser.JupyterLab``); its kernels
    see this checkout's sources. Put notebooks in its folder with ``jupyter_lab.add(name, path)``."""
    from lab_browser import JupyterLab

    src = str(REPO / "src")
    path = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH", "")) if p)
    lab = JupyterLab(tmp_path_factory.mktemp("jupyterlab"), env={"PYTHONPATH": path})
    try:
        yield lab
    finally:
        lab.stop()


@pytest.fixture
def lab_page(jupyter_lab: Any, chromium_browser: Any) -> Iterator[Any]:
    """A fresh Chromium page on ``jupyter_lab`` (``lab_browser.LabPage``): 1400x900, requests recorded, any
    request that is not to the lab aborted and listed in ``lab_page.outside``."""
    from lab_browser import LabPage

    context = chromium_browser.new_context(viewport={"width": 1400, "height": 900}, service_workers="block")
    try:
        yield LabPage(jupyter_lab, context)
    finally:
        context.close()
        jupyter_lab.shutdown_kernels()


@pytest.fixture(scope="session")
def beam_100k(shared_data: Path) -> Path:
    path = shared_data / "beam" / "100K"
    need(
        (path / "1" / "chat.json").is_file(), f"BEAM 100K not found at {path}", env="BENCH_NB_REQUIRE_SHARED"
    )
    return path


@pytest.fixture
def make_run(tmp_path: Path) -> Any:
    """``make_run(run_id, **kwargs)`` writes a small run directory under ``tmp_path / "runs"`` (see
    ``stats_fixtures.write_run``) and returns its path."""
    from stats_fixtures import write_run

    def make(run_id: str, **kwargs: Any) -> Path:
        return write_run(tmp_path / "runs", run_id, **kwargs)

    return make


@pytest.fixture
def not_a_run(tmp_path: Path) -> Iterator[Path]:
    """A folder that is no run (no checkpoint.json) holding a user's own *.tmp files, in it and in results/; after
    the test it must be exactly as it was (lock_run refuses it before it makes a .lock or deletes a temporary
    file there)."""
    folder = tmp_path / "downloads"
    (folder / "results").mkdir(parents=True)
    (folder / "draft.tmp").write_text("mine")
    (folder / "results" / "notes.tmp").write_text("mine too")
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    yield folder
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before
