// Small kernels for constructs whose SASS gpuproj must read the way the hardware runs it
// (gpuproj.sass). Unlike fixture_kernels.cu, no FLOP count by hand goes with them: the tests
// read the listings for the one construct each kernel holds. Compiled by
// scripts/make_sass_fixtures.py.
#include <cuda_fp16.h>

// A shuffle reduction under a data-dependent branch: each step runs its SHFL where the warp is
// converged and takes `BRA.DIV UR, slow path` (a branch on a register) where it has diverged.
extern "C" __global__ void shfl_sum(const float* a, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? a[i] : 0.0f;
    if (v > 0)
        for (int o = 16; o; o >>= 1) v += __shfl_down_sync(__activemask(), v, o);
    if (i < n) c[i] = v;
}

// A half widened to a float (__half2float) for FP32 arithmetic: nvcc adds -0 to it in FP32,
// `HADD2.F32 R0, -RZ, R2.H0_H0` (sm_75: `HADD2.F32 R0, R2.H0_H0, -RZ.H0_H0`); the FP work is the
// one FMUL.
extern "C" __global__ void half_to_float(const __half* a, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = __half2float(a[i]) * 3.0f;
}
