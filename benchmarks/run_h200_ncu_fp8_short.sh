#!/usr/bin/env bash
# One device call: fp8 decode on short contexts (issue 13's 63-65 % of XQA at 512 keys) under Nsight
# Compute, ours beside FlashInfer's XQA, and our bf16 decode of the same step for the latency it adds:
#   [SHAPES="fp8_32x512 ..."] bash benchmarks/run_h200_ncu_fp8_short.sh        carry: [".whl", ".gpu", ".gpu-vllm"]
# Reports under $OUT/ncu: one ncu report a shape (profile_decode_ncu.py), and the summary lines printed.
set -u
source benchmarks/run_h200_setup.sh
o=${OUT:-out}/ncu; mkdir -p $o
prof() {  # name, then profile_decode_ncu.py's arguments
  local name=$1; shift; local s=$(date +%s)
  PYTHONPATH=$VLLM_SITE:$PYTHONPATH timeout ${NCU_S:-80} ncu --clock-control none --nvtx --nvtx-include "prof/" \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
    --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis \
    python3 benchmarks/profile_decode_ncu.py "$@" > $o/$name.txt 2>&1
  echo "== $name: exit $? in $(( $(date +%s) - s )) s"
  grep -E "^  [A-Za-z_].*\(|err |Duration|DRAM Throughput|Warp Cycles Per Issued|Issue Slots Busy|No Eligible|Achieved Occupancy|Registers Per|Shared Memory Configuration Size|Dynamic Shared|Block Size|Grid Size|Stall|Waves Per SM" $o/$name.txt | grep -v "elementwise\|direct_copy" | cut -c1-160 | head -60
}
shapes=" ${SHAPES:-fp8_32x512 fp8_1x512 bf16_1x512} "  # which of the three to profile
[[ $shapes == *" fp8_32x512 "* ]] && prof fp8_32x512 --kv fp8 --batch 32 --context 512
[[ $shapes == *" fp8_1x512 "* ]] && prof fp8_1x512 --kv fp8 --batch 1 --context 512
[[ $shapes == *" bf16_1x512 "* ]] && prof bf16_1x512 --kv auto --batch 1 --context 512 --rows TRITON_ATTN,FLASHINFER
