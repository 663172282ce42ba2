from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from bench_nb.benchmarks import load_benchmark
from bench_nb.benchmarks.locomo import (
    LOCOMO_TYPE_REGISTRY,
    normalize_evidence,
    parse_locomo_date,
    read_locomo,
)
from bench_nb.errors import DatasetError, Problem
from bench_nb.records import Benchmark
from bench_nb.runformat.dataset import MEMORYBENCH_LOCOMO_TYPE_REGISTRY, read_memorybench_dataset
from bench_nb.taxonomy import LOCOMO_CATEGORIES, MEMORYBENCH_LOCOMO_LABELS

LOCOMO_SHA = "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"


@pytest.fixture(scope="module")
def locomo(locomo_path: Path) -> Benchmark:
    return load_benchmark("locomo", locomo_path)


def test_counts_match_the_paper(locomo: Benchmark) -> None:
    assert locomo.name == "locomo"
    assert locomo.sha256 == LOCOMO_SHA
    assert len(locomo.haystacks) == 10
    assert sum(len(h.sessions) for h in locomo.haystacks.values()) == 272
    assert sum(len(s.messages) for h in locomo.haystacks.values() for s in h.sessions) == 5882
    assert len(locomo.questions) == 1986
    assert Counter(q.category for q in locomo.questions) == {1: 282, 2: 321, 3: 96, 4: 841, 5: 446}
    assert Counter(q.question_type for q in locomo.questions) == {
        "multi-hop": 282,
        "temporal": 321,
        "open-domain": 96,
        "single-hop": 841,
        "adversarial": 446,
    }
    assert Counter(q.norm_type for q in locomo.questions)["abstention"] == 446


def test_ids_types_and_order_line_up_with_memorybench(locomo: Benchmark, locomo_path: Path) -> None:
    mb = read_memorybench_dataset(locomo_path)
    assert [q.question_id for q in locomo.questions] == [q.question_id for q in mb.questions]
    for ours, theirs in zip(locomo.questions, mb.questions, strict=True):
        assert ours.question_type == LOCOMO_CATEGORIES[theirs.category]  # the true label
        assert ours.norm_type == theirs.norm_type
        assert ours.category == theirs.category
        assert ours.question == theirs.question
        if ours.category != 5:
            assert ours.answer == theirs.ground_truth  # integers (2022) become "2022" in both


def test_session_dates_are_iso_with_the_raw_string_kept(locomo: Benchmark) -> None:
    first = locomo.haystacks["conv-26"].sessions[0]
    assert first.session_id == "conv-26-session_1"
    assert first.date == "2023-05-08T13:56:00"
    assert first.extra["date_raw"] == "1:56 pm on 8 May, 2023"
    assert all(s.date for h in locomo.haystacks.values() for s in h.sessions)
    # conv-26 has date keys for 35 sessions but turns for 19: only real sessions are read
    assert len(locomo.haystacks["conv-26"].sessions) == 19


def test_question_date_is_the_last_session_date(locomo: Benchmark) -> None:
    for q in locomo.questions:
        last = locomo.haystacks[q.haystack_id].sessions[-1]
        assert q.question_date == last.date
        assert q.extra["question_date_source"] == "last_session"
    q0 = locomo.questions[0]
    assert (q0.question_id, q0.question_date) == ("conv-26-q0", "2023-10-22T09:55:00")
    assert q0.extra["question_date_raw"] == "9:55 am on 22 October, 2023"


def test_adversarial_questions_are_unanswerable(locomo: Benchmark) -> None:
    adversarial = [q for q in locomo.questions if q.category == 5]
    assert all(q.answer == "" and q.is_abstention for q in adversarial)
    assert all("adversarial_answer" in q.extra for q in adversarial)
    # two adversarial items carry a stray "answer": kept, not used as ground truth
    assert sum("answer_raw" in q.extra for q in adversarial) == 2
    assert all(q.answer for q in locomo.questions if q.category != 5)


def test_evidence_ids_are_repaired_and_reachable(locomo: Benchmark) -> None:
    by_id = {q.question_id: q for q in locomo.questions}
    assert by_id["conv-26-q37"].evidence_ids == ("D8:6", "D9:17")
    assert by_id["conv-26-q37"].extra["evidence_raw"] == ["D8:6; D9:17"]
    assert by_id["conv-43-q18"].evidence_ids[4] == "D11:26"
    assert by_id["conv-50-q69"].evidence_ids == ("D30:5",)
    assert "D10:19" not in by_id["conv-42-q58"].evidence_ids  # names no turn of conv-42
    assert sum("evidence_raw" in q.extra for q in locomo.questions) == 9
    for q in locomo.questions:
        turns = {m.message_id for s in locomo.haystacks[q.haystack_id].sessions for m in s.messages}
        assert set(q.evidence_ids) <= turns


