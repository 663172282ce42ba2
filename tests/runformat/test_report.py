import json
import subprocess
import sys
from pathlib import Path

from bench_nb.runformat.report import dumps_js, memorybench_report


def test_reproduces_memorybench_report_exactly(mb_example: Path) -> None:
    expected = (mb_example / "expected" / "report.json").read_text(encoding="utf-8")
    report = memorybench_report(
        mb_example / "data" / "runs" / "fx-compare-supermemory",
        mb_example / "data" / "benchmarks" / "locomo" / "locomo10.json",
        timestamp=json.loads(expected)["timestamp"],
    )
    assert dumps_js(report) == expected


def test_cli_writes_the_same_report_except_timestamp(mb_example: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "bench_nb",
            "memorybench-report",
            str(mb_example / "data" / "runs" / "fx-compare-supermemory"),
            "--dataset",
            str(mb_example / "data" / "benchmarks" / "locomo" / "locomo10.json"),
            "-o",
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    expected = json.loads((mb_example / "expected" / "report.json").read_text(encoding="utf-8"))
    got = json.loads(out.read_text(encoding="utf-8"))
    assert got.pop("timestamp") != ""
    expected.pop("timestamp")
    assert list(got) == list(expected)
    assert got == expected


def test_dumps_js_formats_numbers_like_javascript() -> None:
    assert dumps_js({"a": 1.0, "b": 0.5, "c": 1e-7, "d": [], "e": {}, "f": "<é>"}) == (
        '{\n  "a": 1,\n  "b": 0.5,\n  "c": 1e-7,\n  "d": [],\n  "e": {},\n  "f": "<é>"\n}'
    )
    assert dumps_js(1e21) == "1e+21"
    assert dumps_js(0.1 + 0.2) == "0.30000000000000004"
