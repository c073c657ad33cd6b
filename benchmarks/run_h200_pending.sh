#!/usr/bin/env bash
# The H200 runs issues 14, 15 and 19 still need, as stages of at most two device calls while the
# machine stays warm (run_h200_setup.sh keeps what each call carried):
#   ray     a one-node Ray cluster running the H200 task (issue 19). Carry .whl, .gpu-ray (Ray,
#           benchmarks/pack_h200_ray.sh) and .gpu-vllm (vLLM's FA3 build, what the selection picks).
#   doctor  `attn-select doctor` as text, for the README (issue 15)
#   tune    tune llama-3.1-8b and gpt-oss-20b with plots (issue 14)
#           doctor and tune: carry .whl and .gpu (FlashInfer); .gpu-vllm came with the first call.
# Ray and FlashInfer together pass the 64 MiB a call carries, hence two calls:
#   bash benchmarks/run_h200_pending.sh ray            (call 1)
#   bash benchmarks/run_h200_pending.sh doctor tune    (call 2)
# Tune points measured by an earlier call can travel in .gpu-drv/tunecache (the cache a call
# returns). Whatever ran comes back in $OUT/bundle.tar.gz, also when a stage overruns (the trap packs it).
set -u
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
left() { echo $(( ${CALL_S:-560} - ($(date +%s) - t0) )); }  # seconds this call has left
source benchmarks/run_h200_setup.sh
K=${KEEP:-/root/keep}; B=$K/bundle; mkdir -p $B $K/tunecache
trap 'cp -r $K/tunecache $B/ 2>/dev/null; tar -czf $OUT/bundle.tar.gz -C $K bundle' EXIT
[ -d .gpu-drv/tunecache ] && cp -rn .gpu-drv/tunecache/. $K/tunecache/  # points measured by an earlier call
export PYTHONPATH=$VLLM_SITE:$PYTHONPATH  # vLLM's FA3 build installed, as with vLLM installed
stages=" $* "; want() { [[ $stages == *" $1 "* ]]; }
if want tune; then  # FlashInfer's decode kernels JIT-compile on first use: beside doctor, not in tune's time
  for m in llama-3.1-8b gpt-oss-20b; do
    timeout 200 attn-select run $m --shapes decode --backend FLASHINFER --no-timing --checks 1 > $B/warm-$m.log 2>&1 &
  done
fi
if want doctor; then
el "doctor"  # text for the README; the JSON from the same facts would double the import tests' time
timeout 150 attn-select doctor > $B/doctor.txt 2>&1; echo "doctor exit $?" >> $B/doctor.txt
fi
if want ray; then
el "ray"
timeout 60 python3 -m ray.scripts.scripts start --head --port=6379 --num-gpus=1 --include-dashboard=false --disable-usage-stats > $B/ray-start.log 2>&1
RAY_ADDRESS=127.0.0.1:6379 timeout 100 attn-select run llama-3.1-8b --ray auto --shapes decode --backend FLASH_ATTN,TRITON_ATTN --no-timing > $B/ray-run.txt 2>&1
echo "ray run exit $?" >> $B/ray-run.txt
timeout 30 python3 -m ray.scripts.scripts status > $B/ray-status.txt 2>&1  # the accelerator type Ray saw
timeout 30 python3 -m ray.scripts.scripts stop --force > $B/ray-stop.log 2>&1
fi
if want tune; then
wait; el "warm-up done"
T="--cache-dir $K/tunecache --repeats 2 --workload decode:32x4096"
# --max-seconds stops measuring in time; the plot comes from the same run (--plot with --format json)
el "tune llama ($(left) s left)"
timeout $(( $(left) - 60 )) attn-select tune llama-3.1-8b --batches 1,32,256 --contexts 1k,16k $T \
  --max-seconds $(( ($(left) - 120) * 2 / 3 )) --plot $B/tune-llama --format json > $B/tune-llama.json 2> $B/tune-llama.log
echo "exit $?" >> $B/tune-llama.log
el "tune gpt-oss ($(left) s left)"
timeout $(( $(left) - 20 )) attn-select tune gpt-oss-20b --batches 32 --contexts 4k $T \
  --max-seconds $(( $(left) - 60 )) --plot $B/tune-gpt-oss --format json > $B/tune-gpt-oss.json 2> $B/tune-gpt-oss.log
echo "exit $?" >> $B/tune-gpt-oss.log
# the text reports from the cache alone (no new run: every point is cached or past the limit)
for m in llama:llama-3.1-8b:"--batches 1,32,256 --contexts 1k,16k" gpt-oss:gpt-oss-20b:"--batches 32 --contexts 4k"; do
  IFS=: read -r short model grid <<< "$m"
  timeout 30 attn-select tune $model $grid $T --max-seconds 0 > $B/tune-$short.txt 2>&1
done
fi
el "done"
tail -n 3 $B/*.log $B/*.txt 2>/dev/null | cut -c1-200