def test_messages_keep_speaker_dia_id_and_image_caption(locomo: Benchmark) -> None:
    sessions = locomo.haystacks["conv-26"].sessions
    first = sessions[0].messages[0]
    assert (first.role, first.message_id) == ("Caroline", "D1:1")
    assert {m.role for s in sessions for m in s.messages} == {"Caroline", "Melanie"}
    captioned = [m for s in sessions for m in s.messages if "[shares a photo: " in m.content]
    assert captioned and all(m.content.endswith("]") for m in captioned)


def test_type_registry_has_true_names_in_category_order(locomo: Benchmark) -> None:
    assert list(locomo.type_registry) == ["multi-hop", "temporal", "open-domain", "single-hop", "adversarial"]
    assert locomo.type_registry is LOCOMO_TYPE_REGISTRY
    assert all(set(v) == {"id", "alias", "description"} for v in LOCOMO_TYPE_REGISTRY.values())


def test_memorybench_reading_has_memorybench_registry_under_its_labels(locomo_path: Path) -> None:
    mb = read_memorybench_dataset(locomo_path)
    assert mb.type_registry is MEMORYBENCH_LOCOMO_TYPE_REGISTRY
    assert list(mb.type_registry) == list(MEMORYBENCH_LOCOMO_LABELS.values())  # its labels, in category order
    assert mb.type_registry["single-hop"] == LOCOMO_TYPE_REGISTRY["single-hop"]
    assert "world-knowledge" in mb.type_registry and "open-domain" not in mb.type_registry


@pytest.mark.parametrize(
    ("raw", "iso"),
    [
        ("1:56 pm on 8 May, 2023", "2023-05-08T13:56:00"),
        ("12:28 am on 8 November, 2023", "2023-11-08T00:28:00"),
        ("12:05 pm on 1 January, 2024", "2024-01-01T12:05:00"),
        ("9:55 AM on 22 october 2023", "2023-10-22T09:55:00"),
    ],
)
def test_parse_locomo_date(raw: str, iso: str) -> None:
    assert parse_locomo_date(raw) == iso


@pytest.mark.parametrize(
    "raw", ["13:00 pm on 8 May, 2023", "1:56 pm on 8 Mai, 2023", "8 May 2023", "1:56 pm on 31 June, 2023"]
)
def test_parse_locomo_date_refuses_other_text(raw: str) -> None:
    with pytest.raises(ValueError, match="not a LoCoMo date"):
        parse_locomo_date(raw)


def test_normalize_evidence() -> None:
    assert normalize_evidence(["D1:3", "D8:6; D9:17", "D:11:26", "D", "D30:05 D2:1"]) == (
        "D1:3",
        "D8:6",
        "D9:17",
        "D11:26",
        "D30:5",
        "D2:1",
    )


def _tiny(tmp_path: Path, qa: list[dict], date: str = "10:15 am on 3 March, 2024") -> Path:
    sample = {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ada",
            "speaker_b": "Bo",
            "session_1_date_time": date,
            "session_1": [{"speaker": "Ada", "dia_id": "D1:1", "text": "My dog is Rex."}],
        },
        "qa": qa,
    }
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([sample]), encoding="utf-8")
    return path


def test_a_bad_question_names_file_question_and_field(tmp_path: Path) -> None:
    path = _tiny(
        tmp_path,
        [
            {"question": "Dog?", "answer": "Rex", "evidence": ["D1:1"], "category": 4},
            {"question": "?", "category": 9},
        ],
    )
    with pytest.raises(DatasetError) as err:
        read_locomo(path)
    assert str(path) in str(err.value) and "conv-x-q1" in str(err.value) and "category 9" in str(err.value)
    problems: list[Problem] = []
    bench = read_locomo(path, problems)
    assert [q.question_id for q in bench.questions] == ["conv-x-q0"]
    assert len(problems) == 1 and problems[0].question_id == "conv-x-q1"
    assert problems[0].field == "conv-x.qa[1]"


def test_a_bad_session_date_is_an_error_naming_the_field(tmp_path: Path) -> None:
    path = _tiny(tmp_path, [], date="sometime in March")
    with pytest.raises(DatasetError, match=r"session_1_date_time.*not a LoCoMo date"):
        read_locomo(path)


def test_not_locomo_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"a": 1}', encoding="utf-8")
    with pytest.raises(DatasetError, match="LoCoMo samples"):
        read_locomo(path)
