"""A small hand-made BEAM tier folder, in the layout of the paper's repository, for tests.

Each chat has two batches (the second dated by a time anchor) of two turns each, and one question per
ability; the rubric items carry markers (``FULL``, ``HALF``, ``NONE``) a scripted judge can read, and the
event-ordering rubric lists three events.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench_nb.taxonomy import BEAM_ABILITIES

ANSWER_KEY = {
    "abstention": "ideal_response",
    "contradiction_resolution": "ideal_answer",
    "summarization": "ideal_summary",
    "instruction_following": "expected_compliance",
    "preference_following": "expected_compliance",
}
EVENTS = ("set up the Flask skeleton", "added the login form", "deployed to the staging server")


def chat(n: int) -> list[dict[str, Any]]:
    def msg(i: int, role: str, text: str, **extra: Any) -> dict[str, Any]:
        return {"role": role, "id": i, "content": text, **extra}

    return [
        {
            "batch_number": 1,
            "time_anchor": None,
            "turns": [
                [
                    msg(
                        0,
                        "user",
                        f"Chat {n}: I set up the Flask skeleton today. ->-> 1,1",
                        index="1,1",
                        time_anchor="March-15-2024",
                        question_type="main_question",
                    ),
                    msg(1, "assistant", "Great, a Flask skeleton is a good start."),
                ],
                [
                    msg(2, "user", "Next I added the login form. ->-> 1,2", index="1,2"),
                    msg(3, "assistant", "The login form needs CSRF protection."),
                ],
            ],
        },
        {
            "batch_number": 2,
            "time_anchor": "April-02-2024",
            "turns": [
                [
                    msg(4, "user", "Finally I deployed to the staging server. ->-> 2,1", index="2,1"),
                    msg(5, "assistant", "Staging deployments catch configuration errors."),
                ]
            ],
        },
    ]


def rubric(ability: str, markers: tuple[str, ...]) -> list[str]:
    if ability == "event_ordering":
        return list(EVENTS)
    return [f"LLM response should state: {m} criterion {i} of {ability}" for i, m in enumerate(markers)]


def questions(markers: dict[str, tuple[str, ...]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for ability in BEAM_ABILITIES:
        item: dict[str, Any] = {
            "question": f"A question about {ability.replace('_', ' ')}?",
            ANSWER_KEY.get(ability, "answer"): f"the ideal answer for {ability}",
            "difficulty": "easy",
            "rubric": rubric(ability, markers.get(ability, ("FULL",))),
            "source_chat_ids": {"first": [0], "second": [4]} if ability == "knowledge_update" else [2],
        }
        out[ability] = [item]
    return out


def write_tier(
    root: Path,
    chats: int = 2,
    markers: dict[str, tuple[str, ...]] | None = None,
    by_chat: dict[int, dict[str, tuple[str, ...]]] | None = None,
) -> Path:
    """Write ``chats`` chat folders under ``root`` (a tier folder) and return it; ``markers`` are every chat's
    rubric markers by ability, ``by_chat`` overrides them for some chats."""
    for n in range(1, chats + 1):
        folder = root / str(n)
        (folder / "probing_questions").mkdir(parents=True)
        (folder / "chat.json").write_text(json.dumps(chat(n)), encoding="utf-8")
        (folder / "probing_questions" / "probing_questions.json").write_text(
            json.dumps(questions({**(markers or {}), **(by_chat or {}).get(n, {})})), encoding="utf-8"
        )
    return root
