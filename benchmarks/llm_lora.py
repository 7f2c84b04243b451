"""LoRA training throughput and peak memory of `mlrep.llm.lora.run`, for the tiny stand-in and
for a BLOOM-560m-shaped model, with the trainable share LoRA leaves.

Each model is written as a `save_pretrained` folder (random weights: only the compute is
measured), then trained in a fresh interpreter through the trainer itself (`lora.run`, LoRA r 8
on ``query_key_value``), so the memory reading is the run's own: on the CPU the growth of the
process's peak resident size (``VmHWM``: touched pages of the memory-mapped weights included)
over its value after the imports (torch, transformers, peft), model loading included; on a GPU
``torch.cuda.max_memory_allocated``. Tokens/s counts every token of an update (prompt and
output) over the mean seconds per update that the run records. The 560m shape (24 layers,
hidden 1024, 16 heads, vocabulary 250,880: the hub's ``bigscience/bloomz-560m``) takes tens of
seconds per update on 2 CPU cores, so it runs few updates of a small batch by default.

    python benchmarks/llm_lora.py [--updates-560m 3] [--batch-560m 2] [--tokens 64]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
from pathlib import Path

from _timing import in_child

CHILD = """
import json, sys
from pathlib import Path
import peft, torch, transformers  # imported before the first reading: not the run's memory
from mlrep.llm import lora
from mlrep.llm.settings import LoraSettings

def peak_mib():  # this process's own peak resident size (reset at exec, unlike ru_maxrss)
    status = Path("/proc/self/status").read_text().splitlines()
    return next(int(l.split()[1]) for l in status if l.startswith("VmHWM")) / 1024

folder, data, out, batch, updates, threads = sys.argv[1:7]
torch.set_num_threads(int(threads))
before = peak_mib()
settings = LoraSettings(batch_size=int(batch), epochs=1, lr=1e-4, precision="bf16")
record = lora.run(Path(folder), [Path(data)], settings, Path(out), 1, int(threads), log=print)
cuda = torch.cuda.is_available()
print(json.dumps({
    "sec_per_update": record["sec_per_update"], "updates": record["updates"],
    "parameters": record["parameters"], "device": record["device"],
    "peak_mib": torch.cuda.max_memory_allocated() / 2**20 if cuda else peak_mib() - before,
}))
"""

WORDS = ["kato", "mirel", "sunda", "pelo", "zuk", "orav", "vidi", "amas", "libron", "panon"]
SHAPES = {  # (layers, hidden, heads, vocabulary: None = the tokenizer's)
    "tiny stand-in (2 layers, d 64)": (2, 64, 4, None),
    "bloom-560m shape (24 layers, d 1024)": (24, 1024, 16, 250_880),
}


def build(folder: Path, shape: tuple[int, int, int, int | None], lines: list[str]) -> None:
    """A randomly initialised BLOOM of `shape` with a byte-level BPE trained on `lines`."""
    from transformers import BloomConfig, BloomForCausalLM

    from mlrep.llm.stand_in import train_tokenizer

    layers, hidden, heads, vocab = shape
    tokenizer = train_tokenizer(lines, 400, 512)
    config = BloomConfig(
        vocab_size=vocab or len(tokenizer),
        hidden_size=hidden,
        n_layer=layers,
        n_head=heads,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.bos_token_id,
    )
    BloomForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def examples(path: Path, count: int, words: int) -> None:
    """`count` records whose input and output have `words` made-up words each."""
    draw = random.Random(0)

    def text() -> str:
        return " ".join(draw.choice(WORDS) for _ in range(words))

    records = [{"input": text() + " =", "output": " " + text()} for _ in range(count)]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def tokens_per_example(folder: Path, data: Path) -> float:
    """Mean tokens of an example (prompt, output and </s>) under the model's tokenizer."""
    from transformers import AutoTokenizer

    from mlrep.llm import examples as llm_examples

    tokenizer = AutoTokenizer.from_pretrained(folder)
    rows, _ = llm_examples.load(tokenizer, [data], 10**6, 10**6)
    return sum(len(ids) for ids, _ in rows) / len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates-tiny", type=int, default=20)
    parser.add_argument("--batch-tiny", type=int, default=8)
    parser.add_argument("--updates-560m", type=int, default=3)
    parser.add_argument("--batch-560m", type=int, default=2)
    parser.add_argument("--tokens", type=int, default=64, help="made-up words per input/output")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    runs = {
        name: (shape, batch, updates)
        for (name, shape), batch, updates in zip(
            SHAPES.items(),
            (args.batch_tiny, args.batch_560m),
            (args.updates_tiny, args.updates_560m),
            strict=True,
        )
    }
    print(f"{args.threads} threads; LoRA r 8 alpha 32 on query_key_value; bf16 on a GPU")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        lines = [" ".join(random.Random(i).choices(WORDS, k=8)) for i in range(500)]
        for name, (shape, batch, updates) in runs.items():
            folder, data = root / "model", root / "train.jsonl"
            build(folder, shape, lines)
            examples(data, batch * updates, args.tokens)
            per_example = tokens_per_example(folder, data)
            result = in_child(
                CHILD, str(folder), str(data), str(root / "run"), str(batch), str(updates),
                str(args.threads),
            )  # fmt: skip
            parameters = result["parameters"]
            tokens_per_second = batch * per_example / result["sec_per_update"]
            print(
                f"{name}: {parameters['total'] / 1e6:,.1f}M parameters, LoRA "
                f"{parameters['trainable']:,} trainable ({parameters['trainable_percent']:.3f}%); "
                f"{result['device']}, {result['updates']} updates of {batch} x "
                f"{per_example:.0f} tokens: {tokens_per_second:,.0f} tokens/s, "
                f"{result['sec_per_update']:.2f} s/update, peak {result['peak_mib']:,.0f} MiB"
            )
            for path in (folder, root / "run"):
                shutil.rmtree(path)


if __name__ == "__main__":
    sys.exit(main())
