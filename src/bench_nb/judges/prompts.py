"""The LLM judges' prompts: one rubric per normalised question type, at three strictness levels, written for
bench_nb.

| normalised type (``bench_nb.taxonomy``) | rubric (``standard``) |
|---|---|
| ``abstention`` (LoCoMo adversarial, LongMemEval ``_abs``) | correct only if the answer declines or says it does not know |
| ``temporal`` | contains the answer; equivalent date forms accepted; off-by-one in day/week/month/year counts tolerated |
| ``knowledge-update`` | the current (updated) value must be the answer; older values may be mentioned as history |
| ``preference`` | the reference is a rubric; correct if the response uses the user's own preferences it describes |
| anything else | contains the reference answer or an equivalent; partial answers are incorrect |

Strictness (``JUDGE_PROMPTS``), for the prompt sweep (``bench-nb rejudge RUN -j MODEL --judge-prompts
lenient,standard,strict``):

- ``lenient``: the style many published LoCoMo evaluations use: be generous, an answer that touches on the
  same topic as the reference, or gives the right time period in another form, counts as correct. Per type:
  the same generosity, with knowledge-update accepting any value the user held and preference any answer that
  mentions the user. Abstention keeps its rubric at every level (an answer to an unanswerable question is
  never "roughly right").
- ``standard``: the table above (the default; what ``prompt_set_hash()`` records).
- ``strict``: the reference's facts exactly, every item of a list, no contradicting or unsupported extra
  claim, no hedging; temporal: the same date or period exactly, no off-by-one tolerance; knowledge-update: only
  the current value, stated as current; preference: uses the user's preferences and covers the rubric's main
  points.

Every rubric asks for the same JSON verdict ``{"score": 0|1, "label": "correct"|"incorrect", "explanation"}``.
The rubric is chosen by the question's normalised type (``Question.norm_type``), never by a substring of the
raw type, so LongMemEval ``_abs`` questions are graded as abstention whatever their raw type.

``prompt_hashes()`` gives a short sha256 per rubric and ``prompt_set_hash(strictness)`` one for the whole set
of a level, recorded in runs so reports can show that every run was graded with the same prompts.
"""

from __future__ import annotations

import hashlib

from bench_nb.records import Question
from bench_nb.registry import did_you_mean

RubricName = str  # one of RUBRICS' keys

PREAMBLE = (
    "You grade an AI assistant's answer in a memory benchmark: the assistant answered a question about a "
    "user's past conversations, using what its memory system retrieved. Judge only whether the response "
    "answers the question correctly according to the reference; do not judge style or length."
)

OUTPUT_FORMAT = (
    "Reply with only a JSON object, no other text:\n"
    '{"score": 1, "label": "correct", "explanation": "<one sentence>"} when the response is correct, or\n'
    '{"score": 0, "label": "incorrect", "explanation": "<one sentence>"} when it is not.'
)

RUBRICS: dict[RubricName, str] = {
    "default": (
        "The response is correct if it contains the reference answer or an equivalent of it: the same facts, "
        "possibly paraphrased, in another format (e.g. '7 May 2023' for '2023-05-07'), or reached through "
        "intermediate steps that end in it. Extra detail that does not contradict the reference is fine. For "
        "a list, every item of the reference must be present, in any order. The response is incorrect if it "
        "gives only part of the required information, contradicts the reference, hedges between several "
        "answers, or says it does not know."
    ),
    "temporal": (
        "This question is about time: dates, durations, order of events. The response is correct if it "
        "contains the reference answer or an equivalent: the same date in another format, or a relative "
        "expression that clearly resolves to the same date given the question date. Do not penalise "
        "off-by-one errors in counts of days, weeks, months or years: if the reference is 18 days, 17 or 19 "
        "days is still correct. The response is incorrect if it gives a different date or period, only part "
        "of the required information, or says it does not know."
    ),
    "knowledge-update": (
        "The user's information changed over time, and the reference answer is the most recent value. The "
        "response is correct if the answer it gives as current matches the reference; it may also mention "
        "earlier values as history. It is incorrect if it gives only an outdated value, presents an outdated "
        "value as the current one, or says it does not know."
    ),
    "preference": (
        "The question asks for a recommendation or advice, and the reference is a rubric describing what a "
        "personalised response does: which of the user's own preferences, habits or circumstances it should "
        "use. The response is correct if it recalls and uses the user's personal information as the rubric "
        "describes; it does not need to cover every point. It is incorrect if it is generic advice that "
        "ignores the user's preferences, or contradicts them."
    ),
    "abstention": (
        "This question cannot be answered from the user's conversations: it asks about something never "
        "mentioned, or rests on a false premise. The response is correct if it declines to answer, says it "
        "does not know or that the information is not available, or points out the false premise. It is "
        "incorrect if it states an answer as fact, even a plausible or hedged one. The reference, when given, "
        "explains why the question is unanswerable or what a wrong answer would look like."
    ),
}

