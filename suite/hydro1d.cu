// A Hydro1D-like chain: the 1-D Euler equations solved by nine consecutive kernels, one
// cell (or face) per thread, FP64, no data reuse between kernels (each stage reads what the
// previous one wrote to device memory), as Van Lanker et al. describe Hydro1D (Sec. 5.2:
// "a loop composed of 9 consecutive kernels", DRAM-bound, 50,000,000 cells).
// Stages (ref.h has the CPU reference of each): init_tables, primitive, sound_speed,
// slopes, riemann_flux, local_dt, min_dt (block reduction + atomicMin), update,
// boundary (4 ghost cells: one warp, a launch-bound kernel).
#include "common.cuh"
#include "ref.h"

using namespace suite;

static const std::vector<std::string> SIZES = {"check", "small", "medium", "paper"};
static const std::vector<std::string> TIMED = {"small", "medium", "paper"};
static size_t cells(const std::string& s) {
  return s == "check" ? 1000 : s == "small" ? 1000000 : s == "medium" ? 10000000 : 50000000;
}
static std::string cfg_of(const std::string& s) { return "cells=" + std::to_string(cells(s)); }

constexpr double G = ref::GAMMA;

struct Dev {
  size_t n;
  double *rho, *mom, *ene, *u, *p, *c, *srho, *su, *sp, *frho, *fmom, *fene, *rho2, *mom2, *ene2, *dt;
  unsigned long long* dtmin;  // bits of the positive double minimum (ordered like integers)
};

__device__ __forceinline__ void body_hydro_init_tables(Dev d) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= d.n) return;
  double x = (i + 0.5) * (1.0 / d.n);
  double s1, c1;
  sincospi(2 * x, &s1, &c1);
  double s2 = sinpi(4 * x);
  double rho = 1.0 + 0.2 * s1, u = 0.1 * c1, p = 1.0 + 0.1 * s2;
  d.rho[i] = rho;
  d.mom[i] = rho * u;
  d.ene[i] = p / (G - 1) + 0.5 * rho * u * u;
}
__device__ __forceinline__ void body_hydro_primitive(Dev d) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= d.n) return;
  double u = d.mom[i] / d.rho[i];
  d.u[i] = u;
  d.p[i] = (G - 1) * (d.ene[i] - 0.5 * d.mom[i] * u);
}
__device__ __forceinline__ void body_hydro_sound_speed(Dev d) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < d.n) d.c[i] = sqrt(G * d.p[i] / d.rho[i]);
}
__device__ double minmod_d(double a, double b) { return a * b <= 0 ? 0.0 : (fabs(a) < fabs(b) ? a : b); }
__device__ __forceinline__ void body_hydro_slopes(Dev d) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= d.n) return;
  if (i == 0 || i == d.n - 1) {
    d.srho[i] = d.su[i] = d.sp[i] = 0.0;
    return;
  }
  d.srho[i] = minmod_d(d.rho[i] - d.rho[i - 1], d.rho[i + 1] - d.rho[i]);
  d.su[i] = minmod_d(d.u[i] - d.u[i - 1], d.u[i + 1] - d.u[i]);
  d.sp[i] = minmod_d(d.p[i] - d.p[i - 1], d.p[i + 1] - d.p[i]);
}
__device__ __forceinline__ void body_hydro_riemann_flux(Dev d) {
  size_t f = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (f > d.n) return;
  if (f == 0 || f == d.n) {
    d.frho[f] = d.fmom[f] = d.fene[f] = 0.0;
    return;
  }
  double rl = d.rho[f - 1] + 0.5 * d.srho[f - 1], ul = d.u[f - 1] + 0.5 * d.su[f - 1],
         pl = d.p[f - 1] + 0.5 * d.sp[f - 1];
  double rr = d.rho[f] - 0.5 * d.srho[f], ur = d.u[f] - 0.5 * d.su[f], pr = d.p[f] - 0.5 * d.sp[f];
  double el = pl / (G - 1) + 0.5 * rl * ul * ul, er = pr / (G - 1) + 0.5 * rr * ur * ur;
  double cl = sqrt(G * pl / rl), cr = sqrt(G * pr / rr);
  double a = fmax(fabs(ul) + cl, fabs(ur) + cr);
  d.frho[f] = 0.5 * (rl * ul + rr * ur) - 0.5 * a * (rr - rl);
  d.fmom[f] = 0.5 * (rl * ul * ul + pl + rr * ur * ur + pr) - 0.5 * a * (rr * ur - rl * ul);
  d.fene[f] = 0.5 * ((el + pl) * ul + (er + pr) * ur) - 0.5 * a * (er - el);
}
__device__ __forceinline__ void body_hydro_local_dt(Dev d, double dx) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < d.n) d.dt[i] = dx / (fabs(d.u[i]) + d.c[i]);
}
__device__ __forceinline__ void body_hydro_min_dt(Dev d) {
  __shared__ double s[256];
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < d.n ? d.dt[i] : INFINITY;
  __syncthreads();
  for (int h = blockDim.x / 2; h > 0; h >>= 1) {
    if (threadIdx.x < h) s[threadIdx.x] = fmin(s[threadIdx.x], s[threadIdx.x + h]);
    __syncthreads();
  }
  // positive doubles order like their bit patterns
  if (threadIdx.x == 0) atomicMin(d.dtmin, (unsigned long long)__double_as_longlong(s[0]));
}
__device__ __forceinline__ void body_hydro_update(Dev d, double dx) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= d.n) return;
  double k = ref::CFL * __longlong_as_double((long long)*d.dtmin) / dx;
  if (i < 2 || i >= d.n - 2) {
    d.rho2[i] = d.rho[i], d.mom2[i] = d.mom[i], d.ene2[i] = d.ene[i];
    return;
  }
  d.rho2[i] = d.rho[i] - k * (d.frho[i + 1] - d.frho[i]);
  d.mom2[i] = d.mom[i] - k * (d.fmom[i + 1] - d.fmom[i]);
  d.ene2[i] = d.ene[i] - k * (d.fene[i + 1] - d.fene[i]);
}
__device__ __forceinline__ void body_hydro_boundary(Dev d) {
  int g = threadIdx.x;  // ghost cells 0,1 and n-2,n-1, periodic
  size_t n = d.n;
  if (g < 2) {
    d.rho2[g] = d.rho2[n - 4 + g], d.mom2[g] = d.mom2[n - 4 + g], d.ene2[g] = d.ene2[n - 4 + g];
  } else if (g < 4) {
    size_t t = n - 4 + g;  // n-2, n-1 <- 2, 3
    d.rho2[t] = d.rho2[g], d.mom2[t] = d.mom2[g], d.ene2[t] = d.ene2[g];
  }
}

