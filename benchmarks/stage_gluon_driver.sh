#!/usr/bin/env bash
# Stage a Gluon driver for the lead's device call: this worktree's project files (tracked and
# untracked-but-not-ignored; no .venv, no .git) -> DEST/proj, and the driver script as DEST/run.sh.
#   bash benchmarks/stage_gluon_driver.sh [DEST] [DRIVER]
# DEST defaults to /work/main/.gpu-drv/gluonmla, DRIVER (a script of benchmarks/) to
# gluon_mla_driver.sh; the prefill kernel's: DEST /work/main/.gpu-drv/gluonpf, gluon_prefill_driver.sh.
set -eu
W=$(cd "$(dirname "$0")/.." && pwd)
D=${1:-/work/main/.gpu-drv/gluonmla}
DRV=${2:-gluon_mla_driver.sh}
[ -f "$W/benchmarks/$DRV" ] || { echo "no driver benchmarks/$DRV" >&2; exit 2; }
rm -rf "$D/proj"; mkdir -p "$D/proj"
(cd "$W" && git ls-files -co --exclude-standard | grep -v '^\.venv/' | tar -cf - -T -) | tar -xf - -C "$D/proj"
cp "$W/benchmarks/$DRV" "$D/run.sh"
du -sh "$D"
