"""Receipts: a canonical, hash-bound summary of one run that anyone can recompute from the run.

A receipt file is the canonical JSON (RFC 8785, ``receipts.canonical``) of ``{"receipt": BODY, "sha256":
sha256(canonical(BODY)), "signature": ...}`` with no trailing newline, so that any change to any byte breaks
either the canonical form, the hash or the signature. BODY holds what the run's numbers depend on and the
numbers themselves:

- ``run``: id, provider, benchmark, judge, answering model, the harness that wrote it;
- ``dataset``: the benchmark file's sha256 (``benchNb.benchmarkSha256``) and the question set's hash;
- ``settings``: the settings fingerprint (``runformat.spec.RunSpec.fingerprint``) and the settings it
  covers that runs are compared on;
- ``code``: the bench_nb version that wrote the receipt (not compared when verifying);
- ``questions``: per question (sorted by id): haystack, normalised type, status, score, unscored, search
  milliseconds, context tokens, the sha256 of its answer and of its verdicts (every judge's, every
  replicate, with labels and explanations);
- ``numbers``: MemScore (``metrics.memscore``) and accuracy with its clustered interval overall and per
  normalised type (``metrics.clustered.accuracy_intervals``).

``verify_receipt`` checks the file (canonical form, hash, signature) and recomputes BODY from the run
directory or a run store, naming the first difference. docs/run-format.md ("Receipts") has the layout.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, cast

import polars as pl

from bench_nb.errors import BenchNbError, ReceiptError
from bench_nb.frames.harnesses import harness_record
from bench_nb.frames.judgments import judgments_frame
from bench_nb.frames.questions import questions_frame
from bench_nb.frames.store import StoredRuns, is_store, open_store
from bench_nb.metrics.memscore import memscore_frame
from bench_nb.receipts.canonical import canonical_json, canonical_value, sha256_hex
from bench_nb.receipts.signing import check_signature, load_private_key, load_public_key, sign
from bench_nb.runformat.journal import write_atomic
from bench_nb.runformat.load import RECEIPT_SUFFIX, Run, RunSet, load_runs
from bench_nb.runformat.lock import RECEIPT_TEMP, is_run_dir, lock_run, run_containing
from bench_nb.runformat.spec import RunSpec, read_spec

FORMAT = "bench_nb.receipt"
VERSION = 1
SUFFIX = RECEIPT_SUFFIX
NOT_COMPARED = (("code", "benchNb"),)  # the writer's version: a receipt verifies under a newer bench_nb
# A recomputed number matches the receipt's within this (docs/gate.md, "Receipts"): bench_nb computes every
# number bit for bit the same on every call, but another CPU or numpy/polars version may round a sum's last
# bit otherwise; a change a reader could see (the 6th significant digit) is far outside it. The signature and
# sha256 still cover the receipt's exact bytes.
REL_TOL = 1e-12
ABS_TOL = 1e-15


@dataclass(frozen=True)
class RunData:
    """One run's frames and settings, read from a run directory or a run store."""

    label: str
    questions: pl.DataFrame
    judgments: pl.DataFrame
    settings: RunSpec
    harness: dict[str, Any]


