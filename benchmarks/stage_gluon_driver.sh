#!/usr/bin/env bash
# Stage the Gluon MLA driver for the lead's device call: this worktree's project files (tracked and
# untracked-but-not-ignored; no .venv, no .git) -> /work/main/.gpu-drv/gluonmla/proj, and run.sh.
set -eu
W=$(cd "$(dirname "$0")/.." && pwd)
D=${1:-/work/main/.gpu-drv/gluonmla}
rm -rf "$D/proj"; mkdir -p "$D/proj"
(cd "$W" && git ls-files -co --exclude-standard | grep -v '^\.venv/' | tar -cf - -T -) | tar -xf - -C "$D/proj"
cp "$W/benchmarks/gluon_mla_driver.sh" "$D/run.sh"
du -sh "$D"
