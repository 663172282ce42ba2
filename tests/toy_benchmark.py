"""A toy benchmark in one file: its reader, its traits and its registration (nothing else in bench_nb changes).

A ``.toy`` file is blocks separated by blank lines; a block is one haystack: ``# <haystack id>``, then turns
``<speaker>: <text>``, then questions ``? <question> => <answer>``.
"""

from __future__ import annotations

from pathlib import Path

from bench_nb.benchmarks.registry import BenchmarkSpec, BenchmarkTraits, register_benchmark
from bench_nb.errors import DatasetError, Problem
from bench_nb.records import Benchmark, Haystack, Message, Question, Session

NAME = "toy"
TRAITS = BenchmarkTraits(default_judges=("contains",), haystacks=2)


def read_toy(path: Path, problems: list[Problem] | None = None) -> Benchmark:
    """Read a ``.toy`` file; a line that is none of the three kinds is a problem (raised when ``problems`` is
    None)."""
    haystacks: dict[str, Haystack] = {}
    questions: list[Question] = []
    for block in path.read_text(encoding="utf-8").strip().split("\n\n"):
        head, *lines = block.strip().splitlines()
        hay = head.removeprefix("# ").strip()
        turns: list[Message] = []
        for n, line in enumerate(lines, 2):
            if line.startswith("? ") and "=>" in line:
                question, answer = (x.strip() for x in line[2:].split("=>", 1))
                qid = f"{hay}-q{sum(q.haystack_id == hay for q in questions)}"
                questions.append(Question(qid, question, answer, "fact", "single-hop", hay))
            elif ": " in line:
                speaker, said = line.split(": ", 1)
                turns.append(Message(speaker, said))
            else:
                problem = Problem(str(path), f"{hay} line {n}: not a turn or a question: {line!r}")
                if problems is None:
                    raise DatasetError(problem.message)
                problems.append(problem)
        haystacks[hay] = Haystack(hay, (Session(f"{hay}-s1", None, tuple(turns)),))
    return Benchmark(NAME, tuple(questions), haystacks)


def register() -> BenchmarkSpec:
    """Register the toy benchmark (``unregister_benchmark("toy")`` removes it)."""
    return register_benchmark(NAME, read_toy, description="a toy benchmark (tests)", traits=TRAITS)