// each stage twice: the measured kernel, and an aux_ copy that prepares the inputs of later
// stages (not counted, and filtered out of ncu runs)
#define STAGE(name)                                                    \
  __global__ void name(Dev d) { body_##name(d); }                     \
  __global__ void aux_##name(Dev d) { body_##name(d); }
#define STAGE_DX(name)                                                  \
  __global__ void name(Dev d, double dx) { body_##name(d, dx); }      \
  __global__ void aux_##name(Dev d, double dx) { body_##name(d, dx); }
STAGE(hydro_init_tables)
STAGE(hydro_primitive)
STAGE(hydro_sound_speed)
STAGE(hydro_slopes)
STAGE(hydro_riemann_flux)
STAGE_DX(hydro_local_dt)
STAGE(hydro_min_dt)
STAGE_DX(hydro_update)
STAGE(hydro_boundary)

static const char* STAGES[] = {"init_tables", "primitive", "sound_speed", "slopes", "riemann_flux",
                               "local_dt", "min_dt", "update", "boundary"};

// analytic counts per stage (n cells, FP64): flops counted from the kernel source (FMA = 2,
// sqrt/div/sin = 1), bytes = arrays read + written once
static ref::Counts counts(int stage, double n) {
  switch (stage) {
    case 0: return {18 * n, 24 * n, 24 * n};  // x, sincospi/sinpi, rho, u, p, mom, ene
    case 1: return {5 * n, 40 * n, 40 * n};   // div, 0.5*mom, FMA, *(g-1)
    case 2: return {3 * n, 24 * n, 24 * n};   // mul, div, sqrt
    case 3: return {9 * n, 48 * n, 48 * n};   // per variable: 2 subs + product test
    case 4: return {67 * n, 72 * n, 72 * n};  // 6 FMA reconstruction, 2 energies, 2 sqrt, flux
    case 5: return {2 * n, 24 * n, 24 * n};   // add, div
    case 6: return {0, 8 * n + 8, 8 * n + 8}; // comparisons only
    case 7: return {11 * n, 72 * n, 72 * n};  // CFL*dtmin/dx (mul, div), 3 x (sub + FMA)
    default: return {0, 192, 192};            // 4 cells x 3 variables read + written
  }
}

static void case_stage(Ctx& ctx, const std::string& size, int stage) {
  size_t n = cells(size);
  std::string cfg = cfg_of(size), kernel = std::string("hydro1d_") + STAGES[stage];
  if (!ctx.fits(kernel, cfg, 16.0 * 8 * (n + 1))) return;
  double dx = 1.0 / n;
  std::vector<DevBuf<double>*> bufs;
  Dev d;
  d.n = n;
  double** ptrs[] = {&d.rho, &d.mom, &d.ene, &d.u, &d.p, &d.c, &d.srho, &d.su, &d.sp,
                     &d.frho, &d.fmom, &d.fene, &d.rho2, &d.mom2, &d.ene2, &d.dt};
  for (double** q : ptrs) {
    bufs.push_back(new DevBuf<double>(n + 1));
    *q = bufs.back()->p;
  }
  DevBuf<unsigned long long> dtmin(1);
  d.dtmin = dtmin.p;
  dim3 b(256), g(cdiv(n, 256)), gf(cdiv(n + 1, 256));
  auto reset_min = [&] { CK(cudaMemset(dtmin.p, 0x7F, 8)); };  // a huge positive double
  auto launch_stage = [&](int s, bool aux) {
    auto go = [&](auto measured, auto helper, dim3 gg, dim3 bb, auto... args) {
      if (aux) launch_aux(helper, gg, bb, 0, args...);
      else launch(measured, gg, bb, 0, args...);
    };
    switch (s) {
      case 0: go(hydro_init_tables, aux_hydro_init_tables, g, b, d); break;
      case 1: go(hydro_primitive, aux_hydro_primitive, g, b, d); break;
      case 2: go(hydro_sound_speed, aux_hydro_sound_speed, g, b, d); break;
      case 3: go(hydro_slopes, aux_hydro_slopes, g, b, d); break;
      case 4: go(hydro_riemann_flux, aux_hydro_riemann_flux, gf, b, d); break;
      case 5: go(hydro_local_dt, aux_hydro_local_dt, g, b, d, dx); break;
      case 6: go(hydro_min_dt, aux_hydro_min_dt, g, b, d); break;
      case 7: go(hydro_update, aux_hydro_update, g, b, d, dx); break;
      default: go(hydro_boundary, aux_hydro_boundary, dim3(1), dim3(32), d);
    }
  };
  // what each stage writes, poisoned (NaN; dtmin all ones, a NaN that atomicMin replaces)
  // before the check runs the measured kernel, so an element it leaves unwritten fails
  auto poison_outputs = [&](int s) {
    auto nan = [&](double* p, size_t m) { CK(cudaMemset(p, 0xFF, m * sizeof(double))); };
    switch (s) {
      case 0: nan(d.rho, n), nan(d.mom, n), nan(d.ene, n); break;
      case 1: nan(d.u, n), nan(d.p, n); break;
      case 2: nan(d.c, n); break;
      case 3: nan(d.srho, n), nan(d.su, n), nan(d.sp, n); break;
      case 4: nan(d.frho, n + 1), nan(d.fmom, n + 1), nan(d.fene, n + 1); break;
      case 5: nan(d.dt, n); break;
      case 6: CK(cudaMemset(dtmin.p, 0xFF, 8)); break;
      case 7: nan(d.rho2, n), nan(d.mom2, n), nan(d.ene2, n); break;
      default:  // the four ghost cells of U2; the interior is the update's output
        for (double* p : {d.rho2, d.mom2, d.ene2}) nan(p, 2), nan(p + n - 2, 2);
    }
  };
  // the inputs of a stage are what the stages before it wrote: run the chain (aux_ copies)
  // once; the timed runs repeat the measured stage on them. The check runs the chain up to
  // the stage, then the measured kernel itself on poisoned outputs.
  reset_min();
  if (ctx.checking) {
    for (auto* q : bufs) q->poison();
    for (int s = 0; s < stage; ++s) launch_stage(s, true);
    poison_outputs(stage);
    launch_stage(stage, false);
  } else {
    for (int s = 0; s < 9; ++s) launch_stage(s, true);
  }
  CK(cudaDeviceSynchronize());
  if (ctx.checking) {
    auto get = [&](double* p, size_t m) {
      std::vector<double> h(m);
      CK(cudaMemcpy(h.data(), p, m * sizeof(double), cudaMemcpyDeviceToHost));
      return h;
    };
    ref::HydroState s;
    s.n = n;
    ref::vec* hs[] = {&s.rho, &s.mom, &s.ene, &s.u, &s.p, &s.c, &s.srho, &s.su, &s.sp,
                      &s.frho, &s.fmom, &s.fene, &s.rho2, &s.mom2, &s.ene2, &s.dt};
    for (int q = 0; q < 16; ++q) *hs[q] = get(*ptrs[q], q >= 9 && q < 12 ? n + 1 : n);
    ref::HydroState r = s;  // reference: recompute this stage from the GPU's inputs
    unsigned long long bits;
    CK(cudaMemcpy(&bits, dtmin.p, 8, cudaMemcpyDeviceToHost));
    double gpu_min;
    std::memcpy(&gpu_min, &bits, 8);
    double err = 0;
    auto cmp = [&](const ref::vec& got, const ref::vec& want) { err = std::max(err, rel_err(got, want)); };
    switch (stage) {
      case 0: ref::hydro_init(r); cmp(s.rho, r.rho), cmp(s.mom, r.mom), cmp(s.ene, r.ene); break;
      case 1: ref::hydro_primitive(r); cmp(s.u, r.u), cmp(s.p, r.p); break;
      case 2: ref::hydro_sound(r); cmp(s.c, r.c); break;
      case 3: ref::hydro_slopes(r); cmp(s.srho, r.srho), cmp(s.su, r.su), cmp(s.sp, r.sp); break;
      case 4: ref::hydro_flux(r); cmp(s.frho, r.frho), cmp(s.fmom, r.fmom), cmp(s.fene, r.fene); break;
      case 5: ref::hydro_local_dt(r, dx); cmp(s.dt, r.dt); break;
      case 6: cmp({ref::CFL * gpu_min}, {ref::hydro_min_dt(r)}); break;
      case 7:
        ref::hydro_update(r, ref::CFL * gpu_min / dx);
        cmp(s.rho2, r.rho2), cmp(s.mom2, r.mom2), cmp(s.ene2, r.ene2);
        break;
      default:
        // the ghost cells from the GPU's updated interior; all of U2 compared (mom2 too)
        ref::hydro_boundary(r);
        cmp(s.rho2, r.rho2), cmp(s.mom2, r.mom2), cmp(s.ene2, r.ene2);
    }
    ctx.report_check(kernel, cfg, err, 1e-12);
  } else {
    Rec rec;
    rec.kernel = kernel;
    rec.function = std::string("hydro_") + STAGES[stage];
    rec.size = size;
    rec.config = cfg;
    rec.dtype = "fp64";
    auto c = counts(stage, (double)n);
    rec.flops = c.flops, rec.dram_bytes = c.dram_bytes, rec.working_set_bytes = c.working_set_bytes;
    rec.grid = stage == 8 ? dim3(1) : stage == 4 ? gf : g;
    rec.block = stage == 8 ? dim3(32) : b;
    rec.smem_bytes = stage == 6 ? 256 * 8 : 0;
    // min_dt accumulates with atomicMin: starting from the last minimum changes nothing
    ctx.measure(rec, [&] { launch_stage(stage, false); });
  }
  for (auto* q : bufs) delete q;
}

int main(int argc, char** argv) {
  std::vector<Case> cases;
  for (int s = 0; s < 9; ++s)
    cases.push_back({std::string("hydro1d_") + STAGES[s],
                     [s](Ctx& c, const std::string& z) { case_stage(c, z, s); }, TIMED, "check",
                     cfg_of});
  return family_main(argc, argv, "hydro1d", SIZES, cases);
}
