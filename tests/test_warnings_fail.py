"""bench_nb's own warnings are errors in the test suite (pyproject's filterwarnings): a test that loads a
damaged run must assert the warning it expects with ``pytest.warns``."""

from __future__ import annotations

import warnings

import pytest

from bench_nb.benchmarks.download import DatasetWarning
from bench_nb.errors import RunFormatWarning


@pytest.mark.parametrize("warning", [RunFormatWarning("1 problem loading runs"), DatasetWarning("unpinned")])
def test_an_unexpected_bench_nb_warning_fails_the_test(warning: Warning) -> None:
    with pytest.raises(type(warning)):
        warnings.warn(warning, stacklevel=1)
    with pytest.warns(type(warning)):  # an expected one is asserted, and passes
        warnings.warn(warning, stacklevel=1)


def test_other_libraries_warnings_are_not_errors() -> None:
    with warnings.catch_warnings(record=True) as caught:  # the suite's filters, recorded instead of shown
        warnings.warn("a library's own notice", UserWarning, stacklevel=1)  # not raised
    assert [str(w.message) for w in caught] == ["a library's own notice"]


def test_the_run_size_warning_of_tiny_test_benchmarks_is_ignored() -> None:
    from bench_nb.runner.estimate import RunSizeWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.warn(RunSizeWarning("2 haystacks decide nothing"), stacklevel=1)
    assert caught == []
