"""pandas or polars: the one place frames change library, and the rule the public frame API follows.

The rule, written once. Every table is computed by a polars function, its *core*, named ``<name>_frame``
(``questions_frame``, ``memscore_frame``, ...), precisely typed (``-> pl.DataFrame``) and documented for the
table it returns; code inside bench_nb calls the core. The public function users call is generated from the
core, once, by ``with_backend``::

    def memscore_frame(data: QuestionsLike) -> pl.DataFrame:
        \"\"\"MemScore per run ...\"\"\"
        ...

    memscore = with_backend(memscore_frame, "memscore")

``with_backend`` adds a keyword-only ``backend`` (``"pandas"``, the default, or ``"polars"``) and converts
the core's frame with ``to_backend``; it copies the core's docstring (with a line on ``backend``) and sets
``__signature__``, so ``help()`` and Jupyter's ``?`` show the core's parameters plus ``backend``. The
columns and dtypes are the core's (docs/frames.md); pandas gets them through ``to_backend``.

The price, for a type checker: the public function returns ``Frame`` (``pd.DataFrame | pl.DataFrame``), not
one or the other by ``backend``, and its other arguments are not checked (a ``ParamSpec`` cannot add a
keyword to the signature it wraps, so precise types per backend would need two ``typing.overload``
signatures per function written by hand: the 90 overloads this replaces). ``backend`` itself is checked
(a ``Literal``), and the core, which is what bench_nb's own code calls, keeps its exact signature and return
type. Users work in notebooks; a typed caller that wants polars calls the core.

A function that returns a result object (``judge_agreement``, ``compare_runs``, ``paired_comparison``) takes
``backend`` for the tables on it: the object holds its tables in polars and hands them out in its
``backend`` (typed ``Frame``).

``tests/frames/test_backend.py`` holds every public function to this rule.
"""

from __future__ import annotations

import functools
import inspect
import sys
import weakref
from collections.abc import Callable
from typing import (
    TYPE_CHECKING,
    Any,
    Literal,
    ParamSpec,
    Protocol,
    TypeAlias,
    TypeGuard,
    TypeVar,
    cast,
    overload,
)

import polars as pl

from bench_nb.chart_output import in_report

if TYPE_CHECKING:
    import pandas as pd

Backend = Literal["pandas", "polars"]
# What a public frame function returns: pandas by default, polars with ``backend="polars"``.
Frame: TypeAlias = "pd.DataFrame | pl.DataFrame"
P = ParamSpec("P")
T = TypeVar("T")

BACKEND_DOC = '``backend``: ``"pandas"`` (default) or ``"polars"``: the library of the frame returned.'


@overload
def to_backend(df: pl.DataFrame, backend: Literal["polars"]) -> pl.DataFrame: ...
@overload
def to_backend(df: pl.DataFrame, backend: Literal["pandas"] = ...) -> pd.DataFrame: ...
@overload
def to_backend(df: pl.DataFrame, backend: Backend) -> Frame: ...
def to_backend(df: pl.DataFrame, backend: Backend = "pandas") -> Frame:
    """Return ``df`` as pandas (default) or polars.

    pandas (and pyarrow) are imported here, on the first pandas frame asked for: code that stays in polars
    never loads them.
    """
    if backend == "polars":
        return df
    if backend == "pandas":
        return df.to_pandas(use_pyarrow_extension_array=False)
    raise ValueError(f"backend must be 'pandas' or 'polars', not {backend!r}")


class FrameFunction(Protocol[P]):
    """A public frame function made by ``with_backend``: its core's parameters plus ``backend``."""

    __wrapped__: Callable[P, pl.DataFrame]  # the polars core

    def __call__(self, *args: Any, backend: Backend = "pandas", **kwargs: Any) -> Frame:
        """The core's frame, in ``backend``."""
        ...


def with_backend(core: Callable[P, pl.DataFrame], name: str) -> FrameFunction[P]:
    """The public function ``name`` of the polars function ``core``: the same parameters plus a keyword-only
    ``backend`` (pandas by default), the core's docstring and a signature that shows ``backend``."""

    @functools.wraps(core)
    def public(*args: Any, backend: Backend = "pandas", **kwargs: Any) -> Frame:
        return to_backend(core(*args, **kwargs), backend)

    signature = inspect.signature(core)
    if "backend" in signature.parameters:
        raise TypeError(f"{core.__qualname__} takes backend itself: its core must return polars, always")
    params = list(signature.parameters.values())
    at = len(params) - (params[-1].kind is inspect.Parameter.VAR_KEYWORD if params else 0)
    backend = inspect.Parameter(
        "backend", inspect.Parameter.KEYWORD_ONLY, default="pandas", annotation="Backend"
    )
    public.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[*params[:at], backend, *params[at:]], return_annotation="Frame"
    )
    public.__name__ = name
    public.__qualname__ = core.__qualname__.removesuffix(core.__name__) + name
    public.__doc__ = inspect.cleandoc(core.__doc__ or "") + "\n\n" + BACKEND_DOC
    return cast("FrameFunction[P]", public)


_PER_FRAME: dict[tuple[str, int], Any] = {}  # (what, id of a live frame) -> what was worked out from it


def once_per_frame(what: str, frame: pl.DataFrame, compute: Callable[[pl.DataFrame], T]) -> T:
    """``compute(frame)``, worked out once while ``frame`` lives (``what`` names the computation) in a report
    kernel (``chart_output.in_report``), and every time elsewhere: a report's questions frame reaches the same
    verdicts, labels and MemScore through many tables and charts, each a few polars passes over it. A report's
    frames are its own notebook's, which never changes one in place, so one result serves every caller; it is
    forgotten with the frame, whose id may then be reused. A user's frame may be changed in place
    (``df[i, "score"] = 0.0``, ``insert_column``: the same object, so the same id), and a result handed out
    may be too: outside a report nothing is remembered."""
    if not in_report():
        return compute(frame)
    key = (what, id(frame))
    if key not in _PER_FRAME:
        _PER_FRAME[key] = compute(frame)
        weakref.finalize(frame, _PER_FRAME.pop, key, None)
    return cast(T, _PER_FRAME[key])


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
