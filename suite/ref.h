// CPU references and analytic counts of the suite kernels. Plain C++ (no CUDA), so the same
// code is compiled by nvcc into the drivers and by g++ into selftest.cpp, which checks it
// against hand-computed values (tests/test_suite_build.py).
//
// References compute in double and return std::vector<double>; inputs are whatever the
// device buffers held (the drivers copy them back). Matrices are row-major.
//
// Counts (struct Counts) are per launch: flops with FMA = 2 and ADD/MUL/DIV/special = 1;
// dram_bytes = fewest bytes that must cross DRAM (each input read once, each output written
// once; an in-place update counts read + write); working_set_bytes = distinct bytes touched.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

// functions shared verbatim by kernels and references are compiled for both sides
#ifdef __CUDACC__
#define REF_HD __host__ __device__
#else
#define REF_HD
#endif

namespace ref {

using vec = std::vector<double>;

struct Counts {
  double flops, dram_bytes, working_set_bytes;
};

// ============================================================ Srivastava et al. kernels

// index maps shared by the kernels and the references (N a power of two for random)
inline size_t strided8_src(size_t i, size_t n) { return (i % (n / 8)) * 8 + i / (n / 8); }
inline size_t random_src(size_t i, size_t n) {
  return (size_t)(((uint64_t)i * 2654435761ull + 12345ull) & (uint64_t)(n - 1));
}
constexpr int HIST_BINS = 256;
constexpr int HOTSPOT_ITERS = 50;
constexpr int BANK_BLOCK = 1024;  // threads per block of shared_bank_conflict
constexpr int BANK_READS = 32;    // shared reads per thread, each a 32-way conflict

template <typename A, typename B>
vec vector_add(const A& a, const B& b) {
  vec c(a.size());
  for (size_t i = 0; i < a.size(); ++i) c[i] = (double)a[i] + (double)b[i];
  return c;
}
// even elements a+b, odd a-b (the branch splits every warp in two)
template <typename A>
vec vector_add_divergent(const A& a, const A& b) {
  vec c(a.size());
  for (size_t i = 0; i < a.size(); ++i) c[i] = i % 2 == 0 ? (double)a[i] + b[i] : (double)a[i] - b[i];
  return c;
}
template <typename A>
vec saxpy(double alpha, const A& x, const A& y) {
  vec r(x.size());
  for (size_t i = 0; i < x.size(); ++i) r[i] = alpha * x[i] + y[i];
  return r;
}
template <typename A>
vec strided_copy_8(const A& in) {
  vec o(in.size());
  for (size_t i = 0; i < in.size(); ++i) o[i] = in[strided8_src(i, in.size())];
  return o;
}
template <typename A>
vec random_access(const A& in) {
  vec o(in.size());
  for (size_t i = 0; i < in.size(); ++i) o[i] = in[random_src(i, in.size())];
  return o;
}
// in: rows x cols -> out: cols x rows
template <typename A>
vec transpose(const A& in, size_t rows, size_t cols) {
  vec o(rows * cols);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) o[c * rows + r] = in[r * cols + c];
  return o;
}
// C (n x m) = A (n x k) * B (k x m)
template <typename A>
vec matmul(const A& a, const A& b, size_t n, size_t k, size_t m) {
  vec c(n * m, 0.0);
  for (size_t i = 0; i < n; ++i)
    for (size_t p = 0; p < k; ++p) {
      double av = a[i * k + p];
      for (size_t j = 0; j < m; ++j) c[i * m + j] += av * b[p * m + j];
    }
  return c;
}
// K x K convolution (cross-correlation) with zero padding, centred
template <typename A, typename W>
vec conv2d(const A& in, size_t rows, size_t cols, const W& w, int k) {
  vec o(rows * cols);
  int h = k / 2;
  for (long r = 0; r < (long)rows; ++r)
    for (long c = 0; c < (long)cols; ++c) {
      double s = 0;
      for (int dr = -h; dr <= h; ++dr)
        for (int dc = -h; dc <= h; ++dc) {
          long rr = r + dr, cc = c + dc;
          if (rr >= 0 && rr < (long)rows && cc >= 0 && cc < (long)cols)
            s += (double)w[(dr + h) * k + (dc + h)] * in[rr * cols + cc];
        }
      o[r * cols + c] = s;
    }
  return o;
}
template <typename A>
double sum(const A& x) {
  double s = 0;
  for (auto v : x) s += v;
  return s;
}
template <typename A>
double dot(const A& x, const A& y) {
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += (double)x[i] * y[i];
  return s;
}
template <typename A>
std::vector<long long> histogram(const A& x) {
  std::vector<long long> h(HIST_BINS, 0);
  for (auto v : x) h[(size_t)v % HIST_BINS]++;
  return h;
}
// thread t of a block sums smem[(t*32 + r) % 1024], r < 32, where smem = its block's inputs
template <typename A>
vec shared_bank_conflict(const A& in) {
  vec o(in.size());
  for (size_t b = 0; b < in.size() / BANK_BLOCK; ++b)
    for (size_t t = 0; t < (size_t)BANK_BLOCK; ++t) {
      double s = 0;
      for (int r = 0; r < BANK_READS; ++r) s += in[b * BANK_BLOCK + (t * 32 + r) % BANK_BLOCK];
      o[b * BANK_BLOCK + t] = s;
    }
  return o;
}

