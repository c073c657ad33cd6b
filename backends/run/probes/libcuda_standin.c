/* A stand-in for the NVIDIA driver library (libcuda.so.1) on a machine that has
 * no NVIDIA driver, so that vLLM 0.33.0's CUDA extension modules (_C_stable_libtorch,
 * _vllm_fa2_C, _vllm_fa3_C, _flashmla_C, ...) can be *loaded* and its attention
 * selection code imported. No kernel ever runs: every entry point reports
 * CUDA_ERROR_NO_DEVICE (100).
 *
 * The symbol list is the union of the undefined cu* symbols of every shared object
 * in the vLLM 0.33.0 venv that lists libcuda.so.1 as NEEDED
 * (`nm -D --undefined-only FILE | grep ' cu[A-Z]'`). `tests/vllm_oracle/build_libcuda_stub.py --check`
 * re-derives it from an install and reports any symbol missing here.
 *
 * Build: cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o libcuda.so.1 libcuda_standin.c
 */
#include <stddef.h>

#define CUDA_ERROR_NO_DEVICE 100

static const char NO_DEVICE_NAME[] = "CUDA_ERROR_NO_DEVICE";
static const char NO_DEVICE_TEXT[] = "no CUDA-capable device is detected (libcuda stand-in)";

/* Functions whose callers may read an out-parameter even on failure. */
int cuGetErrorString(int error, const char **text) {
    (void)error;
    if (text) *text = NO_DEVICE_TEXT;
    return 0;
}

int cuGetErrorName(int error, const char **name) {
    (void)error;
    if (name) *name = NO_DEVICE_NAME;
    return 0;
}

int cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                        unsigned long long flags, int *status) {
    (void)symbol; (void)version; (void)flags;
    if (pfn) *pfn = NULL;
    if (status) *status = 1; /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
    return CUDA_ERROR_NO_DEVICE;
}

int cuDriverGetVersion(int *version) {
    if (version) *version = 0;
    return CUDA_ERROR_NO_DEVICE;
}

int cuDeviceGetCount(int *count) {
    if (count) *count = 0;
    return CUDA_ERROR_NO_DEVICE;
}

/* Everything else: ignore the arguments (the SysV x86-64 and AArch64 calling
 * conventions let a callee ignore any it was passed) and report no device. */
#define NO_DEVICE(name) int name(void) { return CUDA_ERROR_NO_DEVICE; }

NO_DEVICE(cuCtxCreate_v2)
NO_DEVICE(cuCtxDestroy_v2)
NO_DEVICE(cuCtxGetCurrent)
NO_DEVICE(cuCtxGetDevice)
NO_DEVICE(cuCtxGetId)
NO_DEVICE(cuCtxPopCurrent_v2)
NO_DEVICE(cuCtxPushCurrent_v2)
NO_DEVICE(cuCtxSetCurrent)
NO_DEVICE(cuDeviceGet)
NO_DEVICE(cuDeviceGetAttribute)
NO_DEVICE(cuDeviceGetName)
NO_DEVICE(cuDevicePrimaryCtxGetState)
NO_DEVICE(cuDevicePrimaryCtxRelease_v2)
NO_DEVICE(cuDevicePrimaryCtxRetain)
NO_DEVICE(cuEventCreate)
NO_DEVICE(cuEventDestroy_v2)
NO_DEVICE(cuEventRecord)
NO_DEVICE(cuEventSynchronize)
NO_DEVICE(cuFuncGetAttribute)
NO_DEVICE(cuFuncSetAttribute)
NO_DEVICE(cuFuncSetCacheConfig)
NO_DEVICE(cuGetExportTable)
NO_DEVICE(cuInit)
NO_DEVICE(cuLaunchCooperativeKernel)
NO_DEVICE(cuLaunchKernel)
NO_DEVICE(cuLaunchKernelEx)
NO_DEVICE(cuLinkAddData_v2)
NO_DEVICE(cuLinkComplete)
NO_DEVICE(cuLinkCreate_v2)
NO_DEVICE(cuMemAddressFree)
NO_DEVICE(cuMemAddressReserve)
NO_DEVICE(cuMemAllocAsync)
NO_DEVICE(cuMemAllocPitch_v2)
NO_DEVICE(cuMemAlloc_v2)
NO_DEVICE(cuMemCreate)
NO_DEVICE(cuMemFreeAsync)
NO_DEVICE(cuMemFree_v2)
NO_DEVICE(cuMemGetAllocationGranularity)
NO_DEVICE(cuMemMap)
NO_DEVICE(cuMemRelease)
NO_DEVICE(cuMemSetAccess)
NO_DEVICE(cuMemUnmap)
NO_DEVICE(cuMemcpy2DAsync_v2)
NO_DEVICE(cuMemcpy2D_v2)
NO_DEVICE(cuMemcpyDtoH_v2)
NO_DEVICE(cuMemcpyHtoD_v2)
NO_DEVICE(cuModuleGetFunction)
NO_DEVICE(cuModuleLoad)
NO_DEVICE(cuModuleLoadData)
NO_DEVICE(cuModuleLoadDataEx)
NO_DEVICE(cuModuleUnload)
NO_DEVICE(cuOccupancyMaxActiveBlocksPerMultiprocessor)
NO_DEVICE(cuPointerGetAttribute)
NO_DEVICE(cuStreamCreate)
NO_DEVICE(cuStreamDestroy_v2)
NO_DEVICE(cuStreamGetCtx)
NO_DEVICE(cuStreamSynchronize)
NO_DEVICE(cuStreamWaitEvent)
NO_DEVICE(cuTensorMapEncodeTiled)
