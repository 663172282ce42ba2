r"""LongMemEval-V2's scoring rules: each question names its own in ``eval_function`` (``Question.extra``).

Written from the definitions in the benchmark's ``evaluation/qa_eval_metrics.py`` and ``evaluation/harness.py``
(github.com/xiaowu0162/LongMemEval-V2, Apache-2.0); the two judge prompts are quoted from there, since the judge
must be pinned. A spec is ``name|key=value|...`` (``norm_phrase_set_match|separators=,;``).

- The reader's final answer is the content of the last ``\boxed{...}`` (nested braces kept), else the whole
  reply, stripped (``extract_boxed_answer``). A final answer of ``UNKNOWN`` (any case) is always scored
  incorrect, whatever the rule.
- ``normalize_phrase``: lowercase; ``-`` and ``_`` to spaces; ``,`` and ``;`` to spaces; every character that
  is neither a word character nor whitespace removed; whitespace collapsed. Each option (``lower``,
  ``normalize_hyphen``, ``strip_punct``) can be turned off in the spec.
- ``norm_phrase_set_match``: the answer split on the separators (default ``,`` and ``;``), each part normalised,
  empty parts dropped; correct when every part occurs in the normalised final answer on word boundaries.
  ``norm_phrase_set_match_ordered``: the same, each part found after the end of the previous part's match.
  With ``require_non_empty`` (default) an empty answer or prediction is incorrect.
- ``mc_choice_match``: the content of a ``\boxed{...}`` in the prediction (if any) with the words "choice"
  and "option" and the ``strip_chars`` (default ``.``) removed, stripped, uppercased, equals the uppercased
  answer.
- ``mc_choice_set_match``: the runs of letters of the uppercased prediction, filler words (AND, ANSWER,
  CHOICE, FINAL, LETTER, OPTION and plurals) dropped, split into letters; correct when the set of letters
  equals the answer's.
- ``llm_abstention_checker`` and ``llm_gotchas_checker``: a model grades the whole reply against the reference
  with the official prompts (``lme-v2:<model alias>``) and replies ``{"label": 0 or 1, "reason": ...}``. The
  offline judge ``lme-v2`` has no model: such a question is ``unscored`` (never incorrect); no deterministic
  fallback is defined.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from bench_nb.judges.base import build_judge
from bench_nb.judges.llm import MODEL_OPTIONS, Graded, ModelJudge, json_object
from bench_nb.judges.prompts import prompt_sha
from bench_nb.models.client import Completion
from bench_nb.records import Question, Verdict

DEFAULT_SEPARATORS: tuple[str, ...] = (",", ";")
LLM_RULES: tuple[str, ...] = ("llm_abstention_checker", "llm_gotchas_checker")
DETERMINISTIC_RULES: tuple[str, ...] = (
    "norm_phrase_set_match",
    "norm_phrase_set_match_ordered",
    "mc_choice_match",
    "mc_choice_set_match",
)
_FILLER = frozenset(
    {"AND", "ANSWER", "ANSWERS", "CHOICE", "CHOICES", "FINAL", "LETTER", "LETTERS", "OPTION", "OPTIONS"}
)


def normalize_phrase(
    text: Any, *, lower: bool = True, normalize_hyphen: bool = True, strip_punct: bool = True
) -> str:
    """LME-V2's phrase normalisation (see the module docstring); None is ""."""
    if text is None:
        return ""
    s = str(text)
    if lower:
        s = s.lower()
    if normalize_hyphen:
        s = s.replace("-", " ").replace("_", " ")
    s = re.sub(r"[,;]", " ", s)
    if strip_punct:
        s = re.sub(r"[^\w\s]", "", s)
    return " ".join(s.split())


def split_phrases(
    text: Any, *, separators: Iterable[str] = DEFAULT_SEPARATORS, **normalize: bool
) -> list[str]:
    """The answer's parts: split on any separator, each normalised, empty ones dropped."""
    if text is None:
        return []
    seps = list(separators)
    parts = re.split("|".join(re.escape(s) for s in seps), str(text)) if seps else [str(text)]
    return [p for p in (normalize_phrase(part, **normalize) for part in parts) if p]


