#!/usr/bin/env bash
# Issue 13's decode rows on the H200 in one device call: our Triton decode kernel's variants on
# Llama-3.1-8B's 32 x 4096 decode with a bf16 and an e4m3 cache (the fp8 dots among them), each
# checked, then timed, then the two fastest correct ones timed twice more (each its own process)
# beside the peers (FlashInfer XQA and tensor-core decode, vLLM's FA3) in the same processes.
# Carry .whl, .gpu (FlashInfer) and .gpu-vllm (vLLM's FA3 build).
#   bash benchmarks/run_h200_triton_decode.sh
set -u
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
source benchmarks/run_h200_setup.sh
export PYTHONPATH=$VLLM_SITE:$PYTHONPATH
R=${KEEP:-/root/keep}/tdec; mkdir -p $R
trap 'tar -czf $OUT/tdec.tar.gz -C $(dirname $R) $(basename $R)' EXIT
S=benchmarks/run_triton_sweep.py; C=decode/auto,decode/fp8
# FlashInfer's decode kernels JIT-compile on first use: warm them beside Triton's compile processes
timeout 200 attn-select run llama-3.1-8b --kv-cache-dtype fp8 --shapes decode --backend FLASHINFER --no-timing \
  --checks 1 > $R/warm-fp8.log 2>&1 &
timeout 200 attn-select run llama-3.1-8b --shapes decode --backend FLASHINFER --no-timing --checks 1 \
  > $R/warm-bf16.log 2>&1 &
for i in 0 1 2 3 4 5; do timeout 240 python3 $S --phase compile --part $i/6 --cases $C > $R/compile-$i.log 2>&1 & done
wait; el "compiled, warmed"
timeout 200 python3 $S --phase sweep --cases $C --out $R > $R/sweep.log 2>&1; el "sweep exit $?"
for tag in run1 run2; do
  timeout 120 python3 $S --phase final --cases $C --out $R --best $R/triton_sweep.json --tag $tag \
    > $R/final-$tag.log 2>&1; el "final $tag exit $?"
done
grep -h "best \|compile FAILED" $R/sweep.log $R/compile-*.log | cut -c1-300
tail -n 14 $R/final-run1.log $R/final-run2.log | cut -c1-250
