"""Other harnesses' result files load as runs: EverMemOS's eval_results.json (the public LoCoMo audit's runs and
its judge stress test), with LoCoMo's canonical question ids and every judge replicate."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from bench_nb import judgments_df, load_runs, questions_df
from bench_nb.errors import RunFormatError, RunFormatWarning
from bench_nb.runformat.harnesses import find_importer

FC_RUNS = ("gpt-4o-mini-memos", "gpt-4o-mini-cot")


def _eval_results(path: Path, rows: list[dict], **extra: object) -> Path:
    """A small eval_results.json in EverMemOS's format."""
    path.parent.mkdir(parents=True, exist_ok=True)
    by_conv: dict[str, list[dict]] = {}
    for r in rows:
        conv = r["question_id"].split("_")[1] if r["question_id"].startswith("locomo_") else "0"
        by_conv.setdefault(f"locomo_exp_user_{conv}", []).append(r)
    path.write_text(json.dumps({"total_questions": len(rows), "detailed_results": by_conv, **extra}))
    return path


def _row(qid: str, question: str, verdicts: list[object], category: str = "4") -> dict:
    return {
        "question_id": qid,
        "question": question,
        "golden_answer": "gold",
        "generated_answer": "answer",
        "llm_judgments": {f"judgment_{i}": v for i, v in enumerate(verdicts, start=1)},
        "category": category,
    }


def test_a_folder_of_eval_results_loads_each_run_with_its_harness_and_judge(locomo_audit: Path) -> None:
    runs = load_runs(locomo_audit / "fc-baseline")
    assert [r.run_id for r in runs] == ["gpt-4o-mini-cot", "gpt-4o-mini-memos"]
    assert runs.all_problems == []
    for run in runs:
        assert run.harness == "evermemos" and run.imported is not None
        assert run.imported.judge == "gpt-4o-mini" and run.checkpoint is not None
        assert run.checkpoint.judge == "gpt-4o-mini" and run.checkpoint.answeringModel == "gpt-4o-mini"
        assert run.imported.replicates == 3 and len(run.checkpoint.questions) == 1540
    assert {r.imported.answer_prompt for r in runs if r.imported} == {
        "answer_prompt_memos",
        "answer_prompt_cot",
    }


def test_questions_get_locomo_canonical_ids_checked_against_the_dataset(
    locomo_audit: Path, locomo_path: Path
) -> None:
    runs = load_runs(
        locomo_audit / "fc-baseline" / "gpt-4o-mini-memos" / "eval_results.json", dataset=locomo_path
    )
    assert runs.all_problems == []
    run = runs[0]
    assert run.imported is not None and run.imported.checked_against == str(locomo_path)
    q = questions_df(runs, backend="polars")
    # locomo_0_qa0 is conversation 0 (conv-26), index 0 of its full qa list: bench_nb's own id conv-26-q0.
    first = q.filter(pl.col("question_id") == "conv-26-q0").row(0, named=True)
    assert first["question"] == "When did Caroline go to the LGBTQ support group?"
    assert first["container_tag"] == "conv-26" and first["true_category"] == 2
    assert first["question_type_norm"] == "temporal" and first["harness"] == "evermemos"
    # conv-30 has a category-5 question at index 79: the full-list index skips it, it is not renumbered.
    assert "conv-30-q79" not in q["question_id"].to_list() and "conv-30-q80" in q["question_id"].to_list()
    data = json.loads(locomo_path.read_text())
    texts = {f"{s['sample_id']}-q{i}": item["question"] for s in data for i, item in enumerate(s["qa"])}
    assert all(texts[qid] == text for qid, text in q.select("question_id", "question").iter_rows())
    assert q["question_type_norm"].value_counts().sort("question_type_norm").rows() == [
        ("multi-hop", 282),
        ("open-domain", 96),
        ("single-hop", 841),
        ("temporal", 321),
    ]


def test_what_the_file_does_not_record_is_null_not_zero(locomo_audit: Path) -> None:
    q = questions_df(locomo_audit / "fc-baseline" / "gpt-4o-mini-cot", backend="polars")
    for col in (
        "search_ms",
        "answer_ms",
        "total_ms",
        "context_tokens",
        "prompt_tokens",
        "search_result_count",
    ):
        assert q[col].null_count() == len(q) == 1540, col
    assert q["status"].unique().to_list() == ["evaluated"]


