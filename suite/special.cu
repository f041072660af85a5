// Kernels dominated by special functions: x <- f(x) repeated ITERS times per element for
// f in {division, sqrt, exp, log, sin}, in FP32 and FP64 (each element writes the sum of its
// iterates, a checksum the result check needs: ref.h) (default precise math: no
// --use_fast_math), so that the SASS of each GPU shows how it implements the function
// (MUFU plus Newton steps in FP32, DFMA sequences and polynomials in FP64).
//   sizes: small 2^20 elements, large 2^24 elements; ITERS = 32
#include "common.cuh"
#include "ref.h"

using namespace suite;

static const std::vector<std::string> SIZES = {"check", "small", "large"};
static const std::vector<std::string> TIMED = {"small", "large"};
static size_t nel(const std::string& s) { return s == "check" ? 4096 : s == "small" ? (1u << 20) : (1u << 24); }
static std::string cfg_of(const std::string& s) { return "N=" + std::to_string(nel(s)) + ",iters=32"; }
constexpr int ITERS = 32;

template <typename T, int OP>
__device__ __forceinline__ T step(T x) {
  if (OP == ref::SF_DIV) return (T)1.25 / (x + (T)1.5);
  if (OP == ref::SF_SQRT) return sqrt(x + (T)1.0);
  if (OP == ref::SF_EXP) return exp(-x);
  if (OP == ref::SF_LOG) return log(x + (T)2.0);
  return sin(x) + (T)0.5;
}
template <typename T, int OP>
__device__ __forceinline__ void body(const T* x, T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  T v = x[i], sum = (T)0;
  // the checksum (ref.h: the maps contract, so the last x alone cannot show 32 iterations)
#pragma unroll 4
  for (int r = 0; r < ITERS; ++r) {
    v = step<T, OP>(v);
    sum += v;
  }
  y[i] = sum;
}
#define SF(name, op)                                                                              \
  __global__ void sf_##name##_fp32(const float* x, float* y, int n) { body<float, op>(x, y, n); } \
  __global__ void sf_##name##_fp64(const double* x, double* y, int n) { body<double, op>(x, y, n); }
SF(div, ref::SF_DIV)
SF(sqrt, ref::SF_SQRT)
SF(exp, ref::SF_EXP)
SF(log, ref::SF_LOG)
SF(sin, ref::SF_SIN)

template <typename T>
using Kern = void (*)(const T*, T*, int);
static Kern<float> K32[] = {sf_div_fp32, sf_sqrt_fp32, sf_exp_fp32, sf_log_fp32, sf_sin_fp32};
static Kern<double> K64[] = {sf_div_fp64, sf_sqrt_fp64, sf_exp_fp64, sf_log_fp64, sf_sin_fp64};

template <typename T>
static void case_sf(Ctx& ctx, const std::string& size, int op) {
  bool f32 = sizeof(T) == 4;
  std::string kernel = std::string("sf_") + ref::special_name(op) + (f32 ? "_fp32" : "_fp64");
  size_t n = nel(size);
  std::string cfg = cfg_of(size);
  if (!ctx.fits(kernel, cfg, 2.0 * sizeof(T) * n)) return;
  DevBuf<T> x(n), y(n);
  fill_uniform(x, ctx.seed, 0.0, 1.0);
  dim3 g(cdiv(n, 256)), b(256);
  auto run = [&] {
    if constexpr (sizeof(T) == 4) launch(K32[op], g, b, 0, (const float*)x.p, y.p, (int)n);
    else launch(K64[op], g, b, 0, (const double*)x.p, y.p, (int)n);
  };
  if (ctx.checking) {
    y.poison();
    run();
    // the checksum of the 32 iterates: CUDA's precise functions are within a few ulp and the
    // steps contract, so the sum stays within about 1e-6 (FP32); one iteration fewer, or a
    // constant, is off by 1e-3 or more (tests/test_suite_build.py, special_check_power)
    ctx.report_check(kernel, cfg, rel_err(y.host(), ref::special(x.host(), op, ITERS)), f32 ? 1e-5 : 1e-13);
    return;
  }
  Rec r;
  r.kernel = r.function = kernel;
  r.size = size, r.config = cfg, r.dtype = f32 ? "fp32" : "fp64";
  auto c = ref::c_special(n, op, ITERS, sizeof(T));
  r.flops = c.flops, r.dram_bytes = c.dram_bytes, r.working_set_bytes = c.working_set_bytes;
  r.grid = g, r.block = b;
  ctx.measure(r, run);
}

int main(int argc, char** argv) {
  std::vector<Case> cases;
  for (int prec = 0; prec < 2; ++prec)
    for (int op = 0; op < ref::SF_COUNT; ++op) {
      std::string k = std::string("sf_") + ref::special_name(op) + (prec ? "_fp64" : "_fp32");
      cases.push_back({k,
                       [op, prec](Ctx& c, const std::string& s) {
                         if (prec) case_sf<double>(c, s, op);
                         else case_sf<float>(c, s, op);
                       },
                       TIMED, "check", cfg_of});
    }
  return family_main(argc, argv, "special", SIZES, cases);
}
