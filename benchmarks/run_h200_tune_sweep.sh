#!/usr/bin/env bash
# Issue 13's decode sweep, as far as one device call goes, through `attn-select tune` (every point
# checked, then timed, our TRITON_ATTN beside vLLM's FA3 and FlashInfer's XQA and native decode on the
# same caches): head 128 at GQA 4 (llama-3.1-8b) and GQA 8 (llama-3.1-70b at tp 8: 8 q / 1 kv heads
# per rank), batch 1, 8, 32, 128, 256 x context 512, 4096, 32768 x page 16, 64. Head 64 and 256 are
# not in it (one call's time). Carry .whl, .gpu (FlashInfer), .gpu-vllm (vLLM's FA3 build) and
# .gpu-drv (the tune cache of earlier calls, if any); the reports come back in $OUT/sweep.tar.gz.
#   bash benchmarks/run_h200_tune_sweep.sh
set -u
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
left() { echo $(( ${CALL_S:-560} - ($(date +%s) - t0) )); }
source benchmarks/run_h200_setup.sh
export PYTHONPATH=$VLLM_SITE:$PYTHONPATH
K=${KEEP:-/root/keep}; R=$K/sweep; mkdir -p $R $K/tunecache
[ -d .gpu-drv/tunecache ] && cp -r --update=none .gpu-drv/tunecache/. $K/tunecache/
trap 'cp -r $K/tunecache $R/ 2>/dev/null; tar -czf $OUT/sweep.tar.gz -C $K sweep' EXIT
w() { timeout 200 attn-select run "$@" --shapes decode --backend FLASHINFER --no-timing --checks 1; }
w llama-3.1-8b > $R/warm-8b.log 2>&1 &
w llama-3.1-70b --tp 8 > $R/warm-70b.log 2>&1 &
w llama-3.1-70b --tp 8 --block-size 64 > $R/warm-70b-64.log 2>&1 &
wait; el "warmed"
G="--settings FLASH_ATTN,FLASHINFER,TRITON_ATTN --batches 1,8,32,128,256 --contexts 512,4096,32768"
G="$G --page-sizes 16,64 --repeats 2 --workload decode:32x4096 --cache-dir $K/tunecache"
n=2
for m in "llama-3.1-8b|8b|" "llama-3.1-70b|70b-tp8|--tp 8"; do
  IFS='|' read -r model short extra <<< "$m"
  share=$(( ($(left) - 40) / n )); n=$(( n - 1 ))
  el "tune $short ($share s)"
  timeout $(( share + 40 )) attn-select tune $model $extra $G --max-seconds $share --format json \
    > $R/tune-$short.json 2> $R/tune-$short.log
  el "tune $short exit $?"
done
tail -n 2 $R/*.log | cut -c1-200