def test_judgments_have_one_row_per_replicate_and_the_checkpoint_holds_their_majority(
    locomo_audit: Path,
) -> None:
    runs = load_runs(locomo_audit / "fc-baseline")
    j = judgments_df(runs, backend="polars")
    assert j.columns.index("replicate") == j.columns.index("judge") + 1
    assert len(j) == 2 * 3 * 1540 and set(j["source"]) == {"imported"} and j["primary"].all()
    raw = json.loads((locomo_audit / "fc-baseline" / "gpt-4o-mini-memos" / "eval_results.json").read_text())
    split = next(
        r
        for rows in raw["detailed_results"].values()
        for r in rows
        if len(set(r["llm_judgments"].values())) == 2
    )
    conv, index = split["question_id"].removeprefix("locomo_").split("_qa")
    qid = f"{('conv-26', 'conv-30', 'conv-41', 'conv-42', 'conv-43', 'conv-44', 'conv-47', 'conv-48', 'conv-49', 'conv-50')[int(conv)]}-q{index}"
    mine = j.filter((pl.col("run_id") == "gpt-4o-mini-memos") & (pl.col("question_id") == qid)).sort(
        "replicate"
    )
    assert mine["score"].to_list() == [int(split["llm_judgments"][f"judgment_{i}"]) for i in (1, 2, 3)]
    q = questions_df(runs, backend="polars").filter(
        (pl.col("run_id") == "gpt-4o-mini-memos") & (pl.col("question_id") == qid)
    )
    assert q["correct"].item() == (sum(mine["score"]) >= 2)


def test_per_replicate_accuracies_are_the_published_run_scores(locomo_audit: Path) -> None:
    """locomo-audit/NOTE.md: memos runs 74.22, 74.29, 74.35; cot 79.81, 79.81, 80.06 (and the files' own)."""
    runs = load_runs(locomo_audit / "fc-baseline")
    j = judgments_df(runs, backend="polars")
    acc = j.group_by("run_id", "replicate").agg(pl.col("score").mean() * 100).sort("run_id", "replicate")
    by_run = {rid: [round(v, 2) for v in part["score"]] for (rid,), part in acc.group_by("run_id")}
    assert by_run == {"gpt-4o-mini-memos": [74.22, 74.29, 74.35], "gpt-4o-mini-cot": [79.81, 79.81, 80.06]}
    for run in runs:
        assert run.imported is not None
        published = [round(100 * s, 2) for s in run.imported.published["run_scores"]]
        assert published == by_run[run.run_id]


def test_the_judge_stress_test_loads_with_an_unknown_judge(locomo_audit: Path) -> None:
    runs = load_runs(locomo_audit / "ap-baseline" / "v1" / "ap_eval_results_scored.json")
    run = runs[0]
    assert run.run_id == "ap_eval_results_scored" and run.harness == "evermemos"
    assert run.imported is not None and run.imported.judge == "unknown" and run.imported.replicates == 3
    assert find_importer(Path(run.path))[0].name == "evermemos"
    j = judgments_df(runs, backend="polars")
    assert (
        set(j["judge"]) == {"unknown (evermemos)"} and len(j) == 3 * 1540
    )  # named by harness: never equal to another
    per_rep = j.group_by("replicate").agg(pl.col("score").mean() * 100).sort("replicate")["score"]
    assert [round(v, 2) for v in per_rep] == [10.58, 10.78, 10.45]  # NOTE.md: runs 10.58, 10.78, 10.45