def read_run_data(
    source: Any, *, store: Any = None, dataset: str | os.PathLike[str] | None = None
) -> RunData:
    """One run: a run directory (or a ``Run``), another harness's result file (Zep's, Mem0's, EverMemOS's:
    ``load_runs``), a one-run ``StoredRuns``, or a run id in ``store``. ``dataset``: the benchmark file the
    run was made on, which other harnesses' LoCoMo files need (``load_runs(dataset=)``: LoCoMo's
    locomo10.json); a store's frames were built at export and take none.

    Raises:
        ReceiptError: the source holds no run or more than one.
    """
    if store is not None:
        stored = open_store(store.store if isinstance(store, StoredRuns) else store, runs=[str(source)])
        return _stored_data(stored, f"{stored.store}:{source}")
    if isinstance(source, StoredRuns):
        if len(source) != 1:
            raise ReceiptError(
                f"{source.store}: select one run of the store (runs=[run id]), not {len(source)}"
            )
        return _stored_data(source, f"{source.store}:{source.run_ids[0]}")
    if isinstance(source, (str, os.PathLike)) and is_store(source):
        raise ReceiptError(f"{os.fspath(source)}: a run store; name the run (a run id with store=)")
    runs = source if isinstance(source, RunSet) else load_runs(source, dataset=dataset)
    loaded = list(runs)
    if len(loaded) != 1:
        hint = ""
        if (
            not loaded
            and dataset is None
            and isinstance(source, (str, os.PathLike))
            and Path(source).is_file()
        ):
            hint = (
                " (another harness's result file, such as Zep's or Mem0's LoCoMo results, needs the benchmark "
                "file it was made on: dataset= here, --dataset on the command line)"
            )
        elif not loaded and runs.all_problems:  # why none loaded: "no such file or directory", ...
            hint = f" ({runs.all_problems[0].message})"
        raise ReceiptError(f"{_name(source)}: expected one run, found {len(loaded)}{hint}")
    run = loaded[0]
    questions = questions_frame(runs, dataset=None if dataset is None else Path(dataset))
    judgments = judgments_frame(runs, dataset=None if dataset is None else os.fspath(dataset))
    return RunData(str(run.path), questions, judgments, read_spec(run), harness_record(run))


def _stored_data(stored: StoredRuns, label: str) -> RunData:
    return RunData(
        label,
        stored.stored_frame("questions"),
        stored.stored_frame("judgments"),
        stored.recorded_settings()[0],
        stored.harness_records()[0],
    )


def _name(source: Any) -> str:
    if isinstance(source, Run):
        return str(source.path)
    return os.fspath(source) if isinstance(source, (str, os.PathLike)) else repr(source)


def _verdicts(judgments: pl.DataFrame) -> dict[str, list[dict[str, Any]]]:
    rows = judgments.sort("question_id", "judge", "replicate").select(
        "question_id", "judge", "replicate", "score", "label", "explanation", "unscored"
    )
    out: dict[str, list[dict[str, Any]]] = {}
    for r in rows.iter_rows(named=True):
        qid = r.pop("question_id")
        out.setdefault(qid, []).append(r)
    return out


def _settings(spec: RunSpec) -> dict[str, Any]:
    return {
        "fingerprint": spec.fingerprint,
        "benchmark": spec.benchmark,
        "k": spec.k,
        "answerer": spec.answerer,
        "judge": spec.judge,
        "judges": list(spec.judge_names),
        "promptHashes": spec.prompt_hashes,
        "customPrompt": spec.custom_prompt,
    }


def _code_version() -> str:
    try:
        return metadata.version("bench_nb")
    except metadata.PackageNotFoundError:  # pragma: no cover - a source tree without an install
        return "unknown"


