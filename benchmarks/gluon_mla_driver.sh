#!/usr/bin/env bash
# One H200 call for the Gluon MLA decode kernel (benchmarks/run_gluon_mla.py), run from the root of
# the checkout the device gets, after `source benchmarks/run_h200_setup.sh`, with this driver's folder
# (proj/ = the worktree's project files) carried:
#   source benchmarks/run_h200_setup.sh && bash .gpu-drv/gluonmla/run.sh
# carry: [".whl", ".gpu-vllm", ".gpu-drv/gluonmla"]. Timing stops GLUON_BUDGET (95) s after this script starts,
# the python part is killed at GLUON_TIMEOUT (118) s; extra flags for run_gluon_mla.py in GLUON_ARGS.
# Results: $OUT/gluon_mla.json, $OUT/gluon_mla_summary.txt, $OUT/driver_stderr.log.
set -u
export GLUON_DRV_T0=$(date +%s)
D=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${OUT:-/tmp/gluonmla-out}; mkdir -p "$OUT"
(cd "$D/proj" && python3 -m pip install -q --no-deps --no-build-isolation -e .) > "$OUT/pip.log" 2>&1 \
  || { echo "pip install of proj failed:"; tail -5 "$OUT/pip.log"; }
export PYTHONPATH=${VLLM_SITE:+$VLLM_SITE:}${PYTHONPATH:-}
export TRITON_CACHE_DIR=${GLUON_TRITON_CACHE:-/root/keep/triton-gluonmla}
unset TRITON_INTERPRET
python3 -c "import attn_select.backends.run.mla_gluon as m, triton; print('attn_select from', m.__file__, 'triton', triton.__version__)"
echo "setup done in $(( $(date +%s) - GLUON_DRV_T0 )) s"
# the timer of the python part leaves room for the summary; stderr (progress lines) goes to the log only
timeout -k 5 ${GLUON_TIMEOUT:-118} python3 "$D/proj/benchmarks/run_gluon_mla.py" --out "$OUT" --budget ${GLUON_BUDGET:-95} ${GLUON_ARGS:-} \
  2> "$OUT/driver_stderr.log"
rc=$?
echo "run_gluon_mla.py rc=$rc; stderr tail:"; tail -n 8 "$OUT/driver_stderr.log"
[ -f "$OUT/gluon_mla_summary.txt" ] || { echo "no summary (timeout?); JSON so far:"; \
  python3 -c "import json,sys; d=json.load(open('$OUT/gluon_mla.json')); [print(r.get('page'), r.get('heads'), r.get('label'), r.get('us'), r.get('of_flashmla_speed'), r.get('error','')) for r in d['timings']]" 2>&1 | tail -40; }
exit 0
