"""Question types: the raw labels benchmarks and MemoryBench use, and bench_nb's normalised set.

The normalised type groups questions across benchmarks and picks the judge rubric:

| normalised        | LoCoMo (true category)  | LongMemEval                                   |
|-------------------|-------------------------|-----------------------------------------------|
| single-hop        | 4 single-hop            | single-session-user, single-session-assistant |
| multi-hop         | 1 multi-hop             | multi-session                                 |
| temporal          | 2 temporal              | temporal-reasoning                            |
| open-domain       | 3 open-domain           |                                               |
| knowledge-update  |                         | knowledge-update                              |
| preference        |                         | single-session-preference                     |
| abstention        | 5 adversarial           | any question id ending in ``_abs``            |
| other             | anything else           |                                               |

BEAM's ten abilities (``BEAM_ABILITIES``) share a normalised name where the ability is the same one:
information_extraction is single-hop (LongMemEval calls its single-session types "information extraction"),
multi_session_reasoning is multi-hop (LongMemEval's multi-session), temporal_reasoning temporal,
knowledge_update knowledge-update, preference_following preference, abstention abstention. The other four
are BEAM's own: contradiction-resolution, event-ordering, instruction-following, summarization.
"""

from __future__ import annotations

from typing import Literal, get_args

NormType = Literal[
    "single-hop",
    "multi-hop",
    "temporal",
    "open-domain",
    "knowledge-update",
    "preference",
    "abstention",
    "contradiction-resolution",
    "event-ordering",
    "instruction-following",
    "summarization",
    "other",
]
NORM_TYPES: tuple[NormType, ...] = get_args(NormType)  # in the Literal's order

# BEAM's ten abilities (its probing_questions.json keys), in the paper's order, and their normalised names.
BEAM_TO_NORM: dict[str, NormType] = {
    "abstention": "abstention",
    "contradiction_resolution": "contradiction-resolution",
    "event_ordering": "event-ordering",
    "information_extraction": "single-hop",
    "instruction_following": "instruction-following",
    "knowledge_update": "knowledge-update",
    "multi_session_reasoning": "multi-hop",
    "preference_following": "preference",
    "summarization": "summarization",
    "temporal_reasoning": "temporal",
}
BEAM_ABILITIES: tuple[str, ...] = tuple(BEAM_TO_NORM)

# LoCoMo's category ids, as the paper and the data define them.
LOCOMO_CATEGORIES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
# The labels MemoryBench (118209a) gives the same ids: wrong for 1-4 (see docs/memorybench-format.md).
MEMORYBENCH_LOCOMO_LABELS: dict[int, str] = {
    1: "single-hop",
    2: "multi-hop",
    3: "temporal",
    4: "world-knowledge",
    5: "adversarial",
}
MEMORYBENCH_LABEL_TO_CATEGORY: dict[str, int] = {v: k for k, v in MEMORYBENCH_LOCOMO_LABELS.items()}

_LOCOMO_TO_NORM: dict[str, NormType] = {
    "multi-hop": "multi-hop",
    "temporal": "temporal",
    "open-domain": "open-domain",
    "single-hop": "single-hop",
    "adversarial": "abstention",
}
_LONGMEMEVAL_TO_NORM: dict[str, NormType] = {
    "single-session-user": "single-hop",
    "single-session-assistant": "single-hop",
    "multi-session": "multi-hop",
    "temporal-reasoning": "temporal",
    "knowledge-update": "knowledge-update",
    "single-session-preference": "preference",
}


def locomo_norm_type(category: int) -> NormType:
    """Normalised type of a LoCoMo category id (1-5)."""
    return _LOCOMO_TO_NORM.get(LOCOMO_CATEGORIES.get(category, ""), "other")


def normalize_question_type(
    raw: str | None,
    *,
    question_id: str = "",
    locomo_questions: bool = False,
    memorybench_labels: bool = False,
) -> NormType:
    """Map a raw question type to bench_nb's normalised set.

    Args:
        raw: the type as the run or dataset wrote it.
        question_id: LongMemEval marks abstention questions by an ``_abs`` suffix on the id.
        locomo_questions: LoCoMo's questions (``BenchmarkTraits.locomo_questions``): a number is its category
            id.
        memorybench_labels: with ``locomo_questions``, the raw type is one of MemoryBench's (wrong) LoCoMo
            labels, which are translated back to the true category first.
    """
    label = (raw or "").strip().lower()
    if question_id.endswith("_abs"):
        return "abstention"
    if memorybench_labels and locomo_questions and label in MEMORYBENCH_LABEL_TO_CATEGORY:
        return locomo_norm_type(MEMORYBENCH_LABEL_TO_CATEGORY[label])
    if label in _LOCOMO_TO_NORM:
        return _LOCOMO_TO_NORM[label]
    if label in _LONGMEMEVAL_TO_NORM:
        return _LONGMEMEVAL_TO_NORM[label]
    if label in BEAM_TO_NORM:
        return BEAM_TO_NORM[label]
    if label in NORM_TYPES:
        return label  # type: ignore[return-value,unused-ignore]
    if label.isdigit() and locomo_questions:
        return locomo_norm_type(int(label))
    # Substring rules, as judges pick rubrics: keeps custom benchmarks' types useful.
    for needle, norm in (
        ("abstain", "abstention"),
        ("abstention", "abstention"),
        ("adversarial", "abstention"),
        ("unanswerable", "abstention"),
        ("temporal", "temporal"),
        ("update", "knowledge-update"),
        ("preference", "preference"),
        ("multi", "multi-hop"),
        ("single", "single-hop"),
        ("open", "open-domain"),
        ("world", "open-domain"),
    ):
        if needle in label:
            return norm  # type: ignore[return-value]
    return "other"


# LongMemEval's types as MemoryBench registers them. Aliases and descriptions are ours: the shared example
# only pins the LoCoMo registry (see docs/decisions.md).
# Used by the LongMemEval reader and by MemoryBench's report.json.
LONGMEMEVAL_TYPE_REGISTRY: dict[str, dict[str, str]] = {
    t: {"id": t, "alias": a, "description": d}
    for t, a, d in (
        ("single-session-user", "ss-user", "Single-session user facts"),
        ("single-session-assistant", "ss-assistant", "Single-session assistant facts"),
        ("single-session-preference", "ss-preference", "Single-session preferences"),
        ("multi-session", "multi", "Multi-session reasoning"),
        ("temporal-reasoning", "temporal", "Temporal reasoning"),
        ("knowledge-update", "update", "Knowledge updates"),
    )
}
