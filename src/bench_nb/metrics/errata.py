"""What a benchmark's known answer-key errors do to a run's score.

- ``answer_key_ceiling(errata, runs, by=None)``: the best accuracy a perfect system can reach when the errata's
  wrong gold answers are graded as the key says (``ceiling``), beside each run's accuracy, its accuracy on the
  questions whose gold is right, and a flag when the run scores above the ceiling (which only credit on wrong
  gold answers can explain).
- ``errata_verdicts(errata, runs)``: how many of each run's correct and incorrect verdicts fall on questions the
  errata flag (the compare report's "answer key's known errors" section).
- ``regrade_with_errata(errata, runs, judges=("contains", "f1"))``: deterministic judges grade each answer to a
  wrong-gold question against the gold answer and against the corrected one.

Definitions in docs/statistics.md ("Answer-key errata").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import polars as pl

from bench_nb.frames.backend import as_polars, with_backend
from bench_nb.frames.errata import ErrataSource, apply_errata, as_errata
from bench_nb.frames.questions import questions_frame
from bench_nb.frames.verdicts import with_verdicts
from bench_nb.judges.registry import get_judge
from bench_nb.records import Question


def _questions(errata: ErrataSource, runs: Any) -> pl.DataFrame:
    """The scored questions of ``runs`` with the errata columns (a given frame keeps its own if it has them)."""
    frame = as_polars(runs)
    if frame is None:
        frame = questions_frame(runs, errata=errata)
    elif "gold_wrong" not in frame.columns or frame["gold_wrong"].null_count() == len(frame):
        frame = apply_errata(frame, as_errata(errata))
    return with_verdicts(frame).filter(pl.col("score").is_not_null())  # a verdict (frames.verdicts)


def answer_key_ceiling_frame(
    errata: ErrataSource, runs: Any, by: Literal["question_type"] | None = None
) -> pl.DataFrame:
    """The answer key's ceiling beside each run's accuracy, overall or per normalised question type.

    Args:
        errata: ``load_errata`` output, an errata file, or ``"locomo"``.
        runs: anything ``load_runs`` accepts, or a questions frame.
        by: None (per run) or ``"question_type"`` (per run and normalised type).

    Returns:
        Columns ``run_id``, ``question_type`` (when by), ``n`` (scored questions), ``wrong_gold`` (of them, the
        questions whose gold answer the errata say is wrong), ``ceiling`` (100 · (n − wrong_gold) / n),
        ``accuracy``, ``accuracy_gold_right`` (accuracy on the n − wrong_gold questions), ``correct_on_wrong_gold``
        (correct verdicts on wrong-gold questions), ``above_ceiling`` (accuracy > ceiling). Percent.
    """
    if by not in (None, "question_type"):
        raise ValueError(f"by must be None or 'question_type', not {by!r}")
    keys = ["run_id", "question_type"] if by else ["run_id"]
    q = _questions(errata, runs).with_columns(
        question_type=pl.col("question_type_norm").fill_null("other"),
        _wrong=pl.col("gold_wrong").fill_null(False),
        _correct=pl.col("correct").fill_null(False),
    )
    right = ~pl.col("_wrong")
    out = (
        q.group_by(keys, maintain_order=True)
        .agg(
            n=pl.len().cast(pl.Int64),
            wrong_gold=pl.col("_wrong").sum().cast(pl.Int64),
            _c=pl.col("_correct").sum(),
            _c_right=(pl.col("_correct") & right).sum(),
            correct_on_wrong_gold=(pl.col("_correct") & pl.col("_wrong")).sum().cast(pl.Int64),
        )
        .with_columns(
            ceiling=100 * (pl.col("n") - pl.col("wrong_gold")) / pl.col("n"),
            accuracy=100 * pl.col("_c") / pl.col("n"),
            accuracy_gold_right=pl.when(pl.col("n") > pl.col("wrong_gold"))
            .then(100 * pl.col("_c_right") / (pl.col("n") - pl.col("wrong_gold")))
            .otherwise(None),
        )
        .with_columns(above_ceiling=pl.col("accuracy") > pl.col("ceiling"))
    )
    cols = [*keys, "n", "wrong_gold", "ceiling", "accuracy", "accuracy_gold_right", "correct_on_wrong_gold"]
    return out.select(*cols, "above_ceiling")


answer_key_ceiling = with_backend(answer_key_ceiling_frame, "answer_key_ceiling")


def errata_verdicts_frame(errata: ErrataSource, runs: Any) -> pl.DataFrame:
    """Per run and error type: how many of the run's correct and incorrect verdicts fall on flagged questions.

    Columns ``run_id``, ``gold_error_type``, ``gold_wrong``, ``questions``, ``correct``, ``incorrect`` (verdicts
    of the run on questions of that type), ``share_of_correct`` (percent of all the run's correct verdicts).
    """
    q = _questions(errata, runs)
    totals = q.group_by("run_id").agg(_all_correct=pl.col("correct").fill_null(False).sum())
    out = (
        q.filter(pl.col("gold_error_type").is_not_null())
        .group_by("run_id", "gold_error_type", "gold_wrong", maintain_order=True)
        .agg(
            questions=pl.len().cast(pl.Int64), correct=pl.col("correct").fill_null(False).sum().cast(pl.Int64)
        )
        .with_columns(incorrect=pl.col("questions") - pl.col("correct"))
        .join(totals, on="run_id", how="left", maintain_order="left")
        .with_columns(
            share_of_correct=pl.when(pl.col("_all_correct") > 0)
            .then(100 * pl.col("correct") / pl.col("_all_correct"))
            .otherwise(None)
        )
        .sort("run_id", "gold_wrong", "questions", descending=[False, True, True], maintain_order=True)
    )
    cols = [
        "run_id",
        "gold_error_type",
        "gold_wrong",
        "questions",
        "correct",
        "incorrect",
        "share_of_correct",
    ]
    return out.select(cols)


errata_verdicts = with_backend(errata_verdicts_frame, "errata_verdicts")


def regrade_with_errata_frame(
    errata: ErrataSource, runs: Any, judges: Sequence[str] = ("contains", "f1")
) -> pl.DataFrame:
    """Deterministic judges grade every answer to a wrong-gold question against the gold and the corrected answer.

    Only deterministic judges (``contains``, ``f1`` or ``f1@<threshold>``; any other raises ``ValueError``):
    the result must not depend on a model's mood. A question whose erratum has no corrected answer is left out.

    Args:
        errata: ``load_errata`` output, an errata file, or ``"locomo"``.
        runs: anything ``load_runs`` accepts, or a questions frame.
        judges: the deterministic judges that grade (default both).

    Returns:
        One row per (run, question, judge): ``run_id, question_id, question_type_norm, gold_error_type, judge,
        ground_truth, gold_corrected, hypothesis, score_gold, score_corrected`` (0/1, null when unscored),
        ``changed`` (the two scores differ).
    """
    bad = [j for j in judges if j not in ("contains", "f1") and not j.startswith("f1@")]
    if bad:
        raise ValueError(f"regrade_with_errata takes deterministic judges only (contains, f1); not {bad}")
    q = _questions(errata, runs).filter(
        pl.col("gold_wrong").fill_null(False) & pl.col("gold_corrected").is_not_null()
    )
    graders = {name: get_judge(name) for name in judges}
    rows: list[dict[str, Any]] = []
    cols = ("run_id", "question_id", "question", "question_type_norm", "gold_error_type", "ground_truth")
    for rid, qid, text, norm, etype, gold, corrected, answer in q.select(
        *cols, "gold_corrected", "hypothesis"
    ).iter_rows():
        for name, judge in graders.items():
            scores = []
            for truth in (gold, corrected):
                record = Question(qid, text or "", truth or "", norm or "", norm or "other", "")
                scores.append(judge.judge(record, answer or "").score)
            rows.append(
                {
                    "run_id": rid,
                    "question_id": qid,
                    "question_type_norm": norm,
                    "gold_error_type": etype,
                    "judge": name,
                    "ground_truth": gold,
                    "gold_corrected": corrected,
                    "hypothesis": answer,
                    "score_gold": scores[0],
                    "score_corrected": scores[1],
                }
            )
    schema = {
        "run_id": pl.Utf8,
        "question_id": pl.Utf8,
        "question_type_norm": pl.Utf8,
        "gold_error_type": pl.Utf8,
        "judge": pl.Utf8,
        "ground_truth": pl.Utf8,
        "gold_corrected": pl.Utf8,
        "hypothesis": pl.Utf8,
        "score_gold": pl.Int64,
        "score_corrected": pl.Int64,
    }
    out = pl.DataFrame(rows, schema=schema).with_columns(
        changed=pl.col("score_gold").ne_missing(pl.col("score_corrected"))
    )
    return out


regrade_with_errata = with_backend(regrade_with_errata_frame, "regrade_with_errata")