JUDGE_PROMPTS: tuple[str, ...] = ("lenient", "standard", "strict")
"""The strictness levels, most lenient first."""

_LENIENT_DEFAULT = (
    "Be generous in grading. The response is correct as long as it touches on the same topic as the reference "
    "answer: it may be shorter or longer, phrased differently, or give only part of the answer. Count it "
    "incorrect only if it is about something else entirely or says it does not know."
)
LENIENT_RUBRICS: dict[RubricName, str] = {
    "default": _LENIENT_DEFAULT,
    "temporal": (
        "This question is about time. Be generous in grading: the response is correct as long as it refers "
        "to the same time period as the reference answer, even in another format or roughly (the same month "
        "or season, a nearby date, a relative expression). Count it incorrect only if it refers to a clearly "
        "different period or says it does not know."
    ),
    "knowledge-update": (
        "The user's information changed over time; the reference answer is the most recent value. Be generous "
        "in grading: the response is correct if it gives the current value or any value the user held, as long "
        "as it is about the right thing. Count it incorrect only if it is about something else or says it does "
        "not know."
    ),
    "preference": (
        "The question asks for a recommendation, and the reference describes a personalised response. Be "
        "generous in grading: the response is correct if it mentions anything about the user's own "
        "preferences or circumstances. Count it incorrect only if it is entirely generic."
    ),
    "abstention": RUBRICS["abstention"],
}

STRICT_RUBRICS: dict[RubricName, str] = {
    "default": (
        "Grade strictly. The response is correct only if it states the reference answer's facts exactly "
        "(paraphrase and another format of the same fact are fine): every item of a list must be present, and "
        "no part of the response may contradict the reference or add a specific claim the reference does not "
        "support. The response is incorrect if it is partial, vague, approximate, hedges between answers, "
        "adds unsupported specifics, or says it does not know."
    ),
    "temporal": (
        "This question is about time. Grade strictly: the response is correct only if it gives the same date, "
        "duration or order as the reference, exactly (another format of the same date is fine; a relative "
        "expression must resolve to exactly that date given the question date). There is no tolerance for "
        "off-by-one errors: 17 days for 18 days is incorrect. A vaguer period (the right month for a day) is "
        "incorrect."
    ),
    "knowledge-update": (
        "The user's information changed over time; the reference answer is the most recent value. Grade "
        "strictly: the response is correct only if it gives exactly that value and presents it as the current "
        "one. It is incorrect if it gives an outdated value, several candidate values, or says it does not know."
    ),
    "preference": (
        "The question asks for a recommendation, and the reference is a rubric describing a personalised "
        "response. Grade strictly: the response is correct only if it uses the user's own preferences or "
        "circumstances as the rubric describes and covers the rubric's main points without contradicting any. "
        "Generic advice, or advice that merely mentions the user, is incorrect."
    ),
    "abstention": RUBRICS["abstention"],
}

_RUBRICS_BY_STRICTNESS: dict[str, dict[RubricName, str]] = {
    "lenient": LENIENT_RUBRICS,
    "standard": RUBRICS,
    "strict": STRICT_RUBRICS,
}


