// The 16 kernels of the Srivastava et al. report (its "Benchmark Kernels" table) at the four
// problem sizes of its Table 2 (Small, Medium, Large, XLarge). FP32 data.
//   1-D (N elements):   262,144   1,048,576   4,194,304   16,777,216
//   2-D (rows x cols):  512^2     1024^2      2048^2      4096^2
//   matmul (N x N):     256       512         1024        2048
// Launch shapes follow the report's data (256 threads per block for 1-D kernels and
// 16 x 16 for the 2-D ones, 32 x 32 for the tiled matmul and the shared transpose).
#include "common.cuh"
#include "ref.h"

using namespace suite;

static const std::vector<std::string> SIZES = {"small", "medium", "large", "xlarge"};
static size_t n1d(const std::string& s) {
  return s == "small" ? 262144 : s == "medium" ? 1048576 : s == "large" ? 4194304 : 16777216;
}
static size_t n2d(const std::string& s) {
  return s == "small" ? 512 : s == "medium" ? 1024 : s == "large" ? 2048 : 4096;
}
static size_t nmm(const std::string& s) {
  return s == "small" ? 256 : s == "medium" ? 512 : s == "large" ? 1024 : 2048;
}

// ------------------------------------------------------------------ kernels

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

__global__ void vector_add_divergent(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    if (i % 2 == 0) c[i] = a[i] + b[i];
    else c[i] = a[i] - b[i];
  }
}

__global__ void saxpy(float alpha, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = alpha * x[i] + y[i];
}

__global__ void strided_copy_8(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  // neighbouring threads read 8 elements (32 bytes) apart: each warp touches 8x the lines
  if (i < n) out[i] = in[(i % (n / 8)) * 8 + i / (n / 8)];
}

__global__ void random_access(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[(unsigned)(((unsigned long long)i * 2654435761ull + 12345ull) & (unsigned)(n - 1))];
}

// thread x runs along a row: reads coalesced, writes strided by `rows`
__global__ void naive_transpose(const float* in, float* out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) out[(size_t)c * rows + r] = in[(size_t)r * cols + c];
}

// 32 x 33 tile: the padding column keeps the column reads free of bank conflicts
__global__ void shared_transpose(const float* in, float* out, int rows, int cols) {
  __shared__ float tile[32][33];
  int c = blockIdx.x * 32 + threadIdx.x, r = blockIdx.y * 32 + threadIdx.y;
  if (r < rows && c < cols) tile[threadIdx.y][threadIdx.x] = in[(size_t)r * cols + c];
  __syncthreads();
  int oc = blockIdx.y * 32 + threadIdx.x, orow = blockIdx.x * 32 + threadIdx.y;
  if (orow < cols && oc < rows) out[(size_t)orow * rows + oc] = tile[threadIdx.x][threadIdx.y];
}

__global__ void matmul_naive(const float* a, const float* b, float* c, int n) {
  int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < n && col < n) {
    float s = 0.0f;
    for (int k = 0; k < n; ++k) s += a[row * n + k] * b[k * n + col];
    c[row * n + col] = s;
  }
}

constexpr int TILE = 32;
__global__ void matmul_tiled(const float* a, const float* b, float* c, int n) {
  __shared__ float ta[TILE][TILE], tb[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  float s = 0.0f;
  for (int k0 = 0; k0 < n; k0 += TILE) {
    ta[ty][tx] = (row < n && k0 + tx < n) ? a[row * n + k0 + tx] : 0.0f;
    tb[ty][tx] = (k0 + ty < n && col < n) ? b[(k0 + ty) * n + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) s += ta[ty][k] * tb[k][tx];
    __syncthreads();
  }
  if (row < n && col < n) c[row * n + col] = s;
}

__constant__ float c_w3[9];
__constant__ float c_w7[49];
__global__ void conv2d_3x3(const float* in, float* out, int rows, int cols) {
  constexpr int K = 3;
  int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= rows || c >= cols) return;
  float s = 0.0f;
#pragma unroll
  for (int dr = -K / 2; dr <= K / 2; ++dr)
#pragma unroll
    for (int dc = -K / 2; dc <= K / 2; ++dc) {
      int rr = r + dr, cc = c + dc;
      float v = (rr >= 0 && rr < rows && cc >= 0 && cc < cols) ? in[rr * cols + cc] : 0.0f;
      s += c_w3[(dr + K / 2) * K + (dc + K / 2)] * v;
    }
  out[r * cols + c] = s;
}
__global__ void conv2d_7x7(const float* in, float* out, int rows, int cols) {
  constexpr int K = 7;
  int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= rows || c >= cols) return;
  float s = 0.0f;
