"""The options of vLLM 0.33.0's `vllm serve` (and of
`python -m vllm.entrypoints.openai.api_server`, the same parser), as data:
one line per option, how many values it takes (argparse's nargs: 0, 1, ?, +),
":int" or ":float" when argparse converts each value with int() or float(),
":hint" for vLLM's human_readable_int (2k, 2K, 2048), each with "?" where
vLLM's optional_type also takes "" or "None" for no value,
and every option string the parser accepts for it (help hides some); "!"
marks the strings of an on/off option that turn it off. Generated from
vLLM's parser by tests/tools/vllm_serve_flags.py; do not edit by hand.
"""

SERVE_OPTIONS = """
1 --additional-config
0 --aggregate-engine-logging
1 --all2all-backend
0 --allow-credentials !--no-allow-credentials
0 --allow-deprecated-quantization !--no-allow-deprecated-quantization
1 --allowed-headers
1 --allowed-local-media-path
+ --allowed-media-domains
1 --allowed-methods
1 --allowed-origins
1 --anthropic-disabled-thinking-effort
+ --api-key
1:int --api-server-count -asc
0 --async-scheduling !--no-async-scheduling
1 --attention-backend
1 --attention-config -ac
1 --aux-output-config
1:int --block-size
1 --chat-template
1 --chat-template-content-format
1 --code-revision
1 --cohere-format
0 --cohere-is-reasoning-model !--no-cohere-is-reasoning-model
+ --collect-detailed-traces
1 --compilation-config -cc
1 --config
1 --config-format
1 --convert
1:int --cp-kv-cache-interleave-size
1:int? --cpu-distributed-timeout-seconds
1:float --cpu-offload-gb
+ --cpu-offload-params
+:int --cudagraph-capture-sizes
0 --cudagraph-metrics !--no-cudagraph-metrics
1 --custom-histogram-buckets
1 --data-parallel-address -dpa
1 --data-parallel-backend -dpb
0 --data-parallel-external-lb !--no-data-parallel-external-lb -dpe
0 --data-parallel-hybrid-lb !--no-data-parallel-hybrid-lb -dph
0 --data-parallel-multi-port-external-lb -dpm
1:int --data-parallel-rank -dpn
1:int --data-parallel-rpc-port -dpp
1:int --data-parallel-size -dp
1:int --data-parallel-size-local -dpl
1:int --data-parallel-start-rank -dpr
1:int --data-parallel-supervisor-port
1:int --dbo-decode-token-threshold
1:int --dbo-prefill-token-threshold
1 --dcp-comm-backend
1:int --dcp-kv-cache-interleave-size
0 --dcp-q-replicate !--no-dcp-q-replicate
1:int --decode-context-parallel-size -dcp
1 --default-chat-template-kwargs
1 --default-mm-loras
1 --device-ids
1 --diffusion-config -dc
1 --disable-access-log-for-endpoints
0 --disable-cascade-attn !--enable-cascade-attn !--no-disable-cascade-attn
0 --disable-chunked-mm-input !--enable-chunked-mm-input !--no-disable-chunked-mm-input
0 --disable-custom-all-reduce !--enable-custom-all-reduce !--no-disable-custom-all-reduce
0 --disable-fastapi-docs !--enable-fastapi-docs !--no-disable-fastapi-docs
0 --disable-hybrid-kv-cache-manager !--enable-hybrid-kv-cache-manager !--no-disable-hybrid-kv-cache-manager
0 --disable-log-stats
0 --disable-nccl-for-dp-synchronization !--enable-nccl-for-dp-synchronization !--no-disable-nccl-for-dp-synchronization
0 --disable-sliding-window !--enable-sliding-window !--no-disable-sliding-window
0 --disable-uvicorn-access-log !--enable-uvicorn-access-log !--no-disable-uvicorn-access-log
1 --distributed-executor-backend
1:int? --distributed-timeout-seconds
1 --download-dir
1:int --dp-supervisor-probe-failure-threshold
1:float --dp-supervisor-probe-interval-s
1:float --dp-supervisor-probe-timeout-s
1:int --dp-sync-interval
1 --dtype
1 --ec-manager-config
1 --ec-transfer-config
1:int --elastic-ep-max-dp-size
0 --enable-auto-tool-choice !--disable-auto-tool-choice !--no-enable-auto-tool-choice
0 --enable-batch-sharded-sampling !--disable-batch-sharded-sampling !--no-enable-batch-sharded-sampling
0 --enable-chunked-prefill !--disable-chunked-prefill !--no-enable-chunked-prefill
0 --enable-cumem-allocator !--disable-cumem-allocator !--no-enable-cumem-allocator
0 --enable-dbo !--disable-dbo !--no-enable-dbo
0 --enable-elastic-ep !--disable-elastic-ep !--no-enable-elastic-ep
0 --enable-ep-weight-filter !--disable-ep-weight-filter !--no-enable-ep-weight-filter
0 --enable-eplb !--disable-eplb !--no-enable-eplb
0 --enable-expert-parallel -ep !--disable-expert-parallel !--no-enable-expert-parallel
0 --enable-fault-tolerance !--disable-fault-tolerance !--no-enable-fault-tolerance
0 --enable-flash-late-interaction !--disable-flash-late-interaction !--no-enable-flash-late-interaction
0 --enable-flashinfer-autotune !--disable-flashinfer-autotune !--no-enable-flashinfer-autotune
0 --enable-force-include-usage !--disable-force-include-usage !--no-enable-force-include-usage
0 --enable-hc-sp !--disable-hc-sp !--no-enable-hc-sp
0 --enable-layerwise-nvtx-tracing !--disable-layerwise-nvtx-tracing !--no-enable-layerwise-nvtx-tracing
0 --enable-log-deltas !--disable-log-deltas !--no-enable-log-deltas
0 --enable-log-outputs !--disable-log-outputs !--no-enable-log-outputs
0 --enable-log-requests !--disable-log-requests !--no-enable-log-requests
0 --enable-logging-iteration-details !--disable-logging-iteration-details !--no-enable-logging-iteration-details
0 --enable-lora !--disable-lora !--no-enable-lora
0 --enable-mamba-cache-stochastic-rounding !--disable-mamba-cache-stochastic-rounding !--no-enable-mamba-cache-stochastic-rounding
0 --enable-mamba-shared-prefix-checkpoint !--disable-mamba-shared-prefix-checkpoint !--no-enable-mamba-shared-prefix-checkpoint
0 --enable-mfu-metrics !--disable-mfu-metrics !--no-enable-mfu-metrics
0 --enable-mixed-moe-lora-format !--disable-mixed-moe-lora-format !--no-enable-mixed-moe-lora-format
0 --enable-mm-embeds !--disable-mm-embeds !--no-enable-mm-embeds
0 --enable-moe-shared-loras !--disable-moe-shared-loras !--no-enable-moe-shared-loras
0 --enable-nccl-comm-suspend !--disable-nccl-comm-suspend !--no-enable-nccl-comm-suspend
0 --enable-offline-docs !--disable-offline-docs !--no-enable-offline-docs
0 --enable-per-request-metrics !--disable-per-request-metrics !--no-enable-per-request-metrics
0 --enable-prefix-caching !--disable-prefix-caching !--no-enable-prefix-caching
0 --enable-prompt-embeds !--disable-prompt-embeds !--no-enable-prompt-embeds
0 --enable-prompt-tokens-details !--disable-prompt-tokens-details !--no-enable-prompt-tokens-details
0 --enable-request-id-headers !--disable-request-id-headers !--no-enable-request-id-headers
0 --enable-return-routed-experts !--disable-return-routed-experts !--no-enable-return-routed-experts
0 --enable-scale-out !--disable-scale-out !--no-enable-scale-out
0 --enable-server-load-tracking !--disable-server-load-tracking !--no-enable-server-load-tracking
0 --enable-shm-tensor-arena !--disable-shm-tensor-arena !--no-enable-shm-tensor-arena
0 --enable-sleep-mode !--disable-sleep-mode !--no-enable-sleep-mode
0 --enable-ssl-refresh !--disable-ssl-refresh !--no-enable-ssl-refresh
0 --enable-tokenizer-info-endpoint !--disable-tokenizer-info-endpoint !--no-enable-tokenizer-info-endpoint
0 --enable-tower-connector-lora !--disable-tower-connector-lora !--no-enable-tower-connector-lora
0 --enable-trace-replay !--disable-trace-replay !--no-enable-trace-replay
0 --enforce-eager !--no-enforce-eager
1 --engram-config
1 --eplb-config
0 --exclude-tools-when-tool-choice-none !--no-exclude-tools-when-tool-choice-none
1 --expert-placement-strategy
0 --fail-on-environ-validation !--no-fail-on-environ-validation
1 --fault-tolerance-config
1 --fingerprint-mode
1 --fingerprint-value
0 --fully-sharded-loras !--no-fully-sharded-loras
1 --gdn-prefill-backend
1 --generation-config
1:float --gpu-memory-utilization --device-memory-utilization
0 --grpc
1:int? --grpc-port
0 -h --help
1:int --h11-max-header-count
1:int --h11-max-incomplete-event-size
0 --headless
1 --hf-config-path
1 --hf-overrides
? --hf-token
1 --host
+ --ignore-patterns
0 --interleave-mm-strings !--no-interleave-mm-strings
1 --io-processor-plugin
1 --ir-op-priority
1 --jit-monitor-mode
0 --jit-monitor-verbose !--no-jit-monitor-verbose
1 --kda-decode-backend
1 --kda-prefill-backend
1 --kernel-config
1 --kv-cache-dtype
+ --kv-cache-dtype-skip-layers
1:hint? --kv-cache-memory-bytes
0 --kv-cache-metrics !--no-kv-cache-metrics
1:float --kv-cache-metrics-sample
1 --kv-events-config
1 --kv-offloading-backend
1:float? --kv-offloading-size
0 --kv-sharing-fast-prefill !--no-kv-sharing-fast-prefill
1 --kv-transfer-config
0 --language-model-only !--no-language-model-only
1 --limit-mm-per-prompt
1 --linear-backend
1 --load-format
1 --log-config-file
0 --log-error-stack !--no-log-error-stack
1 --log-level
1 --logging-config
+ --logits-processors
1 --logprobs-mode
1:int --long-prefill-token-threshold
0 --long-prefill-token-threshold-adaptive !--no-long-prefill-token-threshold-adaptive
1 --lora-dtype
+ --lora-modules
+ --lora-target-modules
1 --mamba-backend
1:int? --mamba-block-size
1 --mamba-cache-dtype
1 --mamba-cache-mode
1:int --mamba-cache-philox-rounds
1 --mamba-ssm-cache-dtype
1 --mamba-ssu-algorithm
1 --master-addr
1:int --master-port
1:int? --max-cpu-loras
1:int --max-cudagraph-capture-size
1:int? --max-log-len
1:int --max-logprobs
1:int? --max-lora-cls-labels
1:int --max-lora-rank
1:int --max-loras
1 --max-model-len
1:int? --max-num-active-seqs
1:hint --max-num-batched-tokens
1:int? --max-num-queued-reqs
1:hint? --max-num-queued-tokens
1:hint? --max-num-scheduled-tokens
1:int --max-num-seqs
1:int? --max-parallel-loading-workers
1 --media-io-kwargs
1 --middleware
0 --mm-device-do-normalize !--no-mm-device-do-normalize
1 --mm-encoder-attn-backend
1 --mm-encoder-attn-dtype
1 --mm-encoder-fp8-scale-path
1:float --mm-encoder-fp8-scale-save-margin
1 --mm-encoder-fp8-scale-save-path
0 --mm-encoder-only !--no-mm-encoder-only
1 --mm-encoder-tp-mode
1 --mm-hasher-algorithm
1:float --mm-ipc-gpu-memory-gb
1:float --mm-processor-cache-gb
1 --mm-processor-cache-type
1 --mm-processor-device
1 --mm-processor-kwargs
1:int --mm-shm-cache-max-object-size-mb
1 --mm-tensor-ipc
1 --model
1 --model-class-overrides
1 --model-impl
1 --model-loader-extra-config
1 --moe-backend
0 --monokernel !--no-monokernel
1:int --nnodes -n
1:int --node-rank -r
1:int? --num-gpu-blocks-override
0 --numa-bind !--no-numa-bind
+ --numa-bind-cpus
+:int? --numa-bind-nodes
1 --offload-backend
1:int --offload-group-size
1:int --offload-num-in-group
+ --offload-params
1:int --offload-prefetch-step
1 --optimization-level
1 --otlp-traces-endpoint
1 --override-generation-config
1 --per-request-spec-decode-metrics
1 --performance-mode
1:int --pipeline-parallel-size -pp
1 --pooler-config
1:int --port
1:int --prefill-context-parallel-size -pcp
1:int --prefill-schedule-interval
1:int? --prefix-cache-retention-interval
1 --prefix-caching-hash-algo
1:int? --prefix-match-unit
1 --profiler-config
1 --pt-load-map-location
1 --quantization -q
1 --quantization-config
0 --ray-workers-use-nsight !--no-ray-workers-use-nsight
1 --reasoning-config
1 --reasoning-effort-map
1 --reasoning-parser
1 --reasoning-parser-plugin
1:int --renderer-num-workers
1:int --replayssm-buffer-len
1 --response-role
0 --return-sampling-mask !--no-return-sampling-mask
0 --return-tokens-as-token-ids !--no-return-tokens-as-token-ids
1 --revision
1 --root-path
1 --runner
1 --safetensors-load-strategy
1:hint --safetensors-prefetch-block-size
1:int --safetensors-prefetch-num-threads
1 --scheduler-cls
0 --scheduler-reserve-full-isl !--no-scheduler-reserve-full-isl
1 --scheduling-policy
1:int --seed
+ --served-model-name
1 --show-hidden-metrics-for-version
1:int --shutdown-timeout
0 --skip-mm-profiling !--no-skip-mm-profiling
0 --skip-tokenizer-init !--no-skip-tokenizer-init
1 --sleep-mode-backend
0 --sleep-mode-offload-cudagraph !--no-sleep-mode-offload-cudagraph
+ --sleep-preserve-parameter-names
1 --sparse-indexer-topk-backend
1 --spec-method
1 --spec-model
1:int --spec-tokens
0 --specialize-active-lora !--no-specialize-active-lora
1 --speculative-config -sc
1:int --sse-keep-alive-interval
1 --ssl-ca-certs
1:int --ssl-cert-reqs
1 --ssl-certfile
1 --ssl-ciphers
1 --ssl-keyfile
1:int --stream-interval
1 --structured-outputs-config
0 --swa-bounded-replay !--no-swa-bounded-replay
1:int --tensor-parallel-size -tp
1 --tokenizer
1 --tokenizer-mode
1 --tokenizer-revision
0 --tokens-only !--no-tokens-only
1 --tool-call-parser
1 --tool-parser-plugin
1 --tool-server
1 --tool-strict-level
0 --trust-remote-code !--no-trust-remote-code
0 --trust-request-chat-template !--no-trust-request-chat-template
0 --trust-request-mm-kwargs !--no-trust-request-mm-kwargs
1:int --ubatch-size
1 --uds
0 --use-fp64-gumbel !--no-use-fp64-gumbel
0 --use-replayssm !--no-use-replayssm
0 --use-tqdm-on-load !--no-use-tqdm-on-load
1 --uvicorn-log-level
1 --video-pruning-method
1:float? --video-pruning-rate
1 --watchdog-config
1:float --watermark
1 --watermark-config
1 --weight-transfer-config
1 --worker-cls
1 --worker-extension-cls
"""

