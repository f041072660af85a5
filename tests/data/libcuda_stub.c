/* A stand-in for the NVIDIA driver library (libcuda.so.1), for tests on machines without a GPU:
 * the entry points gpuproj.bench.cuda calls, with their CUDA driver API prototypes. One device,
 * an H100's attributes; device memory is host memory, so uploads and downloads are real copies;
 * launches run nothing (a kernel's outputs keep what was there) and each advances the event
 * clock by 5 ms, except the backend's hold, which is counted instead. A launch with a null
 * parameter array or a block of no threads fails, as the driver's would. Built by
 * tests/test_bench_cuda_stub.py with the system C compiler. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef uint64_t CUdeviceptr;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUevent, *CUstream;

enum { OK = 0, INVALID_VALUE = 1, OUT_OF_MEMORY = 2, INVALID_DEVICE = 101 };
static double clock_ms = 0.0;
static long holds = 0, launches = 0;
static uint64_t hold_ns = 0;

CUresult cuGetErrorName(CUresult e, const char **s) { *s = e ? "CUDA_ERROR_STUB" : "CUDA_SUCCESS"; return OK; }
CUresult cuInit(unsigned flags) { (void)flags; return OK; }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return OK; }
CUresult cuDeviceGetCount(int *n) { *n = 1; return OK; }
CUresult cuDeviceGet(CUdevice *d, int i) { if (i != 0) return INVALID_DEVICE; *d = 0; return OK; }

CUresult cuDeviceGetName(char *buf, int len, CUdevice d)
{
    if (d != 0 || len < 1) return INVALID_VALUE;
    strncpy(buf, "NVIDIA H100 80GB HBM3", (size_t)len - 1);
    buf[len - 1] = 0;
    return OK;
}

CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d)
{
    if (d != 0) return INVALID_DEVICE;
    switch (attr) {
    case 1: *v = 1024; break;          /* max threads per block */
    case 8: *v = 49152; break;         /* shared memory per block */
    case 10: *v = 32; break;           /* warp size */
    case 13: *v = 1980000; break;      /* clock, kHz */
    case 16: *v = 132; break;          /* multiprocessors */
    case 36: *v = 2619000; break;      /* memory clock, kHz */
    case 37: *v = 5120; break;         /* memory bus, bits */
    case 38: *v = 52428800; break;     /* L2 bytes */
    case 39: *v = 2048; break;         /* max threads per multiprocessor */
    case 75: *v = 9; break;            /* compute capability */
    case 76: *v = 0; break;
    case 81: *v = 233472; break;       /* shared memory per multiprocessor */
    case 82: *v = 65536; break;        /* registers per multiprocessor */
    default: return INVALID_VALUE;
    }
    return OK;
}

/* a bus id unlike the CUDA ordinal, as nvidia-smi --id takes it */
CUresult cuDeviceGetPCIBusId(char *buf, int len, CUdevice d)
{
    if (d != 0 || len < 13) return INVALID_VALUE;
    strncpy(buf, "0000:3B:00.0", (size_t)len);
    return OK;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d) { (void)d; *bytes = (size_t)80 << 30; return OK; }
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) { (void)d; *c = (CUcontext)&clock_ms; return OK; }
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) { (void)d; return OK; }
CUresult cuCtxSetCurrent(CUcontext c) { return c ? OK : INVALID_VALUE; }
CUresult cuCtxSynchronize(void) { return OK; }

CUresult cuModuleLoadData(CUmodule *m, const void *image) { if (!image) return INVALID_VALUE; *m = (CUmodule)image; return OK; }
CUresult cuModuleUnload(CUmodule m) { (void)m; return OK; }
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    (void)m;
    *f = (CUfunction)strdup(name);
    return *f ? OK : OUT_OF_MEMORY;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
    void *q = calloc(1, n ? n : 1);
    if (!q) return OUT_OF_MEMORY;
    *p = (CUdeviceptr)(uintptr_t)q;
    return OK;
}
CUresult cuMemFree_v2(CUdeviceptr p) { free((void *)(uintptr_t)p); return OK; }
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) { memcpy((void *)(uintptr_t)dst, src, n); return OK; }
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) { memcpy(dst, (const void *)(uintptr_t)src, n); return OK; }

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned smem, CUstream s, void **params,
                        void **extra)
{
    (void)s; (void)smem; (void)extra;
    if (!f || !params || gx * gy * gz == 0 || bx * by * bz == 0 || bx * by * bz > 1024)
        return INVALID_VALUE;
    if (strcmp((const char *)f, "hold") == 0) {
        holds++;
        hold_ns = *(const uint64_t *)params[0];
        return OK;
    }
    launches++;
    clock_ms += 5.0;
    return OK;
}

/* not driver API: what the tests read back (holds queued, their last length, other launches) */
long stub_holds(void) { return holds; }
uint64_t stub_hold_ns(void) { return hold_ns; }
long stub_launches(void) { return launches; }

CUresult cuEventCreate(CUevent *e, unsigned flags) { (void)flags; *e = malloc(sizeof(double)); return *e ? OK : OUT_OF_MEMORY; }
CUresult cuEventRecord(CUevent e, CUstream s) { (void)s; *(double *)e = clock_ms; return OK; }
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b) { *ms = (float)(*(double *)b - *(double *)a); return OK; }
CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b) { return cuEventElapsedTime(ms, a, b); }
CUresult cuEventDestroy_v2(CUevent e) { free(e); return OK; }
