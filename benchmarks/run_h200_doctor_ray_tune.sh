#!/usr/bin/env bash
# The H200 runs of issues 14, 15 and 19 (doctor, the one-node Ray cluster, tune), as stages of at
# most two device calls while the machine stays warm (run_h200_setup.sh keeps what each call carried):
#   ray     a one-node Ray cluster running the H200 task (issue 19). Carry .whl, .gpu-ray (Ray,
#           benchmarks/pack_h200_ray.sh) and .gpu-vllm (vLLM's FA3 build, what the selection picks).
#   doctor  `attn-select doctor` as text, for the README (issue 15)
#   tune    tune llama-3.1-8b (bf16 and fp8 KV), deepseek-v3 (tp 8) and gpt-oss-20b with plots
#           (issue 14). doctor and tune: carry .whl and .gpu (FlashInfer), and .gpu-vllm when the
#           machine is not the one the ray stage ran on (Ray and FlashInfer do not fit one call).
# Ray and FlashInfer together pass the 64 MiB a call carries, hence two calls:
#   bash benchmarks/run_h200_doctor_ray_tune.sh ray            (call 1)
#   bash benchmarks/run_h200_doctor_ray_tune.sh doctor tune    (call 2)
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
# the tunes: NAME MODEL ARGS (grids kept small: what one call measures; the cache keeps the rest)
TUNES=(
  "llama|llama-3.1-8b|--batches 1,32,256 --contexts 1k,16k"
  "deepseek-v3|deepseek-v3|--tp 8 --batches 1,32,128 --contexts 4k"
  "llama-fp8|llama-3.1-8b|--batches 1,32,256 --contexts 1k,16k --kv-cache-dtypes fp8"
  "gpt-oss|gpt-oss-20b|--batches 32 --contexts 4k"
)
if want tune; then  # the kernels JIT-compile on first use: beside doctor, not in tune's time
  w() { timeout 200 attn-select run "$@" --shapes decode --no-timing --checks 1; }
  w llama-3.1-8b --backend FLASHINFER > $B/warm-llama.log 2>&1 &
  w llama-3.1-8b --backend FLASHINFER,FLASH_ATTN,TRITON_ATTN --kv-cache-dtype fp8 > $B/warm-llama-fp8.log 2>&1 &
  w gpt-oss-20b --backend FLASHINFER > $B/warm-gpt-oss.log 2>&1 &
  w deepseek-v3 --tp 8 --backend FLASHMLA,FLASH_ATTN_MLA,TRITON_MLA > $B/warm-deepseek-v3.log 2>&1 &
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
# --max-seconds stops measuring in time (each tune gets its share of what is left); the plot comes
# from the same run (--plot with --format json)
n=${#TUNES[@]}
for t in "${TUNES[@]}"; do
  IFS='|' read -r short model grid <<< "$t"
  share=$(( ($(left) - 60) / n )); n=$(( n - 1 ))
  el "tune $short ($(left) s left, $share s for it)"
  timeout $(( share + 45 )) attn-select tune $model $grid $T --max-seconds $share --plot $B/tune-$short \
    --format json > $B/tune-$short.json 2> $B/tune-$short.log
  echo "exit $?" >> $B/tune-$short.log
done
# the text reports from the cache alone (no new run: every point is cached or past the limit)
for t in "${TUNES[@]}"; do
  IFS='|' read -r short model grid <<< "$t"
  timeout 30 attn-select tune $model $grid $T --max-seconds 0 > $B/tune-$short.txt 2> $B/tune-$short.txt.log
done
fi
el "done"
tail -n 3 $B/*.log $B/*.txt 2>/dev/null | cut -c1-200
