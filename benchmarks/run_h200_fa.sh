#!/usr/bin/env bash
# FLASH_ATTN on vLLM's own FlashAttention builds on the H200 (BENCHMARKS.md, "FLASH_ATTN through
# vLLM's FlashAttention"): one stage per device call, in this order, while the machine stays warm
# (what was unpacked and JIT-compiled lives in /root/keep):
#   main  vLLM's FA3 ($VLLM_SITE on PYTHONPATH, as with vLLM installed): the FlashInfer JIT warm-up
#         and every model's checked step in parallel processes, then the timed runs, one process each
#   fa4   the same commands' FLASH_ATTN rows with no vLLM installed: upstream FA4 (plain imports)
#   fa2   FA2 through vLLM's build: a vLLM site whose wheel has FA2 only ($VLLM_FA2_SITE)
#   again gpt-oss-20b's and gemma-2-9b's FA3 commands once more, each its own process, for the
#         run-to-run agreement of the main stage's figures
# Every run is the CLI a user runs, `attn-select run MODEL ... --format json`; reports and logs go
# to $OUT/reports-STAGE.tar.gz (STAGE/NAME.json, NAME.log), one summary line per row to stdout. Runs past STAGE_S seconds of the
# stage are left out (and say so).
#   source benchmarks/run_h200_setup.sh && bash benchmarks/run_h200_fa.sh main
set -u
stage=${1:?stage: main, fa4, fa2 or again}
# reports are written outside $OUT (at most 8 files come back) and come back as one tarball
out=${OUT:-out}; r=${KEEP:-/root/keep}/reports/$stage; rm -rf $r; mkdir -p $r $out
t0=$(date +%s); budget=${STAGE_S:-240}
T="--build-span 0 --format json"

# run NAME SITE ARGS...: one `attn-select run` in its own process; SITE "-" = no vLLM installed
run() {
  local name=$1 site=$2; shift 2
  if [ $(( $(date +%s) - t0 )) -gt "$budget" ]; then echo "$name: left out (stage past ${budget} s)"; return; fi
  local pp=$PYTHONPATH; [ "$site" != - ] && pp=$site:$PYTHONPATH
  local s=$(date +%s)
  PYTHONPATH=$pp timeout ${RUN_TIMEOUT_S:-300} attn-select run "$@" > $r/$name.json 2> $r/$name.log
  echo "$name: exit $? in $(( $(date +%s) - s )) s"
}

case $stage in
main)
  # FlashInfer's kernels JIT-compile on first use (fa3 prefill ~85 s): compile them beside the checks
  run warm-decode $VLLM_SITE llama-3.1-8b --shapes decode --backend FLASHINFER --no-timing --checks 1 $T &
  run warm-prefill $VLLM_SITE llama-3.1-8b --shapes prefill --backend FLASHINFER --no-timing --checks 1 $T &
  run gpt-oss-20b.fa3-check $VLLM_SITE gpt-oss-20b --backend FLASH_ATTN,TRITON_ATTN --no-timing $T &
  run gemma-2-9b.fa3-check $VLLM_SITE gemma-2-9b --backend FLASH_ATTN,TRITON_ATTN --no-timing $T &
  run llama-3.1-8b.fp8-check $VLLM_SITE llama-3.1-8b --kv-cache-dtype fp8 --backend FLASH_ATTN,TRITON_ATTN \
    --no-timing $T &
  wait
  run llama-3.1-8b.fa3-run1 $VLLM_SITE llama-3.1-8b --backend FLASH_ATTN,FLASHINFER,TRITON_ATTN $T
  run llama-3.1-8b.fp8-fa3 $VLLM_SITE llama-3.1-8b --kv-cache-dtype fp8 --backend FLASH_ATTN,TRITON_ATTN $T
  run llama-3.1-8b.fa3-run2 $VLLM_SITE llama-3.1-8b --backend FLASH_ATTN,FLASHINFER,TRITON_ATTN $T
  run gpt-oss-20b.fa3 $VLLM_SITE gpt-oss-20b --backend FLASH_ATTN,TRITON_ATTN $T
  run gemma-2-9b.fa3 $VLLM_SITE gemma-2-9b --backend FLASH_ATTN,TRITON_ATTN $T
  ;;
fa4)
  python3 -c "import flash_attn.cute as m; print('FA4 imports from', m.__file__)" 2>&1 | tail -1
  run llama-3.1-8b.fa4 - llama-3.1-8b --backend FLASH_ATTN $T
  # gpt-oss's FA3 rows again: the main stage's failed on float32 sinks before the adapter passed
  # them in the model dtype (this session's call 1); these are the ones BENCHMARKS.md shows
  run gpt-oss-20b.fa3 $VLLM_SITE gpt-oss-20b --backend FLASH_ATTN,TRITON_ATTN $T
  run gpt-oss-20b.fa4 - gpt-oss-20b --backend FLASH_ATTN $T
  run gemma-2-9b.fa4 - gemma-2-9b --backend FLASH_ATTN $T
  ;;
fa2)
  # the same shapes on FA2, the path vLLM takes on Ampere and Ada, with a bf16 cache (FA2 takes no
  # fp8 cache); gpt-oss is left out: FA2 takes no sinks, so vLLM never sends it there. The first
  # run's PTX JIT of each FA2 module stays in the CUDA cache for the second.
  run llama-3.1-8b.fa2 $VLLM_FA2_SITE llama-3.1-8b --backend FLASH_ATTN,TRITON_ATTN $T
  run llama-3.1-8b.fa2-run2 $VLLM_FA2_SITE llama-3.1-8b --backend FLASH_ATTN,TRITON_ATTN $T
  run gemma-2-9b.fa2 $VLLM_FA2_SITE gemma-2-9b --backend FLASH_ATTN $T
  ;;
again)
  run gpt-oss-20b.fa3-again $VLLM_SITE gpt-oss-20b --backend FLASH_ATTN,TRITON_ATTN $T
  run gemma-2-9b.fa3-again $VLLM_SITE gemma-2-9b --backend FLASH_ATTN,TRITON_ATTN $T
  ;;
*) echo "unknown stage $stage" >&2; exit 2 ;;
esac
tar -czf $out/reports-$stage.tar.gz -C $(dirname $r) $stage
python3 benchmarks/report_lines.py $r
echo "stage $stage: $(( $(date +%s) - t0 )) s"
