#!/usr/bin/env bash
# One H200 call for TRITON_ATTN's Gluon prefill kernel (benchmarks/run_gluon_prefill.py), run from the
# root of the checkout the device gets, after `source benchmarks/run_h200_setup.sh`, with this driver's
# folder (proj/ = the worktree's project files) carried:
#   source benchmarks/run_h200_setup.sh && bash .gpu-drv/gluonpf/run.sh
# carry: [".whl", ".gpu-vllm", ".gpu-drv/gluonpf"]. Timing stops GLUON_BUDGET (118) s after this script
# starts, the python part is killed at GLUON_TIMEOUT (135) s; extra flags for run_gluon_prefill.py in
# GLUON_ARGS. Results: $OUT/gluon_prefill.json, $OUT/gluon_prefill_summary.txt, $OUT/driver_stderr.log.
set -u
export GLUON_DRV_T0=$(date +%s)
D=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${OUT:-/tmp/gluonpf-out}; mkdir -p "$OUT"
(cd "$D/proj" && python3 -m pip install -q --no-deps --no-build-isolation -e .) > "$OUT/pip.log" 2>&1 \
  || { echo "pip install of proj failed:"; tail -5 "$OUT/pip.log"; }
export PYTHONPATH=${VLLM_SITE:+$VLLM_SITE:}${PYTHONPATH:-}
export TRITON_CACHE_DIR=${GLUON_TRITON_CACHE:-/root/keep/triton-gluonpf}
unset TRITON_INTERPRET
unset ATTN_SELECT_ATTN_KERNEL  # the rule as a user gets it
python3 -c "import attn_select.backends.run.attn_gluon as m, triton; print('attn_select from', m.__file__, 'triton', triton.__version__)"
echo "setup done in $(( $(date +%s) - GLUON_DRV_T0 )) s"
# the timer of the python part leaves room for the summary; stderr (progress lines) goes to the log only
timeout -k 5 ${GLUON_TIMEOUT:-135} python3 "$D/proj/benchmarks/run_gluon_prefill.py" --out "$OUT" \
  --budget ${GLUON_BUDGET:-118} ${GLUON_ARGS:-} 2> "$OUT/driver_stderr.log"
rc=$?
echo "run_gluon_prefill.py rc=$rc; stderr tail:"; tail -n 8 "$OUT/driver_stderr.log"
[ -f "$OUT/gluon_prefill_summary.txt" ] || { echo "no summary (timeout?); JSON so far:"; \
  python3 -c "import json; d=json.load(open('$OUT/gluon_prefill.json')); [print(r.get('page'), r.get('shape'), r.get('label'), r.get('us'), r.get('of_fa3_speed'), r.get('error','')) for r in d['timings']]" 2>&1 | tail -40; }
exit 0
