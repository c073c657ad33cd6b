#!/usr/bin/env bash
# TRITON_ATTN's prefill at head 64 through `attn-select run` as a user runs it, beside vLLM's FA3 in the
# same process: Llama-3.2-1B's published config (32 / 8 heads, head 64), once with the rule (the Gluon
# kernel, ATTN_SELECT_ATTN_KERNEL unset) and once with the tl kernel (ATTN_SELECT_ATTN_KERNEL=tl):
#   source benchmarks/run_h200_setup.sh && bash benchmarks/run_h200_prefill_heads.sh
# carry: [".whl", ".gpu-vllm"]. First every run's checked step in parallel processes (compiles land in the
# kept Triton cache), then the timed runs one process each: prefill (4 x 512 new on 1024) and mixed, page 16.
# Reports: $OUT/prefill-heads/NAME.json and NAME.log; a summary line per row on stdout.
set -u
o=${OUT:-out}/prefill-heads; mkdir -p $o
site=${VLLM_SITE:?source benchmarks/run_h200_setup.sh first (it sets VLLM_SITE)}
export TRITON_CACHE_DIR=/root/keep/triton-heads
cfg=$o/llama-3.2-1b; mkdir -p $cfg
cat > $cfg/config.json <<'JSON'
{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048, "intermediate_size": 8192,
 "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64,
 "vocab_size": 128256, "max_position_embeddings": 131072, "rms_norm_eps": 1e-05, "rope_theta": 500000.0,
 "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                  "original_max_position_embeddings": 8192, "rope_type": "llama3"},
 "tie_word_embeddings": true, "torch_dtype": "bfloat16", "bos_token_id": 128000, "eos_token_id": 128001}
JSON
T="--shapes prefill,mixed --backend TRITON_ATTN,FLASH_ATTN --build-span 0 --format json --allow-missing"
one() {  # one NAME KERNEL MODEL ARGS...: a run in its own process (KERNEL: ATTN_SELECT_ATTN_KERNEL)
  local name=$1 kern=$2; shift 2
  local s=$(date +%s)
  ATTN_SELECT_ATTN_KERNEL=$kern PYTHONPATH=$site:$PYTHONPATH timeout 200 attn-select run "$@" $T \
    > $o/$name.json 2> $o/$name.log
  echo "$name: exit $? in $(( $(date +%s) - s )) s"
}
t0=$(date +%s)
one check-1b-rule "" $cfg --no-timing --checks 1 &
one check-1b-tl tl $cfg --no-timing --checks 1 &
wait; echo "checks and compiles: $(( $(date +%s) - t0 )) s"
one llama-3.2-1b-rule "" $cfg
one llama-3.2-1b-tl tl $cfg
python3 - "$o" <<'PY'
import json, pathlib, sys
for f in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    try:
        d = json.loads(f.read_text())
    except Exception as e:
        print(f.stem, "unreadable:", e); continue
    for g in d.get("groups", []):
        for r in g.get("rows", []):
            p, c = r.get("perf") or {}, r.get("check") or {}
            err = max(c.get("rel_errors") or [float("nan")])
            us = p.get("per_layer_us")
            print(f"{f.stem:>22} {r['shape']:>7} {r['backend']:>11} {r['status']:>7} "
                  + (f"{us:8.1f} us err {err:.1e} " if us else f"err {err:.1e} " if c else "")
                  + (r.get("kernel") or r.get("reason") or "")[:150])
PY