def receipt_body(data: RunData) -> dict[str, Any]:
    """The receipt's body for one run (canonical values: what reading the receipt back gives)."""
    q = data.questions.sort("question_id")
    verdicts = _verdicts(data.judgments)
    questions = []
    for r in q.iter_rows(named=True):
        primary = {"score": r["score"], "label": r["label"], "explanation": r["explanation"]}
        questions.append(
            {
                "id": r["question_id"],
                "haystack": r["haystack_id"],
                "type": r["question_type_norm"],
                "status": r["status"],
                "score": r["score"],
                "unscored": bool(r["unscored"]),
                "searchMs": r["search_ms"],
                "contextTokens": r["context_tokens"],
                "answer": None if r["hypothesis"] is None else sha256_hex(r["hypothesis"].encode("utf-8")),
                "verdicts": sha256_hex(
                    canonical_json({"primary": primary, "judgments": verdicts.get(r["question_id"], [])})
                ),
            }
        )
    ms = memscore_frame(data.questions)
    memscore = ms.row(0, named=True) if len(ms) else {}
    # numpy: only when a receipt is made or checked
    from bench_nb.metrics.clustered import accuracy_intervals_frame

    overall = accuracy_intervals_frame(data.questions).with_columns(question_type=pl.lit("all"))
    by_type = accuracy_intervals_frame(data.questions, by="question_type").sort("question_type")
    accuracy = [
        {
            "type": r["question_type"],
            "accuracy": r["accuracy"],
            "ciLow": r["ci_low"],
            "ciHigh": r["ci_high"],
            "n": r["n"],
            "clusters": r["clusters"],
            "interval": r["interval"],
        }
        for r in pl.concat([overall.select(by_type.columns), by_type]).iter_rows(named=True)
    ]
    s = data.settings
    body = {
        "format": FORMAT,
        "version": VERSION,
        "run": {
            "id": s.run_id,
            "provider": s.provider,
            "benchmark": s.benchmark,
            "judge": _reported_judge(data.questions, s.judge),
            "answerer": s.answerer,
            "writtenBy": data.harness.get("harness"),
        },
        "dataset": {"sha256": s.benchmark_sha256, "questionSet": s.question_set},
        "settings": _settings(s),
        "code": {"benchNb": _code_version()},
        "questions": questions,
        "numbers": {
            "memscore": {
                "memscore": memscore.get("memscore"),
                "quality": memscore.get("quality"),
                "qualityMeasure": memscore.get("quality_measure"),
                "latencyMs": memscore.get("latency_ms"),
                "contextTokens": memscore.get("context_tokens"),
                "accuracy": memscore.get("accuracy"),
                "accuracyCiLow": memscore.get("accuracy_ci_low"),
                "accuracyCiHigh": memscore.get("accuracy_ci_high"),
                "evaluated": memscore.get("evaluated"),
                "correct": memscore.get("correct"),
                "unscored": memscore.get("unscored"),
                "failed": memscore.get("failed"),
                "target": memscore.get("target"),
            },
            "accuracy": accuracy,
        },
    }
    return cast("dict[str, Any]", canonical_value(body))  # a JSON object reads back as a dict


def _reported_judge(questions: pl.DataFrame, primary: str | None) -> str | None:
    """The judge the frames report for the run's questions: the primary judge of its settings, unless the
    questions name another (a MemoryBench checkpoint's top-level ``judge`` edited away from
    ``benchNb.primaryJudge``: the frames then show that judge for every question, so the receipt must too)."""
    named = sorted(
        {j for j in questions.get_column("judge").to_list() if j} if "judge" in questions.columns else set()
    )
    return primary if named in ([], [primary]) else ", ".join(named)


@dataclass(frozen=True)
class Receipt:
    """A receipt as written: its body, the body's sha256 and the signature (or ``None``)."""

    body: dict[str, Any]
    sha256: str
    signature: dict[str, str] | None = None
    #: the run directory the receipt was made of (``make_receipt``), None when read from a file or made of a
    #: store's run or another harness's file: where ``write`` takes the run's lock
    run_dir: Path | None = field(default=None, compare=False, repr=False)

    def envelope(self) -> dict[str, Any]:
        """The receipt file's JSON object: the body, its sha256 and the signature when there is one."""
        out: dict[str, Any] = {"receipt": self.body, "sha256": self.sha256}
        if self.signature is not None:
            out["signature"] = self.signature
        return out

    def to_bytes(self) -> bytes:
        """The receipt file's bytes: the canonical JSON of the envelope."""
        return canonical_json(self.envelope())

    def write(self, path: str | os.PathLike[str]) -> Path:
        """Write the receipt file to ``path`` atomically (``runformat.journal.write_atomic``); returns its path.

        Into a run (``runformat.lock.run_containing``: a run's own folder, as ``RUN/receipt.json`` where
        ``read_receipt`` looks, or anywhere inside the run the receipt was made of, its ``results/`` too), it is
        written under the run's lock (``lock_run``; ``RunLockedError`` while bench-nb runs, rejudges or
        reanswers it), through a temporary file in the run's folder named ``lock.RECEIPT_TEMP``: no other
        writer deletes it, and the next writer deletes one a killed receipt left (``RUN_TEMP_FILES``)."""
        out = Path(path)
        run = run_containing(out, self.run_dir)
        if run is None:
            write_atomic(out, self.to_bytes())
        else:
            with lock_run(run, "bench-nb receipt"):
                write_atomic(out, self.to_bytes(), tmp=run / RECEIPT_TEMP)
        return out

    @property
    def run_id(self) -> str:
        """The id of the run the receipt is of."""
        return str(self.body.get("run", {}).get("id"))


