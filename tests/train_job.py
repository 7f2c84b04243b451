"""A small training job under the checkpoint contract, for the preemption tests.

python -m tests.train_job CHECKPOINT_DIR [--updates N] [--sleep S]
A two-layer MLP with dropout on a fixed regression set: dropout and the shuffled batch order
make the result depend on RNG state and data position, so a resume that lost either shows.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from mlrep.train.checkpoint import Checkpoints, train


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("checkpoints", type=Path)
    parser.add_argument("--updates", type=int, default=60)
    parser.add_argument("--every", type=int, default=5)
    parser.add_argument("--sleep", type=float, default=0.0)
    args = parser.parse_args()

    torch.manual_seed(1)
    torch.use_deterministic_algorithms(True)
    inputs = torch.randn(256, 16)
    targets = inputs @ torch.randn(16, 1) + 0.1 * torch.randn(256, 1)
    model = torch.nn.Sequential(
        torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Dropout(0.2), torch.nn.Linear(32, 1)
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

    def update(step: int) -> float:
        order = torch.randperm(256, generator=torch.Generator().manual_seed(step // 8))
        batch = order[(step % 8) * 32 : (step % 8 + 1) * 32]
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(inputs[batch]), targets[batch])
        loss.backward()
        optimizer.step()
        time.sleep(args.sleep)
        return loss.item()

    train(
        model=model,
        optimizer=optimizer,
        update=update,
        total_updates=args.updates,
        checkpoint_every=args.every,
        checkpoints=Checkpoints(args.checkpoints, keep=2),
        log=lambda m: print(m, flush=True),
    )


if __name__ == "__main__":
    main()
