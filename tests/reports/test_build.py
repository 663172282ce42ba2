"""Reports built for real: papermill executes the notebooks, nbconvert exports them."""

from __future__ import annotations

import re
import threading
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest
from notebook_files import write_notebook

import bench_nb
from bench_nb.cli import main
from bench_nb.cli.reporting import parse_params
from bench_nb.errors import ReportError
from bench_nb.reports import build_all, build_report, execute_notebook, make_server, read_index

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
EXTERNAL = re.compile(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", re.I)

FIXTURE_GLOB = str(Path(__file__).resolve().parents[1] / "fixtures" / "runs" / "*")


@pytest.fixture(scope="session")
def fixture_glob() -> str:
    return FIXTURE_GLOB


def _failing_notebook(path: Path) -> Path:
    return write_notebook(path, "y = x + 1", "raise ValueError(f'bad x {x}')", params="x = 1")


def test_committed_notebooks_have_no_outputs_and_literal_parameters() -> None:
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        assert nb.metadata["kernelspec"]["name"] == "python3", path.name
        first = nb.cells[0]
        assert first.cell_type == "code" and "parameters" in first.metadata.get("tags", []), path.name
        for line in first.source.splitlines():
            assert re.match(r"^\w+ = (\"[^\"]*\"|-?[\d.]+|None|True|False|\[[^\]]*\])\s*(#.*)?$", line), line
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert not cell.outputs and cell.execution_count is None, path.name


@pytest.mark.notebook
def test_compare_report_is_one_offline_file_with_charts_and_an_index(
    tmp_path: Path, fixture_glob: str
) -> None:
    out = tmp_path / "site" / "compare.html"
    built = build_report("compare", {"runs": fixture_glob, "title": "Fixtures <b>&</b> friends"}, out)
    html = out.read_text()
    assert built.path == out and not EXTERNAL.findall(html)
    assert "<script src" not in html and "cdnjs" not in html
    assert html.count("<svg") >= 6  # MemScore, accuracy, outcomes, latency, tokens, kappa
    assert "Fixtures &lt;b&gt;&amp;&lt;/b&gt; friends" in html
    assert "<script>alert" not in html and "<img src=x" not in html
    # shown as text, escaped as the table displayed it (its HTML is put in the page after nbconvert's export)
    assert "&lt;script&gt;alert(&quot;bench_nb&quot;)&lt;/script&gt;" in html
    assert "application/vnd.bench-nb" not in html  # the index summary is stripped from the page
    assert "BEAM" not in html  # no BEAM runs: no BEAM section, not even its heading
    scores = bench_nb.memscore(fixture_glob, backend="polars")
    entry = read_index(out.parent).reports[0]
    assert entry.file == "compare.html" and entry.title == "Fixtures <b>&</b> friends"
    assert {(r.run_id, r.memscore) for r in entry.runs} == set(
        scores.select("run_id", "memscore").iter_rows()
    )
    index = (out.parent / "index.html").read_text()
    assert 'href="compare.html"' in index and "Fixtures &lt;b&gt;" in index
    for ms in scores["memscore"]:
        assert ms in index


@pytest.mark.notebook
def test_a_failing_notebook_names_the_cell(tmp_path: Path) -> None:
    nb = _failing_notebook(tmp_path / "broken.ipynb")
    with pytest.raises(
        ReportError, match=r"broken\.ipynb failed in cell \d+ \(`raise ValueError.*ValueError: bad x 5"
    ) as err:
        build_report(nb, {"x": 5}, tmp_path / "out" / "broken.html")
    assert "broken.failed.ipynb" in str(err.value)
    assert (tmp_path / "out" / "broken.failed.ipynb").is_file()
    assert not (tmp_path / "out" / "broken.html").exists()


@pytest.mark.notebook
def test_report_all_builds_the_others_and_exits_non_zero(tmp_path: Path, fixture_glob: str, capsys) -> None:
    broken = _failing_notebook(tmp_path / "broken.ipynb")
    config = tmp_path / "reports.toml"
    config.write_text(
        f"""output_dir = "site"
[[report]]
name = "{broken}"
[[report]]
name = "explore"
output = "explore-fixtures.html"
[report.parameters]
runs = "{fixture_glob}"
"""
    )
    outcomes = build_all(config)
    assert [o.ok for o in outcomes] == [False, True]
    assert (tmp_path / "site" / "explore-fixtures.html").is_file()
    with pytest.raises(SystemExit) as exit_:
        main(["report", "--all", "--config", str(config)])
    assert exit_.value.code == 1
    captured = capsys.readouterr()
    assert "1 built, 1 failed" in captured.out and "broken.ipynb failed in cell" in captured.err


def test_config_errors_name_the_field(tmp_path: Path) -> None:
    config = tmp_path / "r.toml"
    config.write_text('[[report]]\nname = "compare"\nparams = {}\n')
    with pytest.raises(ReportError, match=r"r\.toml \(field report\.0\.params\)"):
        build_all(config)
    with pytest.raises(ReportError, match="no notebook named 'nope'"):
        build_report("nope")


def test_parse_params() -> None:
    assert parse_params(
        (("runs", "a/*"), ("runs", "b/*"), ("k", "10"), ("x", "0.5"), ("q", "none"), ("b", "true"))
    ) == {
        "runs": ["a/*", "b/*"],
        "k": 10,
        "x": 0.5,
        "q": None,
        "b": True,
    }
    assert parse_params((("ids", '["a", "b"]'),)) == {"ids": ["a", "b"]}


def test_run_s_and_report_p_read_a_value_by_one_rule() -> None:
    """``bench-nb run -s KEY=VALUE`` reads its value as ``bench-nb report -p KEY VALUE`` does (docs/reports.md);
    before, ``-s`` read JSON: ``True`` and ``none`` stayed text, a quoted ``"x"`` lost its quotes."""
    from bench_nb.cli.run import _key_values

    texts = [
        "True",
        "none",
        "null",
        '"quoted"',
        "1_000",
        "inf",
        "10",
        "0.5",
        "[1, 2]",
        '{"a": 1}',
        "episodes",
        "",
    ]
    for text in texts:
        assert _key_values((f"k={text}",), "--provider-setting") == parse_params((("k", text),)), text
    assert _key_values(("infer=True", "mode=none"), "--provider-setting") == {"infer": True, "mode": None}


def test_an_id_with_leading_zeros_or_underscores_stays_text_for_run_s_and_report_p() -> None:
    """``-s user_id=007`` is the id "007", not the number 7 (``-s`` read JSON numbers before it took ``-p``'s
    rule, and JSON has no leading zeros or underscores); numbers as people write them still are numbers."""
    from bench_nb.cli.run import _key_values

    for text in ("007", "-007", "0042", "2024_01", "1_000"):
        assert _key_values((f"user_id={text}",), "--provider-setting") == {"user_id": text}
        assert parse_params((("user_id", text),)) == {"user_id": text}
    numbers = {"0": 0, "7": 7, "-3": -3, "0.5": 0.5, ".5": 0.5, "1e5": 100000.0, "-0.25": -0.25, "10": 10}
    for text, value in numbers.items():
        assert _key_values((f"k={text}",), "--provider-setting") == {"k": value}


def test_serve_binds_loopback_and_serves_reports(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<h1>hello</h1>")
    server = make_server(tmp_path, port=0)
    host, port = server.server_address[:2]
    assert host == "127.0.0.1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/index.html", timeout=5) as resp:
            assert resp.read() == b"<h1>hello</h1>"
    finally:
        server.shutdown()
        server.server_close()
    with pytest.raises(ReportError, match="no such directory"):
        make_server(tmp_path / "missing")


@pytest.mark.notebook
@pytest.mark.parametrize("name", ["explore", "judge_disagreement"])
def test_notebooks_execute_on_fixture_runs(tmp_path: Path, fixture_glob: str, name: str) -> None:
    out = tmp_path / f"{name}.ipynb"
    execute_notebook(NOTEBOOKS / f"{name}.ipynb", {"runs": fixture_glob}, out)
    nb = nbformat.read(out, as_version=4)
    assert not [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]


@pytest.mark.notebook
def test_run_benchmark_notebook_runs_the_sample(tmp_path: Path) -> None:
    out = tmp_path / "run.html"
    params = {"provider": "sqlite", "limit": 6, "runs_dir": str(tmp_path / "runs"), "run_id": "nb-run"}
    build_report("run_benchmark", params, out, index=False)
    assert (tmp_path / "runs" / "nb-run" / "checkpoint.json").is_file()
    html = out.read_text()
    q = bench_nb.questions_df(tmp_path / "runs" / "nb-run", backend="polars")
    assert len(q) == 6 and bench_nb.memscore(q)["memscore"][0] in html
    assert f"Receipt sha256 {bench_nb.make_receipt(tmp_path / 'runs' / 'nb-run').sha256}" in html
    assert html.count("<svg") >= 2 and not EXTERNAL.findall(html)


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie waiting to be reaped does not count)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