def test_format_can_be_forced_and_a_wrong_one_is_a_clear_error(locomo_audit: Path, tmp_path: Path) -> None:
    path = locomo_audit / "fc-baseline" / "gpt-4o-mini-memos" / "eval_results.json"
    assert len(load_runs(path, format="evermemos")[0].checkpoint.questions) == 1540  # type: ignore[union-attr]
    with pytest.raises(RunFormatError, match="not a mem0 file"):
        load_runs(path, format="mem0", strict=True)
    with pytest.raises(
        ValueError,
        match=r"format must be one of longmemeval-v2, longmemeval, .*evermemos, zep, mem0, amb, memorybench, bench_nb",
    ):
        load_runs(path, format="other")  # type: ignore[arg-type]
    with pytest.raises(RunFormatError, match="not a run directory of the memorybench format"):
        load_runs(path, format="memorybench", strict=True)
    other = tmp_path / "notes.json"
    other.write_text('{"hello": 1}')
    with pytest.warns(RunFormatWarning, match="not a run format bench_nb reads"):
        lenient = load_runs(other)
    assert len(lenient) == 0 and "not a run format bench_nb reads" in lenient.problems[0].message


def test_unmatched_and_malformed_questions_are_reported_by_file_and_question(
    tmp_path: Path, locomo_path: Path
) -> None:
    path = _eval_results(
        tmp_path / "mine" / "eval_results.json",
        [
            _row("locomo_0_qa0", "When did Caroline go to the LGBTQ support group?", [True, True, False]),
            _row("locomo_0_qa1", "A question LoCoMo never asked?", [True, True, True]),
            _row("q-17", "When did Melanie paint a sunrise?", [False, False, False]),
            _row("locomo_0_qa3", "What did Caroline research?", [True, "yes", None]),
        ],
    )
    with pytest.warns(RunFormatWarning, match="4 problems loading runs"):
        runs = load_runs(path, dataset=locomo_path)
    problems = runs.all_problems
    assert all(p.path == str(path) for p in problems)
    by_qid: dict[str | None, str] = {}
    for p in problems:
        by_qid[p.question_id] = by_qid.get(p.question_id, "") + p.message + "\n"
    assert "matches no LoCoMo question of conversation 0" in by_qid["locomo_0_qa1"]
    assert "is not locomo_<conversation>_qa<index>" in by_qid["q-17"]
    assert "judgment_2 is 'yes', not true/false" in by_qid["locomo_0_qa3"]
    assert "judgment_3 is None" in by_qid["locomo_0_qa3"]
    q = questions_df(runs, backend="polars")
    # Nothing is dropped: unmatched questions stay under their own id, paired with no other run.
    assert q["question_id"].to_list() == ["conv-26-q0", "locomo_0_qa1", "q-17", "conv-26-q3"]
    # the last: one verdict true, two not recorded -> the majority of the one recorded
    assert q["correct"].to_list() == [True, True, False, True]
    with pytest.raises(RunFormatError, match=r"question_id .q-17. is not locomo_"):
        load_runs(path, dataset=locomo_path, strict=True)


def test_zep_grades_reproduce_zeps_published_figures(harness_results: Path, locomo_path: Path) -> None:
    """harness-results/NOTE.md: 75.13% overall; by LoCoMo category 1 = 74.11 (282), 2 = 66.04 (321),
    3 = 67.71 (96), 4 = 79.79 (841)."""
    runs = load_runs(harness_results / "zep" / "zep_locomo_grades.json", dataset=locomo_path)
    assert runs.all_problems == []
    run = runs[0]
    assert (run.run_id, run.harness) == ("zep_locomo_grades", "zep")
    assert run.imported is not None and run.imported.judge == "unknown" and run.imported.replicates == 1
    q = questions_df(runs, backend="polars")
    assert (
        len(q) == 1540
        and q["question_id"].n_unique() == 1540
        and q["judge"].unique().to_list() == ["unknown (zep)"]
    )
    assert round(100 * q["correct"].mean(), 2) == 75.13
    by_cat = q.group_by("true_category").agg(pl.len(), pl.col("correct").mean() * 100).sort("true_category")
    assert [(c, n, round(a, 2)) for c, n, a in by_cat.iter_rows()] == [
        (1, 282, 74.11),
        (2, 321, 66.04),
        (3, 96, 67.71),
        (4, 841, 79.79),
    ]
    # The n-th grade of a conversation is its n-th category 1-4 question: conversation 0's first is conv-26-q0.
    assert q.row(0, named=True)["question_id"] == "conv-26-q0"
    assert q["search_ms"].null_count() == 1540 and q["context_tokens"].null_count() == 1540


