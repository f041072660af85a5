/* Vector-width macros shared by compute.cl and mixbench.cl (gpuproj inlines this file where
 * a kernel source says #include "vector_width.h", so no include path is needed).
 *
 * VW (build option -DVW=n, default 1): V(float) is float at VW = 1, floatn otherwise.
 * VW64 (default 1): the same for the FP64 chains, V64(double).
 */

#ifndef VW
#define VW 1
#endif
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#if VW == 1
#define V(T) T
#else
#define V(T) CAT(T, VW)
#endif
#ifndef VW64
#define VW64 1
#endif
#if VW64 == 1
#define V64(T) T
#else
#define V64(T) CAT(T, VW64)
#endif
