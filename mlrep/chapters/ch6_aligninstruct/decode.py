"""What a Chapter 6 run decodes: one prompts file per decoding pass, and its hypotheses split
back per test set and direction.

`mlrep llm generate` decodes one file of prompts into one file of hypotheses, a line each, so
a run's decoding is one generate job per pass, not one per direction: `prompts` writes every
prompt of the run (its test sets, in `Run.tests` order, each of its directions in
`Run.directions` order) into one JSONL file of instruction records (``input`` the prompt,
``output`` the reference with the templates' period, as an MTInstruct record has it), and an
index (JSON) of where each test set and direction lies in it. `split` cuts the hypotheses
file back into ``<out>/<test>/<src>-<tgt>.txt``, which scoring reads.

The prompt is Table D.2's `mlrep.llm.instruct.mt_prompt` with the run's variant (``default``,
or ``p1`` … ``p5`` for Table D.3's decodings), the languages named as the instructions name
them (`runs.NAMES`). A pivot run (Table D.4) decodes twice with the same model: `prompts`
writes the first pass, x→English for each zero-shot direction x→y (the source lines of that
direction's test set: zero-shot sets joined on English hold different lines per pair), and
`pivot_prompts` the second, English→y from the first pass's hypotheses (less the templates'
period, `strip_terminal`), whose output is the x→y hypothesis. A first-pass record has no
English reference: its ``output`` is empty.

Index (``prompts.json``)::

    {"run": "bloomz-3/7b1-…-pivot", "pass": 1, "prompt": "default", "total": 600,
     "entries": [{"test": "opus", "direction": "ar-de", "asks": "ar-en",
                  "start": 0, "lines": 10}, …]}
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from mlrep.chapters.ch6_aligninstruct import testsets
from mlrep.chapters.ch6_aligninstruct.runs import NAMES, PIVOT_LANGUAGE, Run
from mlrep.errors import MlrepError, did_you_mean
from mlrep.io import atomic_directory, atomic_write_text, read_lines
from mlrep.llm.instruct import TERMINAL, Language, Record, mt_prompt, strip_terminal, write_jsonl
from mlrep.llm.settings import GenerateSettings


class DecodeError(MlrepError):
    """Prompts, an index or hypotheses of a Chapter 6 decoding that do not fit together."""


@dataclass(frozen=True)
class Entry:
    """One test set's direction in a prompts file: lines [start, start + lines), prompting
    `asks` (the direction itself, or a pivot pass's leg)."""

    test: str
    direction: str
    asks: str
    start: int
    lines: int


def language(code: str) -> Language:
    """A language as Chapter 6's prompts name it."""
    if code not in NAMES:
        raise DecodeError(
            f"no Chapter 6 language {code!r}{did_you_mean(code, NAMES)}; "
            f"languages: {', '.join(NAMES)}"
        )
    return Language(code, NAMES[code])


def _test_folder(tests: Mapping[str, Path], test: str, run: Run) -> Path:
    if test not in tests:
        raise DecodeError(
            f"{run.path} is scored on {', '.join(run.tests)}: give the {test} test set's "
            f"folder (`mlrep ch6 tests`) as --tests {test}=FOLDER"
        )
    return tests[test]


def _write(
    run: Run, pass_number: int, records: list[Record], entries: list[Entry], out: Path, index: Path
) -> dict:
    document = {
        "run": run.path,
        "pass": pass_number,
        "prompt": run.prompt,
        "total": len(records),
        "entries": [asdict(e) for e in entries],
    }
    write_jsonl(records, out)
    atomic_write_text(index, json.dumps(document, indent=1) + "\n")
    return document


def prompts(
    run: Run, tests: Mapping[str, Path], languages: Sequence[str], out: Path, index: Path
) -> dict:
    """Write the run's (first-pass) prompts to `out` (JSONL) and their index to `index`;
    `tests` maps each of `Run.tests` to its test set folder, `languages` are the setting's
    (BLOOMZ+24's at this scale). Returns the index."""
    records: list[Record] = []
    entries: list[Entry] = []
    directions = run.directions(languages)
    if not directions:
        raise DecodeError(f"{run.path} decodes nothing without the scale's --languages")
    for test in run.tests:
        folder = _test_folder(tests, test, run)
        for src, tgt in directions:
            sources, references = testsets.read(folder, src, tgt)
            leg = PIVOT_LANGUAGE if run.pivot else tgt
            source, target = language(src), language(leg)
            entries.append(Entry(test, f"{src}-{tgt}", f"{src}-{leg}", len(records), len(sources)))
            for text, reference in zip(sources, references, strict=True):
                output = "" if run.pivot else reference + TERMINAL
                prompt = mt_prompt(source, target, text, run.prompt)
                records.append(Record(prompt, output, "mt", f"{src}-{leg}"))
    return _write(run, 1, records, entries, out, index)


def read_index(path: Path) -> tuple[dict, list[Entry]]:
    """An index and its entries (a file that is none names itself)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        return document, [Entry(**e) for e in document["entries"]]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise DecodeError(
            f"{path}: not a prompts index ({exc}); write it with `mlrep ch6 prompts`"
        ) from None


def read_hypotheses(index: Path, hypotheses: Path) -> tuple[dict, list[Entry], list[str]]:
    """An index, its entries and the hypotheses decoded from its prompts file, one each."""
    document, entries = read_index(index)
    lines = read_lines(hypotheses, DecodeError)
    if len(lines) != document["total"]:
        raise DecodeError(
            f"{hypotheses} has {len(lines)} lines for the {document['total']} prompts of "
            f"{index}: decode that index's prompts file again with `mlrep llm generate`"
        )
    return document, entries, lines


def pivot_prompts(
    run: Run, tests: Mapping[str, Path], first_index: Path, first: Path, out: Path, index: Path
) -> dict:
    """The second pass of a pivot run: English→y prompts of the first pass's hypotheses
    (`first`, decoded from the prompts of `first_index`), with the references of x→y."""
    if not run.pivot:
        raise DecodeError(f"{run.path} is no pivot run: it decodes in one pass")
    document, entries, lines = read_hypotheses(first_index, first)
    if document["run"] != run.path or document["pass"] != 1:
        raise DecodeError(
            f"{first_index} indexes pass {document['pass']} of {document['run']}, not the "
            f"first pass of {run.path}: give that run's first-pass index"
        )
    records: list[Record] = []
    second: list[Entry] = []
    for entry in entries:
        src, tgt = entry.direction.split("-")
        _, references = testsets.read(_test_folder(tests, entry.test, run), src, tgt)
        if len(references) != entry.lines:
            raise DecodeError(
                f"{entry.test} {entry.direction} has {len(references)} references but the "
                f"first pass decoded {entry.lines} lines: decode the pivot run again"
            )
        english, target = language(PIVOT_LANGUAGE), language(tgt)
        second.append(
            Entry(entry.test, entry.direction, f"{PIVOT_LANGUAGE}-{tgt}", len(records), entry.lines)
        )
        window = lines[entry.start : entry.start + entry.lines]
        for hypothesis, reference in zip(window, references, strict=True):
            prompt = mt_prompt(english, target, strip_terminal(hypothesis), run.prompt)
            records.append(Record(prompt, reference + TERMINAL, "mt", f"{PIVOT_LANGUAGE}-{tgt}"))
    return _write(run, 2, records, second, out, index)


def split(index: Path, hypotheses: Path, out: Path) -> dict[str, int]:
    """Write the hypotheses of `index`'s prompts into ``<out>/<test>/<src>-<tgt>.txt`` (the
    folder replaced atomically); returns the lines per ``<test>/<src>-<tgt>``."""
    _, entries, lines = read_hypotheses(index, hypotheses)
    written: dict[str, int] = {}
    with atomic_directory(out) as staging:
        for entry in entries:
            window = lines[entry.start : entry.start + entry.lines]
            path = staging / entry.test / f"{entry.direction}.txt"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(f"{line}\n" for line in window), encoding="utf-8", newline="\n")
            written[f"{entry.test}/{entry.direction}"] = len(window)
    return written


def decode(
    run: Run,
    tests: Mapping[str, Path],
    languages: Sequence[str],
    base: str,
    adapter: Path | None,
    settings: GenerateSettings,
    out: Path,
) -> dict[str, int]:
    """Every pass of the run's decoding in one process, the model loaded once: the prompts
    (`prompts`, a pivot run's second pass `pivot_prompts`), greedy hypotheses and the split
    into ``<out>/<test>/<src>-<tgt>.txt``. The prompts files, their indexes and the raw
    hypotheses of each pass stay beside `out` (``<out>.pass<k>.*``) as the record of what
    the model was asked. Returns `split`'s line counts."""
    from mlrep.llm.generate import greedy, read_prompts, system

    model = system(base, adapter, settings.precision)

    def files(number: int) -> tuple[Path, Path, Path]:
        """(prompts, index, hypotheses) of pass `number`."""
        stem = f"{out.name}.pass{number}"
        return tuple(out.parent / f"{stem}{suffix}" for suffix in (".jsonl", ".json", ".txt"))

    def generate(number: int) -> tuple[Path, Path]:
        prompts_file, index, hypotheses = files(number)
        lines = greedy(
            model, read_prompts(prompts_file), settings.max_new_tokens, settings.batch_size
        )
        atomic_write_text(hypotheses, "".join(f"{line}\n" for line in lines))
        return index, hypotheses

    prompts(run, tests, languages, *files(1)[:2])
    index, hypotheses = generate(1)
    if run.pivot:
        pivot_prompts(run, tests, index, hypotheses, *files(2)[:2])
        index, hypotheses = generate(2)
    return split(index, hypotheses, out)
