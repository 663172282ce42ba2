"""BEAM tiers: the reader on a hand-made folder and on the shared 100K copy, pins, the cache, downloads."""

from __future__ import annotations

import hashlib
import json
import shutil
import warnings
from pathlib import Path

import pytest

from beam_tier import write_tier
from bench_nb.benchmarks import DatasetWarning, detect_benchmark, get_benchmark_spec, load_benchmark
from bench_nb.benchmarks.beam import parse_beam_date, read_beam, tier_pins
from bench_nb.benchmarks.registry import folder_sha256, register_benchmark
from bench_nb.errors import DatasetError, Problem
from bench_nb.taxonomy import BEAM_ABILITIES, normalize_question_type


def test_a_tier_folder_reads_into_one_haystack_per_chat(tmp_path: Path) -> None:
    bench = read_beam(write_tier(tmp_path / "100K", chats=2), None)
    assert bench.name == "beam-100k" and list(bench.haystacks) == ["100K-1", "100K-2"]
    hay = bench.haystacks["100K-1"]
    assert [s.session_id for s in hay.sessions] == ["100K-1-b1", "100K-1-b2"]
    assert [s.date for s in hay.sessions] == [None, "2024-04-02"]
    first = hay.sessions[0].messages[0]
    assert (first.message_id, first.role, first.timestamp) == ("0", "user", "2024-03-15")
    assert first.extra == {
        "batch": 1,
        "turn": 0,
        "index": "1,1",
        "question_type": "main_question",
        "time_anchor": "March-15-2024",
    }
    assert [m.extra["turn"] for m in hay.sessions[0].messages] == [0, 0, 1, 1]
    assert len(bench.questions) == 20
    q = {x.question_id: x for x in bench.questions}
    ku = q["100K-1-knowledge_update-0"]
    assert (ku.question_type, ku.norm_type, ku.haystack_id) == (
        "knowledge_update",
        "knowledge-update",
        "100K-1",
    )
    assert ku.evidence_ids == ("0", "4") and ku.extra["rubric"] == [
        "LLM response should state: FULL criterion 0 of knowledge_update"
    ]
    assert q["100K-2-abstention-0"].answer == "the ideal answer for abstention"
    assert q["100K-2-abstention-0"].is_abstention
    assert q["100K-1-preference_following-0"].answer == "the ideal answer for preference_following"


