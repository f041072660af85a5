// Jacobi stencils in FP32 and FP64: 5-point 2-D and 7-point 3-D, one point per thread,
// out = c0*x + c1*(sum of neighbours) on the interior, boundary copied.
//   2-D: small 1024^2, medium 4096^2, large 8192^2     3-D: small 128^3, medium 256^3, large 512^3
#include "common.cuh"
#include "ref.h"

using namespace suite;

static const std::vector<std::string> SIZES = {"check", "small", "medium", "large"};
static const std::vector<std::string> TIMED = {"small", "medium", "large"};
static size_t n2(const std::string& s) { return s == "small" ? 1024 : s == "medium" ? 4096 : 8192; }
static size_t n3(const std::string& s) { return s == "small" ? 128 : s == "medium" ? 256 : 512; }
// check sizes are small and not square, so swapped indices fail
static const size_t CHK2[2] = {29, 37}, CHK3[3] = {9, 11, 13};  // (ny, nx), (nz, ny, nx)
static std::string cfg2(const std::string& s) {
  return s == "check" ? "37x29" : std::to_string(n2(s)) + "x" + std::to_string(n2(s));
}
static std::string cfg3(const std::string& s) {
  return s == "check" ? "13x11x9" : std::to_string(n3(s)) + "x" + std::to_string(n3(s)) + "x" + std::to_string(n3(s));
}
static const double C0 = 0.5, C1 = 0.125;

template <typename T>
__device__ __forceinline__ void st2d(const T* x, T* o, int ny, int nx, T c0, T c1) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= nx || j >= ny) return;
  size_t p = (size_t)j * nx + i;
  if (i == 0 || j == 0 || i == nx - 1 || j == ny - 1) {
    o[p] = x[p];
    return;
  }
  T s = x[p - 1] + x[p + 1] + x[p - nx] + x[p + nx];
  o[p] = c1 * s + c0 * x[p];
}
template <typename T>
__device__ __forceinline__ void st3d(const T* x, T* o, int nz, int ny, int nx, T c0, T c1) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y, k = blockIdx.z;
  if (i >= nx || j >= ny || k >= nz) return;
  size_t sy = nx, sz = (size_t)nx * ny, p = k * sz + j * sy + i;
  if (i == 0 || j == 0 || k == 0 || i == nx - 1 || j == ny - 1 || k == nz - 1) {
    o[p] = x[p];
    return;
  }
  T s = x[p - 1] + x[p + 1] + x[p - sy] + x[p + sy] + x[p - sz] + x[p + sz];
  o[p] = c1 * s + c0 * x[p];
}
__global__ void stencil2d5_fp32(const float* x, float* o, int ny, int nx, float c0, float c1) { st2d(x, o, ny, nx, c0, c1); }
__global__ void stencil2d5_fp64(const double* x, double* o, int ny, int nx, double c0, double c1) { st2d(x, o, ny, nx, c0, c1); }
__global__ void stencil3d7_fp32(const float* x, float* o, int nz, int ny, int nx, float c0, float c1) { st3d(x, o, nz, ny, nx, c0, c1); }
__global__ void stencil3d7_fp64(const double* x, double* o, int nz, int ny, int nx, double c0, double c1) { st3d(x, o, nz, ny, nx, c0, c1); }

template <typename T>
static void case_st(Ctx& ctx, const std::string& size, bool three) {
  bool f32 = sizeof(T) == 4;
  std::string kernel = std::string(three ? "stencil3d7_" : "stencil2d5_") + (f32 ? "fp32" : "fp64");
  std::string cfg = three ? cfg3(size) : cfg2(size);
  bool chk = size == "check";
  size_t nz = three ? (chk ? CHK3[0] : n3(size)) : 1;
  size_t ny = three ? (chk ? CHK3[1] : n3(size)) : (chk ? CHK2[0] : n2(size));
  size_t nx = three ? (chk ? CHK3[2] : n3(size)) : (chk ? CHK2[1] : n2(size));
  size_t pts = nx * ny * nz;
  if (!ctx.fits(kernel, cfg, 2.0 * sizeof(T) * pts)) return;
  DevBuf<T> x(pts), o(pts);
  fill_uniform(x, ctx.seed);
  dim3 b(32, 8), g(cdiv(nx, 32), cdiv(ny, 8), (unsigned)nz);
  T c0 = (T)C0, c1 = (T)C1;
  auto run = [&] {
    if (three && f32) launch(stencil3d7_fp32, g, b, 0, (const float*)x.p, (float*)o.p, (int)nz, (int)ny, (int)nx, (float)c0, (float)c1);
    else if (three) launch(stencil3d7_fp64, g, b, 0, (const double*)x.p, (double*)o.p, (int)nz, (int)ny, (int)nx, (double)c0, (double)c1);
    else if (f32) launch(stencil2d5_fp32, g, b, 0, (const float*)x.p, (float*)o.p, (int)ny, (int)nx, (float)c0, (float)c1);
    else launch(stencil2d5_fp64, g, b, 0, (const double*)x.p, (double*)o.p, (int)ny, (int)nx, (double)c0, (double)c1);
  };
  if (ctx.checking) {
    o.poison();
    run();
    auto hx = x.host();
    auto want = three ? ref::stencil3d7(hx, nz, ny, nx, C0, C1) : ref::stencil2d5(hx, ny, nx, C0, C1);
    ctx.report_check(kernel, cfg, rel_err(o.host(), want), f32 ? 1e-6 : 1e-14);
    return;
  }
  Rec r;
  r.kernel = r.function = kernel;
  r.size = size, r.config = cfg, r.dtype = f32 ? "fp32" : "fp64";
  auto c = three ? ref::c_stencil3d7(nz, ny, nx, sizeof(T)) : ref::c_stencil2d5(ny, nx, sizeof(T));
  r.flops = c.flops, r.dram_bytes = c.dram_bytes, r.working_set_bytes = c.working_set_bytes;
  r.grid = g, r.block = b;
  ctx.measure(r, run);
}

int main(int argc, char** argv) {
  std::vector<Case> cases = {
      {"stencil2d5_fp32", [](Ctx& c, const std::string& s) { case_st<float>(c, s, false); }, TIMED, "check", cfg2},
      {"stencil2d5_fp64", [](Ctx& c, const std::string& s) { case_st<double>(c, s, false); }, TIMED, "check", cfg2},
      {"stencil3d7_fp32", [](Ctx& c, const std::string& s) { case_st<float>(c, s, true); }, TIMED, "check", cfg3},
      {"stencil3d7_fp64", [](Ctx& c, const std::string& s) { case_st<double>(c, s, true); }, TIMED, "check", cfg3},
  };
  return family_main(argc, argv, "stencil", SIZES, cases);
}
