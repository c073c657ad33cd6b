#!/usr/bin/env bash
# One device call for issue 13's fp8 decode on short contexts: the fp8 subset's 512- and 4096-key
# points (head 128, 32 / 8 heads, page 16) with the table and the variants aimed at them
# (run_decode_grid.variants: bf16's entry with V widened, one-warp programs merging in-kernel, two-warp
# programs), then one step of ours and XQA at 32 x 512 under Nsight Compute (run_h200_ncu_fp8_short.sh).
#   TAG=s18v bash benchmarks/run_h200_fp8_short.sh        carry: [".whl", ".gpu", ".gpu-vllm"]
# The whole fp8 subset with the table alone, twice (a repeat): POINTS=" " VARIANTS=none NCU= TAG="a ar" ...
# Results in $OUT/grid.tar.gz (decode_grid.TAG.fp8.json, the logs) and $OUT/ncu.
set -u
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
source benchmarks/run_h200_setup.sh
export PYTHONPATH=$VLLM_SITE:$PYTHONPATH
R=${KEEP:-/root/keep}/grid; mkdir -p $R
save() { tar -czf $OUT/grid.tar.gz -C $(dirname $R) $(basename $R); }
trap save EXIT
S=benchmarks/run_decode_grid.py
ARGS="--heads 128 --gqa 32/8 --pages 16 --kv-cache-dtypes fp8 ${POINTS:---batches 1,8,32,128 --contexts 512,4096}"
V=${VARIANTS:-"bf16's entry, widened V;one-warp programs, widened V, in-kernel merge;two-warp programs, widened V;one-warp programs, widened V"}
for i in $(seq 0 7); do timeout ${WARM_S:-75} python3 $S --phase warm --part $i/8 $ARGS --variants "$V" > $R/warm-fp8s-$i.log 2>&1 & done
wait; el "warm"
grep -h "FAILED" $R/warm-fp8s-*.log | cut -c1-250 | head
for tag in ${TAG:-s18v}; do  # several tags: the same points again, a repeat on the one warm-up
  timeout $(( ${SWEEP_S:-60} + 20 )) python3 $S --phase sweep --tag $tag --out $R $ARGS --max-seconds ${SWEEP_S:-60} \
    --variants "$V" > $R/sweep-fp8s-$tag.log 2>&1; el "sweep $tag exit $?"; save
  cut -c1-400 $R/sweep-fp8s-$tag.log | tail -n 13
done
if [ -n "${NCU-1}" ]; then  # NCU= (empty): no profile
  SHAPES=${SHAPES:-fp8_32x512} NCU_S=${NCU_S:-75} bash benchmarks/run_h200_ncu_fp8_short.sh 2>&1 | head -80
fi
