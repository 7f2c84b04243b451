"""Line handling shared by every step: bad input, counts, shards, gather."""

import json

import pytest

from mlrep.text import lines
from mlrep.text.lines import Counts, TextInputError


def test_invalid_utf8_names_file_and_line(tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes(b"good\nbad \xff here\n")
    with pytest.raises(TextInputError, match=r"in.txt:2: invalid UTF-8 at byte 4"):
        lines.read_lines(path)


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(TextInputError, match="file not found"):
        lines.read_lines(tmp_path / "nope.txt")


def test_empty_and_overlong_lines_are_passed_through_and_counted():
    source = ["a b", "", "   ", "x" * 50, "c"]
    out, counts = lines.process(source, lambda b: [s.upper() for s in b], max_chars=10)
    assert out == ["A B", "", "", "x" * 50, "C"]
    assert (counts.lines, counts.processed, counts.empty, counts.overlong) == (5, 2, 2, 1)


def test_a_tool_that_drops_lines_is_caught():
    with pytest.raises(TextInputError, match="returned 1 lines for 2"):
        lines.process(["a", "b"], lambda b: b[:1], max_chars=10)


@pytest.mark.parametrize(("total", "shards"), [(0, 2), (1, 3), (10, 3), (101, 7)])
def test_shards_cover_every_line_once_in_order(total, shards):
    covered = [i for s in range(shards) for i in lines.shard_range(total, s, shards)]
    assert covered == list(range(total))


def test_shard_out_of_range():
    with pytest.raises(TextInputError, match=r"outside 0\.\.1"):
        lines.shard_range(10, 2, 2)


def test_gather_joins_shards_and_sums_counts(tmp_path):
    parts = []
    for i, chunk in enumerate([["a", ""], ["b"]]):
        part = tmp_path / f"p{i}"
        lines.write_output(part, chunk, Counts(lines=len(chunk), processed=1, empty=len(chunk) - 1))
        parts.append(part)
    total = lines.gather(parts, tmp_path / "all")
    assert (tmp_path / "all").read_text() == "a\n\nb\n"
    meta = json.loads((tmp_path / "all.meta.json").read_text())
    assert (meta["lines"], meta["processed"], meta["empty"]) == (3, 2, 1)
    assert total.lines == 3


def test_gather_needs_the_shard_metadata(tmp_path):
    part = tmp_path / "p0"
    part.write_text("a\n")
    with pytest.raises(TextInputError, match=r"p0.meta.json: missing"):
        lines.gather([part], tmp_path / "all")


@pytest.mark.parametrize("ending", ["", "\n", "\r\n"])
@pytest.mark.parametrize("max_lines", [0, 5, 100])
def test_a_shard_reads_the_same_block_as_slicing_the_whole_file(tmp_path, ending, max_lines):
    path = tmp_path / "corpus.txt"
    text = [f"línea {i}" if i % 7 else "" for i in range(23)]
    path.write_bytes((ending or "\n").join(text).encode() + ending.encode())
    whole = lines.read_lines(path)
    assert len(whole) == 23
    kept = whole[:max_lines] if max_lines else whole
    joined = []
    for shard in range(4):
        block, total = lines.read_block(path, max_lines, shard, 4)
        assert total == 23
        assert block == [kept[i] for i in lines.shard_range(len(kept), shard, 4)]
        joined.extend(block)
    assert joined == kept
    assert lines.read_block(path, max_lines, None, None) == (kept, 23)


def test_an_empty_file_has_no_lines_and_empty_shards(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    assert lines.read_block(path, 0, 1, 3) == ([], 0)


def test_a_shard_names_the_bad_line_by_its_number_in_the_whole_file(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"a\nb\nc\nd\n\xff\nf\n")
    assert lines.read_block(path, 0, 0, 2) == (["a", "b", "c"], 6)
    with pytest.raises(TextInputError, match=r"bad\.txt:5: invalid UTF-8"):
        lines.read_block(path, 0, 1, 2)
