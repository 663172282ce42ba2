"""The ROI headline of each keyless probe mode, by store and k: the table in docs/roi.md ("Why
`distractor`").

    .venv/bin/python bench/roi_probe_modes.py

For the generated team store (``roi.sample.team_memories()``, owner alex) and the demo store
(``roi.sample``, owner demo): a fresh SQLite store per mode, its 20 probes generated, then one deterministic
run per k (1, 5, 10) with the embedded sqlite provider and one with the ``no-memory`` provider, all on the same
probes. Prints the exclusive rate of each.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from bench_nb import roi
from bench_nb.roi.sample import sample_memories, team_memories, write_sample_memories

STORES = {"team_memories (alex)": (team_memories, "alex"), "sample (demo)": (sample_memories, "demo")}
RUNS = (("sqlite", 1), ("sqlite", 5), ("sqlite", 10), ("no-memory", 5))


def rates(rows: list[dict[str, object]], owner: str, mode: str, folder: Path) -> list[float]:
    db = folder / f"{mode}.sqlite"
    roi.import_memories(write_sample_memories(folder / "memories.jsonl", rows), db, admin=True)
    out = []
    for provider, k in ((None, 5), *RUNS):
        options = roi.RoiOptions(probe_mode=mode, provider=None if provider == "sqlite" else provider, k=k)
        summary = roi.run_roi(owner, db, **options.start_kwargs()).summary()
        if summary.kind == "benchmark":
            out.append(summary.exclusive / summary.judged)
    return out


def main() -> None:
    print(f"{'store':<22} {'mode':<11} " + " ".join(f"{p}@k={k:<3}" for p, k in RUNS))
    for name, (make, owner) in STORES.items():
        for mode in ("distractor", "paraphrase", "template"):
            with tempfile.TemporaryDirectory() as tmp:
                values = rates(make(), owner, mode, Path(tmp))
            print(
                f"{name:<22} {mode:<11} "
                + " ".join(f"{v:>{len(p) + 5}.0%}" for v, (p, _) in zip(values, RUNS, strict=True))
            )


if __name__ == "__main__":
    main()
