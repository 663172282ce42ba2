"""Answer-key errata: the LoCoMo audit's errors.json (pinned by sha256, downloadable like the datasets) and
bench_nb's own errata format."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench_nb import load_errata
from bench_nb.benchmarks import DatasetWarning, fetch_benchmark, get_benchmark_spec, register_benchmark
from bench_nb.benchmarks.errata import ERRATA_FORMAT
from bench_nb.benchmarks.registry import get_errata_spec
from bench_nb.errors import DatasetError

PIN = get_errata_spec("locomo").sha256


@pytest.fixture
def served_errata(file_server, locomo_audit: Path) -> Iterator[bytes]:
    """LoCoMo registered with its errata file served by the test server at ``errors.json`` (restored after)."""
    body = (locomo_audit / "errors.json").read_bytes()
    file_server.files["errors.json"] = body
    locomo = get_benchmark_spec("locomo")
    fields = {f.name: getattr(locomo, f.name) for f in dataclasses.fields(locomo)}
    del fields["name"], fields["reader"]
    assert locomo.errata is not None
    served = dataclasses.replace(locomo.errata, url=file_server.url("errors.json"))
    register_benchmark("locomo", locomo.reader, replace=True, **{**fields, "errata": served})
    yield body
    register_benchmark("locomo", locomo.reader, replace=True, **fields)


def test_the_audits_errata_load_with_their_published_counts(locomo_audit: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DatasetWarning)  # the shared copy is the pinned file: no warning
        errata = load_errata(locomo_audit / "errors.json")
    assert errata.sha256 == PIN and errata.benchmark == "locomo" and errata.problems == ()
    # locomo-audit/NOTE.md: 156 entries; WRONG_CITATION 57, HALLUCINATION 33, TEMPORAL_ERROR 26,
    # ATTRIBUTION_ERROR 24, AMBIGUOUS 13, INCOMPLETE 3; the 99 others than WRONG_CITATION are wrong gold.
    assert len(errata) == 156
    assert errata.counts() == {
        "WRONG_CITATION": 57,
        "HALLUCINATION": 33,
        "TEMPORAL_ERROR": 26,
        "ATTRIBUTION_ERROR": 24,
        "AMBIGUOUS": 13,
        "INCOMPLETE": 3,
    }
    assert len(errata.wrong_gold) == 99
    shown = repr(errata)  # a line, not the 156 entries (130 KB)
    assert len(shown) < 400 and shown.startswith("Errata('locomo': 156 entries (57 WRONG_CITATION, 33 HALL")
    assert "99 with a wrong gold answer" in shown and "errors.json sha256 " in shown
    assert all(e.gold_wrong == (e.error_type != "WRONG_CITATION") for e in errata)


def test_errata_ids_are_bench_nbs_locomo_ids_and_their_texts_match_the_dataset(
    locomo_audit: Path, locomo_path: Path
) -> None:
    errata = load_errata(locomo_audit / "errors.json")
    data = json.loads(locomo_path.read_text())
    by_id = {f"{s['sample_id']}-q{i}": item for s in data for i, item in enumerate(s["qa"])}
    # locomo_0_qa1 is conv-26-q1 (conversation 0 in file order); every entry's text matches its mapped question
    assert "conv-26-q1" in errata and errata.entries["conv-26-q1"].question == by_id["conv-26-q1"]["question"]
    for e in errata:
        item = by_id[e.question_id]
        assert item["question"] == e.question and item["category"] == e.category


def test_a_registered_errata_file_is_verified_against_its_pin(locomo_audit: Path, tmp_path: Path) -> None:
    cached = tmp_path / "locomo-errata" / "errors.json"
    with pytest.raises(
        DatasetError,
        match=r"locomo-errata is not downloaded \(download=False\); run `bench-nb datasets download",
    ):
        load_errata("locomo", cache_dir=tmp_path, download=False)
    cached.parent.mkdir()
    shutil.copyfile(locomo_audit / "errors.json", cached)
    assert len(load_errata("locomo", cache_dir=tmp_path, download=False)) == 156
    modified = json.loads(cached.read_text())[:-1]
    cached.write_text(json.dumps(modified))
    actual = hashlib.sha256(cached.read_bytes()).hexdigest()
    with pytest.raises(DatasetError, match=f"sha256 mismatch: expected {PIN}, got {actual}"):
        load_errata("locomo-errata", cache_dir=tmp_path, download=False)
    # The same modified file read by path loads, with a warning naming both hashes.
    with pytest.warns(DatasetWarning, match=f"sha256 {actual} differs .*{PIN}"):
        assert len(load_errata(cached)) == 155


def test_download_goes_through_the_datasets_machinery(
    file_server, served_errata: bytes, tmp_path: Path
) -> None:
    body = served_errata
    errata = load_errata("locomo", cache_dir=tmp_path)
    assert len(errata) == 156 and (tmp_path / "locomo-errata" / "errors.json").read_bytes() == body
    assert file_server.requests == ["/errors.json"]
    load_errata("locomo", cache_dir=tmp_path)  # cached: no second request
    assert len(file_server.requests) == 1
    file_server.files["errors.json"] = body[:-2] + b"]"
    with pytest.raises(DatasetError, match="sha256 mismatch"):
        fetch_benchmark("locomo-errata", cache_dir=tmp_path, force=True, progress=False)
    assert (tmp_path / "locomo-errata" / "errors.json").read_bytes() == body  # the good copy is kept


def test_bench_nbs_own_errata_format_and_bad_entries(tmp_path: Path) -> None:
    path = tmp_path / "my-errata.json"
    entries = [
        {"question_id": "q1", "error_type": "WRONG_DATE", "gold_wrong": True, "corrected_answer": "May 2023"},
        {"question_id": "q2", "error_type": "TYPO", "gold_wrong": False},
        {"question_id": "q3", "error_type": "WRONG_DATE"},
        {"question_id": "q1", "error_type": "TYPO", "gold_wrong": False},
        "nonsense",
    ]
    path.write_text(json.dumps({"format": ERRATA_FORMAT, "benchmark": "mybench", "entries": entries}))
    errata = load_errata(path)
    assert errata.benchmark == "mybench" and list(errata.entries) == ["q1", "q2"]
    assert errata.wrong_gold == {"q1"} and errata.entries["q1"].corrected == "May 2023"
    assert [(p.field, p.question_id) for p in errata.problems] == [
        ("entries[2]", "q3"),
        ("entries[3]", None),
        ("entries[4]", None),
    ]
    assert "'gold_wrong' (true/false) are required" in errata.problems[0].message
    assert all(p.path == str(path) for p in errata.problems)
    (tmp_path / "other.json").write_text('{"entries": []}')
    with pytest.raises(DatasetError, match=r'not an errata file: .*"format": "bench_nb-errata/1"'):
        load_errata(tmp_path / "other.json")
    with pytest.raises(DatasetError, match="no such errata file"):
        load_errata(tmp_path / "missing.json")


def test_datasets_cli_lists_downloads_and_verifies_the_errata(served_errata: bytes, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from bench_nb.cli import cli

    body = served_errata
    cache = ["--cache-dir", str(tmp_path)]
    listed = CliRunner().invoke(cli, ["datasets", "list", *cache])
    assert (
        "locomo-errata (answer-key errata for locomo)" in listed.stdout and "not downloaded" in listed.stdout
    )
    got = CliRunner().invoke(cli, ["datasets", "download", "locomo-errata", *cache])
    assert got.exit_code == 0 and f"sha256 {PIN} (verified)" in got.stdout
    ok = CliRunner().invoke(cli, ["datasets", "verify", "locomo-errata", *cache])
    assert ok.exit_code == 0 and "pin: matches" in ok.stdout
    assert "holds: 156 entries, 99 wrong gold answers" in ok.stdout
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(json.loads(body)[:10]))
    bad = CliRunner().invoke(cli, ["datasets", "verify", str(changed), "-b", "locomo-errata"])
    assert bad.exit_code == 1 and f"pin: MISMATCH, expected {PIN}" in bad.stdout


def test_an_errata_name_with_a_typo_is_named_with_the_nearest_and_the_registered_names() -> None:
    """``load_errata("locmo")`` said only "no such errata file (and not a registered errata name)"."""
    with pytest.raises(DatasetError) as raised:
        load_errata("locmo", download=False)
    assert str(raised.value) == (
        "locmo: no such errata file; unknown errata 'locmo' (did you mean 'locomo'?); known: locomo-errata"
    )
