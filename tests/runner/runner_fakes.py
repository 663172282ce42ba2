"""Test doubles for the runner: a real (in-memory or file-backed) word-overlap provider that counts its calls,
can sleep and can fail on cue, plus a synthetic benchmark builder.

``CountingProvider`` is a working provider, not a mock: it stores what is ingested and ranks by word overlap.
``LoggedProvider`` / ``logged_answerer`` / ``logged_judge`` are plugins for subprocess runs: they append one
line per call to the file named by ``$BENCH_NB_TEST_CALL_LOG``.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench_nb.errors import ProviderError
from bench_nb.judges.deterministic import ContainsJudge
from bench_nb.models.extractive import ExtractiveAnswerer
from bench_nb.records import (
    Answer,
    Benchmark,
    Haystack,
    IngestResult,
    Message,
    Question,
    SearchHit,
    Session,
    Verdict,
)


class Flaky(ProviderError):
    """A provider error that says it may be retried."""

    retryable = True


class CountingProvider:
    """Word-overlap search over what was ingested; counts calls and tracks how many run at once per method.

    Args:
        latency: seconds to sleep per call, per method name (a number, or a callable of the call's key).
        fail: per method, a callable (key -> exception or None) deciding whether a call raises.
    """

    def __init__(
        self,
        name: str = "counting",
        *,
        latency: dict[str, float | Callable[[str], float]] | None = None,
        fail: dict[str, Callable[[str], BaseException | None]] | None = None,
        persistent: bool = True,
    ) -> None:
        self.name = name
        self.persistent = persistent
        self.latency = latency or {}
        self.fail = fail or {}
        self.data: dict[str, list[tuple[Session, Message]]] = defaultdict(list)
        self.calls: Counter[str] = Counter()
        self.call_keys: list[tuple[str, str]] = []
        self.spans: list[tuple[str, str, float, float]] = []  # (method, key, start, end)
        self.in_flight: Counter[str] = Counter()
        self.max_in_flight: Counter[str] = Counter()
        self._lock = threading.Lock()

    def _enter(self, method: str, key: str) -> float:
        with self._lock:
            self.calls[method] += 1
            self.call_keys.append((method, key))
            self.in_flight[method] += 1
            self.max_in_flight[method] = max(self.max_in_flight[method], self.in_flight[method])
        delay = self.latency.get(method, 0.0)
        seconds = delay(key) if callable(delay) else delay
        start = time.perf_counter()
        if seconds:
            time.sleep(seconds)
        return start

    def _exit(self, method: str, key: str, start: float) -> None:
        with self._lock:
            self.in_flight[method] -= 1
            self.spans.append((method, key, start, time.perf_counter()))

    def _maybe_fail(self, method: str, key: str) -> None:
        decide = self.fail.get(method)
        err = decide(key) if decide else None
        if err is not None:
            raise err

    def ingest(self, container: str, sessions: Sequence[Session]) -> IngestResult:
        start = self._enter("ingest", container)
        try:
            self._maybe_fail("ingest", container)
            with self._lock:
                for s in sessions:
                    for m in s.messages:
                        self.data[container].append((s, m))
            return IngestResult(document_ids=tuple(s.session_id for s in sessions))
        finally:
            self._exit("ingest", container, start)

    def await_indexing(self, container: str, ingested: IngestResult, timeout_s: float) -> None:
        start = self._enter("indexing", container)
        try:
            self._maybe_fail("indexing", container)
        finally:
            self._exit("indexing", container, start)

    def search(self, container: str, query: str, k: int) -> list[SearchHit]:
        start = self._enter("search", query)
        try:
            self._maybe_fail("search", query)
            words = set(query.lower().replace("?", "").split())
            with self._lock:
                items = list(self.data[container])
            scored = [
                (len(words & set(m.content.lower().split())), i, s, m) for i, (s, m) in enumerate(items)
            ]
            scored.sort(key=lambda t: (-t[0], t[1]))
            return [
                SearchHit(
                    text=m.content, score=float(n), session_id=s.session_id, date=s.date, hit_id=m.message_id
                )
                for n, _, s, m in scored[:k]
                if n > 0
            ]
        finally:
            self._exit("search", query, start)

    def clear(self, container: str) -> None:
        start = self._enter("clear", container)
        try:
            with self._lock:
                self.data.pop(container, None)
        finally:
            self._exit("clear", container, start)


_COLOURS = [
    "red",
    "blue",
    "green",
    "gold",
    "pink",
    "gray",
    "teal",
    "navy",
    "plum",
    "rose",
    "sand",
    "mint",
    "lime",
    "ruby",
    "jade",
    "onyx",
]


def pet_question(h: int, j: int) -> str:
    """The text of question j of haystack h in ``make_benchmark``."""
    return f"what is the {_COLOURS[j]} pet in house{h} named?"


def make_benchmark(n_haystacks: int = 3, per_haystack: int = 4, *, name: str = "synthetic") -> Benchmark:
    """Haystacks of two sessions; question j of haystack h asks for a pet's name stated in one message.

    The last question of each haystack (with more than 2 per haystack) is unanswerable (abstention).
    """
    haystacks: dict[str, Haystack] = {}
    questions: list[Question] = []
    for h in range(n_haystacks):
        hid = f"h{h}"
        msgs1 = tuple(
            Message("ann", f"my {_COLOURS[j]} pet in house{h} is named zeta{h}x{j}", message_id=f"{hid}-m{j}")
            for j in range(per_haystack)
        )
        msgs2 = (Message("bob", "nice weather today", message_id=f"{hid}-w"),)
        haystacks[hid] = Haystack(
            hid,
            (
                Session(f"{hid}-s1", "2024-01-02T10:00:00", msgs1),
                Session(f"{hid}-s2", "2024-02-03T10:00:00", msgs2),
            ),
        )
        for j in range(per_haystack):
            abstain = j == per_haystack - 1 and per_haystack > 2
            questions.append(
                Question(
                    question_id=f"{hid}-q{j}",
                    question=pet_question(h, j) if not abstain else "what car does ann drive?",
                    answer="" if abstain else f"zeta{h}x{j}",
                    question_type="adversarial" if abstain else "single-hop",
                    norm_type="abstention" if abstain else "single-hop",
                    haystack_id=hid,
                    question_date="2024-03-01T00:00:00",
                    evidence_ids=() if abstain else (f"{hid}-m{j}",),
                )
            )
    return Benchmark(name, tuple(questions), haystacks, sha256="0" * 64)


# -- plugins for subprocess runs: every call appended to $BENCH_NB_TEST_CALL_LOG ---------------------------


_logged = 0
_logged_lock = threading.Lock()


def _log(kind: str, key: str) -> None:
    path = os.environ.get("BENCH_NB_TEST_CALL_LOG")
    if not path:
        return
    line = json.dumps({"pid": os.getpid(), "kind": kind, "key": key}) + "\n"
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())
    _die_after(int(os.environ.get("BENCH_NB_TEST_DIE_AFTER", "0")))


def _die_after(calls: int) -> None:
    """SIGKILL this process at its ``calls``-th logged call (0: never): the backstop of a test that kills a
    run from outside, for when the test's own process is too slow to do it in time on a busy machine."""
    global _logged
    if calls <= 0:
        return
    with _logged_lock:
        _logged += 1
        if _logged >= calls:
            os.kill(os.getpid(), signal.SIGKILL)


def _wait_for_gate() -> None:
    """Hold while the file named by $BENCH_NB_TEST_GATE does not exist (a test opens the gate by creating it),
    so that a run is still working at the moment a test needs it to be, however slow the machine is."""
    gate = os.environ.get("BENCH_NB_TEST_GATE")
    deadline = time.monotonic() + 120
    while gate and not os.path.exists(gate) and time.monotonic() < deadline:
        time.sleep(0.01)


class LoggedProvider:
    """The sqlite provider, with every ingest/indexing/search call logged and slowed by $BENCH_NB_TEST_DELAY_S."""

    def __init__(self, run_dir: Path, **settings: Any) -> None:
        from bench_nb.providers import get_provider

        self.inner = get_provider("sqlite", run_dir=run_dir, **settings)
        self.name = "logged-sqlite"
        self.delay = float(os.environ.get("BENCH_NB_TEST_DELAY_S", "0"))

    def _slow(self) -> None:
        if self.delay:
            time.sleep(self.delay)

    def ingest(self, container: str, sessions: Sequence[Session]) -> IngestResult:
        _log("ingest", container)
        self._slow()
        return self.inner.ingest(container, sessions)

    def await_indexing(self, container: str, ingested: IngestResult, timeout_s: float) -> None:
        _log("indexing", container)
        return self.inner.await_indexing(container, ingested, timeout_s)

    def search(self, container: str, query: str, k: int) -> list[SearchHit]:
        _log("search", f"{container}\t{query}")
        _wait_for_gate()
        self._slow()
        if query in os.environ.get("BENCH_NB_TEST_FAIL_SEARCH", "").split("|"):
            raise ProviderError("search failed on cue ($BENCH_NB_TEST_FAIL_SEARCH)")
        return self.inner.search(container, query, k)

    def clear(self, container: str) -> None:
        _log("clear", container)
        self.inner.clear(container)


class LoggedAnswerer(ExtractiveAnswerer):
    def answer(self, question: Question, hits: Sequence[SearchHit]) -> Answer:
        _log("answer", question.question_id)
        time.sleep(float(os.environ.get("BENCH_NB_TEST_DELAY_S", "0")))
        return super().answer(question, hits)


class LoggedJudge(ContainsJudge):
    def judge(self, question: Question, hypothesis: str) -> Verdict:
        _log("evaluate", question.question_id)
        return super().judge(question, hypothesis)


class UnsureJudge(ContainsJudge):
    """``contains``, except that the questions named in $BENCH_NB_TEST_UNSURE (comma-separated, or ``*`` for
    all) get an unscored verdict, as from a judge reply that could not be parsed."""

    name = "unsure"

    def judge(self, question: Question, hypothesis: str) -> Verdict:
        unsure = os.environ.get("BENCH_NB_TEST_UNSURE", "*").split(",")
        if "*" in unsure or question.question_id in unsure:
            return Verdict(None, "unscored", "reply could not be parsed", judge=self.name)
        return super().judge(question, hypothesis)


# -- what a subprocess run did: its call log, and what its run directory durably holds ----------------------


def call_log(path: Path) -> list[dict[str, str]]:
    """The calls logged to ``path`` ($BENCH_NB_TEST_CALL_LOG), oldest first."""
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def completed_phases(run_dir: Path) -> set[tuple[str, str]]:
    """The (question id, phase) pairs the run directory records complete (checkpoint + journal replayed)."""
    from bench_nb.runformat.format import PHASES
    from bench_nb.runformat.load import read_run

    if not (run_dir / "checkpoint.json").is_file():
        return set()
    ck = read_run(run_dir, strict=True).checkpoint
    assert ck is not None
    return {
        (qid, phase)
        for qid, q in ck.questions.items()
        for phase in PHASES
        if getattr(q.phases, phase).status == "completed"
    }


def touched(
    call: dict[str, str], by_container: dict[str, list[str]], by_search: dict[str, str]
) -> list[tuple[str, str]]:
    """The (question, phase) pairs a logged call works on (``clear`` works on none: check it apart)."""
    kind, key = call["kind"], call["key"]
    if kind in ("ingest", "indexing"):
        return [(qid, kind) for qid in by_container.get(key, [])]
    if kind == "search":
        return [(by_search[key], "search")]
    if kind in ("answer", "evaluate"):
        return [(key, kind)]
    return []


# -- a provider that brings its own prompts (used only with --allow-provider-prompts) ------------------------

PROVIDER_ANSWER_PROMPT = (
    "PROVIDER ANSWER PROMPT. Memories:\n{context}\nQuestion ({question_date}): {question}"
)
PROVIDER_JUDGE_PROMPT = "PROVIDER JUDGE PROMPT. Q: {question}\nExpected: {answer}\nGiven: {hypothesis}"


class PromptingProvider(CountingProvider):
    """A working word-overlap provider with its own answer and judge prompts; a plugin (takes ``run_dir``)."""

    answer_prompt = PROVIDER_ANSWER_PROMPT
    judge_prompt = PROVIDER_JUDGE_PROMPT

    def __init__(self, run_dir: Path | None = None, **kw: Any) -> None:
        super().__init__(kw.pop("name", "prompting"), **kw)


class ProbeProvider:
    """The sqlite provider behind a setting it requires (``flavour``, no default); every ``await_indexing``
    timeout and every ``clear`` is appended to ``<run_dir>/probe.log``, so a test sees what reached it."""

    evidence_level = "message"

    def __init__(self, run_dir: Path, *, flavour: str) -> None:
        from bench_nb.providers import get_provider

        self.inner = get_provider("sqlite", run_dir=run_dir)
        self.name = "probe"
        self.flavour = flavour
        self.log = Path(run_dir) / "probe.log"

    def _note(self, line: str) -> None:
        with open(self.log, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def ingest(self, container: str, sessions: Sequence[Session]) -> IngestResult:
        return self.inner.ingest(container, sessions)

    def await_indexing(self, container: str, ingested: IngestResult, timeout_s: float) -> None:
        self._note(f"indexing {self.flavour} {timeout_s}")
        return self.inner.await_indexing(container, ingested, timeout_s)

    def search(self, container: str, query: str, k: int) -> list[SearchHit]:
        return self.inner.search(container, query, k)

    def clear(self, container: str) -> None:
        self._note(f"clear {self.flavour}")
        self.inner.clear(container)
