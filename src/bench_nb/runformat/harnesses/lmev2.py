"""LongMemEval-V2's harness output (xiaowu0162/LongMemEval-V2, ``evaluation/harness.py``): a run folder holding
``per_question.jsonl`` and, beside it, ``aggregated_metrics.json`` (and ``run_args.json``).

One JSON object a line: ``question_id`` (the benchmark's own id, so the run pairs with a native
``-b longmemeval-v2`` run), ``question_type``, ``category``, ``is_abstention_problem``, ``eval_function``,
``question_text``, ``answer_gold``, ``response_raw`` (the reader's reply), ``response_parsed_boxed``,
``is_unknown``, ``score`` (1.0/0.0) and ``score_bool`` (the verdict), ``haystack_ids`` (trajectory ids),
``memory_query_duration_seconds`` (the memory query's wall time), ``memory_context_token_count`` (the context's
tokens after truncation), ``memory_context_original_token_count``, ``memory_context_was_truncated``,
``memory_post_query_duration_seconds`` and ``memory_post_query_metadata`` (the memory module's work after the
question was answered, e.g. storing the exchange), ``usage`` (the reader's prompt and completion tokens). Mapping (docs/loading.md): the verdict is ``score_bool`` (``score`` when it is missing);
the search phase's ``durationMs`` is the memory query time; ``contextTokens`` the context tokens; the answer is
``response_raw``; ``memory_context_was_truncated`` true sets ``benchNb.contextCut`` (failure attribution's
``truncation``); the post-query time is ``benchNb.postQueryMs`` and its metadata ``benchNb.postQueryMetadata``
(after the answer, so not in the search latency). ``aggregated_metrics.json`` is kept as the run's published figures; its ``overall_full_set``
is checked against the rows. The judge is ``run_args.json``'s ``evaluator_model`` when that file is there,
else ``unknown``; the tier comes from ``run_args.json``'s haystack path or the folder's name (``..._small``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from bench_nb.errors import Problem, RunFormatError
from bench_nb.records import CONTEXT_CUT
from bench_nb.runformat.format import Checkpoint, Question
from bench_nb.runformat.harnesses.common import (
    UNKNOWN,
    ImportInfo,
    completed,
    imported_phases,
    json_lines,
    measure,
    repeated,
    text_field,
    verdict_field,
)

HARNESS = "longmemeval-v2"
FILENAME = "per_question.jsonl"
FILENAMES = (FILENAME, f"{FILENAME}.gz")  # read compressed or not
AGGREGATED = "aggregated_metrics.json"
_TIER = re.compile(r"(?:lme_v2_|[_-])(small|medium)(?:\.json)?$")


def looks_like(data: Any) -> bool:
    """LME-V2's per-question rows: a list of objects with ``question_id`` and ``score_bool`` or ``score``."""
    return (
        isinstance(data, list)
        and bool(data)
        and isinstance(data[0], dict)
        and "question_id" in data[0]
        and ("score_bool" in data[0] or "score" in data[0])
        and "eval_function" in data[0]
    )


def is_run_file(path: Path) -> bool:
    """Whether ``path`` is a LongMemEval-V2 harness's ``per_question.jsonl`` (or ``per_question.jsonl.gz``)."""
    return path.is_file() and path.name in FILENAMES


def run_file(folder: Path) -> Path | None:
    """The ``per_question.jsonl`` (or ``.jsonl.gz``) in ``folder``; None: none there."""
    return next((folder / name for name in FILENAMES if (folder / name).is_file()), None)


def _json_file(path: Path, problems: list[Problem]) -> Any:
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        problems.append(Problem(str(path), f"not valid JSON: {err}; ignored"))
        return None


def _tier(path: Path, run_args: Any) -> str | None:
    if isinstance(run_args, dict):
        for key in ("haystack_path", "tier"):
            value = run_args.get(key)
            if isinstance(value, str) and (
                m := _TIER.search(value) or re.fullmatch(r"(small|medium)", value)
            ):
                return m.group(1)
    m = _TIER.search(path.parent.name)
    return m.group(1) if m else None