@pytest.mark.notebook
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to see processes")
def test_the_kernel_and_what_it_started_are_gone_after_a_report(tmp_path: Path) -> None:
    # build_report kills the kernel's process group once every output is in (no graceful shutdown, which
    # would wait for the kernel to finalize): a process the notebook started must not outlive the report.
    write_notebook(
        tmp_path / "spawn.ipynb",
        "import os, subprocess\n"
        "child = subprocess.Popen(['sleep', '300'])\n"
        f"open({str(tmp_path / 'pids')!r}, 'w').write(f'{{os.getpid()}} {{child.pid}}')\n"
        "print('started', child.pid)",
    )
    built = build_report(tmp_path / "spawn.ipynb", {}, tmp_path / "spawn.html", index=False)
    assert "started" in built.path.read_text()
    kernel, child = map(int, (tmp_path / "pids").read_text().split())
    for pid in (kernel, child):
        deadline = time.monotonic() + 10
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid), f"process {pid} outlived the report"


def test_serve_on_a_busy_port_prints_one_line_and_exits_1(tmp_path: Path) -> None:
    import socket
    import subprocess
    import sys

    (tmp_path / "index.html").write_text("<h1>hello</h1>")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "bench_nb", "serve", "--port", str(port), "--dir", str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"error: cannot serve {tmp_path} on 127.0.0.1:{port}: Address already in use (another server is using "
        "it: pick another with --port, or --port 0 for a free one)"
    ]