def phrase_set_match(
    prediction: Any,
    answer: Any,
    *,
    ordered: bool = False,
    separators: Iterable[str] = DEFAULT_SEPARATORS,
    require_non_empty: bool = True,
    **normalize: bool,
) -> bool:
    """``norm_phrase_set_match`` (``ordered=False``) and ``norm_phrase_set_match_ordered``."""
    pred = normalize_phrase(prediction, **normalize)
    phrases = split_phrases(answer, separators=separators, **normalize)
    if require_non_empty and (not pred or not phrases):
        return False
    start = 0
    for phrase in phrases if ordered else sorted(set(phrases)):
        found = re.search(rf"\b{re.escape(phrase)}\b", pred[start:] if ordered else pred)
        if found is None:
            return False
        if ordered:
            start += found.end()
    return True


def mc_choice_match(
    prediction: Any, answer: Any, *, strip_chars: str = ".", require_non_empty: bool = True
) -> bool:
    """Single choice: the chosen letter (or text) equals the answer, case-insensitively."""
    if prediction is None or answer is None:
        return False
    pred = str(prediction)
    boxed = re.search(r"\\boxed\{([^}]*)\}", pred.lower())
    chosen = re.sub(r"\b(choice|option)\b", "", boxed.group(1) if boxed else pred, flags=re.IGNORECASE)
    for ch in strip_chars:
        chosen = chosen.replace(ch, "")
    chosen, expected = chosen.strip().upper(), str(answer).strip().upper()
    if require_non_empty and (not chosen or not expected):
        return False
    return chosen == expected


def choice_letters(text: Any) -> list[str]:
    """The letters a multi-select answer names (filler words such as AND, OPTION, ANSWER dropped)."""
    if text is None:
        return []
    letters: list[str] = []
    for run in re.findall(r"[A-Z]+", str(text).upper()):
        if run not in _FILLER:
            letters.extend(run)
    return letters


def mc_choice_set_match(prediction: Any, answer: Any, *, require_non_empty: bool = True) -> bool:
    """Multiple choice: the same set of letters."""
    pred, gold = choice_letters(prediction), choice_letters(answer)
    if require_non_empty and (not pred or not gold):
        return False
    return set(pred) == set(gold)


def extract_boxed_answer(text: str) -> str:
    r"""The content of the last ``\boxed{...}`` (braces balanced), stripped; the whole text, stripped, when
    there is none or it is empty."""
    start = text.rfind("\\boxed{")
    if start < 0:
        return text.strip()
    depth, out = 1, []
    for ch in text[start + len("\\boxed{") :]:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth == 0:
            break
        out.append(ch)
    parsed = "".join(out).strip()
    return parsed or text.strip()


def is_unknown(parsed_answer: str) -> bool:
    """The final answer is UNKNOWN (any case, surrounding spaces ignored)."""
    return parsed_answer.strip().lower() == "unknown"


def _option_value(key: str, value: str) -> Any:
    low = value.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    if key in ("separators", "separator"):
        stripped = value.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            return json.loads(stripped)
        return [ch for ch in value if not ch.isspace()]
    try:
        return float(value) if "." in value else int(value)
    except ValueError:
        return value


def parse_eval_function(spec: str) -> tuple[str, dict[str, Any]]:
    """``"name|key=value|..."`` -> ``(name, options)``; a value true/false/none becomes a bool/None, a number a
    number, ``separators`` a list of characters (or a JSON list).

    Raises:
        ValueError: an empty spec, an option without ``=``, a repeated option, or an unknown rule.
    """
    parts = [p.strip() for p in str(spec).split("|")]
    name = parts[0]
    if name not in DETERMINISTIC_RULES + LLM_RULES:
        raise ValueError(f"unknown eval function {name!r}")
    options: dict[str, Any] = {}
    for part in parts[1:]:
        if not part:
            continue
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"eval function option {part!r} is not key=value")
        if key in options:
            raise ValueError(f"eval function option {key!r} given twice")
        options[key] = _option_value(key, value.strip())
    return name, options


_RULE_OPTIONS = {
    "norm_phrase_set_match": {"separators", "require_non_empty", "lower", "normalize_hyphen", "strip_punct"},
    "mc_choice_match": {"strip_chars", "require_non_empty"},
    "mc_choice_set_match": {"require_non_empty"},
}
_RULE_OPTIONS["norm_phrase_set_match_ordered"] = _RULE_OPTIONS["norm_phrase_set_match"]


