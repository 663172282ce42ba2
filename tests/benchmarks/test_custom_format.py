from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench_nb.benchmarks import load_benchmark, read_custom, write_custom
from bench_nb.errors import DatasetError, Problem


def _doc() -> dict[str, Any]:
    return {
        "name": "team-bench",
        "types": {"fact": {"alias": "f", "description": "Plain facts"}},
        "conversations": [
            {
                "id": "c1",
                "sessions": [
                    {
                        "id": "c1-s1",
                        "date": "2024-03-04T09:15:00",
                        "messages": [
                            {
                                "id": "m1",
                                "role": "Ada",
                                "content": "My dog is called Rex.",
                                "timestamp": "2024-03-04T09:15:00",
                            },
                            {"role": "Bo", "content": "Nice name!"},
                        ],
                    },
                    {
                        "id": "c1-s2",
                        "messages": [
                            {
                                "role": "Ada",
                                "content": "We moved to Oslo.",
                                "timestamp": "2024-04-01T18:00:00+02:00",
                            }
                        ],
                    },
                ],
            }
        ],
        "questions": [
            {
                "id": "q1",
                "conversation": "c1",
                "question": "What is Ada's dog called?",
                "answer": "Rex",
                "type": "fact",
                "evidence": ["m1"],
            },
            {
                "id": "q2",
                "conversation": "c1",
                "question": "Where does Ada live?",
                "answer": "Oslo",
                "type": "knowledge-update",
                "evidence": ["c1-s2"],
                "question_date": "2024-05-01",
            },
            {
                "id": "q3",
                "conversation": "c1",
                "question": "How many dogs?",
                "answer": 1,
                "type": "count",
                "norm_type": "multi-hop",
                "metadata": {"difficulty": "easy"},
            },
            {
                "id": "q4",
                "conversation": "c1",
                "question": "What is Bo's cat called?",
                "answer": "",
                "type": "unanswerable",
            },
        ],
    }


def _write(tmp_path: Path, doc: Any, name: str = "bench.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _jsonl(tmp_path: Path, lines: list[Any]) -> Path:
    path = tmp_path / "bench.jsonl"
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8"
    )
    return path


def test_reads_the_documented_shape(tmp_path: Path) -> None:
    bench = load_benchmark("custom", _write(tmp_path, _doc()))
    assert bench.name == "team-bench"
    assert bench.sha256 is not None and len(bench.sha256) == 64
    s1, s2 = bench.haystacks["c1"].sessions
    assert [m.message_id for m in s1.messages] == ["m1", "c1-s1:2"]  # default id: <session>:<n>
    assert s1.date == "2024-03-04T09:15:00"
    assert s2.date == "2024-04-01T18:00:00+02:00"  # from its first message
    q1, q2, q3, q4 = bench.questions
    assert (q1.question_type, q1.norm_type, q1.evidence_ids) == ("fact", "other", ("m1",))
    assert (q2.norm_type, q2.question_date) == ("knowledge-update", "2024-05-01")
    assert (q3.answer, q3.norm_type, q3.extra) == ("1", "multi-hop", {"difficulty": "easy"})
    assert (q4.answer, q4.norm_type) == ("", "abstention")
    assert bench.type_registry["fact"] == {"id": "fact", "alias": "f", "description": "Plain facts"}
    assert bench.type_registry["count"] == {"id": "count", "alias": "count", "description": ""}


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_round_trip_of_the_sample(tmp_path: Path, suffix: str) -> None:
    sample = load_benchmark("sample")
    path = write_custom(sample, tmp_path / f"copy{suffix}")
    again = load_benchmark("custom", path)
    assert again.questions == sample.questions
    assert again.haystacks == sample.haystacks
    assert again.type_registry == sample.type_registry
    assert [q.extra for q in again.questions] == [q.extra for q in sample.questions]


def test_round_trip_of_locomo_keeps_every_field(tmp_path: Path, locomo_path: Path) -> None:
    locomo = load_benchmark("locomo", locomo_path)
    again = load_benchmark("custom", write_custom(locomo, tmp_path / "locomo.jsonl"))
    assert again.name == "locomo"
    assert again.questions == locomo.questions
    assert [q.extra for q in again.questions] == [q.extra for q in locomo.questions]
    assert again.haystacks == locomo.haystacks
    assert [s.extra for h in again.haystacks.values() for s in h.sessions] == [
        s.extra for h in locomo.haystacks.values() for s in h.sessions
    ]