#pragma unroll
  for (int dr = -K / 2; dr <= K / 2; ++dr)
#pragma unroll
    for (int dc = -K / 2; dc <= K / 2; ++dc) {
      int rr = r + dr, cc = c + dc;
      float v = (rr >= 0 && rr < rows && cc >= 0 && cc < cols) ? in[rr * cols + cc] : 0.0f;
      s += c_w7[(dr + K / 2) * K + (dc + K / 2)] * v;
    }
  out[r * cols + c] = s;
}

// shared-memory tree per block of 256, one atomicAdd of the block's sum
__global__ void reduce_sum(const float* x, float* out, int n) {
  __shared__ float s[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int h = blockDim.x / 2; h > 0; h >>= 1) {
    if (threadIdx.x < h) s[threadIdx.x] += s[threadIdx.x + h];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, s[0]);
}

__global__ void dot_product(const float* x, const float* y, float* out, int n) {
  __shared__ float s[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? x[i] * y[i] : 0.0f;
  __syncthreads();
  for (int h = blockDim.x / 2; h > 0; h >>= 1) {
    if (threadIdx.x < h) s[threadIdx.x] += s[threadIdx.x + h];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, s[0]);
}

// per-block private histogram in shared memory, merged with global atomics
__global__ void histogram(const int* x, unsigned* bins, int n) {
  __shared__ unsigned h[ref::HIST_BINS];
  for (int b = threadIdx.x; b < ref::HIST_BINS; b += blockDim.x) h[b] = 0;
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&h[x[i] & (ref::HIST_BINS - 1)], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < ref::HIST_BINS; b += blockDim.x)
    if (h[b]) atomicAdd(&bins[b], h[b]);
}

// every thread adds 1 to the same word, HOTSPOT_ITERS times. What the hardware runs is
// warp-aggregated: nvcc turns each atomicAdd of a warp-uniform address with an unused result
// into VOTEU.ANY + POPC and one RED.ADD of the active-lane count by the leader lane (sm_90
// SASS: 50 x @P0 REDG.E.ADD.STRONG.GPU), so n/32 x 50 atomics serialise at one L2 address,
// not n x 50. Kept as is: it is what the report's source compiles to on these GPUs too
// (docs/suite.md, "atomic_hotspot").
__global__ void atomic_hotspot(unsigned* counter, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    for (int r = 0; r < ref::HOTSPOT_ITERS; ++r) atomicAdd(counter, 1u);
}

// reads smem[(t*32 + r) % 1024]: the 32 threads of a warp hit one bank (32-way conflict)
__global__ void shared_bank_conflict(const float* in, float* out, int n) {
  __shared__ float s[ref::BANK_BLOCK];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  float acc = 0.0f;
#pragma unroll
  for (int r = 0; r < ref::BANK_READS; ++r) acc += s[(threadIdx.x * 32 + r) % ref::BANK_BLOCK];
  if (i < n) out[i] = acc;
}

// ------------------------------------------------------------------ cases

static std::string cfg1d(const std::string& s) { return "N=" + std::to_string(n1d(s)); }
static std::string cfg2d(const std::string& s) {
  return std::to_string(n2d(s)) + "x" + std::to_string(n2d(s));
}
static std::string cfgmm(const std::string& s) { return "N=" + std::to_string(nmm(s)); }

static Rec rec(const char* kernel, const std::string& size, std::string config, ref::Counts c,
               dim3 g, dim3 b, size_t smem = 0) {
  Rec r;
  r.kernel = r.function = kernel;
  r.size = size;
  r.config = config;
  r.dtype = "fp32";
  r.flops = c.flops;
  r.dram_bytes = c.dram_bytes;
  r.working_set_bytes = c.working_set_bytes;
  r.grid = g;
  r.block = b;
  r.smem_bytes = smem;
  return r;
}