def make_receipt(
    run: Any,
    *,
    store: Any = None,
    sign_with: str | os.PathLike[str] | None = None,
    dataset: str | os.PathLike[str] | None = None,
) -> Receipt:
    """The receipt of one run (a run directory, another harness's result file, a ``Run``, or a run id with
    ``store=`` a run store).

    ``sign_with``: a PEM Ed25519 private key file; the receipt then carries an Ed25519 signature of its
    canonical body and the public key. ``dataset``: the benchmark file, for other harnesses' files
    (``read_run_data``). Write it with ``Receipt.write(path)``.
    """
    run_data = read_run_data(run, store=store, dataset=dataset)
    body = receipt_body(run_data)
    data = canonical_json(body)
    signature = sign(data, load_private_key(os.fspath(sign_with))) if sign_with is not None else None
    run_dir = Path(run_data.label) if is_run_dir(run_data.label) else None  # not a store's run, nor a file
    return Receipt(body, sha256_hex(data), signature, run_dir)


def default_path(run: str | os.PathLike[str]) -> Path:
    """Where ``bench-nb receipt RUN`` writes by default: ``RUN.receipt.json`` beside the run directory."""
    p = Path(run)
    if p.name in ("", ".", ".."):  # "." or "..": the directory's own name
        p = p.resolve()
    return p.with_name(p.name + SUFFIX)


def parse_receipt(data: bytes, where: str) -> Receipt:
    """A receipt from its file's bytes, checked: JSON, canonical form, layout and hash (not the signature).

    Raises:
        ReceiptError: naming ``where`` and what is wrong.
    """
    try:
        return _parse(data, where)
    except RecursionError:
        raise ReceiptError(f"{where}: not a receipt (nested too deeply to read)") from None


def _parse(data: bytes, where: str) -> Receipt:
    try:
        envelope = json.loads(data)
    except (ValueError, UnicodeDecodeError) as err:
        raise ReceiptError(f"{where}: not JSON ({err})") from None
    if not isinstance(envelope, dict) or not isinstance(envelope.get("receipt"), dict):
        raise ReceiptError(f"{where}: not a receipt (no 'receipt' object)")
    extra = sorted(set(envelope) - {"receipt", "sha256", "signature"})
    if extra:
        raise ReceiptError(f"{where}: unknown member {extra[0]!r}")
    body = envelope["receipt"]
    if body.get("format") != FORMAT:
        raise ReceiptError(f"{where}: format is {body.get('format')!r}, not {FORMAT!r}")
    if body.get("version") != VERSION:
        raise ReceiptError(f"{where}: receipt version {body.get('version')!r}; this bench_nb reads {VERSION}")
    _check_layout(body, where)
    if canonical_json(envelope) != data:
        raise ReceiptError(
            f"{where}: not in canonical form (RFC 8785): the file was changed after it was written"
        )
    digest = sha256_hex(canonical_json(body))
    if envelope.get("sha256") != digest:
        raise ReceiptError(
            f"{where}: sha256 {envelope.get('sha256')!r} does not match the receipt's content ({digest})"
        )
    return Receipt(body, digest, envelope.get("signature"))


