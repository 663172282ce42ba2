"""The LLM judges' prompts: one rubric per normalised question type, written for bench_nb.

| normalised type (``bench_nb.taxonomy``) | rubric |
|---|---|
| ``abstention`` (LoCoMo adversarial, LongMemEval ``_abs``) | correct only if the answer declines or says it does not know |
| ``temporal`` | contains the answer; equivalent date forms accepted; off-by-one in day/week/month/year counts tolerated |
| ``knowledge-update`` | the current (updated) value must be the answer; older values may be mentioned as history |
| ``preference`` | the reference is a rubric; correct if the response uses the user's own preferences it describes |
| anything else | contains the reference answer or an equivalent; partial answers are incorrect |

Every rubric asks for the same JSON verdict ``{"score": 0|1, "label": "correct"|"incorrect", "explanation"}``.
The rubric is chosen by the question's normalised type (``Question.norm_type``), never by a substring of the
raw type, so LongMemEval ``_abs`` questions are graded as abstention whatever their raw type.

``prompt_hashes()`` gives a short sha256 per rubric and ``PROMPT_SET_HASH`` one for the whole set, recorded in
runs so reports can show that every run was graded with the same prompts.
"""

from __future__ import annotations

import hashlib

from bench_nb.records import Question

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


def system_prompt(rubric: RubricName) -> str:
    """The system message of a rubric: preamble, rubric, output format."""
    return f"{PREAMBLE}\n\n{RUBRICS[rubric]}\n\n{OUTPUT_FORMAT}"


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


def judge_messages(question: Question, hypothesis: str) -> list[dict[str, str]]:
    """The chat messages that ask a judge model to grade ``hypothesis``."""
    rubric = rubric_for(question)
    return [
        {"role": "system", "content": system_prompt(rubric)},
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


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def prompt_hashes() -> dict[RubricName, str]:
    """A short sha256 per rubric, over its system prompt and the user template."""
    return {name: _sha(system_prompt(name) + "\n" + USER_TEMPLATE) for name in RUBRICS}


PROMPT_SET_HASH: str = _sha("\n".join(f"{k}={v}" for k, v in sorted(prompt_hashes().items())))
"""One hash for the whole set of standard judge prompts."""


def custom_prompt_hash(template: str) -> str:
    """The hash of a provider's own judge prompt (with the output format appended)."""
    return _sha(template + "\n" + OUTPUT_FORMAT)
