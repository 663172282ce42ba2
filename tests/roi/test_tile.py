"""The "Only memory knows" tile: invitation before the first run, the number and line, the trend, escaping."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from roi_memsets import mem, write_jsonl

from bench_nb.roi import (
    JudgmentFailed,
    import_memories,
    roi_tile,
    roi_tile_html,
    run_roi,
    start_run,
    top_up,
)
from bench_nb.roi.probers import TemplateProber
from bench_nb.roi.store import RoiStore

EVIL = "<script>alert('x')</script>"


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(html: str) -> _Collect:
    p = _Collect()
    p.feed(html)
    return p


def test_before_the_first_run_an_invitation_not_zero(jsonl_file: Path, db: Path) -> None:
    import_memories(jsonl_file, db, admin=True)
    html = roi_tile_html("alice", db)
    assert "Only memory knows" in html and "Run the ROI benchmark" in html
    assert "0%" not in html and "bench-nb roi run --owner alice" in html
    assert "first run generates the probe pool" in html
    with RoiStore(db) as store:
        top_up(store, "alice", TemplateProber())
    assert "20 probes are ready." in roi_tile_html("alice", db)


def test_number_line_and_trend(jsonl_file: Path, db: Path) -> None:
    import_memories(jsonl_file, db, admin=True)
    run_roi("bob", db)
    first = run_roi("bob", db).summary()
    html = roi_tile_html("bob", db)
    text = " ".join(_parse(html).text)
    assert f"{first.exclusive_rate:.0%}" in text
    assert (
        f"memory surfaced for {first.exclusive} of {first.judged} probes; a bare agent was not asked (deterministic judge)"
        in text
    )
    assert "probe mode: paraphrase (a few key terms" in text and "svg" not in _parse(html).tags
    run_roi("bob", db)
    html = roi_tile_html("bob", db)
    tags = _parse(html).tags
    assert "svg" in tags and "script" not in tags  # offline: inline SVG, no JavaScript
    assert roi_tile("bob", db)._repr_html_() == html


class _AlwaysFails:
    name = "broken"

    def judge(self, probe, source, recall):  # type: ignore[no-untyped-def]
        raise JudgmentFailed(probe.id, "no verdict")


def test_a_run_with_no_judgment_is_not_shown_as_zero(jsonl_file: Path, db: Path) -> None:
    import_memories(jsonl_file, db, admin=True)
    run_roi("bob", db)
    run_roi("bob", db, judge=_AlwaysFails())
    html = roi_tile_html("bob", db)
    assert "could not judge any of its 4 probes" in html and "0%" not in html


def test_owner_and_text_are_escaped(tmp_path: Path, db: Path) -> None:
    owner = "mallory"
    import_memories(
        write_jsonl(
            tmp_path / "m.jsonl", [mem("x", f"proj.{owner}.web", "decision", EVIL, "2024-01-01T00:00:00Z")]
        ),
        db,
    )
    run_roi(owner, db)
    running = start_run(owner, db)  # in progress: the tile shows its phase
    with RoiStore(db) as store:  # any stored text (a running run's phase may still change)
        store.execute("UPDATE runs SET phase = ? WHERE id = ?", (EVIL, running.run_id))
    html = roi_tile_html(owner, db)
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_a_report_kernel_draws_the_trend_without_altair(jsonl_file: Path, db: Path) -> None:
    """As the ROI report's kernel does (``BENCH_NB_REPORT=1``): the trend is a Vega-Lite dict rendered by
    vl-convert, and neither altair nor jsonschema is imported (0.3 s of the report)."""
    import json
    import os
    import subprocess
    import sys

    import_memories(jsonl_file, db, admin=True)
    for _ in range(3):
        run_roi("bob", db)
    code = (
        "import json, sys\n"
        "from bench_nb.roi import roi_tile_html\n"
        f"html = roi_tile_html('bob', {str(db)!r})\n"
        "print(json.dumps(['<svg' in html, 'altair' in sys.modules, 'jsonschema' in sys.modules]))\n"
    )
    env = {**os.environ, "BENCH_NB_REPORT": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [True, False, False]


def test_runs_finished_in_the_same_second_are_two_points_of_the_trend() -> None:
    import polars as pl

    from bench_nb.charts import chart_spec
    from bench_nb.roi import chart_roi_trend

    runs = pl.DataFrame(
        {
            "run_id": ["r1", "r2", "r3"],
            "finished_at": ["2026-12-01T18:36:26.1Z", "2026-12-01T18:36:26.7Z", "2026-12-01T18:40:00.0Z"],
            "exclusive_rate": [0.5, 0.6, 0.7],
            "exclusive": [5, 6, 7],
            "judged": [10, 10, 10],
            "probe_mode": ["paraphrase"] * 3,
        }
    )
    rows = next(iter(chart_spec(chart_roi_trend(runs))["datasets"].values()))
    assert [r["when"] for r in rows] == [
        "2026-12-01 18:36:26 #1",
        "2026-12-01 18:36:26 #2",
        "2026-12-01 18:40",
    ]


def test_the_headline_line_says_what_the_judge_measured() -> None:
    from bench_nb.roi.summary import measured

    # the deterministic judge asks nothing about a bare agent: the line says so instead of claiming it
    assert measured(4, 4, "deterministic") == (
        "memory surfaced for 4 of 4 probes; a bare agent was not asked (deterministic judge)"
    )
    assert measured(3, 4, "gpt-4o-mini") == "3 of 4 project questions a bare agent could not answer"


def test_the_roi_headline_says_what_its_judge_cannot_judge_before_the_number(
    jsonl_file: Path, db: Path
) -> None:
    # issue 37: the ROI page led with a large "100%" from a deterministic judge that cannot judge the
    # no-memory side
    from html import escape

    from bench_nb.roi.tile import DETERMINISTIC_NOTE

    import_memories(jsonl_file, db, admin=True)
    run_roi("alice", db)
    run_roi("alice", db)  # the first run generates the probe pool
    html = roi_tile_html("alice", db)
    assert html.index(escape(DETERMINISTIC_NOTE)) < html.index("font-size:40px")
    assert "upper bound of the exclusive rate" in html
