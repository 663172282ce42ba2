"""The LLM prober and the LLM judge of the ROI benchmark, through ``bench_nb.models``' client.

Every model call is returned as a :class:`ModelUsage` so the caller meters it (a reply served from the
response cache made no call and is not metered). Keys come from the environment only (see
``bench_nb.models.settings``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench_nb.errors import ModelError
from bench_nb.judges.llm import json_object
from bench_nb.models.aliases import check_key as client_check_key
from bench_nb.models.aliases import resolve_model
from bench_nb.models.client import Completion, LLMClient
from bench_nb.roi.judges import JudgeReply, JudgmentFailed
from bench_nb.roi.memory import Memory
from bench_nb.roi.probers import ProberFailed, ProberReply
from bench_nb.roi.records import Judgment, ModelUsage, Probe, ProbeDraft, ProbeMode, Recall

PROBER_SYSTEM = (
    "You write holdout questions to test an AI agent's project memory. For each memory you are given, write one "
    "natural question a teammate might ask that this memory, and realistically only this memory, answers. Do not "
    "quote the memory and do not give its answer away in the question. Reply with a JSON object "
    '{"questions": [{"id": "<memory id>", "question": "<question>"}]}, one entry per memory, using only the ids given.'
)

JUDGE_SYSTEM = (
    "You judge whether an AI agent needed its project memory to answer a question. You get the question, the "
    "reference memory it was written from, and the memories a recall surfaced. Decide two things: "
    "with_memory: could the question be answered correctly from the surfaced memories alone? "
    "without_memory: could a competent agent answer it correctly without any project memory, from general "
    "knowledge alone? Reply with a JSON object "
    '{"with_memory": true|false, "without_memory": true|false, "confidence": <0..1>, "explanation": "<one sentence>"}.'
)


def check_key(model: str) -> None:
    """Fail before any recall when ``model`` needs a key the environment does not hold.

    Raises:
        ModelError: the model's key variable is unset (or the model is unknown).
    """
    spec = resolve_model(model)
    try:
        client_check_key(spec)
    except ModelError as err:
        raise ModelError(f"{err}; or run the ROI prober and judge keyless (--deterministic)") from None


def _usage(reply: Completion) -> tuple[ModelUsage, ...]:
    return () if reply.cached else (ModelUsage(reply.model, reply.input_tokens, reply.output_tokens),)


def _json_object(text: str) -> dict[str, Any]:
    """The JSON object in a reply (``judges.llm.json_object``); ValueError if there is none."""
    data = json_object(text)
    if data is None:
        raise ValueError("no JSON object in the reply")
    return data


class LLMProber:
    """One natural question per memory from a model (mode ``llm``), in batches of ``batch_size``."""

    name = "llm"
    mode: ProbeMode = "llm"

    def __init__(self, model: str, *, client: LLMClient | None = None, batch_size: int = 10) -> None:
        check_key(model)
        self.model: str | None = model
        self.client = client or LLMClient()  # opens nothing until it calls
        self.batch_size = batch_size

    def write(self, memories: Sequence[Memory]) -> ProberReply:
        """Raises ProberFailed (with the usage so far) when a call fails or its reply cannot be read."""
        drafts: list[ProbeDraft] = []
        usage: list[ModelUsage] = []
        assert self.model is not None
        for start in range(0, len(memories), self.batch_size):
            batch = memories[start : start + self.batch_size]
            listing = "\n\n".join(
                f"id: {m.id}\nkind: {m.kind}\nscope: {m.scope}\nmemory: {m.content}" for m in batch
            )
            messages = [
                {"role": "system", "content": PROBER_SYSTEM},
                {"role": "user", "content": f"Memories:\n\n{listing}"},
            ]
            try:
                reply = self.client.complete(self.model, messages, json=True)
            except ModelError as err:
                raise ProberFailed(f"prober call failed: {err}", tuple(usage)) from err
            usage.extend(_usage(reply))
            try:
                items = _json_object(reply.text).get("questions")
                if not isinstance(items, list):
                    raise ValueError("'questions' is not a list")
            except ValueError as err:
                raise ProberFailed(f"prober {self.model}: unreadable reply ({err})", tuple(usage)) from None
            for item in items:
                if (
                    isinstance(item, dict)
                    and isinstance(item.get("id"), str)
                    and isinstance(item.get("question"), str)
                ):
                    drafts.append(ProbeDraft(item["id"], item["question"]))
        return ProberReply(tuple(drafts), tuple(usage))


class LLMRoiJudge:
    """Asks a model for ``with_memory``, ``without_memory`` and ``confidence``; a bad reply fails the probe."""

    def __init__(self, model: str, *, client: LLMClient | None = None) -> None:
        check_key(model)
        self.model = model
        self.name = f"llm:{model}"
        self.client = client or LLMClient()

    def judge(self, probe: Probe, source: Memory, recall: Recall) -> JudgeReply:
        """Ask the model whether the surfaced memories answer the probe, and whether it could be answered
        without them."""
        surfaced = "\n".join(f"[{i}] {s.text}" for i, s in enumerate(recall.surfaced, start=1)) or "(nothing)"
        messages = [
            {"role": "system", "content": JUDGE_SYSTEM},
            {
                "role": "user",
                "content": f"Question: {probe.question}\n\nReference memory: {source.content}\n\n"
                f"Surfaced memories:\n{surfaced}",
            },
        ]
        try:
            reply = self.client.complete(self.model, messages, json=True)
        except ModelError as err:
            raise JudgmentFailed(probe.id, f"judge call failed: {err}") from err
        usage = _usage(reply)
        try:
            data = _json_object(reply.text)
            with_memory, without_memory = data["with_memory"], data["without_memory"]
            confidence = float(data.get("confidence", 1.0))
            if not isinstance(with_memory, bool) or not isinstance(without_memory, bool):
                raise ValueError("with_memory and without_memory must be true or false")
            if not 0.0 <= confidence <= 1.0:
                raise ValueError(f"confidence {confidence} is not within 0..1")
        except (ValueError, KeyError, TypeError) as err:
            raise JudgmentFailed(probe.id, f"judge {self.model}: unreadable verdict ({err})", usage) from None
        explanation = str(data.get("explanation", ""))
        return JudgeReply(Judgment(with_memory, without_memory, confidence, explanation), usage)
