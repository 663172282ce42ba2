"""LLM judges: a model grades an answer with the rubric of the question's type (``bench_nb.judges.prompts``).

    judge = make_llm_judge("gpt-4o")
    verdict = judge.judge(question, hypothesis)   # Verdict(score, label, explanation, judge="gpt-4o")

The reply must be the JSON verdict ``{score, label, explanation}``. A reply that cannot be read is asked again
(the bad reply and a reminder of the format are added to the conversation, so each retry is its own cache
entry and a re-judge replays the same sequence); still unreadable after ``max_parse_attempts`` it becomes
``Verdict(score=None, label="unscored")``: excluded from accuracy, counted and shown, never "incorrect".
A failed HTTP call (after the client's retries) raises ``JudgeError``: the question's evaluation failed and
can be retried, which is different from an unscored reply.

A provider's own judge prompt is used only with ``allow_custom_prompt=True``; the judge then says so
(``custom_prompt``), and the run must record ``benchNb.customPrompt = true``.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar

from bench_nb.errors import JudgeError, ModelError
from bench_nb.judges.base import build_judge
from bench_nb.judges.prompts import (
    check_strictness,
    custom_judge_messages,
    custom_prompt_hash,
    judge_messages,
    prompt_hashes,
    prompt_set_hash,
)
from bench_nb.models.aliases import resolve_model
from bench_nb.models.client import Completion, LLMClient, UsageTotals
from bench_nb.records import Question, Verdict

log = logging.getLogger(__name__)

FORMAT_REMINDER = (
    "Your reply could not be read as the verdict. Reply with only the JSON object "
    '{"score": 0 or 1, "label": "correct" or "incorrect", "explanation": "<one sentence>"} and nothing else.'
)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.IGNORECASE)
_LABELS = {"correct": 1, "incorrect": 0}


def json_object(text: str) -> dict[str, Any] | None:
    """The JSON object in a model's reply: alone, in a code fence, or with text around it (from its first
    ``{`` to its last ``}``); None when there is none, or it is not valid JSON or not an object."""
    body = _FENCE.sub("", text.strip())
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        data = json.loads(body[start : end + 1])
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def parse_verdict(text: str) -> tuple[int, str, str] | None:
    """``(score, label, explanation)`` from a judge's reply, or None when it is not a usable verdict.

    Accepts the JSON object alone, in a code fence, or with text around it; ``score`` as 0/1, true/false or
    "0"/"1"; a missing label or score is derived from the other. Any other score (2, 0.5, null, "yes"), an
    unknown label, or a score and label that disagree are not a usable verdict.
    """
    data = json_object(text)
    if data is None:
        return None
    score = _score(data.get("score"))
    if "score" in data and score is None:  # {"score": 2, "label": "correct"} is not a verdict
        return None
    label_raw = data.get("label")
    label = label_raw.strip().lower() if isinstance(label_raw, str) else None
    if label is not None and label not in _LABELS:
        return None
    if score is None and label is None:
        return None
    if score is None:
        score = _LABELS[label]  # type: ignore[index]
    if label is None:
        label = "correct" if score == 1 else "incorrect"
    if _LABELS[label] != score:
        return None
    explanation = data.get("explanation", "")
    return score, label, explanation if isinstance(explanation, str) else json.dumps(explanation)


def _score(value: Any) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float) and value in (0, 1):
        return int(value)
    if isinstance(value, str) and value.strip() in ("0", "1"):
        return int(value.strip())
    return None


@dataclass(frozen=True)
class Graded:
    """A verdict and the model calls that produced it (one per parse attempt)."""

    verdict: Verdict
    completions: tuple[Completion, ...]


_T = TypeVar("_T")


class ModelJudge:
    """What the judges that ask a model share (``LLMJudge``, BEAM's ``rubric:<model>``, LongMemEval-V2's
    ``lme-v2:<model>``): the model (``spec``; None for ``lme-v2`` offline), the client its calls go through, the
    sampling settings, how many readings a reply gets, and the usage totals each call adds to."""

    custom_prompt = False

    def __init__(
        self,
        alias: str | None,
        name: str,
        *,
        client: LLMClient | None = None,
        base_url: str | None = None,
        max_parse_attempts: int = 3,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> None:
        self.spec: Any = None if alias is None else resolve_model(alias, base_url=base_url)
        self.name = name
        self._client = client
        self.max_parse_attempts = max(1, max_parse_attempts)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.usage = UsageTotals()

    @cached_property
    def client(self) -> LLMClient:
        """The LLM client the judge calls: the one given (a run's), else its own from the environment."""
        return self._client or LLMClient()

    def judge(self, question: Question, hypothesis: str, **grading: Any) -> Verdict:
        """Grade ``hypothesis`` as an answer to ``question`` (``grade`` without the calls; ``grading``: what
        ``grade`` takes besides, the LLM judge's ``replicate``)."""
        return self.grade(question, hypothesis, **grading).verdict

    def grade(self, question: Question, hypothesis: str) -> Graded:
        """The verdict and the model calls it took."""
        raise NotImplementedError

    def ask(
        self,
        question_id: str,
        messages: list[dict[str, str]],
        parse: Callable[[str], _T | None],
        reminder: str,
        calls: list[Completion],
        **extra: Any,
    ) -> _T | None:
        """Ask the model until ``parse`` reads its reply, at most ``max_parse_attempts`` times: each
        unreadable reply and then ``reminder`` are added to the conversation (so each retry is its own cache
        entry and a re-judge replays the same sequence). Every call is appended to ``calls`` and counted in
        ``usage``. ``extra`` goes to the client (``replicate``). None: no reply could be read.

        Raises:
            JudgeError: a call failed (after the client's retries), naming the judge and the question.
        """
        for _ in range(self.max_parse_attempts):
            try:
                c = self.client.complete(
                    self.spec,
                    messages,
                    json=True,
                    temperature=self.temperature,
                    max_tokens=self.max_tokens,
                    **extra,
                )
            except ModelError as err:
                raise JudgeError(f"judge {self.name}, question {question_id}: {err}") from err
            calls.append(c)
            self.usage.add(c)
            parsed = parse(c.text)
            if parsed is not None:
                return parsed
            messages = [
                *messages,
                {"role": "assistant", "content": c.text},
                {"role": "user", "content": reminder},
            ]
        return None

    def unreadable(self, calls: Sequence[Completion]) -> str:
        """How an unscored verdict shows the last reply no reading could parse (200 characters of it)."""
        shown = " ".join(calls[-1].text.split())[:200]
        return f"after {self.max_parse_attempts} attempts: {shown!r}"


class LLMJudge(ModelJudge):
    """Grades answers with a model (see the module docstring).

    Attributes:
        name: the judge's name in runs (the model alias).
        prompt_hash: one hash of the prompts this judge uses (the standard set, or the custom prompt).
        prompt_hashes: the hash of each rubric.
        custom_prompt: True when a provider's own prompt is in use.
        usage: calls, tokens and cost so far.
    """

    def __init__(
        self,
        alias: str,
        *,
        prompt: str | None = None,
        allow_custom_prompt: bool = False,
        name: str | None = None,
        judge_prompt: str = "standard",
        **model: Any,
    ) -> None:
        super().__init__(alias, name or judge_name(alias, judge_prompt), **model)
        self.judge_prompt = check_strictness(judge_prompt)
        if prompt is not None and not allow_custom_prompt:
            log.warning(
                "judge %s: a custom judge prompt was given but not allowed; using the standard prompts", alias
            )
            prompt = None
        self.custom_template = prompt
        self.custom_prompt = prompt is not None
        if prompt is not None:
            self.prompt_hash = custom_prompt_hash(prompt)
            self.prompt_hashes = {"custom": self.prompt_hash}
        else:
            self.prompt_hash = prompt_set_hash(judge_prompt)
            self.prompt_hashes = prompt_hashes(judge_prompt)

    replicable = True  # grading again can give another verdict: judge replicates (judges.base)

    def grade(self, question: Question, hypothesis: str, *, replicate: int = 1) -> Graded:
        """``judge`` with the model calls it made (tokens and cost of each). ``replicate`` n > 1 is the n-th
        grading of the same answer: its replies are cached apart from the first's."""
        extra: dict[str, Any] = {} if replicate == 1 else {"replicate": replicate}
        if self.custom_template is not None:
            messages = custom_judge_messages(self.custom_template, question, hypothesis)
        else:
            messages = judge_messages(question, hypothesis, self.judge_prompt)
        completions: list[Completion] = []
        parsed = self.ask(
            question.question_id, messages, parse_verdict, FORMAT_REMINDER, completions, **extra
        )
        if parsed is not None:
            score, label, explanation = parsed
            verdict = Verdict(score, label, explanation, judge=self.name)  # type: ignore[arg-type]
            return Graded(verdict, tuple(completions))
        explanation = f"unparseable judge reply {self.unreadable(completions)}"
        return Graded(Verdict(None, "unscored", explanation, judge=self.name), tuple(completions))


# The options of every judge that asks a model (``ModelJudge``), and those of the LLM judge.
MODEL_OPTIONS = frozenset({"client", "base_url", "max_parse_attempts", "temperature", "max_tokens", "name"})
_OPTIONS = MODEL_OPTIONS | {"prompt", "allow_custom_prompt", "judge_prompt"}


def judge_name(alias: str, judge_prompt: str = "standard") -> str:
    """The name an LLM judge gets in runs: the alias, with ``[lenient]`` or ``[strict]`` after it for a
    prompt other than the standard one (``gpt-4o-mini[strict]``)."""
    return alias if judge_prompt == "standard" else f"{alias}[{judge_prompt}]"


def make_llm_judge(alias: str, **opts: Any) -> LLMJudge:
    """The LLM judge for a model alias (the registry's factory for every non-built-in judge name).

    Options: ``client``, ``base_url``, ``prompt`` (a provider's own judge prompt) with
    ``allow_custom_prompt``, ``max_parse_attempts``, ``temperature``, ``max_tokens``, ``name``,
    ``judge_prompt`` (``lenient``, ``standard`` or ``strict``: ``bench_nb.judges.prompts``).

    Raises:
        JudgeError: an unknown model alias or option.
    """
    return build_judge(repr(alias), LLMJudge, alias, opts, _OPTIONS)