// elementwise 1-D kernels of two inputs and one output
static void case_vec(Ctx& ctx, const std::string& size, const char* name) {
  size_t n = n1d(size);
  std::string cfg = cfg1d(size);
  if (!ctx.fits(name, cfg, 12.0 * n)) return;
  DevBuf<float> a(n), b(n), c(n);
  fill_uniform(a, ctx.seed);
  fill_uniform(b, ctx.seed);
  dim3 g(cdiv(n, 256)), bl(256);
  std::string k = name;
  const float alpha = 1.75f;
  auto run = [&] {
    if (k == "vector_add") launch(vector_add, g, bl, 0, a.p, b.p, c.p, (int)n);
    else if (k == "vector_add_divergent") launch(vector_add_divergent, g, bl, 0, a.p, b.p, c.p, (int)n);
    else if (k == "saxpy") launch(saxpy, g, bl, 0, alpha, a.p, b.p, (int)n);
    else if (k == "strided_copy_8") launch(strided_copy_8, g, bl, 0, (const float*)a.p, c.p, (int)n);
    else if (k == "random_access") launch(random_access, g, bl, 0, (const float*)a.p, c.p, (int)n);
    else launch(shared_bank_conflict, dim3(cdiv(n, ref::BANK_BLOCK)), dim3(ref::BANK_BLOCK), 0,
                (const float*)a.p, c.p, (int)n);
  };
  if (ctx.checking) {
    c.poison();
    auto hb0 = b.host();
    run();
    CK(cudaDeviceSynchronize());
    auto ha = a.host();
    ref::vec want;
    std::vector<float> got;
    if (k == "vector_add") want = ref::vector_add(ha, hb0), got = c.host();
    else if (k == "vector_add_divergent") want = ref::vector_add_divergent(ha, hb0), got = c.host();
    else if (k == "saxpy") want = ref::saxpy(alpha, ha, hb0), got = b.host();
    else if (k == "strided_copy_8") want = ref::strided_copy_8(ha), got = c.host();
    else if (k == "random_access") want = ref::random_access(ha), got = c.host();
    else want = ref::shared_bank_conflict(ha), got = c.host();
    // one rounding per element, except the 32-term sums of shared_bank_conflict
    ctx.report_check(k, cfg, rel_err(got, want), k == "shared_bank_conflict" ? 1e-5 : 1e-6);
    return;
  }
  ref::Counts cn = k == "saxpy" ? ref::c_saxpy(n)
                   : (k == "strided_copy_8" || k == "random_access") ? ref::c_copy(n)
                   : k == "shared_bank_conflict" ? ref::c_shared_bank_conflict(n)
                                                 : ref::c_vector_add(n);
  bool bank = k == "shared_bank_conflict";
  ctx.measure(rec(name, size, cfg, cn, bank ? dim3(cdiv(n, ref::BANK_BLOCK)) : g,
                  bank ? dim3(ref::BANK_BLOCK) : bl, bank ? 4 * ref::BANK_BLOCK : 0),
              run);
}

static void case_transpose(Ctx& ctx, const std::string& size, const char* name) {
  size_t n = n2d(size);
  std::string cfg = cfg2d(size), k = name;
  if (!ctx.fits(name, cfg, 8.0 * n * n)) return;
  DevBuf<float> in(n * n), out(n * n);
  fill_uniform(in, ctx.seed);
  bool naive = k == "naive_transpose";
  dim3 bl = naive ? dim3(16, 16) : dim3(32, 32);
  dim3 g(cdiv(n, bl.x), cdiv(n, bl.y));
  auto run = [&] {
    if (naive) launch(naive_transpose, g, bl, 0, (const float*)in.p, out.p, (int)n, (int)n);
    else launch(shared_transpose, g, bl, 0, (const float*)in.p, out.p, (int)n, (int)n);
  };
  if (ctx.checking) {
    out.poison();
    run();
    ctx.report_check(k, cfg, rel_err(out.host(), ref::transpose(in.host(), n, n)), 0);
    return;
  }
  ctx.measure(rec(name, size, cfg, ref::c_copy(n * n), g, bl, naive ? 0 : 32 * 33 * 4), run);
}

static void case_matmul(Ctx& ctx, const std::string& size, const char* name) {
  size_t n = nmm(size);
  std::string cfg = cfgmm(size), k = name;
  if (!ctx.fits(name, cfg, 12.0 * n * n)) return;
  DevBuf<float> a(n * n), b(n * n), c(n * n);
  fill_uniform(a, ctx.seed);
  fill_uniform(b, ctx.seed);
  bool naive = k == "matmul_naive";
  dim3 bl = naive ? dim3(16, 16) : dim3(TILE, TILE);
  dim3 g(cdiv(n, bl.x), cdiv(n, bl.y));
  auto run = [&] {
    if (naive) launch(matmul_naive, g, bl, 0, (const float*)a.p, (const float*)b.p, c.p, (int)n);
    else launch(matmul_tiled, g, bl, 0, (const float*)a.p, (const float*)b.p, c.p, (int)n);
  };
  if (ctx.checking) {
    c.poison();
    run();
    ctx.report_check(k, cfg, rel_err(c.host(), ref::matmul(a.host(), b.host(), n, n, n)), 1e-5);
    return;
  }
  ctx.measure(rec(name, size, cfg, ref::c_matmul(n), g, bl, naive ? 0 : 2 * TILE * TILE * 4), run);
}

