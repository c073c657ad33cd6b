#!/usr/bin/env bash
# One device call: the Gluon prefill shapes timed beside vLLM's FA3 (run_gluon_prefill.py), head 64
# through `attn-select run` (run_h200_prefill_heads.sh), then one fp8 decode step of ours, FlashInfer's
# XQA and vLLM's FA3 under Nsight Compute (profile_decode_ncu.py), each part under its own timeout:
#   bash benchmarks/run_h200_prefill_pass.sh        carry: [".whl", ".gpu", ".gpu-vllm"]
# Reports under $OUT: prefill/ (gluon_prefill.json, the summary), prefill-heads/, ncu/.
set -u
source benchmarks/run_h200_setup.sh
o=${OUT:-out}; mkdir -p $o/prefill $o/ncu
(export GLUON_DRV_T0=$(date +%s) TRITON_CACHE_DIR=/root/keep/triton-gluonpf PYTHONPATH=$VLLM_SITE:$PYTHONPATH
 timeout ${PF_S:-120} python3 benchmarks/run_gluon_prefill.py --out $o/prefill --budget $(( ${PF_S:-120} - 12 )) \
   --check-cap 50 > $o/prefill/log.txt 2>&1; echo "prefill: exit $?"; sed -n '/^== Gluon/,$p' $o/prefill/log.txt)
timeout ${HEADS_S:-150} bash benchmarks/run_h200_prefill_heads.sh
if [ -n "${NCU_S:-90}" ] && command -v ncu >/dev/null; then
  s=$(date +%s)
  PYTHONPATH=$VLLM_SITE:$PYTHONPATH timeout ${NCU_S:-90} ncu --clock-control none --nvtx --nvtx-include "prof/" \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
    --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis \
    python3 benchmarks/profile_decode_ncu.py --kv fp8 --rows TRITON_ATTN,FLASHINFER,FLASH_ATTN > $o/ncu/fp8.txt 2>&1
  echo "ncu fp8: exit $? in $(( $(date +%s) - s )) s"
  s=$(date +%s)
  PYTHONPATH=$VLLM_SITE:$PYTHONPATH timeout ${NCU_S:-90} ncu --clock-control none --nvtx --nvtx-include "prof/" \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
    --section Occupancy --section LaunchStats \
    python3 benchmarks/profile_decode_ncu.py --prefill-pages 16,64 > $o/ncu/prefill.txt 2>&1
  echo "ncu prefill: exit $? in $(( $(date +%s) - s )) s"
  for f in fp8 prefill; do echo "== $f"; grep -E "^  [A-Za-z_].*\(|^[A-Z_]+ page|^[A-Z_].*err |Duration|Memory Throughput|DRAM Throughput|Warp Cycles Per Issued|Issue Slots Busy|No Eligible|Achieved Occupancy|Registers Per" $o/ncu/$f.txt | head -70; done
fi