def test_jsonl_errors_name_file_line_and_field(tmp_path: Path) -> None:
    doc = _doc()
    bad_q = dict(doc["questions"][0], id="qx", answer=None)
    path = _jsonl(
        tmp_path,
        [
            {"kind": "benchmark", "name": "t"},
            {"kind": "conversation", **doc["conversations"][0]},
            {"kind": "question", **doc["questions"][0]},
            bad_q | {"kind": "question"},
            "{not json",
            {"kind": "question", **dict(doc["questions"][1], evidence=["nowhere"])},
            {"kind": "question", **dict(doc["questions"][1], answer="  ")},
            {"kind": "question", **dict(doc["questions"][1], id="q9", question_date="May 1st")},
            {"kind": "question", **dict(doc["questions"][1], id="q1")},
            {"kind": "quiz"},
        ],
    )
    with pytest.raises(DatasetError) as err:
        read_custom(path)
    assert str(err.value).startswith(f"{path}:4 [question qx] (field answer)")
    problems: list[Problem] = []
    bench = read_custom(path, problems)
    assert [q.question_id for q in bench.questions] == ["q1"]
    where = [(p.path.rsplit(":", 1)[-1], p.field) for p in problems]
    assert ("4", "answer") in where
    assert ("5", None) in where
    assert ("8", "question_date") in where
    assert ("10", "kind") in where
    # cross-record checks come after parsing, with the line of the record at fault
    assert ("6", "evidence") in where and ("7", "answer") in where and ("9", "id") in where
    text = "\n".join(map(str, problems))
    assert "not valid JSON" in text
    assert "['nowhere'] name no message or session of c1" in text
    assert "not an ISO-8601 date" in text
    assert "empty answer" in text
    assert "duplicate question id" in text


def test_json_errors_name_the_record_and_nested_field(tmp_path: Path) -> None:
    doc = _doc()
    doc["conversations"][0]["sessions"][0]["messages"][1]["timestmp"] = "2024-03-04"
    doc["conversations"].append(
        {
            "id": "c2",
            "sessions": [{"id": "s", "date": "2024-13-01", "messages": [{"role": "A", "content": "hi"}]}],
        }
    )
    doc["questions"].append(
        {"id": "q5", "conversation": "c2", "question": "?", "answer": "x", "type": "fact"}
    )
    path = _write(tmp_path, doc)
    problems: list[Problem] = []
    bench = read_custom(path, problems)
    fields = {(p.path, p.field) for p in problems}
    assert (f"{path} (conversations[0])", "sessions[0].messages[1].timestmp") in fields
    assert (f"{path} (conversations[1])", "sessions[0].date") in fields
    assert any(p.question_id == "q1" and "no conversation 'c1' was loaded" in p.message for p in problems)
    assert bench.questions == () and bench.haystacks == {}
    with pytest.raises(DatasetError, match=r"timestmp"):
        read_custom(path)


def test_unreadable_files_are_clear(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"conversations": [\n  {"id": 1,}\n]}', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"broken.json: not valid JSON: .*line 2"):
        read_custom(broken)
    with pytest.raises(DatasetError, match="expected a JSON object"):
        read_custom(_write(tmp_path, [1, 2]))
    with pytest.raises(DatasetError, match=r"unknown top-level field\(s\) \['quesitons'\]"):
        read_custom(_write(tmp_path, {"conversations": [], "quesitons": []}))
    with pytest.raises(DatasetError, match="no such dataset file"):
        load_benchmark("custom", tmp_path / "missing.json")


def test_duplicate_ids_inside_a_conversation(tmp_path: Path) -> None:
    doc = _doc()
    doc["conversations"][0]["sessions"][1]["messages"][0]["id"] = "m1"
    with pytest.raises(DatasetError, match="duplicate id 'm1' in conversation c1"):
        read_custom(_write(tmp_path, doc))


def test_the_documented_example_loads(tmp_path: Path) -> None:
    import re

    doc = (Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    example = re.search(r"```json\n(.*?)```", doc, re.S)
    assert example is not None
    bench = load_benchmark("custom", _write(tmp_path, json.loads(example.group(1))))
    assert bench.name == "support-bot"
    assert [(q.question_id, q.norm_type, q.answer) for q in bench.questions] == [
        ("q1", "single-hop", "monthly"),
        ("q2", "knowledge-update", "Pro"),
        ("q3", "abstention", ""),
    ]
    assert bench.haystacks["cust-17"].sessions[1].date == "2024-05-20T14:02:00"
