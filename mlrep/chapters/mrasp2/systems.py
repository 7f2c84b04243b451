"""mRASP2's systems (Table 4's ablation rows) and what each of them turns on.

A system name is a row of the paper's tables as the report slugs it
(mlrep/report/tables/mrasp2.yaml, figures.yaml), the run folder and the rules' wildcard:

| name | row | contrastive | augmented | monolingual |
|---|---|---|---|---|
| ``m-transformer`` | m-Transformer (S1) | – | – | – |
| ``mrasp`` | mRASP w/o finetune (S2) | – | ✓ | – |
| ``mrasp2-w-o-aa`` | mRASP2 w/o AA (S3) | ✓ | – | – |
| ``mrasp2-w-o-mc24`` | mRASP2 w/o MC24 (S4) | ✓ | ✓ | – |
| ``mrasp2`` | mRASP2 (S5) | ✓ | ✓ | ✓ |

``augmented``: the parallel pairs' sources are dictionary-substituted. mRASP's RAS (S2) and
mRASP2's AA on parallel data are one procedure (`mlrep.text.augment`) with the same settings
here, so one switch covers both, and S2 and S4 train on the same data. ``monolingual``: the
MC24 mix's self-parallel pairs (C(x), x) are added; without substitution such a pair is a
copy, so it implies ``augmented``. A system's training data is named by those two switches
(`System.data`): S1 and S3 share ``parallel``, S2 and S4 share ``aa``, S5 has ``aa-mc24``.

``pivot`` trains nothing: it decodes the zero-shot directions through English with the
model of the system params.yaml's ``pivot`` names (the paper's: m-Transformer).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mlrep.errors import MlrepError

PIVOT_SYSTEM = "pivot"
# the training data of each combination of (augmented, monolingual)
PARALLEL, AUGMENTED, AUGMENTED_MONOLINGUAL = "parallel", "aa", "aa-mc24"
DATA = (PARALLEL, AUGMENTED, AUGMENTED_MONOLINGUAL)


class SystemNameError(MlrepError):
    """A system name outside the paper's five."""


@dataclass(frozen=True)
class System:
    name: str
    contrastive: bool
    augmented: bool
    monolingual: bool

    def __post_init__(self) -> None:
        if self.monolingual and not self.augmented:
            raise SystemNameError(
                f"{self.name}: self-parallel pairs without substitution are copies"
            )

    @classmethod
    def parse(cls, name: str) -> System:
        try:
            return SYSTEMS[name]
        except KeyError:
            raise SystemNameError(
                f"{name!r} is not an mRASP2 system; expected one of {', '.join(SYSTEMS)}"
            ) from None

    @property
    def data(self) -> str:
        """The name of the training data this system reads (one of `DATA`)."""
        if self.monolingual:
            return AUGMENTED_MONOLINGUAL
        return AUGMENTED if self.augmented else PARALLEL

    def settings(self, contrastive: Mapping[str, Any]) -> dict[str, Any]:
        """The `mlrep nmt train` options this system adds: the contrastive criterion with
        params.yaml's ``contrastive`` block (λ, τ) where it is on, nothing otherwise (plain
        label-smoothed cross-entropy)."""
        return {"contrastive": True, **contrastive} if self.contrastive else {}


SYSTEMS: dict[str, System] = {
    s.name: s
    for s in (
        System("m-transformer", contrastive=False, augmented=False, monolingual=False),
        System("mrasp", contrastive=False, augmented=True, monolingual=False),
        System("mrasp2-w-o-aa", contrastive=True, augmented=False, monolingual=False),
        System("mrasp2-w-o-mc24", contrastive=True, augmented=True, monolingual=False),
        System("mrasp2", contrastive=True, augmented=True, monolingual=True),
    )
}
# the rules' wildcard constraint for trained systems
PATTERN = "|".join(SYSTEMS)
