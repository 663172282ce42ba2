"""LongMemEval-V2 (Wu et al. 2026, github.com/xiaowu0162/LongMemEval-V2, Apache-2.0): questions over web-agent
trajectories, each question scored by its own ``eval_function``.

A dataset folder, as the official ``data/download_data.py`` leaves it (the Hugging Face dataset
``xiaowu0162/longmemeval-v2``)::

    questions.jsonl                 one question a line: id, domain, question, image, question_type,
                                    eval_function, answer
    trajectories.jsonl              one trajectory a line: id, domain, goal, outcome, start_url, states
    haystacks/lme_v2_<tier>.json    {question id: [trajectory id, ...]} for the tiers small and medium
    screenshots/<trajectory>/...    images (referenced by path only, never needed offline)

Decisions (see docs/benchmarks.md):

- One Haystack per distinct trajectory list: questions whose haystacks list the same trajectories in the same
  order share one (``haystack_id`` = the first such question's id), so a memory system ingests it once, as the
  official harness does with a shared haystack.
- One Session per trajectory (``session_id`` = the trajectory id, undated: trajectories carry no dates). Its
  first message (``<trajectory>:goal``, role user) states the goal and start URL; then one message per state
  (``<trajectory>:<state index>``, role assistant): the URL, the agent's thought and action, then the page text
  (``accessibility_tree`` or ``text``); the screenshot's path stays in ``Message.extra["screenshot"]``; a last
  message (``<trajectory>:outcome``) gives the outcome when there is one.
- ``question_type`` stays the dataset's (``static-environment``, ``errors-gotchas``, ``procedure-abs``, ...);
  ``Question.extra`` keeps ``eval_function`` (the scoring rule, ``bench_nb.judges.lmev2``), ``domain``,
  ``category`` (the harness's short name: static, dynamic, procedure, gotchas, with ``-abs``) and ``image``
  (the question image's path relative to the folder, or None). A question scored by ``llm_abstention_checker``
  (an ``-abs`` type) has ``norm_type`` "abstention"; the others keep LME-V2's own type, by its short category
  name (``OWN_TYPES``: static, dynamic, procedure, gotchas): its abilities are not LoCoMo's hop types, and the
  reports group its questions by them (``BenchmarkTraits.question_types``), not under "other".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench_nb.errors import DatasetError, Problem
from bench_nb.records import Benchmark, Haystack, Message, Question, Session

from .jsonfile import FieldError, read_json, report

TIERS: tuple[str, ...] = ("small", "medium")
QUESTIONS_FILE = "questions.jsonl"
TRAJECTORIES_FILE = "trajectories.jsonl"

# The harness's question types and their short category names (evaluation/harness.py CATEGORY_MAP).
CATEGORIES: dict[str, str] = {
    "static-environment": "static",
    "static-environment-abs": "static-abs",
    "dynamic-environment": "dynamic",
    "dynamic-environment-abs": "dynamic-abs",
    "procedure": "procedure",
    "procedure-abs": "procedure-abs",
    "errors-gotchas": "gotchas",
}
# The type each raw label is reported and judged as (``BenchmarkTraits.question_types``): the short category,
# abstention for the -abs types; the short names map to themselves (a result file may carry those).
OWN_TYPES: dict[str, str] = {
    label: "abstention" if category.endswith("-abs") else category
    for raw, category in CATEGORIES.items()
    for label in (raw, category)
}
LMEV2_TYPE_REGISTRY: dict[str, dict[str, str]] = {
    t: {"id": t, "alias": c, "description": t.replace("-", " ").capitalize()} for t, c in CATEGORIES.items()
}


def haystack_file(tier: str) -> str:
    """The haystack file of a tier, relative to the dataset folder."""
    return f"haystacks/lme_v2_{normalize_tier(tier)}.json"


def normalize_tier(tier: str) -> str:
    """``"Small"`` -> ``"small"``.

    Raises:
        DatasetError: not a LongMemEval-V2 tier.
    """
    key = tier.strip().lower()
    if key not in TIERS:
        raise DatasetError(f"unknown LongMemEval-V2 tier {tier!r}; tiers: {', '.join(TIERS)}")
    return key


def read_jsonl(path: Path, problems: list[Problem] | None) -> list[tuple[int, dict[str, Any]]]:
    """The objects of a JSON-lines file with their line numbers (blank lines skipped). A line that is not a
    JSON object is a problem naming the file and line.

    Raises:
        DatasetError: the file cannot be read, or (strict mode) a bad line.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise DatasetError(f"{path}: cannot read the dataset: {err}") from None
    out: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as err:
            report(
                problems, Problem(str(path), f"line {number}: not valid JSON: {err}", field=f"line {number}")
            )
            continue
        if not isinstance(item, dict):
            report(problems, Problem(str(path), f"line {number}: not a JSON object", field=f"line {number}"))
            continue
        out.append((number, item))
    return out