def score_deterministic(spec: str, reply: str, answer: str) -> bool:
    """The official score of a reply under a deterministic rule (the final answer extracted first; UNKNOWN is
    always False). Options a rule does not take are ignored, as the official functions ignore them.

    Raises:
        ValueError: a bad spec, or an LLM-judged rule.
    """
    name, options = parse_eval_function(spec)
    if name in LLM_RULES:
        raise ValueError(f"{name} is judged by a model")
    parsed = extract_boxed_answer(reply)
    if is_unknown(parsed):
        return False
    opts = {k: v for k, v in options.items() if k in _RULE_OPTIONS[name]}
    if name == "mc_choice_match":
        return mc_choice_match(parsed, answer, **opts)
    if name == "mc_choice_set_match":
        return mc_choice_set_match(parsed, answer, **opts)
    return phrase_set_match(parsed, answer, ordered=name.endswith("_ordered"), **opts)


# The official judge prompts (evaluation/qa_eval_metrics.py, LongMemEval-V2, Apache-2.0), quoted verbatim.
ABSTENTION_SYSTEM = (
    "You are a strict grader for flawed-premise (abstention) questions. "
    "Judge whether a model answer correctly identifies that the question premise is wrong, "
    "consistent with the reference answer. "
    "If the model follows the flawed premise and gives a concrete answer under that premise, "
    "it must be graded 0. "
    "If the model's final answer is just UNKNOWN / cannot determine without identifying the flaw, grade 0. "
    "If the model is contradictory (both rejects premise and also gives a concrete premise-following answer), "
    "grade 0. "
    "Paraphrases are allowed when they preserve the same core flaw described by the reference answer."
)
GOTCHAS_SYSTEM = (
    "You are a strict grader for gotchas-style insight questions. "
    "The reference answer describes the key insight(s). "
    "Grade 1 if the model response includes at least one correct insight point from the reference answer "
    "(paraphrase allowed), and does not contradict any reference point. "
    "If the model's direction is wrong, or it contains contradictions against any reference point, grade 0. "
    "If the model gives multiple points, partial coverage is enough for 1 as long as no contradictions appear."
)
_BLOCKS = (
    "Question:\n{question}\n\n"
    "Reference answer ({reference_kind}):\n{reference}\n\n"
    "Model full response:\n{response}\n\n"
    "Model extracted final answer:\n{final}\n\n"
)
_JSON_ONLY = 'Output JSON only:\n{{"label": 0 or 1, "reason": "short rationale"}}'
ABSTENTION_USER = (
    "Evaluate whether the model correctly handled a flawed-premise question.\n\n"
    + _BLOCKS.replace("{reference_kind}", "the expected flaw-aware conclusion")
    + "Scoring rubric:\n"
    "- Label 1 only if the model clearly identifies the flawed premise and reaches a conclusion "
    "equivalent to the reference answer.\n"
    "- Label 1 also if the model explicitly says it lacks access to the user's specific "
    "live environment/instance/configuration and therefore cannot verify, provided it does not "
    "give a concrete premise-following answer.\n"
    "- Label 0 if the model follows the flawed premise and gives a concrete answer under that premise.\n"
    "- Label 0 for generic UNKNOWN/insufficient-info replies that do not identify a flaw and do not "
    "make the explicit environment-access limitation clear.\n"
    "- Label 0 if contradictory.\n\n" + _JSON_ONLY
)
GOTCHAS_USER = (
    "Evaluate whether the model answer captures the gotcha insight.\n\n"
    + _BLOCKS.replace("{reference_kind}", "insight points")
    + "Scoring rubric:\n"
    "- Label 1 if the model includes at least one correct insight point from the reference answer "
    "(paraphrase acceptable), and does not contradict any reference point.\n"
    "- Label 1 even if only part of a multi-point reference answer is covered, as long as there is "
    "no contradiction.\n"
    "- Label 0 if direction is wrong (suggests opposite action/cause), even if some wording overlaps.\n"
    "- Label 0 if any point in the model response contradicts any reference point.\n"
    "- Label 0 if the response is irrelevant or generic without insight.\n\n" + _JSON_ONLY
)
LABEL_REMINDER = (
    'Your reply could not be read. Output JSON only: {"label": 0 or 1, "reason": "short rationale"}'
)
_PROMPTS = {
    "llm_abstention_checker": (ABSTENTION_SYSTEM, ABSTENTION_USER),
    "llm_gotchas_checker": (GOTCHAS_SYSTEM, GOTCHAS_USER),
}