def test_abilities_share_normalised_names_with_locomo_and_longmemeval() -> None:
    norm = {a: normalize_question_type(a) for a in BEAM_ABILITIES}
    assert norm == {
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
    assert normalize_question_type("multi-session") == norm["multi_session_reasoning"]
    assert normalize_question_type("single-session-preference") == norm["preference_following"]
    assert normalize_question_type("temporal-reasoning") == norm["temporal_reasoning"]


def test_a_bad_chat_is_a_problem_and_the_others_still_load(tmp_path: Path) -> None:
    root = write_tier(tmp_path / "100K", chats=3)
    (root / "2" / "chat.json").write_text("[{not json", encoding="utf-8")
    items = json.loads((root / "3" / "probing_questions" / "probing_questions.json").read_text())
    del items["summarization"][0]["rubric"]
    (root / "3" / "probing_questions" / "probing_questions.json").write_text(json.dumps(items))
    with pytest.raises(DatasetError, match=r"2/chat.json: not valid JSON"):
        read_beam(root, None)
    problems: list[Problem] = []
    bench = read_beam(root, problems)
    assert list(bench.haystacks) == ["100K-1", "100K-3"] and len(bench.questions) == 19
    assert [p.question_id for p in problems] == [None, "100K-3-summarization-0"]
    assert "rubric" in problems[1].message


def test_dates_and_tiers() -> None:
    assert parse_beam_date("January-05-2024") == "2024-01-05"
    with pytest.raises(ValueError):
        parse_beam_date("2024-01-05")
    assert tier_pins("128k").tier == "100K" and tier_pins("500K").chats == 35
    with pytest.raises(DatasetError, match="unknown BEAM tier '2M'"):
        tier_pins("2M")


def test_the_shared_100k_copy_matches_every_pin(beam_100k: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DatasetWarning)  # a file that differs from its pin would warn
        bench = load_benchmark("beam", beam_100k)
    assert bench.name == "beam-100k" and len(bench.haystacks) == 20 and len(bench.questions) == 400
    by_type: dict[str, int] = {}
    for q in bench.questions:
        by_type[q.question_type] = by_type.get(q.question_type, 0) + 1
    assert by_type == dict.fromkeys(BEAM_ABILITIES, 40)
    spec = get_benchmark_spec("beam")
    assert spec.name == "beam-100k" and len(spec.files) == 40 and all(sha for _, _, sha in spec.files)
    rels = [rel for rel, _, _ in spec.files]
    lines = "".join(f"{hashlib.sha256((beam_100k / r).read_bytes()).hexdigest()}  {r}\n" for r in rels)
    assert bench.sha256 == hashlib.sha256(lines.encode()).hexdigest()
    assert spec.files[0][1] == (
        "https://raw.githubusercontent.com/mohammadtavakoli78/BEAM/b2a3ee8ba12d68f83143dda191097dc3e028ddd3"
        "/chats/100K/1/chat.json"
    )
    assert detect_benchmark(beam_100k) == "beam-100k"


def test_the_default_path_reads_the_download_cache(beam_100k: Path, tmp_path: Path) -> None:
    cache = tmp_path / "benchmarks"
    shutil.copytree(beam_100k, cache / "beam-100k", symlinks=True)
    bench = load_benchmark("beam", cache_dir=cache, download=False)
    assert len(bench.questions) == 400
    assert bench.sha256 == load_benchmark("beam", beam_100k).sha256
    (cache / "beam-100k" / "3" / "chat.json").write_text("[]", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"3/chat.json: the cached beam-100k file has sha256 .* expected"):
        load_benchmark("beam", cache_dir=cache, download=False)


def test_a_modified_local_copy_loads_with_a_warning(tmp_path: Path) -> None:
    root = write_tier(tmp_path / "100K", chats=2)
    with pytest.warns(DatasetWarning) as caught:
        bench = load_benchmark("beam", root)
    messages = [str(w.message) for w in caught]
    assert any("4 file(s) differ from their pins in beam-100k" in m for m in messages)
    assert any("36 file(s) of beam-100k are missing (e.g. 3/chat.json)" in m for m in messages)
    assert bench.sha256 == folder_sha256(
        root,
        [
            "1/chat.json",
            "1/probing_questions/probing_questions.json",
            "2/chat.json",
            "2/probing_questions/probing_questions.json",
        ],
    )


def test_tiers_without_pins_are_refused_for_download_naming_the_source(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"beam-1m: 26 of its 70 files have no pinned sha256 .*/chats/1M/"):
        load_benchmark("beam-1m", cache_dir=tmp_path)
    with pytest.raises(DatasetError, match="beam-10m: 10 of its 20 files"):
        load_benchmark("beam-10m", cache_dir=tmp_path)
    assert not any(tmp_path.iterdir())
    with pytest.warns(DatasetWarning):  # a local copy of such a tier still loads, marked unpinned
        bench = load_benchmark("beam-1m", write_tier(tmp_path / "copy", chats=1))
    assert bench.name == "beam-1m" and bench.questions[0].question_id == "1M-1-abstention-0"


def test_a_folder_benchmark_downloads_each_file_verified(
    tmp_path: Path, file_server, scratch_registry: None
) -> None:
    src = write_tier(tmp_path / "src", chats=2)
    rels = [
        "1/chat.json",
        "1/probing_questions/probing_questions.json",
        "2/chat.json",
        "2/probing_questions/probing_questions.json",
    ]
    files = []
    for rel in rels:
        data = (src / rel).read_bytes()
        file_server.files[f"t/{rel}"] = data
        files.append((rel, file_server.url(f"t/{rel}"), hashlib.sha256(data).hexdigest()))
    register_benchmark("beam-test", read_beam, files=tuple(files), source="test")
    bench = load_benchmark("beam-test", cache_dir=tmp_path / "cache", progress=False)
    assert len(bench.questions) == 20 and len(file_server.requests) == 4
    load_benchmark("beam-test", cache_dir=tmp_path / "cache", progress=False)
    assert len(file_server.requests) == 4  # cached: nothing downloaded again
    bad = ((rels[0], files[0][1], "0" * 64), *files[1:])
    register_benchmark("beam-bad", read_beam, files=bad, source="test")
    with pytest.raises(DatasetError, match="sha256 mismatch"):
        load_benchmark("beam-bad", cache_dir=tmp_path / "cache2", progress=False)
    assert not (tmp_path / "cache2" / "beam-bad" / rels[0]).exists()


def test_the_datasets_commands_handle_a_tier_folder(beam_100k: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from bench_nb.cli import cli

    listed = CliRunner().invoke(cli, ["datasets", "list", "--cache-dir", str(tmp_path)])
    assert "beam-100k (alias beam)" in listed.output and "44 of 70 files pinned" in listed.output
    ok = CliRunner().invoke(cli, ["datasets", "verify", str(beam_100k)])
    assert (
        ok.exit_code == 0
        and "holds: 400 questions, 20 haystacks" in ok.output
        and "MISMATCH" not in ok.output
    )
    copy = tmp_path / "100K"
    shutil.copytree(beam_100k, copy)
    (copy / "2" / "chat.json").write_text("[]", encoding="utf-8")
    bad = CliRunner().invoke(cli, ["datasets", "verify", str(copy)])
    assert bad.exit_code == 1 and "MISMATCH: 2/chat.json" in bad.output


def test_an_ability_that_is_not_a_list_is_a_problem_naming_it(tmp_path: Path) -> None:
    root = write_tier(tmp_path / "100K", chats=1)
    file = root / "1" / "probing_questions" / "probing_questions.json"
    items = json.loads(file.read_text())
    kept = sum(len(v) for k, v in items.items() if k != "temporal_reasoning")
    items["temporal_reasoning"] = {"question": "one question, not a list"}
    file.write_text(json.dumps(items))
    problems: list[Problem] = []
    bench = read_beam(root, problems)
    assert len(bench.questions) == kept  # the other abilities still load
    [problem] = problems
    assert (problem.path, problem.field) == (str(file), "temporal_reasoning")
    assert "not a list of questions (dict)" in problem.message
    with pytest.raises(DatasetError, match="temporal_reasoning"):
        read_beam(root, None)
