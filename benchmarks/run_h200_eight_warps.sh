#!/usr/bin/env bash
# One device call for issue 13's remaining decode misses: the table beside programs of eight warps
# (run_decode_grid.variants "eight-warp programs"; fp8: "eight-warp programs, widened V" and "bf16's entry,
# eight warps, widened V") on the grid points below 95 % of the fastest peer and controls around them:
#   bf16 8 / 1 heads at head 128 (32 and 128 requests x 512 and 4096 keys, pages 16 and 64), head 64 on
#   512 keys (both GQA groups, batches 1-128), head 256 at page 64 (8 / 1, 32 and 128 x 4096 and 32768;
#   32 / 8 8 x 32768), head 128 32 / 8 page 16 (batches 1-128 x 512 and 4096: where the table leads);
#   fp8 the whole subset (head 128, 32 / 8, page 16).
#   TAG=s19v bash benchmarks/run_h200_eight_warps.sh        carry: [".whl", ".gpu", ".gpu-vllm"]
# Results in $OUT/grid.tar.gz (decode_grid.TAG-PART.{auto,fp8}.json and the logs).
set -u
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
source benchmarks/run_h200_setup.sh
export PYTHONPATH=$VLLM_SITE:$PYTHONPATH
R=${KEEP:-/root/keep}/grid; mkdir -p $R
save() { tar -czf $OUT/grid.tar.gz -C $(dirname $R) $(basename $R); }
trap save EXIT
S=benchmarks/run_decode_grid.py
TAG=${TAG:-s19v}
V8="eight-warp programs"
VF="eight-warp programs;eight-warp programs, widened V;bf16's entry, eight warps, widened V"
# part name | grid arguments | variants
PARTS=(
  "h128kv1|--heads 128 --gqa 8/1 --pages 16,64 --batches 32,128 --contexts 512,4096|$V8"
  "h64|--heads 64 --gqa 32/8,8/1 --pages 16 --batches 1,8,32,128 --contexts 512|$V8"
  "h256|--heads 256 --gqa 8/1 --pages 64 --batches 32,128 --contexts 4096,32768|$V8"
  "h256g4|--heads 256 --gqa 32/8 --pages 64 --batches 8 --contexts 32768|$V8"
  "h128|--heads 128 --gqa 32/8 --pages 16 --batches 1,8,32,128 --contexts 512,4096|$V8"
  "fp8|--heads 128 --gqa 32/8 --pages 16 --kv-cache-dtypes fp8|$VF"
)
for p in "${PARTS[@]}"; do IFS='|' read -r name args v <<< "$p"
  for j in 0 1 2; do timeout ${WARM_S:-90} python3 $S --phase warm --part $j/3 $args --variants "$v" \
    > $R/warm-$name-$j.log 2>&1 & done
done
wait; el "warm"
grep -h "FAILED" $R/warm-*.log | cut -c1-250 | head
for p in "${PARTS[@]}"; do IFS='|' read -r name args v <<< "$p"
  timeout $(( ${PART_S:-45} + 20 )) python3 $S --phase sweep --tag $TAG-$name --out $R $args --max-seconds ${PART_S:-45} \
    --variants "$v" > $R/sweep-$TAG-$name.log 2>&1; el "sweep $name exit $?"; save
  cut -c1-300 $R/sweep-$TAG-$name.log | tail -n 4
done
