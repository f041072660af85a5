// gpuproj operational-intensity sweep (mixbench-style), CUDA C++. Same names, arguments and
// counts as mixbench.cl: 4 elements per thread, K dependent FMAs each, one load and one store per
// element; intensity K / sizeof(T) FLOP/byte (K / 2 for half2). gpuproj appends the
// MIX_<PREC>(K) instantiations of a run.
#include <cuda_fp16.h>

__device__ __forceinline__ float fma_(float v, float a, float b) { return fmaf(v, a, b); }
__device__ __forceinline__ double fma_(double v, double a, double b) { return fma(v, a, b); }
__device__ __forceinline__ __half2 fma_(__half2 v, __half2 a, __half2 b) { return __hfma2(v, a, b); }

template <typename T, int K>
__device__ __forceinline__ void mix_body(T* x, T a, T b)
{
    size_t n = (size_t)gridDim.x * blockDim.x;
    size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    T v0 = x[g], v1 = x[g + n], v2 = x[g + 2 * n], v3 = x[g + 3 * n];
#pragma unroll 16
    for (int i = 0; i < K; ++i) {
        v0 = fma_(v0, a, b); v1 = fma_(v1, a, b);
        v2 = fma_(v2, a, b); v3 = fma_(v3, a, b);
    }
    x[g] = v0; x[g + n] = v1; x[g + 2 * n] = v2; x[g + 3 * n] = v3;
}

#define MIX_FP32(K) extern "C" __global__ void mix_fp32_##K(float* x, float a, float b) \
    { mix_body<float, K>(x, a, b); }
#define MIX_FP64(K) extern "C" __global__ void mix_fp64_##K(double* x, double a, double b) \
    { mix_body<double, K>(x, a, b); }
#define MIX_FP16X2(K) extern "C" __global__ void mix_fp16x2_##K(__half2* x, unsigned abits,   \
                                                                unsigned bbits)               \
    { mix_body<__half2, K>(x, *reinterpret_cast<__half2*>(&abits),                             \
                           *reinterpret_cast<__half2*>(&bbits)); }

// instantiations follow