def read_longmemeval_v2(
    path: Path, problems: list[Problem] | None = None, *, tier: str = "small"
) -> Benchmark:
    """Read a LongMemEval-V2 dataset folder for one tier.

    Args:
        path: the folder holding questions.jsonl, trajectories.jsonl and haystacks/.
        problems: None to raise on the first problem; a list to load leniently (bad questions and trajectories
            are skipped and described there; a question whose haystack names a skipped or unknown trajectory
            is skipped).
        tier: ``small`` or ``medium`` (which haystack file).

    Raises:
        DatasetError: not a dataset folder, or (strict mode) a bad record.
    """
    root = Path(path)
    tier = normalize_tier(tier)
    for rel in (QUESTIONS_FILE, TRAJECTORIES_FILE, haystack_file(tier)):
        if not (root / rel).is_file():
            raise DatasetError(
                f"{root}: no {rel}; a LongMemEval-V2 folder holds {QUESTIONS_FILE}, {TRAJECTORIES_FILE} and "
                f"haystacks/lme_v2_<tier>.json (the Hugging Face dataset xiaowu0162/longmemeval-v2)"
            )
    sessions = _sessions(root / TRAJECTORIES_FILE, problems)
    mapping_file = root / haystack_file(tier)
    mapping = read_json(mapping_file)
    if not isinstance(mapping, dict):
        raise DatasetError(f"{mapping_file}: expected an object of question id -> trajectory ids")
    questions: list[Question] = []
    haystacks: dict[str, Haystack] = {}
    by_list: dict[tuple[str, ...], str] = {}
    seen: set[str] = set()
    qfile = root / QUESTIONS_FILE
    for number, item in read_jsonl(qfile, problems):
        qid = item.get("id")
        where = f"line {number}"
        if not isinstance(qid, str) or not qid:
            report(problems, Problem(str(qfile), f"{where}: no question id", field=f"{where}: id"))
            continue
        if qid in seen:
            report(problems, Problem(str(qfile), f"{where}: duplicate id", field="id", question_id=qid))
            continue
        seen.add(qid)
        try:
            trajectory_ids = _trajectory_ids(mapping, qid, mapping_file)
            missing = [t for t in trajectory_ids if t not in sessions]
            if missing:
                raise FieldError(
                    "haystack", f"its haystack in {mapping_file.name} names unknown trajectory {missing[0]!r}"
                )
            key = tuple(trajectory_ids)
            hid = by_list.setdefault(key, qid)
            question = _question(qid, hid, item)
        except FieldError as err:
            report(problems, Problem(str(qfile), f"{where}: {err.message}", field=err.field, question_id=qid))
            continue
        if hid not in haystacks:
            haystacks[hid] = Haystack(haystack_id=hid, sessions=tuple(sessions[t] for t in key))
        questions.append(question)
    if not questions and problems is None:
        raise DatasetError(f"{qfile}: no questions")
    return Benchmark(
        name=f"longmemeval-v2-{tier}",
        questions=tuple(questions),
        haystacks=haystacks,
        type_registry=dict(LMEV2_TYPE_REGISTRY),
    )


def _trajectory_ids(mapping: dict[str, Any], qid: str, file: Path) -> list[str]:
    ids = mapping.get(qid)
    if ids is None:
        raise FieldError("haystack", f"no haystack entry in {file.name}")
    if not isinstance(ids, list) or not all(isinstance(t, str) and t for t in ids):
        raise FieldError("haystack", f"its haystack in {file.name} is not a list of trajectory ids")
    return ids


