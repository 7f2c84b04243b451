"""The base of every error the user can fix; `mlrep` prints it as one line and exits 2."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class MlrepError(Exception):
    """A problem with the user's input, data or environment, with the fix in its message."""


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest choice, else "": a typo's fix in the message."""
    close = difflib.get_close_matches(value, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
