#!/usr/bin/env bash
# One H200 call for both Gluon kernels not yet run on a GPU, from the checkout itself (no staged copy):
#   1. TRITON_MLA's decode variants, the warp-specialised ws64 / wsc64 among them, beside FlashMLA and
#      FA3-MLA (benchmarks/run_gluon_mla.py);
#   2. TRITON_ATTN's Gluon prefill kernel beside the tl kernel and vLLM's FA3 (run_gluon_prefill.py);
#   3. `attn-select run deepseek-v3 --tp 1` (TRITON_MLA, FLASH_ATTN_MLA, FLASHMLA) with the faster
#      warp-specialised schedule of part 1 at page 16 forced by ATTN_SELECT_MLA_KERNEL, when it passed its
#      checks there: the run as it will be once the rule takes that schedule.
#   source benchmarks/run_h200_setup.sh && bash benchmarks/run_h200_gluon_pass.sh
# carry: [".whl", ".gpu-vllm"]. Results under $OUT/mla, $OUT/prefill, $OUT/run.
set -u
o=${OUT:-/tmp/gluon-pass}; mkdir -p $o/mla $o/prefill $o/run
export PYTHONPATH=${VLLM_SITE:+$VLLM_SITE:}${PYTHONPATH:-}
unset TRITON_INTERPRET
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }

export GLUON_DRV_T0=$(date +%s) TRITON_CACHE_DIR=/root/keep/triton-gluonmla
timeout -k 5 ${MLA_TIMEOUT:-118} python3 benchmarks/run_gluon_mla.py --out $o/mla --budget ${MLA_BUDGET:-100} \
  2> $o/mla/stderr.log | grep -v "^time \|^check" ; el "mla exit ${PIPESTATUS[0]}"
tail -n 4 $o/mla/stderr.log

export GLUON_DRV_T0=$(date +%s) TRITON_CACHE_DIR=/root/keep/triton-gluonpf
timeout -k 5 ${PF_TIMEOUT:-135} python3 benchmarks/run_gluon_prefill.py --out $o/prefill \
  --budget ${PF_BUDGET:-118} 2> $o/prefill/stderr.log | grep -v "^time \|^check" ; el "prefill exit ${PIPESTATUS[0]}"
tail -n 4 $o/prefill/stderr.log

ws=$(python3 - "$o/mla/gluon_mla.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception:
    sys.exit()
ok = {r["kind"] for r in d["checks"] if r["all_ok"] and r["page"] == 16}
t = {r["label"]: r["us"] for r in d["timings"] if r.get("page") == 16 and r.get("heads") == 128 and "us" in r}
best = sorted((t[k], k) for k in ("ws64", "wsc64") if k in t and k in ok)
print(best[0][1][:-2] if best else "")
PY
)
if [ -n "$ws" ]; then
  export TRITON_CACHE_DIR=/root/keep/triton-run
  ATTN_SELECT_MLA_KERNEL=$ws timeout ${RUN_TIMEOUT_S:-150} attn-select run deepseek-v3 --tp 1 \
    --backend TRITON_MLA,FLASH_ATTN_MLA,FLASHMLA --build-span 0 --format json --allow-missing \
    > $o/run/dsv3-tp1-$ws.json 2> $o/run/dsv3-tp1-$ws.log
  el "run deepseek-v3 --tp 1 (ATTN_SELECT_MLA_KERNEL=$ws) exit $?"
  tail -n 3 $o/run/dsv3-tp1-$ws.log
else
  el "no warp-specialised schedule passed its checks and was timed at page 16: run not made"
fi
