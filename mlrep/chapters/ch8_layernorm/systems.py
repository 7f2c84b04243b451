"""Chapter 8 system names ↔ model and data settings.

A system name is what the results folders, the report's table rows and params.yaml use:
``[swap-]<prenorm|postnorm>[-simple]-<s-enc-t-dec|t-enc>-<w|w-o>[-enc-last]``, e.g.
``postnorm-t-enc-w`` (#4) or ``prenorm-s-enc-t-dec-w-enc-last`` (Table E.1). Parsing it in one
place keeps the rule wildcards, the fairseq flags and the report rows one vocabulary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mlrep.errors import MlrepError

PIVOT_SYSTEM = "pivot"
# also the rules' wildcard constraint for system names
PATTERN = r"(swap-)?(prenorm|postnorm)(-simple)?-(s-enc-t-dec|t-enc)-(w-o|w)(-enc-last)?"
_NAME = re.compile(f"^{PATTERN}$")


class SystemNameError(MlrepError):
    """A system name outside the Chapter 8 vocabulary."""


@dataclass(frozen=True)
class System:
    name: str
    layernorm: str  # pre | post | swap
    simple: bool
    tag: str  # one of mlrep.nmt.data.TAGS
    residual: bool
    encoder_final_norm: bool

    @classmethod
    def parse(cls, name: str) -> System:
        found = _NAME.match(name)
        if not found:
            raise SystemNameError(
                f"{name!r} is not a Chapter 8 system; expected "
                "[swap-]<prenorm|postnorm>[-simple]-<s-enc-t-dec|t-enc>-<w|w-o>[-enc-last]"
            )
        parts = ("swap", "ln", "simple", "tag", "res", "enc_last")
        match = dict(zip(parts, found.groups(), strict=True))
        if match["swap"] and match["ln"] != "prenorm":
            raise SystemNameError(f"{name!r}: Swap-PreNorm is a PreNorm variant (swap-prenorm-…)")
        if match["enc_last"] and (match["ln"] != "prenorm" or match["swap"]):
            raise SystemNameError(f"{name!r}: only PreNorm has a final encoder LayerNorm to drop")
        return cls(
            name=name,
            layernorm="swap" if match["swap"] else match["ln"][: -len("norm")],
            simple=bool(match["simple"]),
            tag=match["tag"],
            residual=match["res"] == "w",
            encoder_final_norm=not match["enc_last"],
        )

    def settings(self) -> dict[str, str | bool]:
        """The generic NMT options of this system, as `mlrep nmt train` takes them (the rules
        pass them with `flags_from`): tag format and `mlrep.nmt.model.Variant` switches."""
        return {
            "tag_format": self.tag,
            "layernorm": self.layernorm,
            "layernorm_simple": self.simple,
            "encoder_final_norm": self.encoder_final_norm,
            "middle_residual": self.residual,
        }
