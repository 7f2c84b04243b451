"""Chapter 7 system names ↔ the generic interlingua options of `mlrep nmt train`.

A system name is what the results folders, the report's rows (through the tables' aliases),
the figure and the claims use. Each stands for one ``--interlingua`` mode of the generic NMT
model: ``mnmt`` (no interlingua, the thesis's MNMT), ``fixuni`` (a fixed-length interlingua
with one query matrix for every language), ``fixls`` (fixed length, a query matrix per source
language) and ``var`` (the variable-length interlingua with its length predictor). ``pivot``
is no trained system: the ``mnmt`` model decoding through English.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mlrep.errors import MlrepError

PIVOT_SYSTEM = "pivot"
# every system tags the source language on the encoder and the target on the decoder
# (S-ENC-T-DEC, one of mlrep.nmt.data.TAGS); the interlingua reads its language from the tag
TAG = "s-enc-t-dec"
# system -> `mlrep nmt train --interlingua` mode
INTERLINGUA = {"mnmt": "none", "fixuni": "uni", "fixls": "ls", "var": "var"}
# the systems whose interlingua has the dataset's fixed length (`datasets.<d>.interlingua_length`)
FIXED_LENGTH = ("fixuni", "fixls")
# the systems that predict their interlingua's length, so they also decode with the gold one
PREDICTED_LENGTH = ("var",)
# also the rules' wildcard constraint for system names
PATTERN = "|".join(INTERLINGUA)


class SystemNameError(MlrepError):
    """A system name outside the Chapter 7 vocabulary."""


def settings(system: str, dataset: Mapping[str, Any]) -> dict[str, Any]:
    """The generic options that make `system` on `dataset` (its params.yaml mapping): the tag
    format, the interlingua mode, and for a fixed-length system the dataset's fixed length
    (17, 21, 30 in the thesis), which no other system reads."""
    if system not in INTERLINGUA:
        raise SystemNameError(
            f"{system!r} is not a Chapter 7 system; expected one of {', '.join(INTERLINGUA)} "
            f"(ch7_interlingua.systems in params.yaml)"
        )
    out: dict[str, Any] = {"tag_format": TAG, "interlingua": INTERLINGUA[system]}
    if system in FIXED_LENGTH:
        out["interlingua_length"] = dataset["interlingua_length"]
    return out