def judge_messages(rule: str, question: str, reference: str, reply: str) -> list[dict[str, str]]:
    """The official judge conversation for an LLM rule: the whole reply and its extracted final answer."""
    system, user = _PROMPTS[rule]
    final = extract_boxed_answer(reply) or reply.strip()
    text = user.format(
        question=question.strip(), reference=reference.strip(), response=reply.strip(), final=final
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": text}]


PROMPT_HASHES: dict[str, str] = {rule: prompt_sha(json.dumps(list(p))) for rule, p in _PROMPTS.items()}


def parse_label(text: str) -> tuple[int, str] | None:
    """``(label, reason)`` from a judge reply: the JSON object (in a code fence or with text around it) with
    ``label`` 0 or 1, else a ``label: 0|1`` written out; None when there is neither."""
    body = text.strip()
    if body.startswith("```") and body.endswith("```"):
        body = "\n".join(body.splitlines()[1:-1]).strip()
    data = json_object(body)
    if data is not None and data.get("label") in (0, 1, "0", "1") and not isinstance(data["label"], bool):
        reason = data.get("reason")
        return int(data["label"]), reason.strip() if isinstance(reason, str) else ""
    loose = re.search(r"""["']?\blabel\b["']?\s*[:=]\s*([01])\b""", body, flags=re.IGNORECASE)
    return (int(loose.group(1)), body) if loose else None


class LmeV2Judge(ModelJudge):
    """LongMemEval-V2's per-question rules (``lme-v2`` offline, ``lme-v2:<alias>`` with a model for the two
    LLM-judged rules; see the module docstring)."""

    def __init__(self, alias: str | None = None, *, name: str | None = None, **model: Any) -> None:
        super().__init__(alias, name or (f"lme-v2:{alias}" if alias else "lme-v2"), **model)
        self.prompt_hashes = dict(PROMPT_HASHES) if alias else {}

    def grade(self, question: Question, hypothesis: str) -> Graded:
        """The verdict and the model calls it took (none for a deterministic rule)."""
        spec = question.extra.get("eval_function")
        if not isinstance(spec, str) or not spec.strip():
            return self._unscored("the question has no eval_function (not a LongMemEval-V2 question)")
        try:
            rule, _ = parse_eval_function(spec)
        except ValueError as err:
            return self._unscored(f"eval_function {spec!r}: {err}")
        final = extract_boxed_answer(hypothesis)
        if is_unknown(final):
            return Graded(Verdict(0, "incorrect", "the final answer is UNKNOWN", judge=self.name), ())
        if rule in DETERMINISTIC_RULES:
            ok = score_deterministic(spec, hypothesis, question.answer)
            why = f"{rule}: final answer {final[:80]!r} {'matches' if ok else 'does not match'} {question.answer!r}"
            return Graded(Verdict(int(ok), "correct" if ok else "incorrect", why, judge=self.name), ())
        if not hypothesis.strip() or not question.answer.strip():
            return Graded(Verdict(0, "incorrect", f"{rule}: empty answer or reference", judge=self.name), ())
        if self.spec is None:
            return self._unscored(f"{rule} needs a model judge (-j lme-v2:<model alias>); unscored offline")
        messages = judge_messages(rule, question.question, question.answer, hypothesis)
        calls: list[Completion] = []
        got = self.ask(question.question_id, messages, parse_label, LABEL_REMINDER, calls)
        if got is not None:
            label, reason = got
            verdict = Verdict(
                label, "correct" if label else "incorrect", f"{rule}: {reason}", judge=self.name
            )
            return Graded(verdict, tuple(calls))
        return self._unscored(f"{rule}: unparseable reply {self.unreadable(calls)}", calls)

    def _unscored(self, why: str, calls: Sequence[Completion] = ()) -> Graded:
        return Graded(Verdict(None, "unscored", why, judge=self.name), tuple(calls))


def make_lmev2_judge(alias: str | None = None, **opts: Any) -> LmeV2Judge:
    """``lme-v2`` (alias None: offline, LLM-judged rules unscored) or ``lme-v2:<alias>``.

    Raises:
        JudgeError: an unknown option or model alias.
    """
    label = f"'lme-v2{':' + alias if alias else ''}'"
    return build_judge(label, LmeV2Judge, alias, opts, MODEL_OPTIONS if alias else {"name"})
