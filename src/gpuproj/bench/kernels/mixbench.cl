/* gpuproj operational-intensity sweep (mixbench-style), OpenCL C.
 *
 * Each work-item loads 4 elements x[g + j*n] (n = global size, so loads are coalesced), applies
 * K dependent FMAs to each (4 independent chains), and stores them back in place:
 *   FLOP  = 4 * K * 2          (paired FP16: 4 * K * 4, one half2 FMA being 2 FMAs)
 *   bytes = 4 * 2 * sizeof(T)  (one load and one store per element)
 * so the operational intensity is K / sizeof(T) FLOP/byte (K / 2 for half2).
 * MIX_<PREC>(K) instantiates kernel mix_<prec>_<K>; gpuproj appends the instantiations for the
 * K values of a run. a and b keep the values bounded: v -> a v + b converges for |a| < 1.
 * VW and VW64 (build options, default 1), as in compute.cl: on CPU devices every FP32 element
 * is a VW-wide vector and every FP64 element a VW64-wide one (half2 is never widened), so a
 * work-item does that many lanes' work.
 */

#include "vector_width.h"

#pragma OPENCL FP_CONTRACT ON   /* v * a + b is one fused multiply-add */

#define MIX_BODY(T)                                                              \
    size_t g = get_global_id(0), n = get_global_size(0);                         \
    T v0 = x[g], v1 = x[g + n], v2 = x[g + 2 * n], v3 = x[g + 3 * n];            \
    _Pragma("unroll 16")                                                         \
    for (int i = 0; i < MIX_K; ++i) {                                            \
        v0 = v0 * a + b; v1 = v1 * a + b;                                        \
        v2 = v2 * a + b; v3 = v3 * a + b;                                        \
    }                                                                            \
    x[g] = v0; x[g + n] = v1; x[g + 2 * n] = v2; x[g + 3 * n] = v3;

/* MIX_K is a kernel-local constant so each instantiation has a compile-time trip count */
#define MIX_FP32(K) __kernel void mix_fp32_##K(__global V(float)* x, float a, float b) \
    { const int MIX_K = K; MIX_BODY(V(float)) }

#if defined(cl_khr_fp64) || defined(__opencl_c_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define MIX_FP64(K) __kernel void mix_fp64_##K(__global V64(double)* x, double a, double b) \
    { const int MIX_K = K; MIX_BODY(V64(double)) }
#endif

#ifdef cl_khr_fp16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define MIX_FP16X2(K) __kernel void mix_fp16x2_##K(__global half2* x, uint abits, uint bbits) \
    { const int MIX_K = K; half2 a = as_half2(abits), b = as_half2(bbits); MIX_BODY(half2) }
#endif

/* instantiations follow */
