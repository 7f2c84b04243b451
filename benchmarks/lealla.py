"""LEALLA's point is speed: training and encoding throughput of a LEALLA-small-shaped student
against its teacher's architecture (LaBSE), on the same device, with the ratio.

Training is one update of `mlrep.embed.distill` (student: α·AMS + β·FD + γ·LD against cached
teacher vectors, what a LEALLA run pays per step) and one AMS update of the teacher shape
(what training LaBSE itself costs per step); encoding is the forward pass, no gradient.
Random token ids of a fixed length stand in for text, so only compute is measured. The
vocabulary defaults below LaBSE's 501,153 rows (its embedding table and Adam state need
~6 GB to train on CPU); ``--vocab-size 501153`` measures the real width.

    python benchmarks/lealla.py [--steps 3] [--pairs 16] [--length 32] [--vocab-size 30000]
                                [--device cuda]

On a GPU the timings wait for the device (`torch.cuda.synchronize`) before each clock read,
so they measure the kernels and not their launch.
"""

from __future__ import annotations

import argparse

import torch
from _timing import clock

from mlrep.embed.distill import DistillModel
from mlrep.embed.settings import DistillConfig, StudentConfig
from mlrep.embed.student import parameter_counts

SHAPES = {  # Table A.3: rows #8 (LEALLA-small) and #0 (LaBSE)
    "LEALLA-small": dict(layers=24, dim=128, heads=8, ffn_dim=512),
    "LaBSE (teacher)": dict(layers=12, dim=768, heads=12, ffn_dim=3072),
}
TEACHER_DIM = 768


def measure(name: str, loss: str, args: argparse.Namespace) -> dict:
    config = StudentConfig(vocab_size=args.vocab_size, max_tokens=args.length, **SHAPES[name])
    device = torch.device(args.device)
    model = DistillModel(config, DistillConfig(teacher_dim=TEACHER_DIM, loss=loss)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    generator = torch.Generator().manual_seed(0)
    src, tgt = (
        torch.randint(3, args.vocab_size, (args.pairs, args.length), generator=generator).to(device)
        for _ in range(2)
    )
    teacher = torch.nn.functional.normalize(torch.randn(2, args.pairs, TEACHER_DIM), dim=-1)
    teacher = teacher.to(device)

    def update() -> None:
        optimizer.zero_grad()
        model.loss_terms(src, tgt, teacher[0], teacher[1])["loss"].backward()
        optimizer.step()

    model.train()
    update()  # warm-up: allocation and first-call costs
    began = clock(device)
    for _ in range(args.steps):
        update()
    train_rate = 2 * args.pairs * args.steps / (clock(device) - began)
    model.eval()
    batch = torch.cat([src, tgt])
    with torch.inference_mode():
        model.embed(batch)
        began = clock(device)
        for _ in range(args.steps):
            model.embed(batch)
        encode_rate = len(batch) * args.steps / (clock(device) - began)
    counts = parameter_counts(model.student.bert)
    return {"train": train_rate, "encode": encode_rate, **counts}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=3, help="timed updates and encodings")
    parser.add_argument("--pairs", type=int, default=16, help="pairs per update")
    parser.add_argument("--length", type=int, default=32, help="tokens per sentence")
    parser.add_argument("--vocab-size", type=int, default=30_000, help="embedding rows")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1, …")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    results = {
        "LEALLA-small": measure("LEALLA-small", "ams+fd+ld", args),
        "LaBSE (teacher)": measure("LaBSE (teacher)", "ams", args),
    }
    where = torch.cuda.get_device_name(args.device) if args.device.startswith("cuda") else "CPU"
    print(
        f"{where}, {args.threads} thread(s), {args.pairs} pairs × {args.length} tokens, "
        f"vocabulary {args.vocab_size}, {args.steps} timed steps"
    )
    print(f"{'model':<16} {'P':>8} {'P_E':>8} {'train sent/s':>13} {'encode sent/s':>14}")
    for name, r in results.items():
        print(
            f"{name:<16} {r['parameters'] / 1e6:>7.1f}M {r['encoder_parameters'] / 1e6:>7.1f}M "
            f"{r['train']:>13.1f} {r['encode']:>14.1f}"
        )
    small, big = results["LEALLA-small"], results["LaBSE (teacher)"]
    print(
        f"ratio (LEALLA-small / teacher): training {small['train'] / big['train']:.1f}x, "
        f"encoding {small['encode'] / big['encode']:.1f}x"
    )


if __name__ == "__main__":
    main()
