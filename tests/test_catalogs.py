import zipfile

import pytest

from mlrep.data.catalogs import CatalogError, plural_selector, read_catalog, read_wheel
from tests.conftest import po_text

BODY = """#: a.py:1
msgid "Save"
msgstr "Speichern"

#, fuzzy
msgid "Maybe"
msgstr "Vielleicht"

msgid "Untranslated"
msgstr ""

#~ msgid "Gone"
#~ msgstr "Weg"

msgctxt "verb"
msgid ""
"A long message that "
"spans lines"
msgstr ""
"Eine lange Nachricht, die "
"über Zeilen geht"

#, python-format
msgid "%(n)s file"
msgid_plural "%(n)s files"
msgstr[0] "%(n)s Datei"
msgstr[1] "%(n)s Dateien"
"""


def _pairs(messages):
    return [(m.english, m.translation) for m in messages]


def test_skips_header_fuzzy_obsolete_and_empty_and_joins_lines():
    messages = list(read_catalog(po_text("de", BODY), "de", "x.whl!de.po"))
    assert _pairs(messages) == [
        ("Save", "Speichern"),
        ("A long message that spans lines", "Eine lange Nachricht, die über Zeilen geht"),
        ("%(n)s file", "%(n)s Datei"),
        ("%(n)s files", "%(n)s Dateien"),
    ]
    assert messages[1].context == "verb"
    assert "python-format" in messages[2].flags
    assert messages[0].line > 0


PLURAL_BODY = """msgid "One day"
msgid_plural "%(n)s days"
{forms}
"""


@pytest.mark.parametrize(
    ("lang", "forms", "expected"),
    [
        # one form only: the singular pairs with it, the plural is not repeated
        ("ja", ['"%(n)s 日"'], [("One day", "%(n)s 日")]),
        # Russian: n=1 -> form 0, n=5 -> form 2 (genitive plural)
        (
            "ru",
            ['"Один день"', '"%(n)s дня"', '"%(n)s дней"'],
            [("One day", "Один день"), ("%(n)s days", "%(n)s дней")],
        ),
        # Arabic: form 0 is zero, n=1 -> form 1, n=5 -> form 3
        (
            "ar",
            ['"لا أيام"', '"يوم واحد"', '"يومان"', '"%(n)s أيام"', '"%(n)s يومًا"', '"%(n)s يوم"'],
            [("One day", "يوم واحد"), ("%(n)s days", "%(n)s أيام")],
        ),
    ],
)
def test_plural_forms_follow_the_catalog_rule(lang, forms, expected):
    body = PLURAL_BODY.format(forms="\n".join(f"msgstr[{i}] {f}" for i, f in enumerate(forms)))
    assert _pairs(read_catalog(po_text(lang, body), lang, "x")) == expected


def test_plural_selector_rejects_garbage():
    assert plural_selector({"Plural-Forms": "nplurals=2; plural=import os;"}) is None
    assert plural_selector({}) is None
    assert plural_selector({"Plural-Forms": "nplurals=2; plural=(n != 1);"})(1) == 0


def test_read_wheel_filters_locales(wheel_factory):
    wheel = wheel_factory("pkg", {"de": po_text("de", BODY), "fr": po_text("fr", BODY)})
    locales = {m.locale for m in read_wheel(wheel, lambda loc: loc == "fr")}
    assert locales == {"fr"}


def test_broken_catalog_names_the_member(wheel_factory):
    wheel = wheel_factory("pkg", {"de": po_text("de", 'msgid "x"\nmsgstr "y"\nbogus line\n')})
    with pytest.raises(CatalogError, match=r"any.whl!pkg/locale/de/.*Syntax error .*line 9"):
        list(read_wheel(wheel, lambda loc: True))


def test_non_utf8_catalog_names_the_member(tmp_path):
    wheel = tmp_path / "bad.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("p/locale/de/LC_MESSAGES/django.po", 'msgid "\xe4"'.encode("latin-1"))
    with pytest.raises(CatalogError, match=r"bad.whl!p/locale/de/LC_MESSAGES/django.po: not UTF-8"):
        list(read_wheel(wheel, lambda loc: True))
