#!/usr/bin/env bash
# Issue 13's decode sweep on the H200 in one device call (benchmarks/run_decode_grid.py): warm-up in
# 16 processes (FlashInfer's JIT per head size; Triton's compile of every point x variant), then the
# bf16 grid in one process (head 128, 64, 256 x GQA 4, 8 x page 16, 64 x batch x context), an fp8
# subset (head 128, GQA 4, page 16), and the prefill and mixed variants (run_triton_sweep.py). Carry .whl,
# .gpu (FlashInfer) and .gpu-vllm (vLLM's FA3 build); the results come back in $OUT/grid.tar.gz.
#   CALL_S=560 SWEEP_S=300 bash benchmarks/run_h200_decode_grid.sh [TAG ...]
# The whole grid with every variant takes about 380 s of timing: past one call beside the warm-up.
# GRID_ARGS (e.g. "--heads 256") limits the grid; SKIP_EXTRA=1 leaves out the fp8 and prefill parts,
# SKIP_MIXED=1 the prefill and mixed part alone (SKIP_EXTRA also skips their warm-up); FP8_S (default 80) bounds the fp8 part's timing, FP8_WARM_S (default 60) its warm-up. VARIANTS
# (labels of run_decode_grid.variants, comma or semicolon separated, "none" for the table alone) limits what is timed
# beside the table; with several TAGs every part is measured once a tag, one after the other, on the one
# warm-up (repeat runs: "run3 run3r"). A later call on the same warm machine skips the warm-up unless
# REWARM=1 (other variants or GRID_ARGS than the call that warmed it). REPEAT_S bounds the bf16 sweep of
# every TAG after the first (default SWEEP_S): a repeat of the points it reaches, in the same call.
set -u
tags=${*:-run1}
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
left() { echo $(( ${CALL_S:-560} - ($(date +%s) - t0) )); }
source benchmarks/run_h200_setup.sh
export PYTHONPATH=$VLLM_SITE:$PYTHONPATH
R=${KEEP:-/root/keep}/grid; mkdir -p $R
save() { tar -czf $OUT/grid.tar.gz -C $(dirname $R) $(basename $R); }
trap save EXIT  # and after each part: a call killed at the device-time limit keeps what it measured
S=benchmarks/run_decode_grid.py
FP8="--heads 128 --gqa 32/8 --pages 16 --kv-cache-dtypes fp8"
PM=prefill/auto,prefill8k/auto,mixed/auto
if [ ! -f $R/.warm ] || [ -n "${REWARM:-}" ]; then
  for i in $(seq 0 15); do timeout ${WARM_S:-170} python3 $S --phase warm --part $i/16 ${GRID_ARGS:-} ${VARIANTS:+--variants "$VARIANTS"} > $R/warm-$i.log 2>&1 & done
  wait; el "warm bf16"
  if [ -z "${SKIP_EXTRA:-}" ]; then  # the fp8, prefill and mixed parts' compiles, only where they run
    for i in $(seq 0 7); do timeout ${FP8_WARM_S:-60} python3 $S --phase warm --part $i/8 $FP8 ${VARIANTS:+--variants "$VARIANTS"} > $R/warm-fp8-$i.log 2>&1 & done
    for i in 0 1; do timeout 60 python3 benchmarks/run_triton_sweep.py --phase compile --part $i/2 --cases $PM \
      > $R/warm-mixed-$i.log 2>&1 & done
    wait; el "warm fp8, mixed"
  fi
  touch $R/.warm
fi
grep -h "FAILED" $R/warm-*.log | cut -c1-250 | head -20
n=0
for tag in $tags; do
  n=$((n + 1)); sweep_s=${SWEEP_S:-300}; [ $n -gt 1 ] && sweep_s=${REPEAT_S:-$sweep_s}
  timeout $(( sweep_s + 60 )) python3 $S --phase sweep --tag $tag --out $R --max-seconds $sweep_s ${VARIANTS:+--variants "$VARIANTS"} \
    ${GRID_ARGS:-} > $R/sweep-$tag.log 2>&1; el "sweep bf16 exit $?"; save
  if [ -z "${SKIP_EXTRA:-}" ]; then
    timeout $(( ${FP8_S:-80} + 20 )) python3 $S --phase sweep --tag $tag --out $R $FP8 --max-seconds ${FP8_S:-80} ${VARIANTS:+--variants "$VARIANTS"} \
      > $R/sweep-fp8-$tag.log 2>&1
    el "sweep fp8 exit $?"
    if [ -z "${SKIP_MIXED:-}" ]; then
      mkdir -p $R/mixed-$tag
      timeout 80 python3 benchmarks/run_triton_sweep.py --phase sweep --cases $PM --out $R/mixed-$tag \
        > $R/mixed-$tag.log 2>&1; el "prefill, mixed exit $?"
    fi
  fi
  tail -n 3 $R/sweep-$tag.log $R/sweep-fp8-$tag.log | cut -c1-250
  grep -hs "best " $R/mixed-$tag.log | cut -c1-250
done