// counts (fp32 data, 4-byte words)
inline Counts c_vector_add(double n) { return {n, 12 * n, 12 * n}; }
inline Counts c_saxpy(double n) { return {2 * n, 12 * n, 8 * n}; }  // y read and written
inline Counts c_copy(double n) { return {0, 8 * n, 8 * n}; }        // strided, random, transposes
inline Counts c_matmul(double n) { return {2 * n * n * n, 12 * n * n, 12 * n * n}; }
inline Counts c_conv2d(double rows, double cols, int k) {
  return {2.0 * k * k * rows * cols, 8 * rows * cols, 8 * rows * cols};
}
inline Counts c_reduce_sum(double n) { return {n - 1, 4 * n + 4, 4 * n + 4}; }
inline Counts c_dot(double n) { return {2 * n - 1, 8 * n + 4, 8 * n + 4}; }
// bins are zero and updated atomically: read once, written once
inline Counts c_histogram(double n) { return {0, 4 * n + 2.0 * 4 * HIST_BINS, 4 * n + 4 * HIST_BINS}; }
inline Counts c_atomic_hotspot(double) { return {0, 8, 4}; }
inline Counts c_shared_bank_conflict(double n) { return {(double)BANK_READS * n, 8 * n, 8 * n}; }

// ============================================================ stencils

// 5-point: o = c0*x + c1*(N+S+E+W) on the interior; boundary copied
template <typename A>
vec stencil2d5(const A& x, size_t ny, size_t nx, double c0, double c1) {
  vec o(nx * ny);
  for (size_t j = 0; j < ny; ++j)
    for (size_t i = 0; i < nx; ++i) {
      size_t p = j * nx + i;
      if (i == 0 || j == 0 || i == nx - 1 || j == ny - 1) o[p] = x[p];
      else o[p] = c0 * x[p] + c1 * ((double)x[p - 1] + x[p + 1] + x[p - nx] + x[p + nx]);
    }
  return o;
}
// 7-point: o = c0*x + c1*(six neighbours) on the interior; boundary copied
template <typename A>
vec stencil3d7(const A& x, size_t nz, size_t ny, size_t nx, double c0, double c1) {
  vec o(nx * ny * nz);
  size_t sx = 1, sy = nx, sz = nx * ny;
  for (size_t k = 0; k < nz; ++k)
    for (size_t j = 0; j < ny; ++j)
      for (size_t i = 0; i < nx; ++i) {
        size_t p = k * sz + j * sy + i;
        if (i == 0 || j == 0 || k == 0 || i == nx - 1 || j == ny - 1 || k == nz - 1) o[p] = x[p];
        else
          o[p] = c0 * x[p] + c1 * ((double)x[p - sx] + x[p + sx] + x[p - sy] + x[p + sy] +
                                   x[p - sz] + x[p + sz]);
      }
  return o;
}
// per interior point: 3 adds of the neighbours, c0*x (1), c1*sum + that (FMA, 2) = 6 flops
inline Counts c_stencil2d5(double ny, double nx, double word) {
  double in = (ny - 2) * (nx - 2);
  return {6 * in, 2 * word * nx * ny, 2 * word * nx * ny};
}
// per interior point: 5 adds + 1 MUL + 1 FMA = 8 flops
inline Counts c_stencil3d7(double nz, double ny, double nx, double word) {
  double in = (nz - 2) * (ny - 2) * (nx - 2);
  return {8 * in, 2 * word * nx * ny * nz, 2 * word * nx * ny * nz};
}

// ============================================================ special functions