# Value bounds vLLM 0.33.0 enforces when it builds its config from a plain
# `vllm serve MODEL --option VALUE` line: option, Class.field, then each bound
# as gt / ge / lt / le and the number (see the generator's docstring).
SERVE_BOUNDS = """
--block-size CacheConfig.block_size gt:0
--cpu-offload-gb UVAOffloadConfig.cpu_offload_gb ge:0
--data-parallel-rank ParallelConfig.data_parallel_rank ge:0
--data-parallel-rpc-port ParallelConfig.data_parallel_rpc_port ge:1 le:65535
--data-parallel-size ParallelConfig.data_parallel_size ge:1
--data-parallel-size ParallelConfig.data_parallel_size_local ge:0
--data-parallel-size-local ParallelConfig.data_parallel_size_local ge:0
--dbo-decode-token-threshold ParallelConfig.dbo_decode_token_threshold ge:0
--dbo-prefill-token-threshold ParallelConfig.dbo_prefill_token_threshold ge:0
--decode-context-parallel-size ParallelConfig.decode_context_parallel_size ge:1
--dp-sync-interval ParallelConfig.dp_sync_interval ge:1
--elastic-ep-max-dp-size ParallelConfig.elastic_ep_max_dp_size ge:1
--gpu-memory-utilization CacheConfig.gpu_memory_utilization gt:0 le:1
--kv-cache-metrics-sample ObservabilityConfig.kv_cache_metrics_sample gt:0 le:1
--long-prefill-token-threshold SchedulerConfig.long_prefill_token_threshold ge:0
--mamba-block-size CacheConfig.mamba_block_size gt:0
--max-logprobs ModelConfig.max_logprobs ge:-1
--max-model-len ModelConfig.max_model_len ge:-1
--max-num-active-seqs SchedulerConfig.max_num_active_seqs ge:1
--max-num-batched-tokens SchedulerConfig.max_num_batched_tokens ge:1
--max-num-batched-tokens SchedulerConfig.max_num_seqs ge:1
--max-num-queued-reqs SchedulerConfig.max_num_queued_reqs ge:0
--max-num-queued-tokens SchedulerConfig.max_num_queued_tokens ge:0
--max-num-scheduled-tokens SchedulerConfig.max_num_scheduled_tokens ge:1
--max-num-seqs SchedulerConfig.max_num_seqs ge:1
--max-num-seqs SchedulerConfig.max_num_batched_tokens ge:1
--max-parallel-loading-workers ParallelConfig.max_parallel_loading_workers ge:1
--nnodes ParallelConfig.nnodes ge:1
--node-rank ParallelConfig.node_rank ge:0
--offload-group-size PrefetchOffloadConfig.offload_group_size ge:0
--offload-num-in-group PrefetchOffloadConfig.offload_num_in_group ge:1
--offload-prefetch-step PrefetchOffloadConfig.offload_prefetch_step ge:0
--pipeline-parallel-size ParallelConfig.pipeline_parallel_size ge:1
--prefill-context-parallel-size ParallelConfig.prefill_context_parallel_size ge:1
--prefill-schedule-interval SchedulerConfig.prefill_schedule_interval ge:1
--prefix-cache-retention-interval CacheConfig.prefix_cache_retention_interval ge:0
--prefix-match-unit CacheConfig.prefix_match_unit gt:0
--replayssm-buffer-len CacheConfig.replayssm_buffer_len gt:0
--safetensors-prefetch-block-size LoadConfig.safetensors_prefetch_block_size ge:1
--safetensors-prefetch-num-threads LoadConfig.safetensors_prefetch_num_threads ge:1
--shutdown-timeout VllmConfig.shutdown_timeout ge:0
--spec-tokens SpeculativeConfig.num_speculative_tokens gt:0
--stream-interval SchedulerConfig.stream_interval ge:1
--tensor-parallel-size ParallelConfig.tensor_parallel_size ge:1
--ubatch-size ParallelConfig.ubatch_size ge:0
--watermark SchedulerConfig.watermark ge:0.0 lt:1.0
"""

