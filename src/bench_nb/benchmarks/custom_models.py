"""The pydantic models of the custom benchmark format (version 1; see docs/benchmarks.md).

Unknown fields are refused (a misspelt ``timestmap`` is an error, not a silently missing date); free-form
data goes in ``metadata``. Dates are ISO-8601 (a date, or a date and time, optionally with an offset).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from bench_nb.taxonomy import NormType

FORMAT_ID: Literal["bench_nb.custom/1"] = "bench_nb.custom/1"


def _iso(value: str) -> str:
    text = value.strip()
    try:
        datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"not an ISO-8601 date or date-time: {value!r} (e.g. 2024-03-04T09:15:00)") from None
    return text


def _answer(value: Any) -> str | int | float:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError("the answer must be a string or a number")
    return value


IsoDate = Annotated[str, AfterValidator(_iso)]
AnswerValue = Annotated[Any, AfterValidator(_answer)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CustomType(_Model):
    """A question type's entry in the type registry."""

    alias: str | None = None
    description: str = ""


class CustomBenchmarkHeader(_Model):
    """The benchmark itself: its name and optional type registry."""

    format: Literal["bench_nb.custom/1"] = FORMAT_ID
    name: str = "custom"
    description: str = ""
    types: dict[str, CustomType] = Field(default_factory=dict)


class CustomMessage(_Model):
    """One message: who said what, and when."""

    role: str = Field(min_length=1)
    content: str
    timestamp: IsoDate | None = None
    id: str | None = None
    has_answer: bool = False


class CustomSession(_Model):
    """A dated session of messages; ``date`` defaults to the first message's timestamp."""

    id: str = Field(min_length=1)
    date: IsoDate | None = None
    messages: list[CustomMessage] = Field(min_length=1)
    metadata: dict[str, Any] = Field(default_factory=dict)


class CustomConversation(_Model):
    """What a provider ingests before the questions about it are asked."""

    id: str = Field(min_length=1)
    sessions: list[CustomSession] = Field(min_length=1)


class CustomQuestion(_Model):
    """A question about one conversation, with its ground truth."""

    id: str = Field(min_length=1)
    conversation: str = Field(min_length=1)
    question: str = Field(min_length=1)
    answer: AnswerValue
    type: str = Field(min_length=1)
    norm_type: NormType | None = None
    evidence: list[str] = Field(default_factory=list)
    question_date: IsoDate | None = None
    category: int | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
