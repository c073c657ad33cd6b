#!/usr/bin/env bash
# MLA models end to end on the H200 (issue 12's "must show"): `attn-select run` as a user runs it, on
# vLLM's own MLA kernels (FlashMLA dense and sparse, FA3's MLA path, FA3 varlen for the MLA prefill) from
# the vLLM kernel pack, our TRITON_MLA, and FlashInfer's BatchMLAPagedAttentionWrapper as a comparison row:
#   deepseek-v3 --tp 1   128 heads per rank    (FLASH_ATTN_MLA selected)
#   deepseek-v3 --tp 8   16 heads              (FLASH_ATTN_MLA selected)
#   deepseek-v3 --tp 8 --kv-cache-dtype fp8    (FLASHMLA selected: FA3's MLA path takes no fp8 cache)
#   kimi-k2     --tp 1   64 heads              (no built-in profile: tests/fixtures/configs/kimi-k2-instruct)
#   deepseek-v3.2 --tp 1 sparse MLA, index_topk 2048 (FLASH_ATTN_MLA_SPARSE selected)
# Carry .gpu-vllm (../shared/device/pack-vllm-kernels.sh: vLLM 0.33.0's FA3 and FlashMLA builds with a stand-in
# `vllm` package, so `import vllm.vllm_flash_attn` and `vllm.third_party.flashmla` work; vllm.v1 does not, so
# FLASHMLA's fp8 path calls torch.ops._flashmla_extension_C as vllm/v1/attention/ops/flashmla.py does), .whl,
# and .gpu (pack-flashinfer.sh) for the wrapper row (without it that row says FlashInfer is not importable):
#   source benchmarks/run_h200_setup.sh && bash benchmarks/run_h200_mla.sh
# First every model's checked step in parallel processes (no timing: JIT compiles, Triton's and FlashInfer's,
# land in the kept caches), then the timed runs one process each, in the order above, each left out once
# the stage has run STAGE_S seconds (default 240). Reports: $OUT/mla-reports.tar.gz (NAME.json, NAME.log),
# $OUT/mla-summary.json (one line per row), and a summary on stdout.
set -u
out=${OUT:-out}; r=${KEEP:-/root/keep}/reports/mla; rm -rf $r; mkdir -p $r $out
t0=$(date +%s); budget=${STAGE_S:-240}
site=${VLLM_SITE:?source benchmarks/run_h200_setup.sh first (it sets VLLM_SITE)}
kimi=tests/fixtures/configs/kimi-k2-instruct/config.json
T="--build-span 0 --format json --allow-missing"

run() {  # run NAME MODEL ARGS...: one `attn-select run` in its own process, vLLM's kernels on PYTHONPATH
  local name=$1; shift
  if [ $(( $(date +%s) - t0 )) -gt "$budget" ]; then echo "$name: left out (stage past ${budget} s)"; return; fi
  local s=$(date +%s)
  PYTHONPATH=$site:$PYTHONPATH timeout ${RUN_TIMEOUT_S:-240} attn-select run "$@" $T > $r/$name.json 2> $r/$name.log
  echo "$name: exit $? in $(( $(date +%s) - s )) s"
}

python3 - <<'PY'
import importlib
for m in ("vllm.vllm_flash_attn", "vllm.third_party.flashmla.flash_mla_interface", "vllm._flashmla_extension_C",
          "flashinfer.mla"):
    try:
        importlib.import_module(m)
        print("imports:", m)
    except Exception as e:
        print("does not import:", m, f"({type(e).__name__}: {str(e)[:120]})")
PY

C="--no-timing --checks 1"
run check-dsv3-tp1 deepseek-v3 --tp 1 $C &
run check-dsv3-tp8 deepseek-v3 --tp 8 $C &
run check-dsv3-tp8-fp8 deepseek-v3 --tp 8 --kv-cache-dtype fp8 $C &
run check-kimi-k2 $kimi --tp 1 $C &
run check-dsv32 deepseek-v3.2 --tp 1 $C &
wait
run dsv3-tp1 deepseek-v3 --tp 1
run dsv3-tp8 deepseek-v3 --tp 8
run dsv3-tp8-fp8 deepseek-v3 --tp 8 --kv-cache-dtype fp8
run kimi-k2 $kimi --tp 1
run dsv32 deepseek-v3.2 --tp 1

tar -czf $out/mla-reports.tar.gz -C $(dirname $r) mla
python3 benchmarks/report_lines.py $r --group-lines --rows $out/mla-summary.json
echo "mla stage: $(( $(date +%s) - t0 )) s"
