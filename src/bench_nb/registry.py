"""One shape for every registry of named things: benchmarks, providers, judges, answerers and run importers.

Each package keeps one ``Registry`` and exposes ``register_x``, ``get_x`` and ``list_x`` over it: a name (and
its aliases) is looked up without regard to case, registering a taken name needs ``replace=True``, and an
unknown name raises the package's error naming the nearest known name and all of them.
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

T = TypeVar("T")


def did_you_mean(name: str, choices: Iterable[str], *, cutoff: float = 0.6) -> str:
    """`` (did you mean 'x'?)`` for the choice nearest ``name`` (difflib, case and surrounding space ignored),
    or ``""`` when none is near."""
    by_lower = {str(c).lower(): str(c) for c in choices}
    near = difflib.get_close_matches(str(name).strip().lower(), sorted(by_lower), n=1, cutoff=cutoff)
    return f" (did you mean {by_lower[near[0]]!r}?)" if near else ""


class Registry(Generic[T]):
    """Named things of one kind, in registration order.

    Args:
        kind: what they are, for messages (``"benchmark"``, ``"judge"``, ...).
        error: the exception a taken or unknown name raises (called with the message).
    """

    def __init__(self, kind: str, error: Callable[[str], Exception]) -> None:
        self.kind = kind
        self._error = error
        self._items: dict[str, T] = {}
        self._aliases: dict[str, str] = {}  # alias -> name
        self._lock = threading.Lock()

    def register(self, name: str, item: T, *, aliases: Iterable[str] = (), replace: bool = False) -> T:
        """Register ``item`` as ``name`` (and ``aliases``); a taken name or alias raises unless ``replace``
        (which replaces ``name``'s own registration, aliases included)."""
        key = name.strip().lower()
        if not key:
            raise self._error(f"a {self.kind} name must not be empty")
        own = tuple(a.strip().lower() for a in aliases)
        with self._lock:
            for n in (key, *own):
                owner = self._aliases.get(n, n if n in self._items else None)
                if owner is not None and not (replace and owner == key):
                    raise self._error(
                        f"{self.kind} name {n!r} is already registered (pass replace=True to replace it)"
                    )
            self._drop_aliases(key)
            self._items[key] = item
            self._aliases.update(dict.fromkeys(own, key))
        return item

    def unregister(self, name: str) -> None:
        """Remove a registration and its aliases (unknown names raise)."""
        key = self._key(name)
        with self._lock:
            del self._items[key]
            self._drop_aliases(key)

    def _drop_aliases(self, key: str) -> None:
        for alias in [a for a, owner in self._aliases.items() if owner == key]:
            del self._aliases[alias]

    def find(self, name: str) -> T | None:
        """The item registered as ``name`` or one of its aliases; None when there is none."""
        key = name.strip().lower()
        return self._items.get(self._aliases.get(key, key))

    def _key(self, name: str) -> str:
        """The registered name ``name`` (a name or an alias) stands for; an unknown name raises, naming the
        nearest known one, then all of them."""
        key = name.strip().lower()
        key = self._aliases.get(key, key)
        if key not in self._items:
            known = sorted({*self._items, *self._aliases})
            raise self._error(
                f"unknown {self.kind} {name!r}{did_you_mean(name, known)}; known: {', '.join(known)}"
            )
        return key

    def get(self, name: str) -> T:
        """The item registered as ``name`` or one of its aliases; an unknown name raises."""
        return self._items[self._key(name)]

    def names(self) -> list[str]:
        """The registered names in registration order (aliases not included)."""
        return list(self._items)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.find(name) is not None
