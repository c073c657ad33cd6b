#!/usr/bin/env bash
# The timed `attn-select run` series on the H200, meant to be started detached
# (setsid) after benchmarks/run_h200_setup.sh and the warm stage: each model
# run twice, every run its own process (two runs of the same command), run 1
# of every model before any run 2 so that the two are minutes apart; then the
# same pair for Llama-3.1-8B with an fp8 KV cache. Reports (JSON + text) go to
# /root/keep/out; /root/keep/out/.done marks the end. RUN_MODELS picks the
# models, RUN_FP8=0 leaves the fp8 pair out, RUN_OUT moves the output.
#   setsid nohup bash benchmarks/run_h200_models.sh > /root/keep/models.log 2>&1 &
set -u
out=${RUN_OUT:-/root/keep/out}
models=${RUN_MODELS:-"llama-3.1-8b gpt-oss-20b gemma-2-9b"}
mkdir -p "$out"; rm -f "$out/.done"
for rep in 1 2; do
  for m in $models; do
    python3 benchmarks/run_h200.py --stage models --models "$m" --tag run --index $rep --out "$out"
  done
done
if [ "${RUN_FP8:-1}" != 0 ]; then
  for rep in 1 2; do
    python3 benchmarks/run_h200.py --stage models --models llama-3.1-8b --kv-cache-dtype fp8 --tag fp8-run \
      --index $rep --out "$out"
  done
fi
touch "$out/.done"