// x <- f(x) repeated `iters` times; each map keeps x in a bounded range for x0 in [0, 1].
// Every map contracts to a fixed point (after 32 steps x is one constant for every x0), so the
// kernels return a per-element checksum, the sum of the iterates x_1 + ... + x_iters, which
// the result check can tell from a constant or from fewer iterations (one step less changes
// it by about 1/iters). The timed chain is x <- f(x); the sum only makes it checkable.
enum SpecialOp { SF_DIV = 0, SF_SQRT, SF_EXP, SF_LOG, SF_SIN, SF_COUNT };
inline const char* special_name(int op) {
  static const char* n[] = {"div", "sqrt", "exp", "log", "sin"};
  return n[op];
}
// flops per iteration: div: add + div; sqrt: add + sqrt; exp: exp (of -x); log: add + log;
// sin: sin + add; each plus the checksum's add
inline int special_flops(int op) {
  static const int f[] = {3, 3, 2, 3, 3};
  return f[op];
}
inline double special_step(int op, double x) {
  switch (op) {
    case SF_DIV: return 1.25 / (x + 1.5);
    case SF_SQRT: return std::sqrt(x + 1.0);
    case SF_EXP: return std::exp(-x);
    case SF_LOG: return std::log(x + 2.0);
    default: return std::sin(x) + 0.5;
  }
}
// x_iters, the end of the chain (the fixed point, for large iters)
inline double special_last(int op, double x, int iters) {
  for (int r = 0; r < iters; ++r) x = special_step(op, x);
  return x;
}
// what the kernels write: the checksum x_1 + ... + x_iters of each element
template <typename A>
vec special(const A& x, int op, int iters) {
  vec o(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    double v = x[i], sum = 0;
    for (int r = 0; r < iters; ++r) {
      v = special_step(op, v);
      sum += v;
    }
    o[i] = sum;
  }
  return o;
}
inline Counts c_special(double n, int op, int iters, double word) {
  return {n * iters * special_flops(op), 2 * word * n, 2 * word * n};
}

// ============================================================ divergent Monte-Carlo walk

// A particle walk per thread: each step draws two numbers, moves x by (2u-1)*step, weighs
// w *= 0.9, and ends with probability p_end. The number of steps differs per thread, so the
// threads of a warp leave the loop at different times (few active threads per warp).
// Only threads whose lane is a multiple of `lane_stride` walk (1: every thread).
// Random numbers come from hashing (seed, thread, step) in 32-bit integer arithmetic
// so that the GPU and this reference draw exactly the same sequence.
REF_HD inline uint32_t hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  x ^= x >> 16;
  return x;
}
REF_HD inline float u01(uint32_t h) { return (float)(h >> 8) * (1.0f / 16777216.0f); }
constexpr int MC_MAX_STEPS = 4096;
// flops per step as written in the kernel: two draws u01() (a multiply each, 2), 2u-1 (FMA, 2),
// x += d*step (FMA, 2), w *= 0.9 (1), tally += w*x (FMA, 2): 9 (the SASS has 3 FMUL + 3 FFMA
// per step; ncu's count / 7 was 9/7 in the 2026-11-24 data)
constexpr int MC_FLOPS_PER_STEP = 9;

