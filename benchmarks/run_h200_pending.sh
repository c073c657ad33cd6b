#!/usr/bin/env bash
# The H200 runs the 2026-12-01 session could not afford (device budget): doctor (issue 15), a
# one-node Ray cluster running the H200 task (issue 19), tune llama-3.1-8b and gpt-oss-20b with plots (issue 14), in one call. Carry .whl, .gpu, .gpu-vllm
# and .gpu-ray (benchmarks/pack_h200_ray.sh; ~70 MB in all with the checkout: send .gpu-ray in a second
# call right after, while the machine is warm; run_h200_setup.sh keeps what came). Tune points already measured can
# travel in .gpu-drv/tunecache (the cache this call returns). Everything comes back in $OUT/bundle.tar.gz.
#   bash benchmarks/run_h200_pending.sh
set -u
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
source benchmarks/run_h200_setup.sh
K=${KEEP:-/root/keep}; B=$K/bundle; mkdir -p $B $K/tunecache
[ -d .gpu-drv/tunecache ] && cp -rn .gpu-drv/tunecache/. $K/tunecache/  # points measured by an earlier call
export PYTHONPATH=$VLLM_SITE:$PYTHONPATH  # vLLM's FA3 build installed, as with vLLM installed
el "doctor"
timeout 300 attn-select doctor > $B/doctor.txt 2>&1; echo "doctor exit $?" >> $B/doctor.txt
timeout 300 attn-select doctor --format json > $B/doctor.json 2> $B/doctor.json.err
el "ray"
timeout 60 python3 -m ray.scripts.scripts start --head --port=6379 --num-gpus=1 --include-dashboard=false --disable-usage-stats > $B/ray-start.log 2>&1
RAY_ADDRESS=127.0.0.1:6379 timeout 100 attn-select run llama-3.1-8b --ray auto --shapes decode --backend FLASH_ATTN,TRITON_ATTN --no-timing > $B/ray-run.txt 2>&1
echo "ray run exit $?" >> $B/ray-run.txt
timeout 30 python3 -m ray.scripts.scripts stop --force > $B/ray-stop.log 2>&1
el "tune llama"
T="--cache-dir $K/tunecache --repeats 2 --workload decode:32x4096"
timeout 400 attn-select tune llama-3.1-8b --batches 1,32,256 --contexts 1k,16k $T --max-seconds ${LLAMA_S:-190} --format json > $B/tune-llama.json 2> $B/tune-llama.log
echo "exit $?" >> $B/tune-llama.log
[ -s $B/tune-llama.json ] && timeout 40 attn-select tune llama-3.1-8b --batches 1,32,256 --contexts 1k,16k $T --plot $B/tune-llama > $B/tune-llama.txt 2>&1
el "tune gpt-oss"
timeout 300 attn-select tune gpt-oss-20b --batches 32 --contexts 4k $T --max-seconds ${GPTOSS_S:-100} --format json > $B/tune-gpt-oss.json 2> $B/tune-gpt-oss.log
echo "exit $?" >> $B/tune-gpt-oss.log
[ -s $B/tune-gpt-oss.json ] && timeout 30 attn-select tune gpt-oss-20b --batches 32 --contexts 4k $T --plot $B/tune-gpt-oss > $B/tune-gpt-oss.txt 2>&1
el "bundle"
cp -r $K/tunecache $B/ 2>/dev/null
tar -czf $OUT/bundle.tar.gz -C $K bundle
tail -n 4 $B/*.log $B/ray-run.txt | cut -c1-200; head -c 1500 $B/doctor.txt
el "done"
