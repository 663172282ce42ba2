"""Building several reports from a TOML file (for cron or CI): one failing report never stops the others.

```toml
output_dir = "reports"          # optional, default "reports" (relative to the config file)

[[report]]
name = "compare"                # a notebook in notebooks/, or a path to an .ipynb
output = "weekly-compare.html"  # optional, default "<name>.html" in output_dir
[report.parameters]
runs = "data/runs/*"
title = "Weekly comparison"
```
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bench_nb.errors import ReportError
from bench_nb.reports.build import BuiltReport, build_report


class ReportSpec(BaseModel):
    """One ``[[report]]`` entry of a reports TOML file: the notebook's name, output file and parameters."""

    model_config = ConfigDict(extra="forbid")
    name: str
    output: str | None = None
    parameters: dict[str, Any] = Field(default_factory=dict)


class ReportsConfig(BaseModel):
    """A reports TOML file: the output directory and the reports to build."""

    model_config = ConfigDict(extra="forbid")
    output_dir: str = "reports"
    report: list[ReportSpec] = Field(default_factory=list)


def read_config(path: str | Path) -> ReportsConfig:
    """Read and check a reports TOML file; errors name the file and the field."""
    p = Path(path)
    try:
        raw = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as err:
        raise ReportError(f"{p}: cannot read: {err}") from None
    except tomllib.TOMLDecodeError as err:
        raise ReportError(f"{p}: not valid TOML: {err}") from None
    try:
        config = ReportsConfig.model_validate(raw)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise ReportError(f"{p} (field {where}): {first['msg']}") from None
    if not config.report:
        raise ReportError(f"{p}: no [[report]] entries")
    return config


@dataclass(frozen=True)
class BuildOutcome:
    """One report of a batch: built, or the error that stopped it."""

    name: str
    output: Path
    report: BuiltReport | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the report was built."""
        return self.error is None


def build_all(config_path: str | Path) -> list[BuildOutcome]:
    """Build every report the config lists, in order; a failure is recorded and the next one built."""
    path = Path(config_path)
    config = read_config(path)
    out_dir = Path(config.output_dir)
    if not out_dir.is_absolute():
        out_dir = path.parent / out_dir
    outcomes = []
    for spec in config.report:
        output = Path(spec.output) if spec.output else Path(f"{Path(spec.name).stem}.html")
        if not output.is_absolute():
            output = out_dir / output
        try:
            built = build_report(spec.name, spec.parameters, output)
            outcomes.append(BuildOutcome(spec.name, output, report=built))
        except ReportError as err:
            outcomes.append(BuildOutcome(spec.name, output, error=str(err)))
    return outcomes
