import pytest

from mlrep.data.gettext_clean import Cleaned, clean_message, rejection

PY = frozenset({"python-format"})


@pytest.mark.parametrize(
    ("text", "flags", "expected", "placeholders"),
    [
        ("Deleted %(count)s files.", frozenset(), "Deleted files.", 1),
        ("Hello %s, you have %d messages", PY, "Hello, you have messages", 2),
        ("Step %1$s of %2$s", frozenset({"c-format"}), "Step of", 2),
        ("100% of %(total)s", frozenset(), "100% of", 1),
        ("100% of answers", frozenset(), "100% of answers", 0),
        ("%(percent)s%% complete", PY, "% complete", 1),
        ("Page {0} of {1}", frozenset({"python-brace-format"}), "Page of", 2),
        ("Hi {name}!", frozenset(), "Hi!", 1),
        ("Value {{ value }} shown", frozenset(), "Value shown", 1),
        ("Total: ${amount}", frozenset({"javascript-format"}), "Total:", 1),
    ],
)
def test_placeholders_are_stripped_and_counted(text, flags, expected, placeholders):
    assert clean_message(text, flags) == Cleaned(expected, placeholders)


def test_printf_without_a_format_flag_is_left_alone():
    # "% o" would be a printf conversion; only flagged format strings are trusted to have them
    assert clean_message("Up 5% on last year", frozenset()).text == "Up 5% on last year"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            'Click <a href="%(url)s">here</a> to <strong>continue</strong>.',
            "Click here to continue.",
        ),
        ("Tom &amp; Jerry &lt;3", "Tom & Jerry <3"),
        ("Line one\nline two\n\n  three", "Line one line two three"),
        ("&File", "File"),
        ("Q&A and R&D", "Q&A and R&D"),
        ("_Save as", "Save as"),
        ("file_name stays", "file_name stays"),
        ("ファイル(&F)", "ファイル"),
        ("Use ``%(cmd)s`` to build", "Use to build"),
        ("The URL you entered, %(url)s, looks odd", "The URL you entered, looks odd"),
        ("zero\u200bwidth", "zero width"),
    ],
)
def test_markup_accelerators_and_whitespace(text, expected):
    assert clean_message(text, PY).text == expected


def _pair(en: str, xx: str, flags=PY):
    return clean_message(en, flags), clean_message(xx, flags)


@pytest.mark.parametrize(
    ("en", "xx", "reason"),
    [
        ("%(name)s", "%(name)s", "empty_after_cleaning"),
        ("DATETIME_FORMAT", "j. F Y H:i", "code_like"),
        ("--", "—", "no_letters"),
        ("Delete %(n)s files", "Dateien löschen", "placeholder_mismatch"),
        ("Status", "status", "untranslated_copy"),
        ("a" * 50, "b" * 50, "too_long"),
        ("Save changes", "Änderungen speichern", None),
    ],
)
def test_rejection_reasons(en, xx, reason):
    english, translation = _pair(en, xx)
    assert rejection(english, translation, en, max_chars=40) == reason