def _question(qid: str, hid: str, item: dict[str, Any]) -> Question:
    for key in ("question", "question_type", "eval_function", "answer"):
        if not isinstance(item.get(key), str):
            raise FieldError(key, f"{key} missing or not a string")
    qtype = item["question_type"]
    spec = item["eval_function"].strip()
    if not spec:
        raise FieldError("eval_function", "eval_function is empty")
    rule = spec.split("|", 1)[0].strip()
    if rule == "llm_abstention_checker" and "-abs" not in qtype:
        raise FieldError(
            "question_type", f"an llm_abstention_checker question needs an -abs type, not {qtype!r}"
        )
    image = item.get("image")
    if image is not None and not (isinstance(image, str) and image.strip()):
        raise FieldError("image", "image must be null or a path")
    extra = {
        "eval_function": spec,
        "domain": item.get("domain"),
        "category": CATEGORIES.get(qtype, qtype),
        "image": image,
    }
    extra.update(
        {k: v for k, v in item.items() if k not in ("id", "question", "answer", "question_type", *extra)}
    )
    return Question(
        question_id=qid,
        question=item["question"],
        answer=item["answer"],
        question_type=qtype,
        norm_type="abstention" if rule == "llm_abstention_checker" else OWN_TYPES.get(qtype.lower(), "other"),
        haystack_id=hid,
        extra=extra,
    )


def _goal(raw: Any) -> str:
    if isinstance(raw, str):
        return raw.strip()
    if isinstance(raw, list):
        return " ".join(p.strip() for p in raw if isinstance(p, str) and p.strip())
    return ""


def _sessions(file: Path, problems: list[Problem] | None) -> dict[str, Session]:
    out: dict[str, Session] = {}
    for number, item in read_jsonl(file, problems):
        tid = item.get("id")
        if not isinstance(tid, str) or not tid:
            report(
                problems, Problem(str(file), f"line {number}: no trajectory id", field=f"line {number}: id")
            )
            continue
        if tid in out:
            report(
                problems, Problem(str(file), f"line {number}: duplicate trajectory id {tid!r}", field="id")
            )
            continue
        try:
            out[tid] = _session(tid, item)
        except FieldError as err:
            report(
                problems,
                Problem(str(file), f"line {number}, trajectory {tid}: {err.message}", field=err.field),
            )
    return out


def _session(tid: str, item: dict[str, Any]) -> Session:
    states = item.get("states")
    if not isinstance(states, list) or not states:
        raise FieldError("states", "states missing or empty")
    goal = _goal(item.get("goal"))
    start_url = item.get("start_url")
    head = f"Task: {goal or '<goal not found>'}" + (f"\nStart URL: {start_url}" if start_url else "")
    messages = [Message(role="user", content=head, message_id=f"{tid}:goal")]
    for i, state in enumerate(states):
        if not isinstance(state, dict):
            raise FieldError(f"states[{i}]", "a state must be an object")
        text = state.get("accessibility_tree", state.get("text"))
        url = state.get("url")
        if not isinstance(text, str):
            raise FieldError(f"states[{i}].text", "a state needs its page text (accessibility_tree or text)")
        if not isinstance(url, str) or not url.strip():
            raise FieldError(f"states[{i}].url", "a state needs its url")
        thought = state.get("thought", state.get("thoughts"))
        action = state.get("action")
        lines = [f"URL: {url}"]
        if isinstance(thought, str) and thought.strip():
            lines.append(f"Thought: {thought.strip()}")
        if isinstance(action, str) and action.strip():
            lines.append(f"Action: {action.strip()}")
        lines.append(text)
        index = state.get("state_index", i)
        extra = {"url": url, "step": state.get("step", index)}
        if isinstance(state.get("screenshot"), str):
            extra["screenshot"] = state["screenshot"]
        messages.append(
            Message(role="assistant", content="\n".join(lines), message_id=f"{tid}:{index}", extra=extra)
        )
    if isinstance(item.get("outcome"), str) and item["outcome"].strip():
        messages.append(
            Message(role="user", content=f"Outcome: {item['outcome']}", message_id=f"{tid}:outcome")
        )
    extra = {k: item[k] for k in ("domain", "goal", "start_url", "outcome") if item.get(k) is not None}
    return Session(session_id=tid, date=None, messages=tuple(messages), extra=extra)
