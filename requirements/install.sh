#!/usr/bin/env bash
# Create (or update) the project's virtual environment with the exact tested versions.
# Idempotent: rerunning only installs what changed. Usage: bash requirements/install.sh [VENV]
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:-.venv}
python=${PYTHON:-python3.11}
command -v "$python" >/dev/null || python=python3
"$python" - <<'PY'
import sys
if sys.version_info[:2] != (3, 11):
    sys.exit(f"mlrep needs Python 3.11 (fairseq and the lock are tested there); found {sys.version.split()[0]}. "
             "Set PYTHON=/path/to/python3.11 and rerun.")
PY
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
pip=("$venv/bin/python" -m pip --disable-pip-version-check)
"${pip[@]}" install --quiet "pip==26.3"
# Everything with a wheel or a normal build, constrained to the lock.
"${pip[@]}" install --quiet -c requirements/lock.txt -e ".[dev]"
# Toolchains whose source builds must see the environment's own torch (fairseq and the like):
# one requirement per line in requirements/build-in-env.txt, built without isolation or deps.
{ grep -vE '^\s*(#|$)' requirements/build-in-env.txt || true; } | while read -r req; do
    "${pip[@]}" install --quiet --no-build-isolation --no-deps -c requirements/lock.txt "$req"
done
# fairseq-fixed declares torchaudio, which only its speech tasks import (DESIGN: install without
# it); every other unmet requirement still fails the install.
if ! report=$("${pip[@]}" check); then
    unmet=$(grep -v '^fairseq-fixed [0-9.]* requires torchaudio, which is not installed.$' <<<"$report" || true)
    if [ -n "$unmet" ]; then
        printf '%s\n' "$unmet" >&2
        exit 1
    fi
fi
# `dvc plots show` pages of this checkout carry vega inline instead of loading it from a CDN
# (the template and its name in .dvc/config.local, which git ignores).
"$venv/bin/mlrep" report dvc-template >/dev/null
