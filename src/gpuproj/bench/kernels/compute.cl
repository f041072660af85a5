/* gpuproj compute-throughput kernels (OpenCL C).
 *
 * Every kernel runs 8 independent dependency chains per work-item (enough instruction-level
 * parallelism to cover the FMA pipeline latency together with the resident warps) and executes
 * UNROLL = 16 steps of all 8 chains per loop iteration, so loop bookkeeping is < 3 % of the
 * issued instructions. Operations per work-item = iters * 16 * 8 * OPS_PER_STEP, where
 * OPS_PER_STEP is 1 for FMA, IMAD, rsqrt and paired FP16 FMA, and 2 for the ADD and MUL kernels
 * (each step adds b and then c = -b, or multiplies by b and then c = 1/b, so values neither
 * overflow nor become denormal, and the compiler cannot fold the pair without fast-math).
 * The integer ADD kernel runs 4 Fibonacci pairs (x += y; y += x): every intermediate value has
 * two uses, so no compiler can merge two adds into one three-input add or a closed form.
 * The chain results are summed and stored so that nothing is dead code.
 *
 * VW (build option -DVW=n, default 1) makes every chain an n-wide vector: a GPU runs VW = 1;
 * CPU runtimes (PoCL) cannot vectorise across work-items around a loop with a run-time trip
 * count, so there each work-item does the vector work itself, n lanes counting as n threads.
 * VW64 (default 1) is the width of the FP64 chains: the host gives them half as many lanes
 * (suite.lane_width), so that they fill the same vector registers.
 * The chains start from out[] (distinct per lane, written by the host) so that no compiler can
 * prove lanes equal and compute one of them.
 */

#include "vector_width.h"

#define C8(S) S(0) S(1) S(2) S(3) S(4) S(5) S(6) S(7)
#define R16(X) X X X X X X X X X X X X X X X X
#define SUM8 (a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7)

/* a * b + c under FP_CONTRACT ON compiles to one fused multiply-add wherever the hardware has
 * one (FFMA, DFMA, HFMA2, vfmadd); the fma() builtin is a slow library call on some CPU runtimes. */
#pragma OPENCL FP_CONTRACT ON
#define FMA_STEP(i) a##i = a##i * b + c;
#define ADD_STEP(i) a##i = a##i + b; a##i = a##i + c;
#define MUL_STEP(i) a##i = a##i * b; a##i = a##i * c;
#define MAD_STEP(i) a##i = a##i * b + c;
#define RSQ_STEP(i) a##i = native_rsqrt(a##i);

/* a_i = seed + i/100, the seed read from out[] so nothing is a compile-time constant */
#define DECL(VT, T, i) VT a##i = seed + (T)(i) * (T)0.01;
#define DECL8(VT, T) DECL(VT, T, 0) DECL(VT, T, 1) DECL(VT, T, 2) DECL(VT, T, 3) \
                     DECL(VT, T, 4) DECL(VT, T, 5) DECL(VT, T, 6) DECL(VT, T, 7)

/* VT: the chains' (vector) type, V(T) or V64(T) */
#define FLOAT_KERNEL(NAME, T, VT, STEP)                                          \
__kernel void NAME(__global VT* out, uint iters, T b, T c)                       \
{                                                                                \
    size_t gid = get_global_id(0);                                               \
    VT seed = out[gid];                                                          \
    DECL8(VT, T)                                                                 \
    for (uint it = 0; it < iters; ++it) {                                        \
        R16(C8(STEP))                                                            \
    }                                                                            \
    out[gid] = SUM8 * (T)0.125;  /* the mean, so the next run starts near 1 again */ \
}

FLOAT_KERNEL(fp32_fma, float, V(float), FMA_STEP)
FLOAT_KERNEL(fp32_add, float, V(float), ADD_STEP)
FLOAT_KERNEL(fp32_mul, float, V(float), MUL_STEP)
FLOAT_KERNEL(sfu_rsqrt, float, V(float), RSQ_STEP)

#if defined(cl_khr_fp64) || defined(__opencl_c_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
FLOAT_KERNEL(fp64_fma, double, V64(double), FMA_STEP)
FLOAT_KERNEL(fp64_add, double, V64(double), ADD_STEP)
FLOAT_KERNEL(fp64_mul, double, V64(double), MUL_STEP)
#endif

#ifdef cl_khr_fp16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
/* Paired FP16: one half2 FMA is two FMAs (4 FLOP). b and c arrive as the bits of a half2. */
__kernel void fp16x2_fma(__global half2* out, uint iters, uint bbits, uint cbits)
{
    size_t gid = get_global_id(0);
    half2 b = as_half2(bbits), c = as_half2(cbits);
    half2 s = out[gid];
#define H2DECL(i) half2 a##i = s + (half2)((half)(i) * (half)0.01, (half)0.5);
    C8(H2DECL)
    for (uint it = 0; it < iters; ++it) {
        R16(C8(FMA_STEP))
    }
    out[gid] = SUM8;
}
#endif

/* INT32 multiply-add: 2 operations per IMAD. Unsigned, so overflow wraps (defined). */
__kernel void int32_mad(__global V(uint)* out, uint iters, uint b, uint c)
{
    size_t gid = get_global_id(0);
    V(uint) seed = out[gid];
#define IDECL(i) V(uint) a##i = seed + (uint)(i);
    C8(IDECL)
    for (uint it = 0; it < iters; ++it) {
        R16(C8(MAD_STEP))
    }
    out[gid] = SUM8;
}

/* INT32 add: four Fibonacci pairs, 8 adds per step of the pairs, 128 per loop iteration. */
#define FIB(i, j) a##i += a##j; a##j += a##i;
__kernel void int32_add(__global V(uint)* out, uint iters, uint b, uint c)
{
    size_t gid = get_global_id(0);
    V(uint) seed = out[gid] + b;
    C8(IDECL)
    for (uint it = 0; it < iters; ++it) {
        R16(FIB(0, 1) FIB(2, 3) FIB(4, 5) FIB(6, 7))
    }
    out[gid] = SUM8 + c;
}