def check_strictness(strictness: str) -> str:
    """``strictness`` when it is one of ``JUDGE_PROMPTS``; ValueError naming the levels otherwise."""
    if strictness not in _RUBRICS_BY_STRICTNESS:
        raise ValueError(
            f"unknown judge prompt {strictness!r}{did_you_mean(strictness, JUDGE_PROMPTS)}; known: "
            f"{', '.join(JUDGE_PROMPTS)}"
        )
    return strictness


USER_TEMPLATE = """\
Question: {question}
Question date: {question_date}
{reference_label}: {reference}

Response to grade:
{hypothesis}"""

_REFERENCE_LABEL = {
    "preference": "Rubric for a good personalised response",
    "abstention": "Reference (why the question is unanswerable)",
}


def rubric_for(question: Question) -> RubricName:
    """The rubric that grades ``question``: chosen by its normalised type (LongMemEval ``_abs`` ids always
    get the abstention rubric)."""
    norm = question.norm_type
    if question.is_abstention or question.question_id.endswith("_abs"):
        return "abstention"
    return norm if norm in ("temporal", "knowledge-update", "preference") else "default"


def system_prompt(rubric: RubricName, strictness: str = "standard") -> str:
    """The system message of a rubric at a strictness level: preamble, rubric, output format."""
    rubrics = _RUBRICS_BY_STRICTNESS[check_strictness(strictness)]
    return f"{PREAMBLE}\n\n{rubrics[rubric]}\n\n{OUTPUT_FORMAT}"


def user_prompt(question: Question, hypothesis: str, rubric: RubricName | None = None) -> str:
    """The user message: the question, its date, the reference (or rubric) and the response to grade."""
    rubric = rubric or rubric_for(question)
    reference = question.answer.strip()
    if not reference:
        reference = (
            "(none: the question has no answer in the conversations)" if rubric == "abstention" else "(none)"
        )
    return USER_TEMPLATE.format(
        question=question.question.strip(),
        question_date=question.question_date or "not given",
        reference_label=_REFERENCE_LABEL.get(rubric, "Reference answer"),
        reference=reference,
        hypothesis=hypothesis.strip() or "(empty response)",
    )


def judge_messages(question: Question, hypothesis: str, strictness: str = "standard") -> list[dict[str, str]]:
    """The chat messages that ask a judge model to grade ``hypothesis`` (at a strictness level)."""
    rubric = rubric_for(question)
    return [
        {"role": "system", "content": system_prompt(rubric, strictness)},
        {"role": "user", "content": user_prompt(question, hypothesis, rubric)},
    ]


def custom_judge_messages(template: str, question: Question, hypothesis: str) -> list[dict[str, str]]:
    """Messages for a provider's own judge prompt (fields ``{question}``, ``{question_date}``,
    ``{answer}``, ``{hypothesis}``, ``{question_type}``); the JSON output format is appended so the verdict
    is read the same way."""
    text = (
        template.replace("{question}", question.question)
        .replace("{question_date}", question.question_date or "not given")
        .replace("{answer}", question.answer)
        .replace("{hypothesis}", hypothesis)
        .replace("{question_type}", question.question_type)
    )
    return [{"role": "user", "content": f"{text}\n\n{OUTPUT_FORMAT}"}]


def prompt_sha(text: str) -> str:
    """The short sha256 (16 hex digits) a prompt is recorded by."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def prompt_hashes(strictness: str = "standard") -> dict[RubricName, str]:
    """A short sha256 per rubric, over its system prompt and the user template."""
    return {name: prompt_sha(system_prompt(name, strictness) + "\n" + USER_TEMPLATE) for name in RUBRICS}


def prompt_set_hash(strictness: str = "standard") -> str:
    """One hash for the whole set of judge prompts at a strictness level."""
    return prompt_sha("\n".join(f"{k}={v}" for k, v in sorted(prompt_hashes(strictness).items())))


def custom_prompt_hash(template: str) -> str:
    """The hash of a provider's own judge prompt (with the output format appended)."""
    return prompt_sha(template + "\n" + OUTPUT_FORMAT)