static void case_conv(Ctx& ctx, const std::string& size, int K) {
  size_t n = n2d(size);
  std::string cfg = cfg2d(size), k = K == 3 ? "conv2d_3x3" : "conv2d_7x7";
  if (!ctx.fits(k, cfg, 8.0 * n * n)) return;
  DevBuf<float> in(n * n), out(n * n);
  fill_uniform(in, ctx.seed);
  // weights: a fixed normalised pattern (sum 1), uploaded to constant memory
  std::vector<float> w(K * K);
  for (int i = 0; i < K * K; ++i) w[i] = (float)(1 + (i * 7) % 5) / (3.0f * K * K);
  if (K == 3) CK(cudaMemcpyToSymbol(c_w3, w.data(), sizeof(float) * 9));
  else CK(cudaMemcpyToSymbol(c_w7, w.data(), sizeof(float) * 49));
  dim3 bl(16, 16), g(cdiv(n, 16), cdiv(n, 16));
  auto run = [&] {
    if (K == 3) launch(conv2d_3x3, g, bl, 0, (const float*)in.p, out.p, (int)n, (int)n);
    else launch(conv2d_7x7, g, bl, 0, (const float*)in.p, out.p, (int)n, (int)n);
  };
  if (ctx.checking) {
    out.poison();
    run();
    ctx.report_check(k, cfg, rel_err(out.host(), ref::conv2d(in.host(), n, n, w, K)), 1e-5);
    return;
  }
  ctx.measure(rec(k.c_str(), size, cfg, ref::c_conv2d(n, n, K), g, bl), run);
}

// the check size of reduce_sum/dot_product: not a multiple of the 256-thread block, so the
// last block's tail (i >= n loads 0) runs, and small enough that one element is visible
static const size_t REDUCE_CHECK_N = 100003;

static void case_reduce(Ctx& ctx, const std::string& size, const char* name) {
  size_t n = ctx.checking ? REDUCE_CHECK_N : n1d(size);
  std::string cfg = ctx.checking ? "N=" + std::to_string(n) : cfg1d(size), k = name;
  bool dot = k == "dot_product";
  if (!ctx.fits(name, cfg, 8.0 * n)) return;
  DevBuf<float> x(n), y(dot ? n : 1), out(1);
  fill_uniform(x, ctx.seed);
  if (dot) fill_uniform(y, ctx.seed);
  dim3 g(cdiv(n, 256)), bl(256);
  // the result accumulates into out; zeroing it is a memset (no kernel), outside the timing
  auto run = [&] {
    if (dot) launch(dot_product, g, bl, 0, (const float*)x.p, (const float*)y.p, out.p, (int)n);
    else launch(reduce_sum, g, bl, 0, (const float*)x.p, out.p, (int)n);
  };
  if (ctx.checking) {
    // 1. exact: integer inputs in +-[1, 8] (products up to 64): every partial sum is an
    //    integer below 2^24, so float32 adds them exactly in any order and a lost element,
    //    warp or block changes the result by at least 1
    uint64_t s = ctx.seed;
    std::vector<float> ix(n), iy(dot ? n : 1);
    for (auto* v : {&ix, &iy})
      for (size_t i = 0; i < v->size(); ++i) {
        uint64_t h = mix64(next_seed(s));
        (*v)[i] = (float)(1 + (int)(h % 8)) * ((h >> 8) & 1 ? 1.0f : -1.0f);
      }
    x.upload(ix);
    if (dot) y.upload(iy);
    out.zero();
    run();
    double want = dot ? ref::dot(ix, iy) : ref::sum(ix), got = out.host()[0];
    ctx.report_exact(k, cfg + ",exact", got == want ? 0 : 1);
    // 2. random inputs in [-1, 1): |error| against 10 standard deviations of float32's
    //    rounding in the kernels' order (each add errs by at most u = 2^-24 times its
    //    result, independently): the products (dot), the partial sums of each block's
    //    256-wide tree, and the running sums of the atomics over the block sums b_1..b_B, in
    //    an unknown order (2x the index order's prefix sums plus B sum b^2). About 5e-8 of
    //    sum|x| here, 10x the largest error of a float32 simulation of this order, while a
    //    lost element (about 1e-5 of sum|x|), warp or block fails (/tmp/fix_suite.md)
    fill_uniform(x, ctx.seed);
    if (dot) fill_uniform(y, ctx.seed);
    out.zero();
    run();
    auto hx = x.host();
    auto hy = y.host();
    std::vector<double> t(g.x * 256, 0.0);
    double mag = 0, var = 0, prefix = 0;
    for (size_t i = 0; i < n; ++i) {
      t[i] = (double)hx[i] * (dot ? hy[i] : 1.0f);
      mag += std::fabs(t[i]), var += t[i] * t[i];
    }
    for (size_t blk = 0; blk < g.x; ++blk) {
      double* s = &t[blk * 256];
      for (int h = 128; h > 0; h >>= 1)
        for (int q = 0; q < h; ++q) s[q] += s[q + h], var += s[q] * s[q];
      prefix += s[0];
      var += 2 * prefix * prefix + g.x * s[0] * s[0];
    }
    const double u = 1.0 / 16777216.0;
    double tol = 10 * u * std::sqrt(var) / mag;
    want = dot ? ref::dot(hx, hy) : ref::sum(hx), got = out.host()[0];
    ctx.report_check(k, cfg, std::isfinite(got) ? std::fabs(got - want) / mag : INFINITY, tol);
    return;
  }
  ctx.measure(rec(name, size, cfg, dot ? ref::c_dot(n) : ref::c_reduce_sum(n), g, bl, 256 * 4), run);
}

