"""What OneAligner's token-level scorer costs: scoring one Tatoeba language (every query
against every candidate) with BERT-score in blocks, against mean pooling (one dot product per
pair, the cheap similarity of Table 1), and the peak memory of a block.

Random token states of XLM-R-large's width stand in for an encoder's layer 17, so only the
scorer is measured (`mlrep.embed.bertscore.score_matrix`, evaluation: cosine). The ratio
BERT-score / pooling is what the paper's token-level similarity costs per language; times 36
(Tatoeba-36) or 223 (New-Tatoeba) gives a full evaluation's scoring time.

    python benchmarks/bertscore.py [--sentences 1000] [--length 100] [--width 1024]
                                   [--blocks 64 128 256] [--device cuda]

On a GPU the timings wait for the device (`torch.cuda.synchronize`) before each clock read.
"""

from __future__ import annotations

import argparse

import torch
from _timing import clock

from mlrep.embed.bertscore import score_matrix


def states(sentences: int, length: int, width: int, device: torch.device, seed: int):
    """Token states and masks of `sentences` sentences of 40 %–100 % of `length` tokens."""
    generator = torch.Generator().manual_seed(seed)
    lengths = torch.randint(int(0.4 * length), length + 1, (sentences,), generator=generator)
    mask = torch.arange(length)[None, :] < lengths[:, None]
    tokens = torch.randn(sentences, length, width, generator=generator)
    return tokens.to(device), mask.to(device)


def timed(device: torch.device, run) -> tuple[float, float]:
    """(seconds, peak GiB allocated on a GPU; 0 on the CPU) of `run()`."""
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    start = clock(device)
    run()
    seconds = clock(device) - start
    if device.type == "cuda":
        return seconds, torch.cuda.max_memory_allocated(device) / 2**30
    return seconds, 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=1000, help="queries = candidates")
    parser.add_argument("--length", type=int, default=100, help="tokens (the paper's maximum)")
    parser.add_argument("--width", type=int, default=1024, help="XLM-R-large: 1024")
    parser.add_argument("--blocks", type=int, nargs="+", default=[64, 128, 256])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    src, src_mask = states(args.sentences, args.length, args.width, device, 1)
    tgt, tgt_mask = states(args.sentences, args.length, args.width, device, 2)
    with torch.no_grad():
        # warm-up: the first call on a GPU pays for its libraries' start, not for the scorer
        score_matrix(src[:8], src_mask[:8], tgt[:8], tgt_mask[:8], block=8)
        pooled, _ = timed(
            device, lambda: score_matrix(src, src_mask, tgt, tgt_mask, similarity="avg")
        )
        print(
            f"device {device} | {args.sentences} x {args.sentences} pairs, "
            f"{args.length} tokens, width {args.width}"
        )
        print(f"mean pooling        {pooled:9.3f} s")
        for block in args.blocks:
            seconds, peak = timed(
                device, lambda b=block: score_matrix(src, src_mask, tgt, tgt_mask, block=b)
            )
            print(
                f"BERT-score block {block:4d} {seconds:9.3f} s  peak {peak:6.2f} GiB  "
                f"{seconds / pooled:8.0f}x pooling  Tatoeba-36 {36 * seconds / 60:7.1f} min  "
                f"New-Tatoeba {223 * seconds / 60:7.1f} min"
            )


if __name__ == "__main__":
    main()
