"""A run's question types: the raw label as the run wrote it -> the normalised type and LoCoMo's category.

One rule for every reader of a run (``frames.questions`` for its rows, ``runner.rejudge`` for the rubric a
judge grades with), so a question is reported under the type it was judged as.
"""

from __future__ import annotations

from collections.abc import Sequence

from bench_nb.benchmarks.registry import benchmark_traits
from bench_nb.runformat.dataset import DatasetQuestion
from bench_nb.taxonomy import (
    LOCOMO_CATEGORIES,
    MEMORYBENCH_LABEL_TO_CATEGORY,
    NORM_TYPES,
    normalize_question_type,
)

_LOCOMO_NAME_TO_CATEGORY = {v: k for k, v in LOCOMO_CATEGORIES.items()}


def question_types(
    qid: str,
    raw: str,
    *,
    benchmark: str,
    true_labels: bool,
    recorded: object = None,
    index: dict[str, DatasetQuestion] | None = None,
) -> tuple[str, int | None, str]:
    """``(normalised type, true LoCoMo category or None, where the type came from)`` of one question.

    Args:
        qid: the question id.
        raw: its type as the run wrote it (``questionType``).
        benchmark: the run's benchmark name.
        true_labels: the run's labels are LoCoMo's true category names (bench_nb's runs and imported files),
            not MemoryBench's own labels (``Run.has_true_labels``).
        recorded: the normalised type the runner recorded (``benchNb.normType``): the type the question was
            judged as, which wins over one derived from the raw label (a custom type ``billing`` declared
            ``single-hop`` is single-hop, not ``other``). A benchmark's own type for the raw label
            (``BenchmarkTraits.question_types``) wins over both.
        index: the benchmark file's questions by id, when the caller has it: its types win (``dataset``).
    """
    if index is not None and qid in index:
        dq = index[qid]
        return dq.norm_type, dq.category, "dataset"
    memorybench_labels = not true_labels
    traits = benchmark_traits(benchmark)
    locomo = traits.locomo_questions
    own = traits.question_types.get(raw.strip().lower()) if raw else None
    # the benchmark's own type wins over a recorded "other" (never over abstention)
    if own is not None and recorded != "abstention" and not qid.endswith("_abs"):
        norm = own
    elif isinstance(recorded, str) and recorded in NORM_TYPES:
        norm = recorded
    else:
        norm = normalize_question_type(
            raw, question_id=qid, locomo_questions=locomo, memorybench_labels=memorybench_labels
        )
    category = None
    if locomo:
        if memorybench_labels:
            category = MEMORYBENCH_LABEL_TO_CATEGORY.get(raw)
        else:
            category = _LOCOMO_NAME_TO_CATEGORY.get(raw)
    source = "memorybench-label" if memorybench_labels and locomo else "run"
    return norm, category, source


def question_type_columns(
    qids: Sequence[str],
    raws: Sequence[str],
    recorded: Sequence[object],
    *,
    benchmark: str,
    true_labels: bool,
    index: dict[str, DatasetQuestion] | None = None,
) -> tuple[list[str], list[int | None], list[str]]:
    """``question_types`` of a run's questions as three columns (normalised type, category, source).

    Each distinct (raw label, recorded type, abstention id) is worked out once: a run has a handful of labels
    and 100,000 questions. The question id only matters through the dataset ``index`` and LongMemEval's
    ``_abs`` suffix, which are part of the key.
    """
    norms: list[str] = []
    categories: list[int | None] = []
    sources: list[str] = []
    seen: dict[tuple[str, object, bool], tuple[str, int | None, str]] = {}
    for qid, raw, rec in zip(qids, raws, recorded, strict=True):
        types: tuple[str, int | None, str] | None
        if index is not None and qid in index:
            types = question_types(qid, raw, benchmark=benchmark, true_labels=true_labels, index=index)
        else:
            key = (raw, rec if isinstance(rec, str) else None, qid.endswith("_abs"))
            types = seen.get(key)
            if types is None:
                types = seen[key] = question_types(
                    qid, raw, benchmark=benchmark, true_labels=true_labels, recorded=rec
                )
        norms.append(types[0])
        categories.append(types[1])
        sources.append(types[2])
    return norms, categories, sources
