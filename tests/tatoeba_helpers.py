"""A small Tatoeba v1 look-alike that the tests build themselves.

Five languages of real-looking sentences in LASER's raw layout (``tatoeba.<xx>-eng.<xx>`` and
``….eng``, 1,000 pairs each, as published) and a registry file that pins their sha256 under a
key of its own, so the downloader (checksums, resume, retries), the Tatoeba reader, the
workflow's download rules and the retrieval protocol are tested end to end with nothing but
this repository. Translations share names, numbers and some cognates, so a character-trigram
encoder retrieves far above chance but not perfectly, as on the real benchmark.
"""

from __future__ import annotations

import random
from pathlib import Path

import yaml

from mlrep.data import registry
from mlrep.io import sha256_file

KEY = "test_tatoeba"
PAIRS = 1000
NAMES = ["Tom", "Mary", "Ken", "Anna", "Paul", "Yuki", "Lena", "Omar", "Sara", "Ivan", "Mia"]

# Per language: a long and a short sentence pattern and the words that fill them, the i-th
# word of a list translating the i-th English one.
LEXICON: dict[str, dict[str, list[str] | str]] = {
    "eng": {
        "long": "{name} {verb} {num} {adj} {noun} {time}.",
        "short": "{name} {verb} the {noun}.",
        "verb": ["bought", "sold", "found", "saw", "painted", "carried", "washed", "counted"],
        "adj": ["red", "old", "small", "new", "heavy", "green", "cheap", "clean"],
        "noun": ["apples", "books", "chairs", "cups", "letters", "shoes", "boxes", "flowers"],
        "time": ["on Monday", "yesterday", "last week", "this morning", "in the evening",
                 "on Sunday", "today"],
    },
    "deu": {
        "long": "{name} {verb} {time} {num} {adj} {noun}.",
        "short": "{name} {verb} die {noun}.",
        "verb": ["kaufte", "verkaufte", "fand", "sah", "malte", "trug", "wusch", "zählte"],
        "adj": ["rote", "alte", "kleine", "neue", "schwere", "grüne", "billige", "saubere"],
        "noun": ["Äpfel", "Bücher", "Stühle", "Tassen", "Briefe", "Schuhe", "Kisten", "Blumen"],
        "time": ["am Montag", "gestern", "letzte Woche", "heute Morgen", "am Abend",
                 "am Sonntag", "heute"],
    },
    "nld": {
        "long": "{name} {verb} {time} {num} {adj} {noun}.",
        "short": "{name} {verb} de {noun}.",
        "verb": ["kocht", "verkocht", "vond", "zag", "schilderde", "droeg", "waste", "telde"],
        "adj": ["rode", "oude", "kleine", "nieuwe", "zware", "groene", "goedkope", "schone"],
        "noun": ["appels", "boeken", "stoelen", "kopjes", "brieven", "schoenen", "dozen",
                 "bloemen"],
        "time": ["op maandag", "gisteren", "vorige week", "vanochtend", "'s avonds",
                 "op zondag", "vandaag"],
    },
    "jpn": {
        "long": "{name}は{time}{adj}{noun}を{num}個{verb}。",
        "short": "{name}は{noun}を{verb}。",
        "verb": ["買った", "売った", "見つけた", "見た", "塗った", "運んだ", "洗った", "数えた"],
        "adj": ["赤い", "古い", "小さい", "新しい", "重い", "緑の", "安い", "きれいな"],
        "noun": ["りんご", "本", "椅子", "カップ", "手紙", "靴", "箱", "花"],
        "time": ["月曜日に", "昨日", "先週", "今朝", "夕方に", "日曜日に", "今日"],
    },
    "kor": {
        "long": "{name}는 {time} {adj} {noun} {num}개를 {verb}.",
        "short": "{name}는 {noun}을 {verb}.",
        "verb": ["샀다", "팔았다", "찾았다", "보았다", "칠했다", "날랐다", "씻었다", "세었다"],
        "adj": ["빨간", "오래된", "작은", "새", "무거운", "초록색", "싼", "깨끗한"],
        "noun": ["사과", "책", "의자", "컵", "편지", "신발", "상자", "꽃"],
        "time": ["월요일에", "어제", "지난주에", "오늘 아침에", "저녁에", "일요일에", "오늘"],
    },
    "cmn": {
        "long": "{name}{time}{verb}{num}个{adj}{noun}。",
        "short": "{name}{verb}{noun}。",
        "verb": ["买了", "卖了", "找到了", "看到了", "画了", "搬了", "洗了", "数了"],
        "adj": ["红色的", "旧的", "小的", "新的", "重的", "绿色的", "便宜的", "干净的"],
        "noun": ["苹果", "书", "椅子", "杯子", "信", "鞋", "箱子", "花"],
        "time": ["星期一", "昨天", "上周", "今天早上", "晚上", "星期天", "今天"],
    },
}  # fmt: skip
LANGUAGES = tuple(lang for lang in LEXICON if lang != "eng")
SLOTS = ("verb", "adj", "noun", "time")


def pairs(lang: str, n: int = PAIRS) -> list[tuple[str, str]]:
    """`n` (sentence in `lang`, English sentence) pairs, the same on every call."""
    rng = random.Random(f"tatoeba-{lang}")
    out = []
    for _ in range(n):
        pattern = "short" if rng.random() < 0.2 else "long"
        picks = {slot: rng.randrange(len(LEXICON["eng"][slot])) for slot in SLOTS}
        fill = {"name": rng.choice(NAMES), "num": rng.randint(2, 20)}
        sides = []
        for side in (lang, "eng"):
            words = {slot: LEXICON[side][slot][i] for slot, i in picks.items()}
            sides.append(str(LEXICON[side][pattern]).format(**fill, **words))
        out.append((sides[0], sides[1]))
    return out


def write(root: Path, languages: tuple[str, ...] = LANGUAGES) -> Path:
    """The raw files of `languages` in `root`, named as the LASER repository names them."""
    root.mkdir(parents=True, exist_ok=True)
    for lang in languages:
        rows = pairs(lang)
        for side, column in ((lang, 0), ("eng", 1)):
            text = "".join(row[column] + "\n" for row in rows)
            (root / f"tatoeba.{lang}-eng.{side}").write_text(text, encoding="utf-8", newline="\n")
    return root


def registry_file(root: Path, path: Path) -> Path:
    """A registry file (params.yaml ``data.registry``) with one entry, `KEY`, pinning the
    size and sha256 of every file in `root`; the base URL is never reached (tests mirror)."""
    files = [
        {"path": f.name, "lang": f.name.split(".")[1].split("-")[0], "size": f.stat().st_size,
         "sha256": sha256_file(f)}
        for f in sorted(root.glob("tatoeba.*"))
    ]  # fmt: skip
    entry = {
        "name": "Tatoeba v1 look-alike (tests)",
        "chapters": ["ch2_ems"],
        "languages": sorted({f["lang"] for f in files}),
        "access": "download",
        "reader": "tatoeba",
        "licence": "test data",
        "citation": "tests/tatoeba_helpers.py",
        "size": f"{PAIRS} pairs per language",
        "base_url": "https://tatoeba.invalid/v1/",
        "files": files,
    }
    path.write_text(yaml.safe_dump({"datasets": {KEY: entry}}, allow_unicode=True))
    return path


def dataset(registry_path: Path) -> registry.Dataset:
    """The test entry, read back through the registry's own loader."""
    return registry.get(KEY, registry.load(registry_path))
