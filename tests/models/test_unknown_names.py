"""A typo in an answerer or judge name names the nearest offline one too, not only model aliases."""

from __future__ import annotations

import pytest

from bench_nb.errors import JudgeError, ModelError
from bench_nb.judges.registry import get_judge
from bench_nb.models.answerers import get_answerer


def test_a_misspelled_judge_names_the_offline_one() -> None:
    with pytest.raises(JudgeError) as err:
        get_judge("contans")
    message = str(err.value)
    assert "unknown judge 'contans' (did you mean 'contains'?)" in message
    assert (
        "offline, no key needed: contains, f1, lme-v2, overlap, rubric;" in message
    )  # sorted and "gpt-4o" in message


def test_a_misspelled_answerer_names_the_offline_one() -> None:
    with pytest.raises(ModelError, match=r"unknown answerer 'extractve' \(did you mean 'extractive'\?\)"):
        get_answerer("extractve")