# What a receipt's body must hold for the gate and ``verify`` to read it: each member's type, and the members of
# the objects they read (a hash-valid receipt missing one is refused naming it, never a traceback).
_LAYOUT: dict[str, tuple[type, tuple[str, ...]]] = {
    "run": (dict, ("id", "provider")),
    "dataset": (dict, ("questionSet",)),
    "settings": (dict, ("fingerprint",)),
    "code": (dict, ()),
    "questions": (list, ()),
    "numbers": (dict, ()),
}
_QUESTION_FIELDS = ("id", "haystack", "type", "status", "score", "unscored", "searchMs", "contextTokens")


def _check_layout(body: dict[str, Any], where: str) -> None:
    """Refuse a body the readers cannot read: a missing or mistyped member, a question that is not an object,
    lacks a field or an id, or repeats another's id (a reader keyed by id would keep the last one, a reader
    of the list would count both).

    Raises:
        ReceiptError: naming the member, or the question by its position and id.
    """
    for name, (kind, members) in _LAYOUT.items():
        value = body.get(name)
        if not isinstance(value, kind):
            what = (
                "missing"
                if value is None
                else f"{type(value).__name__}, not {'an object' if kind is dict else 'a list'}"
            )
            raise ReceiptError(f"{where}: not a receipt: '{name}' is {what}")
        for member in members:
            if member not in value:  # type: ignore[operator]  # a dict: checked above
                raise ReceiptError(f"{where}: not a receipt: '{name}' has no '{member}'")
    seen: set[str] = set()
    for i, q in enumerate(body["questions"]):
        if not isinstance(q, dict):
            raise ReceiptError(f"{where}: question {i + 1} is {type(q).__name__}, not an object")
        qid = q.get("id")
        if not isinstance(qid, str) or not qid:
            raise ReceiptError(f"{where}: question {i + 1} has no id")
        if qid in seen:
            raise ReceiptError(f"{where}: question {qid} appears twice: a receipt holds each question once")
        seen.add(qid)
        lacking = [f for f in _QUESTION_FIELDS if f not in q]
        if lacking:
            raise ReceiptError(f"{where}: question {qid} has no '{lacking[0]}'")
        score = q["score"]
        if score is not None and (
            isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 1
        ):
            raise ReceiptError(f"{where}: question {qid}: score {score!r} is not a number in [0, 1] or null")


def check_signed_by(
    receipt: Receipt, public_key: str | os.PathLike[str] | None, where: str, *, key_required: bool = True
) -> str | None:
    """The signature check of a reader that acts on a receipt (the gate): a signed receipt must be signed by
    ``public_key`` (a PEM Ed25519 public key file); without one it is refused, since a signature checked only
    against the key the receipt carries shows it intact, not who made it (anyone can re-sign an edited
    receipt with their own key). ``public_key`` with an unsigned receipt is refused too. Returns the signing
    key's id (``None``: unsigned, no key given). ``key_required=False`` (``verify_receipt``, which reports
    whether the key was one given): a signed receipt without ``public_key`` is checked against its own key.

    Raises:
        ReceiptError: naming ``where`` and what failed.
    """
    body = canonical_json(receipt.body)
    if receipt.signature is None:
        if public_key is not None:
            raise ReceiptError(f"{where}: not signed, and a public key was given")
        return None
    # a forged or stale signature fails here
    signed_by = check_signature(body, receipt.signature, None, where)
    if public_key is None and not key_required:
        return signed_by
    if public_key is None:
        raise ReceiptError(
            f"{where}: signed by key {signed_by}; give the public key it must be signed with (--public-key, "
            "public_key=) so that the signature is checked against a key you trust"
        )
    return check_signature(body, receipt.signature, load_public_key(os.fspath(public_key)), where)


