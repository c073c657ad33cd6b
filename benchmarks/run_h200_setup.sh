#!/usr/bin/env bash
# Sourced at the start of every device call on the offline H200. Unpacks what the call carries into
# /root/keep (which lives as long as the machine stays warm), installs attn-select as a user would
# (pip install -e .), and puts the carried packages on PYTHONPATH where a pip install would have them:
#   .whl/*.whl        pydantic and what the image lacks          -> $keep/whl
#   .gpu/             FlashInfer + tvm_ffi (pack-flashinfer.sh)  -> $keep/fi
#   .gpu-vllm/        vLLM 0.33.0's FA3 build, its interface files and a stand-in vllm.platforms
#                     (pack-vllm-kernels.sh)                     -> $keep/vllm
#   .gpu-carry-N/     pieces of FA4 and vLLM's FA2 build (benchmarks/pack_h200_carry.py), or
#   .gpu-fa4-a|b/     FA4's two parts as pack-fa4.sh makes them  -> $keep/fa4
#   .gpu-carry-N/ may also hold core Ray (benchmarks/pack_h200_ray.sh) -> $keep/ray, for the fleet
#   FA2, once all its pieces are here: $keep/vllm-fa2, a vLLM site with the FA2 build only (a wheel
#   without FA3, as vLLM's build looks on Ampere/Ada to the selection)
# FA4 is found through plain imports: its site and the folder its .pth names
# (nvidia_cutlass_dsl/dsl_packages) are on PYTHONPATH. vLLM's builds are not: a command adds
# $VLLM_SITE (FA3, and FA2 once its pieces are here) or $VLLM_FA2_SITE (FA2 only) where it means
# vLLM to be installed.
keep=${KEEP:-/root/keep}; mkdir -p $keep
t0=$(date +%s)
if ls .whl/*.whl >/dev/null 2>&1 && [ ! -f $keep/whl/.done ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target $keep/whl .whl/*.whl \
    && touch $keep/whl/.done; fi
if [ -f .gpu/flashinfer-site.tar.xz ] && [ ! -f $keep/fi/.done ]; then
  mkdir -p $keep/fi && tar -xJf .gpu/flashinfer-site.tar.xz -C $keep/fi && touch $keep/fi/.done; fi
if [ -f .gpu-vllm/vllm-kernels.tar.xz ] && [ ! -f $keep/vllm/.done ]; then
  mkdir -p $keep/vllm && tar -xJf .gpu-vllm/vllm-kernels.tar.xz -C $keep/vllm && touch $keep/vllm/.done; fi
# FA4 / FA2 pieces: stored as they come, unpacked once complete
python3 benchmarks/pack_h200_carry.py unpack --keep $keep .gpu-carry-* 2>&1
[ -f .gpu-fa4-a/part.00 ] && cp .gpu-fa4-a/part.00 $keep/fa4.part.00
[ -f .gpu-fa4-b/part.01 ] && [ -f $keep/fa4.part.00 ] && [ ! -f $keep/fa4.tar.xz ] && \
  cat $keep/fa4.part.00 .gpu-fa4-b/part.01 > $keep/fa4.tar.xz
if [ -f $keep/fa4.tar.xz ] && [ ! -f $keep/fa4/.done ]; then
  mkdir -p $keep/fa4 && tar -xJf $keep/fa4.tar.xz -C $keep/fa4 && touch $keep/fa4/.done; fi
if [ -f $keep/fa2.so.xz ] && [ -f $keep/vllm/.done ] && [ ! -f $keep/vllm-fa2/.done ]; then
  mkdir -p $keep/vllm-fa2 && tar -cf - -C $keep/vllm --exclude='*.so' vllm | tar -xf - -C $keep/vllm-fa2 \
    && xz -dc $keep/fa2.so.xz > $keep/vllm-fa2/vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so && touch $keep/vllm-fa2/.done; fi
# vLLM's wheel holds both builds: once FA2 is here, $VLLM_SITE has it beside FA3 (what tune's
# "FLASH_ATTN fa2" setting runs on an H200 with vLLM installed)
[ -f $keep/vllm-fa2/.done ] && [ ! -e $keep/vllm/vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so ] && \
  ln $keep/vllm-fa2/vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so $keep/vllm/vllm/vllm_flash_attn/
true
[ -f .gpu-ray/ray-site.tar.xz ] && [ ! -f $keep/ray-site.tar.xz ] && cp .gpu-ray/ray-site.tar.xz $keep/  # carried whole
if [ -f $keep/ray-site.tar.xz ] && [ ! -f $keep/ray/.done ]; then
  mkdir -p $keep/ray && tar -xJf $keep/ray-site.tar.xz -C $keep/ray && touch $keep/ray/.done; fi
# the project, as a user installs it
python3 -m pip install -q --no-deps --no-build-isolation -e . 2>&1 | grep -v "^WARNING: Running pip as" || true
export PATH=$(python3 -c 'import os, sys; print(os.path.dirname(sys.executable))'):$PATH  # where pip put attn-select
# FA4's site, and what its nvidia_cutlass_dsl_packages.pth adds to sys.path in a pip install
# (nvidia_cutlass_dsl/dsl_packages): PYTHONPATH does not run .pth files, so the folder is named here
export PYTHONPATH=$keep/whl:$keep/fi:$keep/fa4:$keep/fa4/nvidia_cutlass_dsl/dsl_packages:$keep/ray
export PYTHONUNBUFFERED=1 TVM_FFI_DISABLE_TORCH_C_DLPACK=1
export VLLM_SITE=$keep/vllm VLLM_FA2_SITE=$keep/vllm-fa2 FLASHINFER_WORKSPACE_BASE=$keep/ficache
export TRITON_CACHE_DIR=$keep/triton TORCHINDUCTOR_CACHE_DIR=$keep/inductor CUDA_CACHE_PATH=$keep/nvcache
export CUDA_CACHE_MAXSIZE=4294967296  # FA2's sm_80 build JIT-compiles from PTX on SM90: keep all of it
echo "setup $(( $(date +%s) - t0 )) s; keep: $(ls $keep | tr '\n' ' ')"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,memory.used --format=csv,noheader
