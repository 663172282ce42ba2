"""What a run is run under: ``RunSpec``, its reader, the one differ, the fingerprint, and the resume merge of a
``RunRequest``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import msgspec
import pytest

from bench_nb.errors import BenchNbError
from bench_nb.frames.questions import questions_frame, runs_frame
from bench_nb.runformat.load import check_like_for_like, read_run
from bench_nb.runformat.spec import RunRequest, RunSpec, differences, read_spec
from synthetic_runs import write_synthetic_run

OLD = Path(__file__).parents[1] / "fixtures" / "old_runs"


def _edit(run: Path, **changes: object) -> None:
    path = run / "checkpoint.json"
    ck = json.loads(path.read_text())
    ck["benchNb"].update(changes)
    path.write_text(json.dumps(ck))


def test_benchnb_is_read_typed_and_a_rewrite_keeps_keys_this_version_does_not_know() -> None:
    raw = {"k": 10, "judges": ["f1"], "invocation": {"provider": "sqlite", "x": 1}, "futureKey": {"a": 1}}
    typed = RunSpec.recorded(raw)
    assert typed.k == 10 and typed.judges == ["f1"] and typed.invocation is not None
    assert typed.invocation.provider == "sqlite" and typed.custom_prompt is False
    rewritten = msgspec.structs.replace(typed, k=30).written_over(raw)
    assert rewritten["k"] == 30 and rewritten["futureKey"] == {"a": 1}
    assert RunSpec.recorded(None) == RunSpec()
    with pytest.raises(msgspec.ValidationError, match="k"):
        RunSpec.recorded({"k": "ten"})


def test_the_fingerprint_is_the_sha256_of_the_documented_facts(tmp_path: Path) -> None:
    run = write_synthetic_run(tmp_path, "sqlite")
    s = read_spec(read_run(run))
    facts = {
        "benchmarkSha256": s.benchmark_sha256,
        "questionSet": s.question_set,
        "k": s.k,
        "answerer": s.answerer,
        "answerPrompt": s.answer_prompt,
        "judges": list(s.judge_names),
        "judgePrompts": {k: v for k, v in (s.prompt_hashes or {}).items() if k.startswith("judge:")},
        "providerSettings": s.provider_settings,
    }
    text = json.dumps(facts, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert s.fingerprint == hashlib.sha256(text.encode()).hexdigest()[:12]
    assert s.judge_names == ("f1", "contains") and s.k == 10


def test_the_fingerprint_changes_with_what_a_number_depends_on_and_only_with_that(tmp_path: Path) -> None:
    base = write_synthetic_run(tmp_path, "sqlite", run_id="base")
    other_provider = write_synthetic_run(tmp_path, "full-context", run_id="other-provider")
    fp = read_spec(read_run(base)).fingerprint
    assert read_spec(read_run(other_provider)).fingerprint == fp  # the provider is what is compared
    changes: dict[str, dict[str, object]] = {
        "k": {"k": 30},
        "judges": {"judges": ["f1"]},
        "answer prompt": {"promptHashes": {"answer": "0" * 64}},
        "provider settings": {"invocation": {"providerSettings": {"top_k_sessions": 3}}},
        "benchmark file": {"benchmarkSha256": "f" * 64},
    }
    seen = {fp}
    for name, change in changes.items():
        run = write_synthetic_run(tmp_path, "sqlite", run_id=name.replace(" ", "-"))
        _edit(run, **change)
        new = read_spec(read_run(run)).fingerprint
        assert new not in seen, name
        seen.add(new)


def test_the_frames_carry_each_runs_fingerprint(tmp_path: Path) -> None:
    a = write_synthetic_run(tmp_path, "sqlite")
    b = write_synthetic_run(tmp_path, "full-context")
    _edit(b, k=30)
    want = {r.name: read_spec(read_run(r)).fingerprint for r in (a, b)}
    runs = runs_frame([a, b])
    assert dict(zip(runs["run_id"], runs["settings_fingerprint"], strict=True)) == want
    rows = questions_frame([a, b]).unique(["run_id", "settings_fingerprint"])
    assert dict(zip(rows["run_id"], rows["settings_fingerprint"], strict=True)) == want


def test_one_differ_for_like_for_like_checks(tmp_path: Path) -> None:
    a = write_synthetic_run(tmp_path, "sqlite")
    b = write_synthetic_run(tmp_path, "full-context")
    _edit(a, benchmarkSha256="a" * 64)
    _edit(b, k=30)
    settings = [read_spec(read_run(r)) for r in (a, b)]
    assert (
        check_like_for_like([a, b])
        == differences(settings)
        == [
            "retrieval limit k differs: synthetic-sqlite=10, synthetic-full-context=30",
            "benchmark file sha256 differs: "
            f"synthetic-sqlite={'a' * 64}, synthetic-full-context=(not recorded)",
        ]
    )
    # comparing only what both record: the missing sha256 is no difference
    assert differences(settings, missing_differs=False) == [
        "retrieval limit k differs: synthetic-sqlite=10, synthetic-full-context=30"
    ]
    assert differences(settings, skip=("k", "benchmark_sha256")) == []


def test_resume_differences_name_each_kept_setting_that_changed_and_skip_unrecorded_ones() -> None:
    stored = RunSpec.recorded(
        {"k": 4, "judges": ["contains"], "primaryJudge": "contains", "isolatePerQuestion": True}
    )
    assert stored.resume_differences(stored) == []
    assert stored.resume_differences(RunSpec(k=4)) == []  # what the new run does not say is not compared
    wanted = msgspec.structs.replace(stored, k=5, primary_judge="llm")
    assert stored.resume_differences(wanted) == [
        "retrieval limit k: 4 in the run, 5 now",
        "primary judge: 'contains' in the run, 'llm' now",
    ]
    # judge replicates not recorded count as one
    assert RunSpec().resume_differences(RunSpec(judge_replicates=1)) == []
    assert RunSpec().resume_differences(RunSpec(judge_replicates=3)) == [
        "judge replicates: 1 in the run, 3 now"
    ]


def test_a_prompt_hash_one_side_does_not_record_is_not_a_resume_difference() -> None:
    """A BEAM run judged by ``rubric:<model>`` before its judge's prompt hashes were recorded resumes; a hash both
    sides record and that changed still refuses it."""
    old = RunSpec(prompt_hashes={"answer": "a1"})
    now = RunSpec(prompt_hashes={"answer": "a1", "judge:rubric:m:beam-rubric": "r1"})
    assert old.resume_differences(now) == []
    changed = RunSpec(prompt_hashes={"answer": "a2", "judge:rubric:m:beam-rubric": "r1"})
    assert old.resume_differences(changed) == [
        "prompts: {'answer': 'a1'} in the run, {'answer': 'a2', 'judge:rubric:m:beam-rubric': 'r1'} now"
    ]


def test_the_benchnb_record_keeps_its_keys_and_their_order() -> None:
    """The on-disk record is today's: the same camelCase keys, in the order the runner always wrote them."""
    raw = json.loads((OLD / "killed" / "checkpoint.json").read_text())["benchNb"]
    spec = read_spec(read_run(OLD / "killed"))
    assert spec.bench_nb() == raw
    assert list(spec.bench_nb()) == list(raw) and list(spec.bench_nb()["invocation"]) == list(
        raw["invocation"]
    )
    assert msgspec.json.encode(spec.bench_nb()) == msgspec.json.encode(raw)


def test_a_resume_takes_what_is_given_and_the_run_s_own_value_for_the_rest() -> None:
    stored = read_spec(read_run(OLD / "finished"))
    asked = RunRequest(k=4, judges=["f1"]).resumed(stored)
    assert (asked.k, asked.isolate_per_question, asked.provider, asked.benchmark) == (
        4,
        True,
        "sqlite",
        "sample",
    )
    assert (asked.judges, asked.answerer, asked.sample_per_type, asked.question_ids) == (
        ["f1"],
        "extractive",
        1,
        None,
    )
    # the selection is one choice: the caller's limit replaces the run's sample
    limited = RunRequest(limit=2).resumed(stored)
    assert (limited.limit, limited.sample_per_type) == (2, None)
    # a run made with an object needs it again
    made_with_object = msgspec.structs.replace(
        stored, invocation=msgspec.structs.replace(stored.asked_for, provider=None)
    )
    with pytest.raises(BenchNbError, match=r"provider object \('sqlite'\)"):
        RunRequest().resumed(made_with_object, where="here")
    assert RunRequest().resumed(made_with_object, objects={"provider"}).provider is None