def read_receipt(path: str | os.PathLike[str]) -> Receipt:
    """Read and check a receipt file (canonical form and hash; ``verify_receipt`` also checks the signature
    and recomputes the numbers)."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise ReceiptError(f"{os.fspath(path)}: cannot read ({err.strerror})") from None
    return parse_receipt(data, os.fspath(path))


def is_receipt_file(source: Any) -> bool:
    """Whether ``source`` names a file that looks like a receipt (a JSON file, not a directory)."""
    if not isinstance(source, (str, os.PathLike)):
        return False
    p = Path(source)
    if not p.is_file():
        return False
    with p.open("rb") as f:
        return f.read(12) == b'{"receipt":{'


@dataclass(frozen=True)
class ReceiptCheck:
    """What ``verify_receipt`` found. ``ok``: every check made passed; ``recomputed``: the numbers were
    recomputed from the run (else only the file and signature were checked); ``signed_by``: the id of the key
    that signed it (``None``: unsigned); ``trusted_key``: the signature was checked against a key given;
    ``difference``: the first thing that failed, in words."""

    receipt: str
    ok: bool
    sha256: str | None
    recomputed: bool
    signed_by: str | None = None
    trusted_key: bool = False
    run: str | None = None
    difference: str | None = None

    def summary(self) -> str:
        """One line: what was checked and the outcome."""
        if not self.ok:
            return f"FAILED {self.receipt}: {self.difference}"
        parts = [f"sha256 {self.sha256}"]
        if self.signed_by is None:
            parts.append("unsigned")
        elif self.trusted_key:
            parts.append(f"signed by the key given ({self.signed_by})")
        else:
            parts.append(f"signature intact, by key {self.signed_by} (give --public-key to check who signed)")
        parts.append(
            f"every number recomputed from {self.run}"
            if self.recomputed
            else "numbers not recomputed (no run given)"
        )
        return f"verified {self.receipt}: " + "; ".join(parts)


def verify_receipt(
    receipt: str | os.PathLike[str] | bytes,
    run: Any = None,
    *,
    store: Any = None,
    public_key: str | os.PathLike[str] | None = None,
    dataset: str | os.PathLike[str] | None = None,
) -> ReceiptCheck:
    """Check a receipt: its file (canonical form, sha256), its signature, and every number in it recomputed
    from ``run`` (a run directory, a ``Run``, or a run id with ``store=``).

    Without ``run`` the run is looked for beside the receipt (``RUN.receipt.json`` -> ``RUN``); when there is
    none, only the file and signature are checked (``recomputed`` False). ``public_key``: a PEM Ed25519 public
    key the receipt must be signed with. ``dataset``: the benchmark file, for a run that is another
    harness's result file (``read_run_data``). Never raises for a receipt that does not verify: ``ok`` is False and
    ``difference`` names the first difference (a field, a question, a number, the signature).
    """
    where = "receipt" if isinstance(receipt, bytes) else os.fspath(receipt)
    try:
        parsed = parse_receipt(receipt, where) if isinstance(receipt, bytes) else read_receipt(receipt)
    except ReceiptError as err:
        return ReceiptCheck(where, False, None, False, difference=str(err))
    trusted = public_key is not None
    try:
        signed_by = check_signed_by(parsed, public_key, where, key_required=False)
    except ReceiptError as err:
        return ReceiptCheck(where, False, parsed.sha256, False, difference=str(err))
    if run is None and store is None and not isinstance(receipt, bytes):
        beside = Path(os.fspath(receipt))
        if beside.name.endswith(SUFFIX) and beside.with_name(beside.name[: -len(SUFFIX)]).exists():
            run = beside.with_name(beside.name[: -len(SUFFIX)])
    if run is None and store is None:
        return ReceiptCheck(where, True, parsed.sha256, False, signed_by, trusted)
    if store is not None and run is None:
        run = parsed.run_id
    try:
        data = read_run_data(run, store=store, dataset=dataset)
        recomputed = receipt_body(data)
    except (BenchNbError, ValueError, OSError) as err:  # a run that cannot be read, or a bad value in it
        return ReceiptCheck(where, False, parsed.sha256, False, signed_by, trusted, difference=str(err))
    difference = first_difference(parsed.body, recomputed)
    label = data.label
    if difference is not None:
        return ReceiptCheck(
            where, False, parsed.sha256, True, signed_by, trusted, label, f"against {label}: {difference}"
        )
    return ReceiptCheck(where, True, parsed.sha256, True, signed_by, trusted, label)


def first_difference(stored: dict[str, Any], recomputed: dict[str, Any]) -> str | None:
    """The first difference between a receipt's body and the one recomputed from the run, in words (``None``:
    none). Checked in order: the run, dataset and settings; each question (by id); the numbers."""
    for key in ("format", "version", "run", "dataset", "settings", "code"):
        for path, a, b in _walk(stored.get(key), recomputed.get(key), (key,)):
            if path[:2] in NOT_COMPARED:
                continue
            return f"{_dotted(path)}: the receipt says {_show(a)}, the run gives {_show(b)}"
    mine = {q.get("id"): q for q in stored.get("questions", [])}
    theirs = {q.get("id"): q for q in recomputed.get("questions", [])}
    for qid in sorted(set(mine) | set(theirs), key=str):
        if qid not in theirs:
            return f"question {qid}: in the receipt, not in the run"
        if qid not in mine:
            return f"question {qid}: in the run, not in the receipt"
        for path, a, b in _walk(mine[qid], theirs[qid], ()):
            what = {"verdicts": "its verdicts", "answer": "its answer"}.get(path[0], _dotted(path))
            if path[0] in ("verdicts", "answer"):
                return f"question {qid}: {what} differ (sha256 {_short(a)}… in the receipt, {_short(b)}… from the run)"
            return f"question {qid}: {what}: the receipt says {_show(a)}, the run gives {_show(b)}"
    for path, a, b in _walk(stored.get("numbers"), recomputed.get("numbers"), ("numbers",), close=True):
        return f"{_dotted(path)}: the receipt says {_show(a)}, recomputed {_show(b)}"
    extra = sorted(set(stored) ^ set(recomputed))
    if extra:
        return f"{extra[0]}: only in {'the receipt' if extra[0] in stored else 'the recomputed receipt'}"
    return None


def _walk(
    a: Any, b: Any, path: tuple[Any, ...], *, close: bool = False
) -> Iterator[tuple[tuple[Any, ...], Any, Any]]:
    """Every leaf where ``a`` and ``b`` differ; with ``close`` two numbers within ``REL_TOL`` / ``ABS_TOL``
    of each other do not."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            yield from _walk(a.get(k), b.get(k), (*path, k), close=close)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            label = x.get("type", i) if isinstance(x, dict) else i
            yield from _walk(x, y, (*path, label), close=close)
    elif (a != b or type(a) is not type(b)) and not (close and _same_number(a, b)):
        yield path, a, b