static void case_atomic(Ctx& ctx, const std::string& size, const char* name) {
  size_t n = n1d(size);
  std::string cfg = cfg1d(size), k = name;
  bool hist = k == "histogram";
  if (!ctx.fits(name, cfg, 4.0 * n)) return;
  DevBuf<int> x(hist ? n : 1);
  DevBuf<unsigned> bins(hist ? ref::HIST_BINS : 1);
  if (hist) fill_int(x, ctx.seed, 0, ref::HIST_BINS - 1);
  bins.zero();
  dim3 g(cdiv(n, 256)), bl(256);
  auto run = [&] {
    if (hist) launch(histogram, g, bl, 0, (const int*)x.p, bins.p, (int)n);
    else launch(atomic_hotspot, g, bl, 0, bins.p, (int)n);
  };
  if (ctx.checking) {
    run();
    auto got = bins.host();
    long long bad = 0;
    if (hist) {
      auto want = ref::histogram(x.host());
      for (int b = 0; b < ref::HIST_BINS; ++b) bad += got[b] != (unsigned)want[b];
    } else {
      bad = got[0] != (unsigned)(n * ref::HOTSPOT_ITERS);
    }
    ctx.report_exact(k, cfg, bad);
    return;
  }
  ctx.measure(rec(name, size, cfg, hist ? ref::c_histogram(n) : ref::c_atomic_hotspot(n), g, bl,
                  hist ? 4 * ref::HIST_BINS : 0),
              run);
}

int main(int argc, char** argv) {
  std::vector<Case> cases;
  auto add = [&](const char* k, std::function<void(Ctx&, const std::string&)> f,
                 std::string (*cfg)(const std::string&)) {
    cases.push_back({k, f, {}, "small", cfg});
  };
  for (const char* k : {"vector_add", "saxpy", "strided_copy_8"})
    add(k, [k](Ctx& c, const std::string& s) { case_vec(c, s, k); }, cfg1d);
  for (const char* k : {"naive_transpose", "shared_transpose"})
    add(k, [k](Ctx& c, const std::string& s) { case_transpose(c, s, k); }, cfg2d);
  add("random_access", [](Ctx& c, const std::string& s) { case_vec(c, s, "random_access"); }, cfg1d);
  for (const char* k : {"matmul_naive", "matmul_tiled"})
    add(k, [k](Ctx& c, const std::string& s) { case_matmul(c, s, k); }, cfgmm);
  add("conv2d_3x3", [](Ctx& c, const std::string& s) { case_conv(c, s, 3); }, cfg2d);
  add("conv2d_7x7", [](Ctx& c, const std::string& s) { case_conv(c, s, 7); }, cfg2d);
  for (const char* k : {"reduce_sum", "dot_product"})
    add(k, [k](Ctx& c, const std::string& s) { case_reduce(c, s, k); }, cfg1d);
  for (const char* k : {"histogram", "atomic_hotspot"})
    add(k, [k](Ctx& c, const std::string& s) { case_atomic(c, s, k); }, cfg1d);
  for (const char* k : {"vector_add_divergent", "shared_bank_conflict"})
    add(k, [k](Ctx& c, const std::string& s) { case_vec(c, s, k); }, cfg1d);
  return family_main(argc, argv, "srivastava", SIZES, cases);
}
