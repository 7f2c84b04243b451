"""The chapter registry: the one list of the thesis chapters and companion papers.

Every place that enumerates chapters derives from `REGISTRY` or is tested against it: the
Snakefile's includes and `all`, the params.yaml sections and the schema, the DVC stages, the
report's chapter order, the chapter summaries and docs/chapters/. A chapter's id names all of
its files at once (see `Chapter`), so adding a chapter is one entry here plus the files it
names; `docs/layout.md` says what goes where.

A chapter is *built* once its rules have landed; until then it is a placeholder: it has no
DVC stage, no target in ``all``, and the report shows its published tables as "not run". A
placeholder whose rules are *landing* (``landing``) already has its rule file (included, so
its own targets run and are tested), its settings and its docs page; any other placeholder has
none of them and a params section of ``seeds`` alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlrep.errors import MlrepError


@dataclass(frozen=True)
class Chapter:
    """One chapter or paper and the names derived from its id.

    ``id`` is the params.yaml section, the results folder ``results/<id>/``, the chapter's
    Snakemake target and DVC stage, its tables file and docs page. ``prefix`` begins every
    rule name of the chapter (``ch8_train``); it is short because it is typed in
    ``--forcerun`` and read in logs.
    """

    id: str
    prefix: str
    title: str
    built: bool
    # the chapter whose rules this one's derive from (`use rule … as … with:`): its rule file
    # is included first (`include_order`)
    reuses: str = ""
    # a placeholder whose rule file is in and included, its chapter target not yet
    landing: bool = False

    @property
    def rules(self) -> str:
        """The chapter's rule file, relative to the repository (the Snakefile includes it)."""
        return f"workflow/rules/{self.id}.smk"

    @property
    def tables(self) -> str:
        """The definitions of the chapter's tables (measured cells and their metric names),
        relative to the repository. A name, not a path from this file: the registry reads no
        report file, so the code of every verb that looks a chapter up stays free of them
        (mlrep/closure.py)."""
        return f"mlrep/report/tables/{self.id}.yaml"

    @property
    def docs(self) -> str:
        """The chapter's docs page, relative to the repository."""
        return f"docs/chapters/{self.id}.md"

    @property
    def metrics(self) -> str:
        """The declaration of the metric names its runs write (``PATTERNS``), relative to the
        repository: `mlrep.report.metrics.write` refuses any other name."""
        return f"mlrep/chapters/{self.id}/metrics.py"

    @property
    def home(self) -> str:
        """The Python package of what belongs to this chapter only (runs, systems, metrics)."""
        return f"mlrep.chapters.{self.id}"


REGISTRY: tuple[Chapter, ...] = (
    Chapter("ch2_ems", "ch2", "Chapter 2: EMS (efficient multilingual sentence embedding)", True),
    Chapter(
        "ch3_lealla",
        "ch3",
        "Chapter 3 and Appendix A: LEALLA (lightweight language-agnostic embeddings)",
        True,
    ),
    Chapter(
        "ch4_jass",
        "ch4",
        "Chapter 4 and Appendix B: JASS / ENSS (linguistically driven pre-training)",
        True,
    ),
    Chapter(
        "ch5_wordcl",
        "ch5",
        "Chapter 5 and Appendix C: word-level contrastive learning",
        True,
        "ch8_layernorm",
    ),
    Chapter(
        "ch6_aligninstruct",
        "ch6",
        "Chapter 6 and Appendix D: AlignInstruct (instruction tuning for MT)",
        True,
    ),
    Chapter(
        "ch7_interlingua", "ch7", "Chapter 7: variable-length interlingua", True, "ch8_layernorm"
    ),
    Chapter(
        "ch8_layernorm",
        "ch8",
        "Chapter 8 and Appendix E: LayerNorm placement and zero-shot NMT",
        True,
    ),
    Chapter("mrasp2", "mrasp2", "mRASP2 paper", False, landing=True),
    Chapter("onealigner", "onealigner", "OneAligner paper", True),
)


class UnknownChapterError(MlrepError):
    """A chapter id that is not in the registry."""


def ids() -> list[str]:
    """Every chapter id, in the thesis's order (the report's order)."""
    return [chapter.id for chapter in REGISTRY]


def built() -> list[Chapter]:
    """The chapters whose rules have landed."""
    return [chapter for chapter in REGISTRY if chapter.built]


def include_order() -> list[Chapter]:
    """The built and landing chapters in the order the Snakefile includes their rule files:
    the registry's, except that a chapter comes after the one it `reuses` (Snakemake's ``use
    rule`` needs the rule it derives from defined already)."""
    done: list[Chapter] = []

    def visit(chapter: Chapter, path: tuple[str, ...]) -> None:
        if chapter in done:
            return
        if chapter.id in path:
            raise MlrepError(f"chapters reuse each other's rules in a cycle: {' -> '.join(path)}")
        if chapter.reuses:
            base = get(chapter.reuses)
            if not base.built:
                raise MlrepError(f"{chapter.id} reuses the rules of {base.id}, which is not built")
            visit(base, (*path, chapter.id))
        done.append(chapter)

    for chapter in REGISTRY:
        if chapter.built or chapter.landing:
            visit(chapter, ())
    return done


def placeholders() -> list[Chapter]:
    """The chapters not built yet, landing ones included (their params sections are exempt
    from the settings check)."""
    return [chapter for chapter in REGISTRY if not chapter.built]


def get(chapter_id: str) -> Chapter:
    for chapter in REGISTRY:
        if chapter.id == chapter_id:
            return chapter
    raise UnknownChapterError(f"no chapter {chapter_id!r}; chapters: {', '.join(ids())}")
