#!/usr/bin/env bash
# Sourced at the start of every device call (benchmarks/run_h200.py): makes
# attn_select importable without installing it, unpacks FlashInfer and FA4
# (carried in .gpu/, .gpu-fa4-a/, .gpu-fa4-b/) into /root/keep, which lives as
# long as the machine stays warm, and points every JIT cache there.
keep=/root/keep; mkdir -p $keep /tmp/shim/attn_select
for d in selector backends cli profiles; do ln -sfn "$PWD/$d" /tmp/shim/attn_select/$d; done
if [ -f .gpu/flashinfer-site.tar.xz ] && [ ! -f $keep/fi/.done ]; then
  mkdir -p $keep/fi && tar -xJf .gpu/flashinfer-site.tar.xz -C $keep/fi && touch $keep/fi/.done; fi
[ -f .gpu-fa4-a/part.00 ] && cp .gpu-fa4-a/part.00 $keep/
if [ -f .gpu-fa4-b/part.01 ] && [ -f $keep/part.00 ] && [ ! -f $keep/fa4/.done ]; then
  mkdir -p $keep/fa4 && cat $keep/part.00 .gpu-fa4-b/part.01 | tar -xJ -C $keep/fa4 && touch $keep/fa4/.done; fi
if ls .whl/*.whl >/dev/null 2>&1 && [ ! -f $keep/whl/.done ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target $keep/whl .whl/*.whl && touch $keep/whl/.done; fi
export PYTHONPATH=/tmp/shim:$keep/whl:$keep/fi:$PWD/benchmarks PYTHONUNBUFFERED=1 TVM_FFI_DISABLE_TORCH_C_DLPACK=1
export ATTN_SELECT_EXTRA_SITE=$keep/fa4 FLASHINFER_WORKSPACE_BASE=$keep/ficache
export TRITON_CACHE_DIR=$keep/triton TORCHINDUCTOR_CACHE_DIR=$keep/inductor
ls $keep; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,memory.used --format=csv,noheader
