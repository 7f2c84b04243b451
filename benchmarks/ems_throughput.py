"""EMS training throughput: the tiny and the thesis-width model, a few updates each.

Prints sentences/s (two sentences per pair, both encoded) and seconds per 1k updates at the
measured batch, and beside it the thesis's figure: 732 s per 1k steps for EMS on 4 × V100 with
152 pairs per GPU (Table 2.14; XTR costs +36 s, the contrastive loss +7 s). The full width runs
a smaller batch on CPU (a thesis batch takes minutes per update here); its seconds per 1k steps
at 152 pairs are a linear extrapolation, labelled as such. Widths come from params.yaml (the
``tiny`` and ``full`` scales of ``ch2_ems``); random token ids of a fixed length stand in for
text, so only the compute is measured.

    python benchmarks/ems_throughput.py [--steps 3] [--full-batch 8] [--device cuda]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from mlrep import config as cfg
from mlrep.chapters.ch2_ems import runs
from mlrep.cliutil import option_names
from mlrep.embed.model import Batch, EmsConfig, EmsModel, count_parameters
from mlrep.embed.settings import FROM_DATA

THESIS_SEC_PER_1K = 732  # Table 2.14, EMS, 4 × V100
THESIS_BATCH = 152  # pairs per GPU step (spec §0.2)
PARAMS = Path(__file__).resolve().parent.parent / "params.yaml"


def model_for(scale: str, languages: int) -> tuple[EmsModel, int]:
    params = cfg.load_yaml(PARAMS)
    params["scale"] = scale
    section = cfg.load(params)[runs.SECTION]
    values = runs.run_values(section, "ems")
    prepare = section["prepare"]
    config = EmsConfig(
        vocab_size=prepare["vocab_size"],
        languages=languages,
        max_tokens=prepare["max_tokens"],
        **{k: values[k] for k in option_names(EmsConfig, FROM_DATA)},
    )
    return EmsModel(config), values["batch_size"]


def measure(model: EmsModel, batch_size: int, length: int, steps: int, device: str) -> float:
    """Seconds per update (mean over `steps`, after one warm-up update)."""
    model.to(device).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    vocab = model.config.vocab_size
    generator = torch.Generator().manual_seed(0)

    def batch() -> Batch:
        def ids():
            return torch.randint(3, vocab, (batch_size, length), generator=generator).to(device)

        languages = torch.randint(0, model.config.languages, (batch_size,), generator=generator)
        return Batch(ids(), ids(), languages.to(device), languages.to(device))

    timings = []
    for _ in range(steps + 1):
        data = batch()
        if device == "cuda":
            torch.cuda.synchronize()
        began = time.perf_counter()
        optimizer.zero_grad()
        model.loss_terms(data)["loss"].backward()
        optimizer.step()
        if device == "cuda":
            torch.cuda.synchronize()
        timings.append(time.perf_counter() - began)
    return sum(timings[1:]) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--length", type=int, default=24, help="tokens per sentence")
    parser.add_argument("--full-batch", type=int, default=8, help="pairs per update at full width")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    print(f"device {args.device}, {args.threads} threads, {args.length} tokens per sentence")
    print(f"thesis: {THESIS_SEC_PER_1K} s per 1k steps, batch {THESIS_BATCH}/GPU, 4 x V100")
    for scale, batch_override in (("tiny", None), ("full", args.full_batch)):
        model, batch_size = model_for(scale, languages=62)
        batch_size = batch_override or batch_size
        seconds = measure(model, batch_size, args.length, args.steps, args.device)
        per_thesis_batch = seconds * THESIS_BATCH / batch_size
        print(
            f"{scale:5s} d={model.config.dim} L={model.config.layers} "
            f"encoder {count_parameters(model.encoder) / 1e6:.1f}M "
            f"+ heads {(count_parameters(model) - count_parameters(model.encoder)) / 1e6:.1f}M: "
            f"batch {batch_size}: {2 * batch_size / seconds:,.0f} sentences/s, "
            f"{1000 * seconds:,.0f} s per 1k steps"
            + (
                f" (extrapolated to batch {THESIS_BATCH}: {1000 * per_thesis_batch:,.0f} s)"
                if batch_size != THESIS_BATCH
                else ""
            )
        )


if __name__ == "__main__":
    main()
