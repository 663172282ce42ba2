"""The audit's answer generators: known-wrong answers a sound judge rejects, known-correct ones it accepts."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench_nb.benchmarks import load_benchmark
from bench_nb.judges.audit import (
    DONT_KNOW,
    GENERATORS,
    content_words,
    dont_know,
    generate_audit,
    haystack_names,
    kind_of,
    paraphrase,
    specific_wrong,
    vague_topical,
)
from bench_nb.judges.deterministic import contains_answer, is_abstaining
from bench_nb.judges.registry import get_judge
from bench_nb.records import Question


def q(qid: str, question: str, answer: str, norm: str = "single-hop", haystack: str = "h1") -> Question:
    return Question(qid, question, answer, norm, norm, haystack)


POOL = [
    q("a", "When did Melanie paint the sunrise?", "7 May 2023", "temporal"),
    q("b", "How many dogs does James have?", "three dogs"),
    q("c", "Who did Caroline meet at the support group?", "Melanie"),
    q("d", "What does Jon tell Gina he won't do?", "quit"),
    q("e", "What instrument does Tomas play?", "the cello"),
    q("f", "What did Andrew plan to do on Saturday?", "go hiking with Audrey"),
    q("g", "What is Priya's favourite colour?", "", "abstention"),
    q("h", "How long was the trip?", "12 days"),
]


def test_specific_answers_are_built_from_the_gold_and_are_wrong() -> None:
    import random

    names = ["Caroline", "Melanie", "Jon", "Gina", "Audrey", "Andrew"]
    made = {x.question_id: specific_wrong(x, POOL, names, random.Random(1)) for x in POOL}
    assert made["a"] is not None and made["a"].how.startswith("date shifted: 7 May 2023 -> ")
    assert made["a"].answer != "7 May 2023" and made["a"].how.endswith(made["a"].answer)
    assert made["b"] is not None and made["b"].how.startswith("number changed: three -> ")
    assert made["h"] is not None and made["h"].how.startswith("number changed: 12 -> ")
    assert made["c"] is not None and made["c"].how.startswith("name swapped: Melanie -> ")
    assert made["f"] is not None and made["f"].how.startswith("name swapped: Audrey -> ")
    # one content word: another answer of the same type; never one that holds this gold
    assert made["d"] is not None and made["d"].how.startswith("the answer of question ")
    # an unanswerable question gets a confident answer: wrong
    assert made["g"] is not None and made["g"].answer and not is_abstaining(made["g"].answer)
    for x in POOL:
        a = made[x.question_id]
        assert a is not None and a.kind == "wrong" and a.generator == "specific"
        if x.answer:
            assert not contains_answer(a.answer, x.answer), (x.answer, a.answer)


def test_vague_answers_keep_the_topic_and_drop_every_gold_word() -> None:
    a = vague_topical(q("x", "When did Melanie make a plate in pottery class?", "pottery class, August"))
    assert a is not None and a.answer == "It came up when they talked about Melanie, make and plate."
    assert not (content_words(a.answer) & content_words("pottery class, August"))
    assert not is_abstaining(a.answer)
    assert vague_topical(POOL[6]) is None  # unanswerable: no topic answer to be wrong with


def test_dont_know_is_wrong_on_answerable_questions_only() -> None:
    a = dont_know(POOL[0])
    assert a is not None and a.answer == DONT_KNOW and a.kind == "wrong" and is_abstaining(a.answer)
    assert dont_know(POOL[6]) is None


def test_paraphrases_keep_the_content() -> None:
    import random

    rng = random.Random(0)
    date = paraphrase(POOL[0], rng)
    assert date is not None and date.answer == "May 7, 2023" and date.kind == "correct"
    listed = paraphrase(q("x", "What did they buy?", "apples, pears and plums"), rng)
    assert listed is not None and listed.answer == "plums, pears and apples"
    wrapped = paraphrase(POOL[3], rng)
    assert wrapped is not None and "quit" in wrapped.answer and wrapped.answer != "quit"
    abstains = paraphrase(POOL[6], rng)
    assert abstains is not None and is_abstaining(abstains.answer)
    contains = get_judge("contains")
    for x in POOL:
        a = paraphrase(x, random.Random(3))
        assert a is not None and contains.judge(x, a.answer).score == 1


def test_generation_is_seeded_and_names_come_from_the_haystack() -> None:
    texts = {"h1": ["Yesterday Caroline met Gina.", "Then Gina called Caroline again.", "Bob"]}
    one = generate_audit(POOL, haystack_texts=texts, seed=4)
    assert one == generate_audit(POOL, haystack_texts=texts, seed=4)
    assert set(one) == set(GENERATORS)
    assert generate_audit(POOL, ["vague"], seed=4)["vague"] == one["vague"]  # streams are independent
    assert "Gina" in haystack_names(texts["h1"]) and "Yesterday" not in haystack_names(texts["h1"])
    assert [kind_of(g) for g in GENERATORS] == ["wrong", "wrong", "wrong", "correct"]
    with pytest.raises(ValueError, match="unknown audit generator 'nope'"):
        generate_audit(POOL, ["nope"])


def test_on_locomo_a_lenient_judge_accepts_specific_wrong_answers_and_contains_does_not(
    locomo_path: Path,
) -> None:
    bench = load_benchmark("locomo", path=locomo_path, progress=False)
    questions = [x for x in bench.questions if x.haystack_id == bench.questions[0].haystack_id]
    texts = {hid: [m.content for s in h.sessions for m in s.messages] for hid, h in bench.haystacks.items()}
    sets = generate_audit(questions, haystack_texts=texts)
    by_id = {x.question_id: x for x in questions}
    rates = {}
    for judge in ("overlap", "contains", "f1"):
        j = get_judge(judge)
        for generator, answers in sets.items():
            scores = [j.judge(by_id[a.question_id], a.answer).score for a in answers]
            rates[judge, generator] = 100 * sum(s or 0 for s in scores) / len(scores)
    assert len(sets["specific"]) == len(questions) and len(sets["dont-know"]) > 100
    assert rates["overlap", "specific"] > 50  # the deliberately lenient toy judge
    assert rates["contains", "specific"] < 2
    assert rates["contains", "vague"] == 0 and rates["contains", "dont-know"] == 0
    assert rates["contains", "paraphrase"] > 95 and rates["overlap", "paraphrase"] > 95
    assert rates["f1", "paraphrase"] < rates["contains", "paraphrase"]  # f1 misses reworded right answers
