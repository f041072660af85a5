// Small kernels written to test gpuproj's SASS comparison (gpuproj.sass).
// Each kernel's floating-point work per thread is stated next to it; the expected FLOP counts
// used by the tests are derived from these lines and from the compiled code of the special
// functions (see gpuproj.sass.fixtures). Compiled by scripts/make_sass_fixtures.py.
#include <cuda_fp16.h>

// One FP32 division per element (IEEE round-to-nearest: fast path + slow-path subroutine).
extern "C" __global__ void div_f32(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] / b[i];
}

// One FP64 division per element.
extern "C" __global__ void div_f64(const double* a, const double* b, double* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] / b[i];
}

// One FP32 square root per element (IEEE sqrtf).
extern "C" __global__ void sqrt_f32(const float* a, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = sqrtf(a[i]);
}

// One accurate expf per element.
extern "C" __global__ void exp_f32(const float* a, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = expf(a[i]);
}

// One accurate logf per element.
extern "C" __global__ void log_f32(const float* a, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = logf(a[i]);
}

// One accurate sinf per element (fast range reduction; Payne-Hanek for huge arguments).
extern "C" __global__ void sin_f32(const float* a, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = sinf(a[i]);
}

// iters x (4 FP32 FMA + 1 FP32 MUL) per element, loop kept rolled so each iteration is one
// pass through one basic block.
extern "C" __global__ void fma_loop_f32(const float* a, float* c, int n, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x0 = a[i], x1 = x0 + 1.0f, x2 = x0 + 2.0f, x3 = x0 + 3.0f;
#pragma unroll 1
    for (int k = 0; k < iters; ++k) {
        x0 = fmaf(x0, 0.999f, 0.5f);
        x1 = fmaf(x1, 0.998f, 0.25f);
        x2 = fmaf(x2, 0.997f, 0.125f);
        x3 = fmaf(x3, 0.996f, 0.0625f);
        x0 = x0 * x1;
    }
    c[i] = x0 + x1 + x2 + x3;
}

// iters x (2 FP64 FMA) per element.
extern "C" __global__ void fma_loop_f64(const double* a, double* c, int n, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double x0 = a[i], x1 = x0 + 1.0;
#pragma unroll 1
    for (int k = 0; k < iters; ++k) {
        x0 = fma(x0, 0.999, 0.5);
        x1 = fma(x1, 0.998, 0.25);
    }
    c[i] = x0 * x1;
}

// One packed half2 FMA (2 FMA lanes) per element pair.
extern "C" __global__ void hfma2_f16(const __half2* a, const __half2* b, __half2* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = __hfma2(a[i], b[i], c[i]);
}

// Sum of 256 floats per block in shared memory: 255 FP32 ADD per block.
extern "C" __global__ void __launch_bounds__(256) smem_reduce_f32(const float* a, float* c) {
    __shared__ float s[256];
    int t = threadIdx.x;
    s[t] = a[blockIdx.x * 256 + t];
    __syncthreads();
#pragma unroll
    for (int stride = 128; stride > 0; stride >>= 1) {
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0) c[blockIdx.x] = s[0];
}

// One FP32 MUL per element, accumulated with a global atomic add.
extern "C" __global__ void atomic_dot_f32(const float* a, const float* b, float* sum, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(sum, a[i] * b[i]);
}
