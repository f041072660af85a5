// gpuproj compute-throughput kernels (CUDA C++). Same names, arguments and operation counts as
// compute.cl (see its header): 8 independent chains per thread, 16 unrolled steps per loop
// iteration; operations per thread = iters * 16 * 8 * OPS_PER_STEP.
#include <cuda_fp16.h>

#define C8(S) S(0) S(1) S(2) S(3) S(4) S(5) S(6) S(7)
#define R16(X) X X X X X X X X X X X X X X X X
#define SUM8 (a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7)

// explicit intrinsics: one FFMA / DFMA / HFMA2 each; __fadd_rn and __fmul_rn are never contracted
#define FMA32_STEP(i) a##i = fmaf(a##i, b, c);
#define FMA64_STEP(i) a##i = fma(a##i, b, c);
#define ADD32_STEP(i) a##i = __fadd_rn(a##i, b); a##i = __fadd_rn(a##i, c);
#define MUL32_STEP(i) a##i = __fmul_rn(a##i, b); a##i = __fmul_rn(a##i, c);
#define ADD64_STEP(i) a##i = __dadd_rn(a##i, b); a##i = __dadd_rn(a##i, c);
#define MUL64_STEP(i) a##i = __dmul_rn(a##i, b); a##i = __dmul_rn(a##i, c);
#define HFMA2_STEP(i) a##i = __hfma2(a##i, b, c);
#define MAD_STEP(i) a##i = a##i * b + c;
// one MUFU.RSQ per step, nothing else
#define RSQ_STEP(i) asm volatile("rsqrt.approx.ftz.f32 %0, %0;" : "+f"(a##i));

#define DECL(T, i) T a##i = seed + (T)(i) * (T)0.01;
#define DECL8(T) DECL(T, 0) DECL(T, 1) DECL(T, 2) DECL(T, 3) \
                 DECL(T, 4) DECL(T, 5) DECL(T, 6) DECL(T, 7)

#define FLOAT_KERNEL(NAME, T, STEP)                                              \
extern "C" __global__ void NAME(T* out, unsigned iters, T b, T c)                \
{                                                                                \
    size_t gid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;                  \
    T seed = (T)1 + (T)(gid & 255) * (T)0.001;                                   \
    DECL8(T)                                                                     \
    for (unsigned it = 0; it < iters; ++it) {                                    \
        R16(C8(STEP))                                                            \
    }                                                                            \
    out[gid] = SUM8;                                                             \
}

FLOAT_KERNEL(fp32_fma, float, FMA32_STEP)
FLOAT_KERNEL(fp32_add, float, ADD32_STEP)
FLOAT_KERNEL(fp32_mul, float, MUL32_STEP)
FLOAT_KERNEL(sfu_rsqrt, float, RSQ_STEP)
FLOAT_KERNEL(fp64_fma, double, FMA64_STEP)
FLOAT_KERNEL(fp64_add, double, ADD64_STEP)
FLOAT_KERNEL(fp64_mul, double, MUL64_STEP)

// b and c arrive as the bits of a half2 (two FP16 values), as in compute.cl
extern "C" __global__ void fp16x2_fma(__half2* out, unsigned iters, unsigned bbits, unsigned cbits)
{
    size_t gid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    __half2 b = *reinterpret_cast<__half2*>(&bbits);
    __half2 c = *reinterpret_cast<__half2*>(&cbits);
    float s = (float)(gid & 15) * 0.01f;
#define H2DECL(i) __half2 a##i = __floats2half2_rn(s + (float)(i) * 0.01f, s + 0.5f);
    C8(H2DECL)
    for (unsigned it = 0; it < iters; ++it) {
        R16(C8(HFMA2_STEP))
    }
    out[gid] = __hadd2(__hadd2(__hadd2(a0, a1), __hadd2(a2, a3)),
                       __hadd2(__hadd2(a4, a5), __hadd2(a6, a7)));
}

extern "C" __global__ void int32_mad(unsigned* out, unsigned iters, unsigned b, unsigned c)
{
    size_t gid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned seed = (unsigned)gid * 2654435761u;
#define IDECL(i) unsigned a##i = seed + (unsigned)(i);
    C8(IDECL)
    for (unsigned it = 0; it < iters; ++it) {
        R16(C8(MAD_STEP))
    }
    out[gid] = SUM8;
}

#define FIB(i, j) a##i += a##j; a##j += a##i;
extern "C" __global__ void int32_add(unsigned* out, unsigned iters, unsigned b, unsigned c)
{
    size_t gid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned seed = (unsigned)gid * 2654435761u + b;
    C8(IDECL)
    for (unsigned it = 0; it < iters; ++it) {
        R16(FIB(0, 1) FIB(2, 3) FIB(4, 5) FIB(6, 7))
    }
    out[gid] = SUM8 + c;
}
