"""Training throughput of the contrastive criterion against plain label-smoothed cross-entropy.

One model (`mlrep_transformer_tiny`, or `--arch mlrep_transformer_base`), one Adam and one
fixed set of synthetic batches; each criterion setting in turn trains that model with forward +
backward + `torch.optim.Adam` step, and the timed steps print target tokens/s,
ms/step and the tokens/s ratio against fairseq's own `label_smoothed_cross_entropy` (the
reference, ε = 0.1):

- `mlrep_contrastive` with both weights 0 (in training mode exactly label-smoothed CE, so its
  ratio is the criterion's own overhead: none expected);
- +sent (`sentence_weight` 1: the target sentence also goes through the encoder);
- +word (`word_weight` 0.1: the same second encoder pass, plus the units of the batch's
  alignments and the projection head g);
- +sent +word.

Batches are random subwords of a `--vocab`-symbol dictionary with a language tag at position 0
and EOS at the end, `--length` subwords on average per side (±50 %), collated by fairseq's
`LanguagePairDataset` (left-padded sources, sorted by source length) with alignments in
`--load-alignments` form: monotone units over the content subwords, each 1-to-1, 2-to-1 or
1-to-2 subwords (written as the cross product), a tenth of the subwords left unaligned. The
settings take turns within each of `--rounds` rounds, one update per batch each, each round
starting one setting later (a setting's figure is its median round, printed with the fastest
and slowest; load from other work on a shared machine hits all settings alike), after one
untimed pass each.

Last, two pieces of the word loss are timed alone and printed as shares of the +word step: the
Python unit grouping (`mlrep.nmt.contrastive.units`, on the same batches) and `info_nce` forward
+ backward on as many projected unit vectors as a batch has units.

    python benchmarks/contrastive_throughput.py --threads 2
    python benchmarks/contrastive_throughput.py --arch mlrep_transformer_base --rounds 3
"""

from __future__ import annotations

import argparse
import statistics
import warnings

import torch
from _timing import clock
from fairseq import utils
from fairseq.criterions.label_smoothed_cross_entropy import LabelSmoothedCrossEntropyCriterion
from fairseq.data import Dictionary, LanguagePairDataset
from fairseq.models import ARCH_CONFIG_REGISTRY

from mlrep.nmt.contrastive import ContrastiveCriterion, info_nce, units
from mlrep.nmt.model import MODEL, VariantTransformer

TAGS = ["__en__", "__de__", "__it__", "__ja__", "__ro__", "__zh__"]
SMOOTHING = 0.1
REFERENCE = "fairseq label_smoothed_cross_entropy"
# name -> the criterion's weights; None is the reference
SETTINGS = {
    REFERENCE: None,
    "mlrep_contrastive, weights 0": {},
    "+sent (sentence_weight 1)": {"sentence_weight": 1.0},
    "+word (word_weight 0.1)": {"word_weight": 0.1},
    "+sent +word": {"sentence_weight": 1.0, "word_weight": 0.1},
}
WORD = "+word (word_weight 0.1)"
WORD_PROJECTION, WORD_T = 128, 0.2  # the criterion's defaults: d' and T


class _Task:
    def __init__(self, dictionary: Dictionary) -> None:
        self.source_dictionary = self.target_dictionary = dictionary


def dictionary(vocab: int) -> Dictionary:
    d = Dictionary()
    for i in range(vocab):
        d.add_symbol(f"w{i}")
    for tag in TAGS:
        d.add_symbol(tag)
    return d


def model(arch: str, task: _Task) -> VariantTransformer:
    parser = argparse.ArgumentParser(argument_default=argparse.SUPPRESS)
    VariantTransformer.add_args(parser)
    args = parser.parse_args([])
    ARCH_CONFIG_REGISTRY[arch](args)
    torch.manual_seed(0)
    return VariantTransformer.build_model(args, task)


