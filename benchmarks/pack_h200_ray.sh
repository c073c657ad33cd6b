#!/usr/bin/env bash
# Packs core Ray for the offline H200 (the fleet's one-node run, docs/fleet.md): Ray's cp312 wheel
# and the four packages its image lacks (jsonschema, jsonschema-specifications, referencing,
# rpds-py; KINDS.md lists the rest as present), unzipped into one site and xz-compressed, without
# ray/jars (the Java worker, 32 MB of the 79 MB wheel, which Python tasks never load):
# .gpu-ray/ray-site.tar.xz, about 33 MB. Too big for one call beside the other packs, it travels in
# pieces: `python3 benchmarks/pack_h200_carry.py pack --members fa2,ray ...`; run_h200_setup.sh puts
# the site on PYTHONPATH once all its pieces have arrived. Run from the project root (~2 min on 2 cores).
set -euo pipefail
ver=${RAY_VERSION:-$(python3 -c 'import ray; print(ray.__version__)' 2>/dev/null || echo 2.60.0)}
mkdir -p .gpu-ray
grep -qxF "/.gpu-ray/" .git/info/exclude 2>/dev/null || echo "/.gpu-ray/" >> .git/info/exclude
# the wheels (79 MB) stay out of .gpu-ray, which travels whole
dl=$(mktemp -d); site=$(mktemp -d); trap 'rm -rf "$dl" "$site"' EXIT
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 -d $dl \
  "ray==$ver" jsonschema jsonschema-specifications referencing rpds-py
for w in $dl/*.whl; do unzip -q -o "$w" -d "$site"; done  # unzip keeps the executables' modes
rm -rf "$site/ray/jars"
tar -cJf .gpu-ray/ray-site.tar.xz -C "$site" .
ls -l .gpu-ray/ray-site.tar.xz
