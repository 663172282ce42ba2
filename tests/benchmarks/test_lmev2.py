"""LongMemEval-V2 read from a hand-made folder in the official schema (tests/lmev2_data.py)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from bench_nb.benchmarks import DatasetWarning, get_benchmark_spec, load_benchmark
from bench_nb.benchmarks.lmev2 import read_longmemeval_v2
from bench_nb.benchmarks.registry import benchmark_traits, detect_benchmark
from bench_nb.errors import DatasetError, Problem
from lmev2_data import QUESTIONS, write_dataset


def test_questions_share_a_haystack_per_trajectory_list(tmp_path: Path) -> None:
    bench = read_longmemeval_v2(write_dataset(tmp_path / "lme"))
    assert bench.name == "longmemeval-v2-small"
    assert [q.question_id for q in bench.questions] == [q["id"] for q in QUESTIONS]
    assert sorted(bench.haystacks) == ["sn_procedure_005", "web_static_001"]  # one per distinct list
    by_id = {q.question_id: q for q in bench.questions}
    assert by_id["web_gotcha_004"].haystack_id == "web_static_001"
    assert by_id["sn_abs_006"].haystack_id == "sn_procedure_005"
    web = bench.haystacks["web_static_001"]
    assert [s.session_id for s in web.sessions] == ["web-1", "web-2"]
    first = web.sessions[0]
    assert first.date is None
    assert [m.message_id for m in first.messages] == ["web-1:goal", "web-1:0", "web-1:1", "web-1:outcome"]
    assert (
        first.messages[0].content == "Task: Export the pending orders\nStart URL: http://admin.example/orders"
    )
    step = first.messages[2]
    assert step.role == "assistant"
    assert step.content.splitlines() == [
        "URL: http://admin.example/orders?status=pending",
        "Thought: The export button sits above the orders grid.",
        "Action: click('Export')",
        "An order moves from Pending to Processing to Complete.",
    ]
    assert step.extra["screenshot"] == "screenshots/traj/0001.png"  # referenced, never read
    assert web.sessions[1].messages[0].content.startswith("Task: Post on the forum in the gardening forum")
    assert [m.message_id for m in web.sessions[1].messages][-1] == "web-2:0"  # no outcome, no outcome message


def test_each_question_keeps_its_rule_and_abstention_is_the_llm_abstention_rule(tmp_path: Path) -> None:
    bench = read_longmemeval_v2(write_dataset(tmp_path / "lme"))
    by_id = {q.question_id: q for q in bench.questions}
    q = by_id["web_dynamic_002"]
    assert q.extra["eval_function"] == "norm_phrase_set_match_ordered|separators=;"
    assert q.extra["category"] == "dynamic"
    assert q.extra["image"] == "question_images/web_dynamic_002.png"  # not required to exist
    assert q.extra["domain"] == "web"
    assert by_id["sn_abs_006"].is_abstention and by_id["sn_abs_006"].extra["category"] == "static-abs"
    assert [x.question_id for x in bench.questions if x.is_abstention] == ["sn_abs_006"]
    assert by_id["web_gotcha_004"].question_type == "errors-gotchas"


def test_the_medium_tier_reads_its_own_haystack_file(tmp_path: Path) -> None:
    bench = read_longmemeval_v2(write_dataset(tmp_path / "lme"), tier="Medium")
    assert bench.name == "longmemeval-v2-medium"
    assert [s.session_id for s in bench.haystacks["web_static_001"].sessions] == ["web-1", "web-2", "extra-1"]
    with pytest.raises(DatasetError, match="tiers: small, medium"):
        read_longmemeval_v2(tmp_path / "lme", tier="large")


def test_bad_lines_are_problems_naming_file_line_and_field(tmp_path: Path) -> None:
    rows = [dict(q) for q in QUESTIONS]
    rows[1].pop("eval_function")
    rows[2]["question_type"] = "procedure"
    rows[2]["eval_function"] = "llm_abstention_checker"
    root = write_dataset(tmp_path / "lme", rows)
    with (root / "questions.jsonl").open("a") as fh:
        fh.write("{not json\n")
    with (root / "trajectories.jsonl").open("a") as fh:
        fh.write(json.dumps({"id": "broken", "states": []}) + "\n")
    problems: list[Problem] = []
    bench = read_longmemeval_v2(root, problems)
    assert len(bench.questions) == 4  # what was good still loads
    text = [str(p) for p in problems]
    assert any("trajectories.jsonl" in t and "line 5" in t and "states" in t for t in text), text
    assert any("questions.jsonl" in t and "line 2" in t and "eval_function" in t for t in text), text
    assert any("line 3" in t and "-abs type" in t for t in text), text
    assert any("line 7" in t and "not valid JSON" in t for t in text), text
    with pytest.raises(DatasetError, match="line 5"):
        read_longmemeval_v2(root)  # strict: the first problem raises


def test_a_haystack_naming_an_unknown_trajectory_skips_the_question(tmp_path: Path) -> None:
    root = write_dataset(tmp_path / "lme")
    mapping = json.loads((root / "haystacks/lme_v2_small.json").read_text())
    mapping["web_static_001"] = ["web-1", "nowhere"]
    del mapping["sn_abs_006"]
    (root / "haystacks/lme_v2_small.json").write_text(json.dumps(mapping))
    problems: list[Problem] = []
    bench = read_longmemeval_v2(root, problems)
    assert "web_static_001" not in {q.question_id for q in bench.questions}
    assert any("'nowhere'" in str(p) and p.question_id == "web_static_001" for p in problems)
    assert any("no haystack entry" in str(p) and p.question_id == "sn_abs_006" for p in problems)


PINS = {  # the revision f152293 several independent public harnesses pin, and the sha256 they agree on
    "questions.jsonl": "0a3ae5ebea938c24d7800e1e0b0828e08ae1646f939a53853b2b8cdc08e292b7",
    "trajectories.jsonl": "363cec9a8e87aa8d9101ce4e600aadbf7031d674056ebe4f969e8424abc5f3c6",
    "haystacks/lme_v2_small.json": "9b5301defb23a088a5f06e45ff8d5f35e569d78305a66d492046a9fff9b46593",
    "haystacks/lme_v2_medium.json": "4756d5126347f0d18f045bb6c47b08cb3b23e9db24386cc48a9b2879e7969b59",
}


def test_registered_pinned_at_a_revision_and_detected(tmp_path: Path) -> None:
    root = write_dataset(tmp_path / "lme")
    spec = get_benchmark_spec("longmemeval-v2")
    assert spec.name == "longmemeval-v2-small" and get_benchmark_spec("lme-v2-medium").name.endswith("medium")
    for tier in ("small", "medium"):
        files = get_benchmark_spec(f"longmemeval-v2-{tier}").files
        assert [rel for rel, _, _ in files] == [
            "questions.jsonl",
            "trajectories.jsonl",
            f"haystacks/lme_v2_{tier}.json",
        ]
        assert {rel: sha for rel, _, sha in files} == {rel: PINS[rel] for rel, _, _ in files}
        assert all(
            url == f"https://huggingface.co/datasets/xiaowu0162/longmemeval-v2/resolve/"
            f"f152293e235517d504809563c833d7190b8c713b/{rel}"
            for rel, url, _ in files
        )
    # a hand-made copy is read, and said to differ from the published files
    with pytest.warns(DatasetWarning, match="3 file\\(s\\) differ from their pins in longmemeval-v2-small"):
        bench = load_benchmark("longmemeval-v2", root)
    assert len(bench.sha256) == 64
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DatasetWarning)
        assert load_benchmark("longmemeval-v2", root).sha256 == bench.sha256  # the same files, the same hash
    assert detect_benchmark(root) == "longmemeval-v2-small"
    assert benchmark_traits("longmemeval-v2-small").default_judges == ("lme-v2",)


def test_datasets_verify_checks_each_file_against_its_pin(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from bench_nb.cli import cli

    root = write_dataset(tmp_path / "lme")
    result = CliRunner().invoke(cli, ["datasets", "verify", str(root), "-b", "longmemeval-v2"])
    assert result.exit_code == 1, result.output
    for rel in ("questions.jsonl", "trajectories.jsonl", "haystacks/lme_v2_small.json"):
        assert f"MISMATCH: {rel}, expected {PINS[rel]}" in result.output
    assert "f152293" in result.output  # the source names the pinned revision


def test_a_cached_copy_that_differs_from_its_pin_is_refused(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    write_dataset(cache / "longmemeval-v2-small")
    with pytest.raises(DatasetError, match="expected 0a3ae5eb"):
        load_benchmark("longmemeval-v2", cache_dir=cache, download=False)


def test_an_uncached_download_is_refused_offline_naming_the_command(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="download=False"):
        load_benchmark("longmemeval-v2", cache_dir=tmp_path, download=False)


def test_a_pinned_download_is_verified_and_cached(
    tmp_path: Path, file_server, scratch_registry: None
) -> None:
    from functools import partial

    from bench_nb.benchmarks import register_benchmark
    from bench_nb.benchmarks.download import sha256_file

    src = write_dataset(tmp_path / "src")
    rels = ["questions.jsonl", "trajectories.jsonl", "haystacks/lme_v2_small.json"]
    for rel in rels:
        file_server.files[f"d/{rel}"] = (src / rel).read_bytes()
    register_benchmark(
        "lmev2-test",
        partial(read_longmemeval_v2, tier="small"),
        files=tuple((rel, file_server.url(f"d/{rel}"), sha256_file(src / rel)) for rel in rels),
        source="a local test server",
    )
    bench = load_benchmark("lmev2-test", cache_dir=tmp_path / "cache", progress=False)
    assert len(bench.questions) == len(QUESTIONS) and len(file_server.requests) == 3
    load_benchmark("lmev2-test", cache_dir=tmp_path / "cache", progress=False)
    assert len(file_server.requests) == 3  # cached: nothing downloaded again