def _same_number(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are numbers (not booleans) equal within ``REL_TOL`` or ``ABS_TOL``."""
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b))
    return numbers and math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def _dotted(path: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in path)


def _short(value: Any) -> str:
    return "nothing" if value is None else str(value)[:16]


def _show(value: Any) -> str:
    return "nothing" if value is None else json.dumps(value, ensure_ascii=False)


def find_receipt(run_path: str | os.PathLike[str]) -> Path | None:
    """A run's receipt: ``RUN.receipt.json`` beside its directory, else ``RUN/receipt.json`` (``None``: none)."""
    p = Path(run_path)
    for candidate in (p.with_name(p.name + SUFFIX), p / "receipt.json"):
        if candidate.is_file():
            return candidate
    return None


def receipt_checks(runs: RunSet | StoredRuns) -> list[tuple[str, ReceiptCheck]]:
    """(run id, check) for every run that has a receipt (``find_receipt``), each verified against the run
    (a run store's runs against the store; their receipts are looked for beside the directories they were
    exported from)."""
    store = runs.store if isinstance(runs, StoredRuns) else None
    each = (  # (run id, its directory, the run as verify_receipt reads it)
        [(str(i), p, i) for i, p in runs.runs.select("run_id", "run_path").iter_rows()]
        if isinstance(runs, StoredRuns)
        else [(run.run_id, run.path, run) for run in runs]
    )
    out = []
    for run_id, path, run in each:
        found = find_receipt(path) if path else None
        if found is not None:
            out.append((run_id, verify_receipt(found, run, store=store)))
    return out