def links(source: int, target: int, generator: torch.Generator) -> list[int]:
    """Monotone units over content positions 1..source (1..target): each 1-to-1 (3/4),
    2-to-1 or 1-to-2 subwords (1/8 each), a tenth of the positions skipped; flat
    (source, target) pairs, a unit written as the cross product of its subwords."""
    out: list[int] = []
    i = j = 1
    while i <= source and j <= target:
        draw = torch.rand(2, generator=generator).tolist()
        if draw[0] < 0.1:  # leave a subword of one side unaligned
            i, j = (i + 1, j) if draw[1] < 0.5 else (i, j + 1)
            continue
        width_s, width_t = (2, 1) if draw[1] < 0.125 else (1, 2) if draw[1] < 0.25 else (1, 1)
        width_s, width_t = min(width_s, source - i + 1), min(width_t, target - j + 1)
        out += [x for s in range(i, i + width_s) for t in range(j, j + width_t) for x in (s, t)]
        i, j = i + width_s, j + width_t
    return out


def batches(
    d: Dictionary, vocab: int, count: int, sentences: int, length: int, seed: int
) -> list[dict]:
    """`count` collated batches of `sentences` tagged pairs with alignments."""
    generator = torch.Generator().manual_seed(seed)
    tags = torch.tensor([d.index(t) for t in TAGS])
    eos = torch.tensor([d.eos()])
    out = []
    for _ in range(count):
        sources, targets, alignments = [], [], []
        for _ in range(sentences):
            sizes = torch.randint(
                max(1, length // 2), length + length // 2 + 1, (2,), generator=generator
            ).tolist()
            pair = tags[torch.randperm(len(TAGS), generator=generator)[:2]]
            source, target = (
                torch.cat(
                    [
                        pair[k : k + 1],
                        torch.randint(d.nspecial, d.nspecial + vocab, (size,), generator=generator),
                        eos,
                    ]
                )
                for k, size in enumerate(sizes)
            )
            sources.append(source)
            targets.append(target)
            alignments.append(torch.tensor(links(*sizes, generator)))
        dataset = LanguagePairDataset(
            sources,
            [len(s) for s in sources],
            d,
            targets,
            [len(t) for t in targets],
            d,
            align_dataset=alignments,
        )
        out.append(dataset.collater([dataset[i] for i in range(sentences)]))
    return out


def criteria(task: _Task, dim: int) -> dict[str, torch.nn.Module]:
    built = {}
    for name, weights in SETTINGS.items():
        torch.manual_seed(1)  # the projection head's initial weights
        built[name] = (
            LabelSmoothedCrossEntropyCriterion(task, False, SMOOTHING)
            if weights is None
            else ContrastiveCriterion(
                task,
                False,
                SMOOTHING,
                word_projection=WORD_PROJECTION,
                word_temperature=WORD_T,
                encoder_dim=dim,
                **weights,
            )
        )
    return built


class Trainer:
    """The one model and one Adam over its and every criterion's parameters (a head gets
    updates only from the setting whose loss reaches it)."""

    def __init__(self, net: torch.nn.Module, criteria: list[torch.nn.Module], device):
        self.net = net.to(device).train()
        parameters = [*net.parameters(), *(p for c in criteria for p in c.to(device).parameters())]
        self.optimizer = torch.optim.Adam(parameters, lr=1e-4)
        self.device = device

    def run(self, criterion: torch.nn.Module, samples: list[dict]) -> float:
        """Seconds of one update with `criterion` on each of `samples`."""
        criterion.train()
        began = clock(self.device)
        for sample in samples:
            self.optimizer.zero_grad()
            loss, _, _ = criterion(self.net, sample)
            loss.backward()
            self.optimizer.step()
        return clock(self.device) - began


def median_seconds(work, repeats: int, device: torch.device) -> float:
    """Median wall seconds of `work()` over `repeats` calls, after one untimed call."""
    work()
    times = []
    for _ in range(repeats):
        began = clock(device)
        work()
        times.append(clock(device) - began)
    return statistics.median(times)


def word_parts(samples: list[dict], width: int, repeats: int, device: torch.device) -> dict:
    """Seconds per batch of the word loss's pieces outside the model: `units` (Python, on
    the CPU), and `info_nce` forward + backward on the batch's unit count of projected
    (`width`) vectors."""
    grouping = median_seconds(
        lambda: [units(s["alignments"], s["target"].size(1)) for s in samples], repeats, device
    ) / len(samples)
    count = round(
        statistics.mean(units(s["alignments"], s["target"].size(1)).count for s in samples)
    )
    generator = torch.Generator().manual_seed(2)
    anchors, candidates = (
        torch.randn(count, width, generator=generator).to(device).requires_grad_() for _ in range(2)
    )

    nce = median_seconds(
        lambda: info_nce(anchors, candidates, WORD_T, symmetric=True).loss.backward(),
        repeats,
        device,
    )
    return {"units": grouping, "info_nce": nce, "count": count}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--arch", default=f"{MODEL}_tiny", choices=[f"{MODEL}_tiny", f"{MODEL}_base"]
    )
    parser.add_argument("--vocab", type=int, default=8000, help="subwords (Chapter 5: 8,000)")
    parser.add_argument("--sentences", type=int, default=64, help="pairs per batch")
    parser.add_argument("--length", type=int, default=24, help="mean subwords per side")
    parser.add_argument("--batches", type=int, default=4, help="distinct batches, cycled")
    parser.add_argument("--rounds", type=int, default=5, help="timed passes over the batches")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    # fairseq's attention passes a bool padding mask beside a float causal mask
    warnings.filterwarnings("ignore", "Support for mismatched key_padding_mask")
    device = torch.device(args.device)

    d = dictionary(args.vocab)
    task = _Task(d)
    net = model(args.arch, task)
    samples = batches(d, args.vocab, args.batches, args.sentences, args.length, args.seed)
    found = [units(s["alignments"], s["target"].size(1)).count for s in samples]
    tokens = sum(s["ntokens"] for s in samples) / len(samples)
    on_device = [utils.move_to_cuda(s) if device.type == "cuda" else s for s in samples]
    settings = criteria(task, net.args.encoder_embed_dim)
    trainer = Trainer(net, list(settings.values()), device)
    print(
        f"{args.arch} ({sum(p.numel() for p in net.parameters()) / 1e6:.1f} M parameters), "
        f"{device.type if device.type == 'cpu' else torch.cuda.get_device_name(device)}, "
        f"{args.threads} threads; {len(samples)} batches of {args.sentences} pairs, "
        f"{tokens:.0f} target tokens and {sum(found) / len(found) / args.sentences:.1f} units "
        f"per sentence on average, vocabulary {len(d)}; per setting one warm-up pass and "
        f"{args.rounds} timed passes over the batches, median pass"
    )
    for criterion in settings.values():  # warm-up: one untimed pass each
        trainer.run(criterion, on_device)
    rounds: dict[str, list[float]] = {name: [] for name in settings}
    names = list(settings)
    for turn in range(args.rounds):  # each round starts one setting later
        for name in names[turn % len(names) :] + names[: turn % len(names)]:
            rounds[name].append(trainer.run(settings[name], on_device))
    seconds = {name: statistics.median(times) / len(samples) for name, times in rounds.items()}
    reference = tokens / seconds[REFERENCE]
    print(
        f"{'criterion':36s} {'tokens/s':>9s} {'ms/step':>8s} {'(rounds)':>15s}  "
        f"ratio vs {REFERENCE}"
    )
    for name, per_step in seconds.items():
        rate = tokens / per_step
        low, high = (1000 * f(rounds[name]) / len(samples) for f in (min, max))
        print(
            f"{name:36s} {rate:9.0f} {1000 * per_step:8.1f} {f'{low:.0f}-{high:.0f}':>15s}  "
            f"{rate / reference:.3f}"
        )

    parts = word_parts(samples, WORD_PROJECTION, max(3, args.rounds), device)
    link_count = sum(len(s["alignments"]) for s in samples) / len(samples)
    word = seconds[WORD]
    print(f"the word loss's pieces, per batch ({link_count:.0f} links, {parts['count']} units):")
    rows = [
        ("units() (Python grouping, CPU)", parts["units"]),
        (f"info_nce() fwd+bwd, {parts['count']} x {WORD_PROJECTION}", parts["info_nce"]),
    ]
    for label, spent in rows:
        print(
            f"  {label:36s} {1000 * spent:8.1f} ms  {100 * spent / word:5.1f} % of the +word step"
        )


if __name__ == "__main__":
    main()