REF_HD inline float fma_f(float a, float b, float c) {
#ifdef __CUDA_ARCH__
  return fmaf(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
struct Walk {
  float x, tally;
  int steps;
};
REF_HD inline Walk mc_walk(uint32_t seed, uint32_t tid, float p_end, float step) {
  float x = 0.0f, w = 1.0f, tally = 0.0f;
  int s = 0;
  uint32_t base = hash32(seed ^ hash32(tid));  // this thread's stream
  for (; s < MC_MAX_STEPS; ++s) {
    uint32_t h1 = hash32(base + 2u * s), h2 = hash32(base + 2u * s + 1u);
    float d = fma_f(2.0f, u01(h1), -1.0f);
    x = fma_f(d, step, x);
    w = w * 0.9f;
    tally = fma_f(w, x, tally);
    if (u01(h2) < p_end) {
      ++s;
      break;
    }
  }
  return {x, tally, s};
}

// ============================================================ Hydro1D-like chain (FP64)

// 1-D Euler equations, first-order-in-time MUSCL-Rusanov scheme split into one kernel per
// stage, one cell (or face) per thread; conserved U = (rho, rho*u, E), primitive (rho, u, p).
constexpr double GAMMA = 1.4;
constexpr double CFL = 0.4;
inline double minmod(double a, double b) {
  if (a * b <= 0) return 0.0;
  return std::fabs(a) < std::fabs(b) ? a : b;
}
struct HydroState {
  size_t n;  // cells including 2 ghost cells at each end
  vec rho, mom, ene;           // conserved
  vec u, p, c;                 // primitive velocity, pressure, sound speed
  vec srho, su, sp;            // limited slopes
  vec frho, fmom, fene;        // fluxes at faces i-1/2 (face i is left of cell i), n+1 faces
  vec rho2, mom2, ene2;        // updated conserved
  vec dt;                      // local stable time step
};
// stage 1: initial state: smooth density and pressure waves (x in [0,1))
inline void hydro_init(HydroState& s) {
  for (size_t i = 0; i < s.n; ++i) {
    double x = (i + 0.5) / s.n;
    double rho = 1.0 + 0.2 * std::sin(2 * M_PI * x), u = 0.1 * std::cos(2 * M_PI * x);
    double p = 1.0 + 0.1 * std::sin(4 * M_PI * x);
    s.rho[i] = rho;
    s.mom[i] = rho * u;
    s.ene[i] = p / (GAMMA - 1) + 0.5 * rho * u * u;
  }
}
// stage 2: conserved -> primitive
inline void hydro_primitive(HydroState& s) {
  for (size_t i = 0; i < s.n; ++i) {
    double u = s.mom[i] / s.rho[i];
    s.u[i] = u;
    s.p[i] = (GAMMA - 1) * (s.ene[i] - 0.5 * s.mom[i] * u);
  }
}
// stage 3: sound speed
inline void hydro_sound(HydroState& s) {
  for (size_t i = 0; i < s.n; ++i) s.c[i] = std::sqrt(GAMMA * s.p[i] / s.rho[i]);
}
// stage 4: minmod-limited slopes of rho, u, p (zero in the outermost cells)
inline void hydro_slopes(HydroState& s) {
  for (size_t i = 0; i < s.n; ++i) {
    if (i == 0 || i == s.n - 1) {
      s.srho[i] = s.su[i] = s.sp[i] = 0;
      continue;
    }
    s.srho[i] = minmod(s.rho[i] - s.rho[i - 1], s.rho[i + 1] - s.rho[i]);
    s.su[i] = minmod(s.u[i] - s.u[i - 1], s.u[i + 1] - s.u[i]);
    s.sp[i] = minmod(s.p[i] - s.p[i - 1], s.p[i + 1] - s.p[i]);
  }
}
// stage 5: Rusanov flux at face f between cells f-1 and f (faces 1..n-1; others zero)
inline void hydro_flux_one(const HydroState& s, size_t f, double* fr, double* fm, double* fe) {
  double rl = s.rho[f - 1] + 0.5 * s.srho[f - 1], ul = s.u[f - 1] + 0.5 * s.su[f - 1],
         pl = s.p[f - 1] + 0.5 * s.sp[f - 1];
  double rr = s.rho[f] - 0.5 * s.srho[f], ur = s.u[f] - 0.5 * s.su[f], pr = s.p[f] - 0.5 * s.sp[f];
  double el = pl / (GAMMA - 1) + 0.5 * rl * ul * ul, er = pr / (GAMMA - 1) + 0.5 * rr * ur * ur;
  double cl = std::sqrt(GAMMA * pl / rl), cr = std::sqrt(GAMMA * pr / rr);
  double a = std::fmax(std::fabs(ul) + cl, std::fabs(ur) + cr);
  *fr = 0.5 * (rl * ul + rr * ur) - 0.5 * a * (rr - rl);
  *fm = 0.5 * (rl * ul * ul + pl + rr * ur * ur + pr) - 0.5 * a * (rr * ur - rl * ul);
  *fe = 0.5 * ((el + pl) * ul + (er + pr) * ur) - 0.5 * a * (er - el);
}
inline void hydro_flux(HydroState& s) {
  for (size_t f = 0; f <= s.n; ++f) {
    if (f == 0 || f >= s.n) {
      s.frho[f] = s.fmom[f] = s.fene[f] = 0;
      continue;
    }
    hydro_flux_one(s, f, &s.frho[f], &s.fmom[f], &s.fene[f]);
  }
}
// stage 6: local time step dx / (|u| + c)
inline void hydro_local_dt(HydroState& s, double dx) {
  for (size_t i = 0; i < s.n; ++i) s.dt[i] = dx / (std::fabs(s.u[i]) + s.c[i]);
}
// stage 7: global step = CFL * min(local)
inline double hydro_min_dt(const HydroState& s) {
  double m = s.dt[0];
  for (double v : s.dt) m = std::fmin(m, v);
  return CFL * m;
}
// stage 8: conservative update of interior cells; ghost cells copied
inline void hydro_update(HydroState& s, double dt_over_dx) {
  for (size_t i = 0; i < s.n; ++i) {
    if (i < 2 || i >= s.n - 2) {
      s.rho2[i] = s.rho[i];
      s.mom2[i] = s.mom[i];
      s.ene2[i] = s.ene[i];
      continue;
    }
    s.rho2[i] = s.rho[i] - dt_over_dx * (s.frho[i + 1] - s.frho[i]);
    s.mom2[i] = s.mom[i] - dt_over_dx * (s.fmom[i + 1] - s.fmom[i]);
    s.ene2[i] = s.ene[i] - dt_over_dx * (s.fene[i + 1] - s.fene[i]);
  }
}
// stage 9: periodic boundary: ghost cells 0,1 <- n-4,n-3 and n-2,n-1 <- 2,3 (in U2)
inline void hydro_boundary(HydroState& s) {
  size_t n = s.n;
  for (size_t g = 0; g < 2; ++g) {
    s.rho2[g] = s.rho2[n - 4 + g], s.mom2[g] = s.mom2[n - 4 + g], s.ene2[g] = s.ene2[n - 4 + g];
    s.rho2[n - 2 + g] = s.rho2[2 + g], s.mom2[n - 2 + g] = s.mom2[2 + g],
                   s.ene2[n - 2 + g] = s.ene2[2 + g];
  }
}

// ============================================================ PolyBench (FP32)

// 2mm: tmp = alpha*A*B; D = beta*D + tmp*C. 3mm: E = A*B; F = C*D; G = E*F.
// gemm: C = alpha*A*B + beta*C. All reduce to scaled matrix products:
// out (ni x nj) = alpha * X (ni x nk) * Y (nk x nj) + beta * Z
template <typename A>
vec gemm(const A& x, const A& y, const A* z, size_t ni, size_t nj, size_t nk, double alpha,
         double beta) {
  vec o = matmul(x, y, ni, nk, nj);
  for (size_t i = 0; i < o.size(); ++i) o[i] = alpha * o[i] + (z ? beta * (double)(*z)[i] : 0.0);
  return o;
}
// y = A x (A: n x m) and y = A^T x
template <typename A, typename X>
vec matvec(const A& a, const X& x, size_t n, size_t m) {
  vec y(n, 0.0);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < m; ++j) y[i] += (double)a[i * m + j] * x[j];
  return y;
}
template <typename A, typename X>
vec matvec_t(const A& a, const X& x, size_t n, size_t m) {
  vec y(m, 0.0);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < m; ++j) y[j] += (double)a[i * m + j] * x[i];
  return y;
}
// syrk: C (n x n) = alpha * A A^T + beta * C, A: n x m
template <typename A>
vec syrk(const A& a, const A& c, size_t n, size_t m, double alpha, double beta) {
  vec o(n * n);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) {
      double s = 0;
      for (size_t k = 0; k < m; ++k) s += (double)a[i * m + k] * a[j * m + k];
      o[i * n + j] = alpha * s + beta * c[i * n + j];
    }
  return o;
}
// syr2k: C = alpha * (A B^T + B A^T) + beta * C
template <typename A>
vec syr2k(const A& a, const A& b, const A& c, size_t n, size_t m, double alpha, double beta) {
  vec o(n * n);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) {
      double s = 0;
      for (size_t k = 0; k < m; ++k) s += (double)a[i * m + k] * b[j * m + k] + (double)b[i * m + k] * a[j * m + k];
      o[i * n + j] = alpha * s + beta * c[i * n + j];
    }
  return o;
}
// column means of data (n samples x m features)
template <typename A>
vec col_mean(const A& d, size_t n, size_t m) {
  vec mu(m, 0.0);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < m; ++j) mu[j] += d[i * m + j];
  for (auto& v : mu) v /= (double)n;
  return mu;
}
// column standard deviations (population), floored at eps like PolyBench (<= eps -> 1)
template <typename A, typename M>
vec col_std(const A& d, const M& mu, size_t n, size_t m, double eps) {
  vec sd(m, 0.0);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < m; ++j) sd[j] += ((double)d[i * m + j] - mu[j]) * ((double)d[i * m + j] - mu[j]);
  for (auto& v : sd) {
    v = std::sqrt(v / (double)n);
    if (v <= eps) v = 1.0;
  }
  return sd;
}
// symmetric m x m: S[j1][j2] = sum_i d[i][j1]*d[i][j2] (d already centred)
template <typename A>
vec gram_cols(const A& d, size_t n, size_t m) {
  vec s(m * m, 0.0);
  for (size_t i = 0; i < n; ++i)
    for (size_t j1 = 0; j1 < m; ++j1)
      for (size_t j2 = 0; j2 < m; ++j2) s[j1 * m + j2] += (double)d[i * m + j1] * d[i * m + j2];
  return s;
}
// PolyBench 2DConv stencil (3x3, fixed coefficients), interior points only (border: 0)
constexpr double CONV2_C[9] = {0.2, 0.5, -0.8, -0.3, 0.6, -0.9, 0.4, 0.7, 0.10};
template <typename A>
vec pb_conv2d(const A& x, size_t ni, size_t nj) {
  vec o(ni * nj, 0.0);
  for (size_t i = 1; i + 1 < ni; ++i)
    for (size_t j = 1; j + 1 < nj; ++j) {
      double s = 0;
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) s += CONV2_C[a * 3 + b] * x[(i + a - 1) * nj + (j + b - 1)];
      o[i * nj + j] = s;
    }
  return o;
}
// 3DConv: 3x3x3 with coefficient c[a][b][d] = CONV3_C[(a*9+b*3+d) % 9] * (a+1) / 2,
// interior points only (border: 0)
constexpr double CONV3_C[9] = {2, 5, -8, -3, 6, -9, 4, 7, 10};
inline double conv3_coef(int a, int b, int d) { return CONV3_C[(a * 9 + b * 3 + d) % 9] * (a + 1) * 0.05; }
template <typename A>
vec pb_conv3d(const A& x, size_t ni, size_t nj, size_t nk) {
  vec o(ni * nj * nk, 0.0);
  for (size_t i = 1; i + 1 < ni; ++i)
    for (size_t j = 1; j + 1 < nj; ++j)
      for (size_t k = 1; k + 1 < nk; ++k) {
        double s = 0;
        for (int a = 0; a < 3; ++a)
          for (int b = 0; b < 3; ++b)
            for (int d = 0; d < 3; ++d)
              s += conv3_coef(a, b, d) * x[((i + a - 1) * nj + (j + b - 1)) * nk + (k + d - 1)];
        o[(i * nj + j) * nk + k] = s;
      }
  return o;
}
// fdtd-2d, one time step t (fict = source row values): ey, ex, hz updated in order
template <typename A>
void fdtd2d_step(vec& ex, vec& ey, vec& hz, const A& fict, size_t t, size_t nx, size_t ny) {
  for (size_t j = 0; j < ny; ++j) ey[j] = fict[t];
  for (size_t i = 1; i < nx; ++i)
    for (size_t j = 0; j < ny; ++j) ey[i * ny + j] -= 0.5 * (hz[i * ny + j] - hz[(i - 1) * ny + j]);
  for (size_t i = 0; i < nx; ++i)
    for (size_t j = 1; j < ny; ++j) ex[i * ny + j] -= 0.5 * (hz[i * ny + j] - hz[i * ny + j - 1]);
  for (size_t i = 0; i + 1 < nx; ++i)
    for (size_t j = 0; j + 1 < ny; ++j)
      hz[i * ny + j] -= 0.7 * (ex[i * ny + j + 1] - ex[i * ny + j] + ey[(i + 1) * ny + j] - ey[i * ny + j]);
}
// Gram-Schmidt QR of A (m x n, columns orthonormalised in order): Q (m x n), R (n x n)
template <typename A>
void gramschmidt(const A& a_in, size_t m, size_t n, vec& q, vec& r) {
  vec a(a_in.begin(), a_in.end());
  q.assign(m * n, 0.0);
  r.assign(n * n, 0.0);
  for (size_t k = 0; k < n; ++k) {
    double nrm = 0;
    for (size_t i = 0; i < m; ++i) nrm += a[i * n + k] * a[i * n + k];
    r[k * n + k] = std::sqrt(nrm);
    for (size_t i = 0; i < m; ++i) q[i * n + k] = a[i * n + k] / r[k * n + k];
    for (size_t j = k + 1; j < n; ++j) {
      double s = 0;
      for (size_t i = 0; i < m; ++i) s += q[i * n + k] * a[i * n + j];
      r[k * n + j] = s;
      for (size_t i = 0; i < m; ++i) a[i * n + j] -= q[i * n + k] * s;
    }
  }
}

}  // namespace ref