def test_mem0_results_reproduce_the_llm_score(harness_results: Path, locomo_path: Path) -> None:
    """harness-results/NOTE.md: llm_score 45.13% overall (1: 34.75, 2: 36.45, 3: 36.46, 4: 52.91)."""
    runs = load_runs(harness_results / "mem0" / "results.json", dataset=locomo_path)
    assert runs.all_problems == []
    assert (runs[0].run_id, runs[0].harness) == ("mem0", "mem0")
    q = questions_df(runs, backend="polars")
    assert len(q) == 1540 and q["question_id"].n_unique() == 1540
    assert round(100 * q["correct"].mean(), 2) == 45.13
    by_cat = q.group_by("true_category").agg(pl.col("correct").mean() * 100).sort("true_category")
    assert [round(a, 2) for a in by_cat["correct"]] == [34.75, 36.45, 36.46, 52.91]
    # Its conversation keys are strings in no order ("1" first); ids come from the key, not the order.
    assert (
        q.filter(pl.col("question") == "When Jon has lost his job as a banker?")["container_tag"].item()
        == "conv-30"
    )


def test_runs_of_four_harness_files_pair_on_the_same_1540_questions(
    harness_results: Path, locomo_audit: Path, locomo_path: Path
) -> None:
    runs = load_runs(
        [
            harness_results / "zep" / "zep_locomo_grades.json",
            harness_results / "mem0" / "results.json",
            locomo_audit / "fc-baseline",
        ],
        dataset=locomo_path,
    )
    q = questions_df(runs, backend="polars")
    ids = {rid: set(part["question_id"]) for (rid,), part in q.group_by("run_id")}
    assert len(ids) == 4 and all(s == ids["mem0"] for s in ids.values()) and len(ids["mem0"]) == 1540
    # The same question has the same text and gold in every harness (gold as text: Zep writes numbers as numbers).
    one = q.filter(pl.col("question_id") == "conv-26-q0")
    assert one["question"].n_unique() == 1 and one["ground_truth"].n_unique() == 1