def read(path: Path, problems: list[Problem]) -> tuple[Checkpoint, ImportInfo]:
    """Read a ``per_question.jsonl`` (or the folder holding it) as a run; bad lines become problems naming
    file, line and field, the good lines still load.

    Raises:
        RunFormatError: the file cannot be read or holds no readable row.
    """
    if path.is_dir():
        path = run_file(path) or path / FILENAME
    folder = path.parent
    run_args = _json_file(folder / "run_args.json", problems)
    aggregated = _json_file(folder / AGGREGATED, problems)
    judge = run_args.get("evaluator_model") if isinstance(run_args, dict) else None
    model = run_args.get("model") if isinstance(run_args, dict) else None
    info = ImportInfo(
        harness=HARNESS,
        judge=judge if isinstance(judge, str) and judge else UNKNOWN,
        not_recorded=("retrieved context",),
        published=aggregated if isinstance(aggregated, dict) else {},
    )
    questions: dict[str, Question] = {}
    haystacks: dict[tuple[str, ...], str] = {}
    for number, row in json_lines(path, problems):
        where = f"line {number}"

        def bad(field: str, message: str, qid: str | None = None, where: str = where) -> None:
            problems.append(
                Problem(str(path), f"{where}: {message}", field=f"{where}: {field}", question_id=qid)
            )

        if not isinstance(row, dict):
            bad("(the line)", "not a JSON object; skipped")
            continue
        qid = row.get("question_id")
        if not isinstance(qid, str) or not qid:
            bad("question_id", "no question_id (a non-empty string); skipped")
            continue
        if repeated(qid, questions, problems, path, f"{where}: question_id", "row"):
            continue
        at: dict[str, Any] = {"path": path, "problems": problems, "question_id": qid}
        graded = "score_bool" if "score_bool" in row else "score"
        verdict = verdict_field(row.get(graded), field=f"{where}: {graded}", zero_one=graded == "score", **at)
        seconds = measure(
            row.get("memory_query_duration_seconds"),
            "s",
            field=f"{where}: memory_query_duration_seconds",
            **at,
        )
        tokens = measure(
            row.get("memory_context_token_count"),
            "tokens",
            field=f"{where}: memory_context_token_count",
            **at,
        )
        usage = row.get("usage")
        if usage is not None and not isinstance(usage, dict):
            bad("usage", f"usage {json.dumps(usage)[:60]} is not an object: prompt tokens not recorded", qid)
        prompt_tokens = (
            measure(usage.get("prompt_tokens"), "tokens", field=f"{where}: usage.prompt_tokens", **at)
            if isinstance(usage, dict)
            else None
        )
        trajectories = row.get("haystack_ids")
        if isinstance(trajectories, str):
            bad(
                "haystack_ids",
                f"haystack_ids {json.dumps(trajectories)[:60]} is a string, not a list: read as "
                "a list of that one trajectory",
                qid,
            )
            trajectories = [trajectories]
        elif trajectories is not None and not (
            isinstance(trajectories, list) and all(isinstance(t, str) for t in trajectories)
        ):
            bad(
                "haystack_ids",
                f"haystack_ids {json.dumps(trajectories)[:60]} is not a list of trajectory ids: "
                "the question is a haystack of its own",
                qid,
            )
        extra: dict[str, Any] = {
            "normType": "abstention" if row.get("is_abstention_problem") is True else "other",
            "evalFunction": row.get("eval_function"),
        }
        if isinstance(trajectories, list) and all(isinstance(t, str) for t in trajectories):
            extra["haystackId"] = haystacks.setdefault(tuple(trajectories), qid)
        if verdict is None:
            extra["unscored"] = True
        for key in ("is_abstention_problem", "is_unknown", "memory_context_was_truncated"):
            if row.get(key) is not None and not isinstance(row[key], bool):
                bad(key, f"{key} {json.dumps(row[key])[:60]} is not true/false: read as not recorded", qid)
        if isinstance(row.get("is_unknown"), bool):
            extra["isUnknown"] = row["is_unknown"]
        if row.get("memory_context_was_truncated") is True:
            extra[CONTEXT_CUT] = True  # failure attribution's truncation reason (metrics.failures)
        post = measure(
            row.get("memory_post_query_duration_seconds"),
            "s",
            field=f"{where}: memory_post_query_duration_seconds",
            **at,
        )
        if post is not None:
            extra["postQueryMs"] = post * 1000
        meta = row.get("memory_post_query_metadata")
        if meta is not None and not isinstance(meta, dict):
            bad(
                "memory_post_query_metadata",
                f"memory_post_query_metadata {json.dumps(meta)[:60]} is not an object: not recorded",
                qid,
            )
        elif meta:
            extra["postQueryMetadata"] = meta
        questions[qid] = Question(
            questionId=qid,
            containerTag=extra.get("haystackId", ""),
            question=text_field(row.get("question_text"), field=f"{where}: question_text", **at),
            groundTruth=text_field(row.get("answer_gold"), field=f"{where}: answer_gold", **at),
            questionType=text_field(row.get("question_type"), field=f"{where}: question_type", **at),
            phases=imported_phases(
                verdict,
                hypothesis=text_field(row.get("response_raw"), field=f"{where}: response_raw", **at),
                search_ms=None if seconds is None else seconds * 1000,
                context_tokens=tokens,
                prompt_tokens=prompt_tokens,
            ),
            benchNb=extra,
        )
        info.verdicts[qid] = [verdict]
    if not questions:
        raise RunFormatError(path, "no readable row (one JSON object per line with a question_id)")
    _check_published(folder / AGGREGATED, info.published, questions, problems)
    tier = _tier(path, run_args)
    answering = model if isinstance(model, str) else ""
    benchmark = f"longmemeval-v2-{tier}" if tier else "longmemeval-v2"
    checkpoint = completed(
        info, questions, folder.name or path.stem, folder.name or HARNESS, benchmark, answering
    )
    return checkpoint, info


def _check_published(
    file: Path, published: dict[str, Any], questions: dict[str, Question], problems: list[Problem]
) -> None:
    """The file's ``overall.overall_full_set`` against the mean of the rows' verdicts (unscored as wrong, as
    the harness counts them); a difference is a problem naming both."""
    overall = published.get("overall")
    if not isinstance(overall, dict) or not isinstance(overall.get("overall_full_set"), int | float):
        return
    scores = [q.phases.evaluate.score or 0.0 for q in questions.values()]
    mean = sum(scores) / len(scores)
    stated = float(overall["overall_full_set"])
    if abs(mean - stated) > 1e-9:
        problems.append(
            Problem(
                str(file),
                f"overall_full_set is {stated:.4f} but the {len(scores)} rows read give {mean:.4f} (rows skipped "
                "or the files are from different runs)",
                field="overall.overall_full_set",
            )
        )
