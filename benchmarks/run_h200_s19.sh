#!/usr/bin/env bash
# Session 19's device calls (issue 13), one script for whatever GPU the call gets:
#   bash benchmarks/run_h200_s19.sh first    an H200: the whole decode grid with the fp8 subset, prefill and
#                                            mixed, table only (tag s19a); another GPU: the eight-warp variants
#                                            on the misses (run_h200_eight_warps.sh, tag s19v)
#   bash benchmarks/run_h200_s19.sh second   on the machine the first call warmed: an H200 repeats the grid
#                                            (s19ar) and then runs the eight-warp variants; another GPU runs
#                                            the variants if the first call did not
# carry: [".whl", ".gpu", ".gpu-vllm"]; results in $OUT/grid.tar.gz.
set -u
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $gpu"
keep=${KEEP:-/root/keep}; mkdir -p $keep
variants() {
  [ -f $keep/.s19v ] && return
  WARM_S=${WARM_S:-100} PART_S=${PART_S:-35} TAG=s19v bash benchmarks/run_h200_eight_warps.sh; touch $keep/.s19v
}
case "${1:-first}/$gpu" in
  first/*H200*)
    CALL_S=570 WARM_S=115 FP8_WARM_S=70 SWEEP_S=250 FP8_S=70 VARIANTS=none bash benchmarks/run_h200_decode_grid.sh s19a ;;
  second/*H200*)
    CALL_S=330 SWEEP_S=250 FP8_S=55 SKIP_MIXED=1 VARIANTS=none bash benchmarks/run_h200_decode_grid.sh s19ar
    WARM_S=60 PART_S=20 variants ;;
  *) variants ;;
esac
