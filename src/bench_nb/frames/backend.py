"""pandas or polars: the one place frames change library, and the rule the public frame API follows.

Every public function that returns a table (``questions_df``, ``memscore``, ``rank_intervals``, ...) takes
``backend`` and returns a pandas DataFrame by default, a polars DataFrame with ``backend="polars"``; two
``typing.overload`` signatures say so to a type checker. Each has a polars-native twin, defined in the same
module, named after it with ``_df`` dropped and ``_frame`` added (``questions_df`` -> ``questions_frame``,
``memscore`` -> ``memscore_frame``): the same parameters without ``backend``, always polars. The public
function is ``to_backend(twin(...), backend)`` and nothing more; code inside bench_nb calls the twin.
A function that returns a result object rather than a table (``judge_agreement``, ``paired_comparison``)
takes ``backend`` for the tables on it and is typed the same way, the object generic in ``FrameT``
(``JudgeAgreement[pd.DataFrame]`` by default, ``JudgeAgreement[pl.DataFrame]`` with ``backend="polars"``).
``tests/frames/test_backend_rule.py`` holds every public function to this rule.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Literal, TypeGuard, TypeVar, overload

import polars as pl

if TYPE_CHECKING:
    import pandas as pd

Backend = Literal["pandas", "polars"]
# The frame type of a result object whose tables follow ``backend`` (``JudgeAgreement[pl.DataFrame]``).
FrameT = TypeVar("FrameT", "pd.DataFrame", pl.DataFrame)


@overload
def to_backend(df: pl.DataFrame, backend: Literal["polars"]) -> pl.DataFrame: ...
@overload
def to_backend(df: pl.DataFrame, backend: Literal["pandas"] = ...) -> pd.DataFrame: ...
@overload
def to_backend(df: pl.DataFrame, backend: Backend) -> pd.DataFrame | pl.DataFrame: ...
def to_backend(df: pl.DataFrame, backend: Backend = "pandas") -> pd.DataFrame | pl.DataFrame:
    """Return ``df`` as pandas (default) or polars.

    pandas (and pyarrow) are imported here, on the first pandas frame asked for: code that stays in polars
    never loads them.
    """
    if backend == "polars":
        return df
    if backend == "pandas":
        return df.to_pandas(use_pyarrow_extension_array=False)
    raise ValueError(f"backend must be 'pandas' or 'polars', not {backend!r}")


def is_pandas_frame(data: object) -> TypeGuard[pd.DataFrame]:
    """Whether ``data`` is a pandas DataFrame, without importing pandas (if pandas was never imported,
    nothing can be a pandas frame)."""
    pd_module = sys.modules.get("pandas")
    return pd_module is not None and isinstance(data, pd_module.DataFrame)


def as_polars(data: object) -> pl.DataFrame | None:
    """``data`` as a polars frame when it is a polars or pandas DataFrame, else None (run sources)."""
    if isinstance(data, pl.DataFrame):
        return data
    if is_pandas_frame(data):
        return pl.from_pandas(data)
    return None
