"""Answer latency measures the answer: a component's one-time warm-up runs before any timed call, and an
in-process (CPU-bound) answerer is timed by its thread's CPU time, not by the waits for the other threads.

The demo's resulting spread (answer p95 within 2x of the median) is measured by bench/answer_latency.py and
recorded in BENCHMARKS.md, not asserted here: a timing ratio on a shared machine is noise-bound."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import pytest

from bench_nb.frames.questions import questions_df
from bench_nb.models.extractive import ExtractiveAnswerer
from bench_nb.records import Answer, Question, SearchHit
from bench_nb.runner.run import run_benchmark


class LazyAnswerer(ExtractiveAnswerer):
    """Loads a table on its first answer (2 s; tiktoken's tables take 1-2 s) unless warmed up first; timed by
    the wall clock like any answerer that does not say it is CPU-bound."""

    cpu_bound: ClassVar[bool] = False

    def __init__(self) -> None:
        super().__init__()
        self.loaded = threading.Event()
        self.warm_ups = 0
        self.waited = 0  # answers that found the table not loaded
        self.lock = threading.Lock()

    def _load(self) -> bool:
        with self.lock:
            if self.loaded.is_set():
                return False
            time.sleep(2.0)
            self.loaded.set()
            return True

    def warm_up(self) -> None:
        self.warm_ups += 1
        super().warm_up()  # the tokenizer
        self._load()

    def answer(self, question: Question, hits: Sequence[SearchHit]) -> Answer:
        if not self.loaded.is_set():
            self.waited += 1
        self._load()
        return super().answer(question, hits)


def test_a_warm_up_runs_once_before_the_first_timed_answer(tmp_path: Path) -> None:
    answerer = LazyAnswerer()
    result = run_benchmark(
        "sqlite", "sample", answerer=answerer, run_id="warm", runs_dir=tmp_path, progress=False, limit=16
    )
    assert result.evaluated == 16 and answerer.warm_ups == 1 and answerer.waited == 0
    answers = questions_df(result.run_dir, backend="polars")["answer_ms"]
    assert answers.max() < 1500  # not one answer's time holds the table's 2 s: loaded before any was timed


class InterruptedWarmUp(ExtractiveAnswerer):
    """Ctrl-C while the answerer warms up (a tokenizer's tables load for 1-2 s: a moment one may interrupt)."""

    def warm_up(self) -> None:
        raise KeyboardInterrupt


def test_a_run_interrupted_in_its_warm_up_is_recorded_failed(tmp_path: Path) -> None:
    # The warm-up is part of the run: interrupted there, the run ends as interrupted anywhere else does (its
    # checkpoint says "failed", its journal is compacted and removed), not as a run still going.
    with pytest.raises(KeyboardInterrupt):
        run_benchmark(
            "sqlite",
            "sample",
            answerer=InterruptedWarmUp(),
            run_id="cut",
            runs_dir=tmp_path,
            progress=False,
            limit=4,
        )
    checkpoint = json.loads((tmp_path / "cut" / "checkpoint.json").read_text(encoding="utf-8"))
    assert checkpoint["status"] == "failed"
    assert not (tmp_path / "cut" / "journal.jsonl").exists()
