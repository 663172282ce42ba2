"""A benchmark's answer-key errata on the questions frame: ``gold_error_type``, ``gold_corrected``, ``gold_wrong``.

``questions_df(runs, errata=...)`` fills them for the rows of runs on the errata's benchmark whose question the
errata list; every other row has them null. ``gold_wrong`` is True when the gold answer itself is wrong (the
audit's WRONG_CITATION entries are listed with ``gold_wrong = False``: their answer is right).
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from bench_nb.benchmarks.errata import Errata, load_errata
from bench_nb.frames.columns import QUESTIONS

ErrataSource = Errata | str | os.PathLike[str]
ERRATA_COLUMNS = QUESTIONS.schema("errata")  # the questions frame's answer-key columns


def as_errata(errata: ErrataSource) -> Errata:
    """An ``Errata`` from itself, a file path or a registered name (``load_errata``)."""
    return errata if isinstance(errata, Errata) else load_errata(Path(os.fspath(errata)))


def apply_errata(frame: pl.DataFrame, errata: ErrataSource) -> pl.DataFrame:
    """``frame`` with the errata columns filled for the runs on the errata's benchmark (null elsewhere)."""
    errata = as_errata(errata)
    base = frame.drop([c for c in ERRATA_COLUMNS if c in frame.columns])
    table = pl.DataFrame(  # one row per erratum
        [(e.question_id, e.error_type, e.corrected, e.gold_wrong) for e in errata],
        schema={"question_id": pl.Utf8, **ERRATA_COLUMNS},
        orient="row",
    ).with_columns(_benchmark=pl.lit(errata.benchmark.lower()))
    on_benchmark = pl.col("benchmark").str.to_lowercase()
    return (
        base.with_columns(_benchmark=on_benchmark)
        .join(table, on=["question_id", "_benchmark"], how="left", maintain_order="left")
        .drop("_benchmark")
        .select(
            frame.columns if set(ERRATA_COLUMNS) <= set(frame.columns) else [*base.columns, *ERRATA_COLUMNS]
        )
    )
