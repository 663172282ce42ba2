"""A small hand-made LongMemEval-V2 dataset folder, in the official schema (the benchmark's data/public_data.py
and evaluation/harness.py), for tests.

Two domains: the web questions share one haystack (trajectories web-1, web-2), the enterprise questions another
(sn-1). One question per scoring rule; the medium tier adds a trajectory to every haystack.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _state(i: int, url: str, text: str, action: str | None, thought: str | None = None) -> dict[str, Any]:
    return {
        "state_index": i,
        "step": i,
        "url": url,
        "action": action,
        "thoughts": thought,
        "text": text,
        "screenshot": f"screenshots/traj/{i:04d}.png",
    }


TRAJECTORIES: list[dict[str, Any]] = [
    {
        "id": "web-1",
        "domain": "web",
        "goal": "Export the pending orders",
        "outcome": "success",
        "start_url": "http://admin.example/orders",
        "actions": ["click('Export')"],
        "states": [
            _state(
                0, "http://admin.example/orders", "Orders grid. The Export button is at the top right.", None
            ),
            _state(
                1,
                "http://admin.example/orders?status=pending",
                "An order moves from Pending to Processing to Complete.",
                "click('Export')",
                "The export button sits above the orders grid.",
            ),
        ],
    },
    {
        "id": "web-2",
        "domain": "web",
        "goal": ["Post on the forum", "in the gardening forum"],
        "outcome": None,
        "start_url": "http://forum.example/",
        "actions": [],
        "states": [
            _state(0, "http://forum.example/f/gardening", "Gardening forum: the Submit link is hidden.", None)
        ],
    },
    {
        "id": "sn-1",
        "domain": "enterprise",
        "goal": "Close an incident",
        "outcome": "failure",
        "start_url": "http://sn.example/incident",
        "actions": ["fill('state', 'Closed')"],
        "states": [
            _state(
                0,
                "http://sn.example/incident/42",
                "Incident form. Resolution notes are mandatory before closing.",
                "fill('state', 'Closed')",
            )
        ],
    },
    {
        "id": "extra-1",
        "domain": "web",
        "goal": "Browse",
        "outcome": "success",
        "start_url": "http://shop.example/",
        "actions": [],
        "states": [_state(0, "http://shop.example/", "Shop home page.", None)],
    },
]

QUESTIONS: list[dict[str, Any]] = [
    {
        "id": "web_static_001",
        "domain": "web",
        "question": "Where is the Export button on the orders grid?",
        "image": None,
        "question_type": "static-environment",
        "eval_function": "norm_phrase_set_match",
        "answer": "top right",
    },
    {
        "id": "web_dynamic_002",
        "domain": "web",
        "question": "In which order does an order move through its statuses?",
        "image": "question_images/web_dynamic_002.png",
        "question_type": "dynamic-environment",
        "eval_function": "norm_phrase_set_match_ordered|separators=;",
        "answer": "Pending; Processing; Complete",
    },
    {
        "id": "web_procedure_003",
        "domain": "web",
        "question": "Which step exports orders? (A) Print (B) Export (C) Delete",
        "image": None,
        "question_type": "procedure",
        "eval_function": "mc_choice_match",
        "answer": "B",
    },
    {
        "id": "web_gotcha_004",
        "domain": "web",
        "question": "What goes wrong when posting in the gardening forum?",
        "image": None,
        "question_type": "errors-gotchas",
        "eval_function": "llm_gotchas_checker",
        "answer": "The Submit link is hidden in the gardening forum.",
    },
    {
        "id": "sn_procedure_005",
        "domain": "enterprise",
        "question": "Which are needed to close an incident? (A) resolution notes (B) a manager (C) a state of Closed",
        "image": None,
        "question_type": "procedure",
        "eval_function": "mc_choice_set_match",
        "answer": "A, C",
    },
    {
        "id": "sn_abs_006",
        "domain": "enterprise",
        "question": "Which button deletes a closed incident's audit log?",
        "image": None,
        "question_type": "static-environment-abs",
        "eval_function": "llm_abstention_checker",
        "answer": "The premise is wrong: audit logs cannot be deleted from the incident form.",
    },
]

WEB = ["web-1", "web-2"]
ENTERPRISE = ["sn-1"]


def haystacks(tier: str) -> dict[str, list[str]]:
    extra = ["extra-1"] if tier == "medium" else []
    return {
        q["id"]: (list(WEB) + extra if q["domain"] == "web" else list(ENTERPRISE) + extra) for q in QUESTIONS
    }


def write_dataset(root: Path, questions: list[dict[str, Any]] | None = None) -> Path:
    """Write the folder (questions.jsonl, trajectories.jsonl, haystacks/lme_v2_{small,medium}.json); return it."""
    root.mkdir(parents=True, exist_ok=True)
    rows = QUESTIONS if questions is None else questions
    (root / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in rows), encoding="utf-8")
    (root / "trajectories.jsonl").write_text(
        "".join(json.dumps(t) + "\n" for t in TRAJECTORIES), encoding="utf-8"
    )
    (root / "haystacks").mkdir(exist_ok=True)
    for tier in ("small", "medium"):
        (root / "haystacks" / f"lme_v2_{tier}.json").write_text(json.dumps(haystacks(tier)), encoding="utf-8")
    return root