def test_zep_and_mem0_need_the_dataset_and_say_so(
    harness_results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no data/benchmarks download cache here
    for path in (
        harness_results / "zep" / "zep_locomo_grades.json",
        harness_results / "mem0" / "results.json",
    ):
        with pytest.warns(RunFormatWarning, match="needs LoCoMo's dataset file"):
            runs = load_runs(path)
        assert len(runs) == 0 and runs.problems[0].path == str(path)
        assert "needs LoCoMo's dataset file: pass dataset='locomo10.json'" in runs.problems[0].message


def test_a_zep_question_out_of_place_is_found_by_text_and_an_unknown_one_reported(
    tmp_path: Path, locomo_path: Path
) -> None:
    data = json.loads(locomo_path.read_text())
    scored = [item for item in data[0]["qa"] if item["category"] != 5]
    grades = [
        {
            "question": scored[1]["question"],
            "answer": "x",
            "golden_answer": "g",
            "grade": True,
            "category": 2,
        },
        {
            "question": scored[0]["question"],
            "answer": "x",
            "golden_answer": "g",
            "grade": False,
            "category": 2,
        },
        {"question": "Nobody asked this?", "answer": "x", "golden_answer": "g", "grade": True, "category": 4},
    ]
    path = tmp_path / "grades.json"
    path.write_text(json.dumps({"locomo_experiment_user_0": grades}))
    with pytest.warns(RunFormatWarning, match="matches no LoCoMo question of conversation 0"):
        runs = load_runs(path, dataset=locomo_path)
    q = questions_df(runs, backend="polars")
    assert q["question_id"].to_list() == ["conv-26-q1", "conv-26-q0", "zep:0:2"]
    [problem, missing] = runs.all_problems
    assert missing.message.startswith("no row for 1538 of the 1540 scored questions")  # a partial file: said
    assert problem.path == str(path) and problem.field == "locomo_experiment_user_0[2]"
    assert "'Nobody asked this?' matches no LoCoMo question of conversation 0" in problem.message


def test_zep_and_mem0_files_name_a_bad_conversation_key_and_a_bad_entry_and_keep_the_rest(
    tmp_path: Path, locomo_path: Path
) -> None:
    scored = [item for item in json.loads(locomo_path.read_text())[0]["qa"] if item["category"] != 5]
    zep = {
        "question": scored[0]["question"],
        "answer": "x",
        "golden_answer": "g",
        "grade": True,
        "category": 2,
    }
    mem0 = {
        "question": scored[0]["question"],
        "answer": "g",
        "response": "x",
        "llm_score": 1,
        "category": "2",
    }
    cases = [
        (
            "grades.json",
            {"locomo_experiment_user_0": [zep, "nope"], "locomo_experiment_user_1": "not a list"},
            "grade",
            "locomo_experiment_user_0[1]",
            "locomo_experiment_user_1",
        ),
        (
            "results.json",
            {"0": [mem0, {"answer": "no question"}], "10": "not a list"},
            "result",
            "0[1]",
            "10",
        ),
    ]
    for (name, content, entry, bad_entry, bad_key), fmt in zip(cases, ("zep", "mem0"), strict=True):
        path = tmp_path / name
        path.write_text(json.dumps(content))
        with pytest.warns(RunFormatWarning, match="3 problems loading runs"):
            runs = load_runs(path, dataset=locomo_path, format=fmt)
        assert questions_df(runs, backend="polars")["question_id"].to_list() == ["conv-26-q0"]
        problems = {p.field: p for p in runs.all_problems if not p.message.startswith("no row for 1539 of")}
        assert set(problems) == {bad_entry, bad_key}, runs.all_problems
        assert all(p.path == str(path) for p in problems.values())
        assert f"not a {entry} object with a 'question' text" in problems[bad_entry].message
        assert f"with a list of {entry}s; skipped" in problems[bad_key].message


def test_disputed_questions_count_a_judges_replicates_as_raters(locomo_audit: Path) -> None:
    from bench_nb import disputed_questions

    runs = load_runs(locomo_audit / "fc-baseline" / "gpt-4o-mini-memos")
    d = disputed_questions(runs, backend="polars")
    assert d.select("run_id", "question_id").is_unique().all()  # one row per answer, not one per replicate
    j = judgments_df(runs, backend="polars")
    split = j.group_by("question_id").agg(pl.col("score").n_unique()).filter(pl.col("score") > 1)
    assert len(d) == len(split) and (d["n_judges"] == 3).all()
    row = d.row(0, named=True)
    raters = {*row["correct_judges"].split(", "), *row["incorrect_judges"].split(", ")}
    assert raters == {"gpt-4o-mini", "gpt-4o-mini#2", "gpt-4o-mini#3"}


def test_token_totals_of_a_run_that_records_none_are_null(locomo_audit: Path) -> None:
    from bench_nb.metrics import token_summary

    t = token_summary(locomo_audit / "fc-baseline" / "gpt-4o-mini-cot", backend="polars").row(0, named=True)
    assert t["with_tokens"] == 0 and t["total_prompt_tokens"] is None and t["total_context_tokens"] is None


def test_mean_answer_length_of_the_two_full_context_runs(locomo_audit: Path) -> None:
    """locomo-audit/NOTE.md: mean answer length memos 5.0 words, cot 33.7 words (whitespace-separated)."""
    q = questions_df(locomo_audit / "fc-baseline", backend="polars")
    words = {rid: [len(h.split()) for h in part["hypothesis"]] for (rid,), part in q.group_by("run_id")}
    got = {rid: round(sum(n) / len(n), 1) for rid, n in words.items()}
    assert got == {"gpt-4o-mini-memos": 5.0, "gpt-4o-mini-cot": 33.7}


def test_audit_ids_index_the_full_qa_list_not_the_scored_questions(
    locomo_audit: Path, locomo_path: Path
) -> None:
    """locomo-audit/NOTE.md: by the full-list index all 1,540 question texts match; counting only categories
    1-4 instead matches 1,538 (so the full-list index is the right one)."""
    data = json.loads(locomo_path.read_text())
    raw = json.loads((locomo_audit / "fc-baseline" / "gpt-4o-mini-memos" / "eval_results.json").read_text())
    full = scored_only = 0
    for rows in raw["detailed_results"].values():
        for r in rows:
            conv, index = (int(x) for x in r["question_id"].removeprefix("locomo_").split("_qa"))
            qa = data[conv]["qa"]
            scored = [item for item in qa if item["category"] != 5]
            full += qa[index]["question"] == r["question"]
            scored_only += index < len(scored) and scored[index]["question"] == r["question"]
    assert (full, scored_only) == (1540, 1538)


def test_the_provider_is_the_harness_and_the_metadatas_token_totals_are_run_totals(
    locomo_audit: Path,
) -> None:
    from bench_nb.frames.harnesses import harness_frame
    from bench_nb.tables import not_recorded_note, table_harnesses

    runs = load_runs(locomo_audit / "fc-baseline")
    assert [(r.run_id, r.checkpoint.provider) for r in runs if r.checkpoint] == [
        ("gpt-4o-mini-cot", "evermemos"),
        ("gpt-4o-mini-memos", "evermemos"),
    ]
    h = harness_frame(runs)
    # metadata.total_prompt_tokens / total_completion_tokens, as the file states them, at run level only
    assert h.select("run_id", "answer_input_tokens_run_total", "answer_output_tokens_run_total").rows() == [
        ("gpt-4o-mini-cot", 38354838, 845277),
        ("gpt-4o-mini-memos", 37887749, 11083),
    ]
    q = questions_df(runs, backend="polars")  # never spread over the questions
    assert q["answer_input_tokens"].null_count() == q["context_tokens"].null_count() == len(q) == 3080
    note = not_recorded_note(runs, "tokens")
    assert (
        note is not None
        and "run totals only (evermemos · gpt-4o-mini-cot, evermemos · gpt-4o-mini-memos)" in note
    )
    assert "38,354,838 input, 845,277 output" in table_harnesses(runs).html


def test_an_eval_results_without_token_totals_does_not_record_tokens(tmp_path: Path) -> None:
    rows = [_row("locomo_0_qa0", "When did Caroline go to the LGBTQ support group?", [True])]
    bad = {"metadata": {"total_prompt_tokens": "many"}}
    with pytest.warns(RunFormatWarning, match="metadata.total_prompt_tokens"):
        runs = load_runs(_eval_results(tmp_path / "a" / "eval_results.json", rows, **bad))
    run = runs[0]
    assert run.imported is not None and run.imported.run_tokens == {}
    assert "tokens" in run.imported.not_recorded
    assert [p.field for p in runs.all_problems] == ["metadata.total_prompt_tokens"]


def test_a_benchmarks_dataset_given_as_a_run_is_named_as_one(tmp_path: Path) -> None:
    # `bench-nb summary locomo10.json` said only "not a run format bench_nb reads ... (pass format= to force one)"
    from bench_nb.benchmarks import load_benchmark, write_custom

    locomo = tmp_path / "locomo.json"
    locomo.write_text(json.dumps([{"sample_id": "conv-1", "qa": [], "conversation": {}}]))
    custom = write_custom(load_benchmark("sample"), tmp_path / "mine.json")
    for path, name in ((locomo, "locomo"), (custom, "custom")):
        with pytest.raises(RunFormatError) as raised:
            load_runs(path, strict=True)
        message = str(raised.value)
        assert message.startswith(f"{path}: a {name} dataset (the benchmark's questions), not a run"), message
        assert f"bench-nb run -b {name} --dataset FILE" in message
        assert "a LoCoMo or LongMemEval file is also given beside runs made on it (--dataset FILE" in message
        with pytest.warns(RunFormatWarning, match=f"a {name} dataset"):
            assert len(load_runs(path)) == 0


def test_a_file_too_large_to_read_twice_is_not_named_a_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bench_nb.benchmarks import registry

    locomo = tmp_path / "locomo.json"
    locomo.write_text(json.dumps([{"sample_id": "conv-1", "qa": [], "conversation": {}}]))
    monkeypatch.setattr(registry, "SNIFF_LIMIT", locomo.stat().st_size - 1)
    with pytest.raises(RunFormatError, match="not a run format bench_nb reads"):
        load_runs(locomo, strict=True)