# The values an option takes where vLLM's parser has a fixed list (argparse
# choices; any other value is its usage error): option, how a value is read
# before the check (-: as written; lower_: lowercased, "-" made "_"; :int:
# int(); ?: "" and "None" are no value), then the values.
SERVE_CHOICES = """
--all2all-backend - allgather_reducescatter deepep_high_throughput deepep_low_latency deepep_v2 flashinfer_all2allv flashinfer_nvlink_one_sided flashinfer_nvlink_two_sided moonep mori_high_throughput mori_low_latency naive nixl_ep pplx
--anthropic-disabled-thinking-effort - auto high low max medium none xhigh
--chat-template-content-format - auto openai string
--collect-detailed-traces ? all model worker
--convert - auto classify embed none
--dcp-comm-backend ? a2a ag_rs
--dtype - auto bfloat16 float float16 float32 half
--expert-placement-strategy - linear round_robin
--fingerprint-mode - custom full hash none
--gdn-prefill-backend - flashinfer triton cutedsl aiter_flydsl sycl
--jit-monitor-mode - error warn
--kda-decode-backend - auto native flashinfer triton
--kda-prefill-backend - auto triton flashkda flashinfer fused
--kv-offloading-backend - lmcache native
--linear-backend lower_ aiter auto b12x conch cutlass deep_gemm emulation exllama fbgemm flashinfer_b12x flashinfer_cudnn flashinfer_cutedsl flashinfer_cutlass flashinfer_trtllm humming machete marlin torch triton xpu xpu_woq
--log-level - CRITICAL ERROR WARNING INFO DEBUG NOTSET
--logprobs-mode - processed_logits processed_logprobs raw_logits raw_logprobs
--lora-dtype - auto bfloat16 float16
--mamba-cache-dtype - auto bfloat16 float16 float32
--mamba-cache-mode - align none
--mamba-ssm-cache-dtype - auto bfloat16 float16 float32
--mamba-ssu-algorithm ? auto horizontal simple vertical
--max-lora-rank :int 1 8 16 32 64 128 256 320 512
--mm-encoder-attn-dtype ? fp8
--mm-encoder-tp-mode - data weights
--mm-hasher-algorithm - blake3 sha256 sha512
--mm-processor-cache-type - lru shm
--mm-processor-device - auto cpu cuda
--mm-tensor-ipc - direct_rpc torch_shm
--moe-backend lower_ aiter aiter_mega_moe aiter_triton_mxfp4_bf16 aiter_triton_mxfp4_mxfp4 auto b12x batched_triton cutlass deep_gemm deep_gemm_mega_moe emulation flashinfer_b12x flashinfer_cutedsl flashinfer_cutlass flashinfer_moe_ep_cutedsl flashinfer_moe_ep_mega_deep_gemm flashinfer_trtllm flydsl hpc humming marlin rdna3 triton triton_unfused
--offload-backend - auto prefetch uva
--per-request-spec-decode-metrics - detailed none summary
--performance-mode - balanced interactivity throughput
--prefix-caching-hash-algo - sha256 sha256_cbor xxhash xxhash_cbor
--runner - auto draft generate pooling
--safetensors-load-strategy ? eager lazy prefetch torchao
--scheduling-policy - fcfs priority
--sparse-indexer-topk-backend lower_ aiter auto cooperative deep_select flashinfer per_row persistent torch
--spec-method ? bailing_hybrid_mtp bailing_hybrid_v3_mtp custom_class deepseek_mtp dflash dots3_note_mtp draft_model dspark eagle eagle3 ernie_mtp exaone4_5_mtp exaone_moe_mtp extract_hidden_states gemma4_mtp glm4_moe_lite_mtp glm4_moe_mtp glm5_next_mtp glm_ocr_mtp hy_v3_mtp hy_v4_mtp inkling_mtp kimi_k3_mtp longcat_flash_mtp mimo_mtp mimo_v2_mtp minimax_m3_mtp mtp nemotron_h_mtp ngram ngram_gpu pangu_ultra_moe_mtp qwen3_5_mtp qwen3_next_mtp qwen4_exp_mtp step3p5_mtp step5_mtp suffix
--tool-strict-level ? auto function parameter
--uvicorn-log-level - critical debug error info trace warning
--video-pruning-method - evs vidcom2
"""
