// Host-only self test of ref.h: runs each CPU reference and analytic count on a tiny input
// and prints one JSON line per case ({"case": name, "values": [...]}). No CUDA needed:
//   g++ -std=c++17 -O1 -o selftest selftest.cpp && ./selftest
// tests/test_suite_build.py compares the values with hand-computed ones.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "ref.h"

static void out(const char* name, const std::vector<double>& v) {
  std::printf("{\"case\":\"%s\",\"values\":[", name);
  for (size_t i = 0; i < v.size(); ++i) std::printf("%s%.17g", i ? "," : "", v[i]);
  std::printf("]}\n");
}
static std::vector<double> counts(ref::Counts c) { return {c.flops, c.dram_bytes, c.working_set_bytes}; }

int main() {
  using V = std::vector<double>;
  V a = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  V b = {16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
  out("vector_add", ref::vector_add(V{1, 2, 3}, V{10, 20, 30}));
  out("vector_add_divergent", ref::vector_add_divergent(V{1, 2, 3, 4}, V{10, 20, 30, 40}));
  out("saxpy", ref::saxpy(2.0, V{1, 2, 3}, V{1, 1, 1}));
  out("strided8_src", {(double)ref::strided8_src(0, 16), (double)ref::strided8_src(1, 16),
                       (double)ref::strided8_src(2, 16), (double)ref::strided8_src(3, 16)});
  out("strided_copy_8", ref::strided_copy_8(a));
  out("random_src", {(double)ref::random_src(0, 16), (double)ref::random_src(1, 16)});
  out("transpose", ref::transpose(V{1, 2, 3, 4, 5, 6}, 2, 3));
  out("matmul", ref::matmul(V{1, 2, 3, 4}, V{5, 6, 7, 8}, 2, 2, 2));
  out("matmul_rect", ref::matmul(V{1, 2, 3, 4, 5, 6}, V{1, 0, 0, 1, 1, 1}, 2, 3, 2));
  out("conv2d_3x3_ones", ref::conv2d(V{1, 2, 3, 4, 5, 6, 7, 8, 9}, 3, 3, V(9, 1.0), 3));
  out("sum_dot", {ref::sum(V{1, 2, 3, 4}), ref::dot(V{1, 2, 3}, V{4, 5, 6})});
  auto h = ref::histogram(std::vector<int>{0, 1, 1, 255, 256, 3});
  out("histogram", {(double)h[0], (double)h[1], (double)h[3], (double)h[255]});
  V bank(1024);
  for (int i = 0; i < 1024; ++i) bank[i] = i;
  auto bc = ref::shared_bank_conflict(bank);
  out("shared_bank_conflict", {bc[0], bc[1], bc[32]});
  out("stencil2d5", ref::stencil2d5(V{1, 1, 1, 1, 2, 1, 1, 1, 1}, 3, 3, 0.5, 0.125));
  V cube(27, 1.0);
  cube[13] = 3;
  out("stencil3d7_centre", {ref::stencil3d7(cube, 3, 3, 3, 0.5, 0.125)[13]});
  out("special_one_step", ref::special(V{0.5}, ref::SF_DIV, 1));
  out("special_checksum", ref::special(V{0.5}, ref::SF_DIV, 2));
  out("special_fixed_points", {ref::special_last(ref::SF_SQRT, 1.0, 200), ref::special_last(ref::SF_EXP, 0.5, 200)});
  {
    // how far the check's output (the checksum of 32 iterates, 4096 inputs in [0, 1)) is from
    // what a wrong kernel writes: the smallest relative L2 error over (a) the best constant
    // and (b) the checksum of 1..31 iterates, per function; the check passes below 1e-5 (FP32)
    V x0(4096), power;
    for (size_t i = 0; i < x0.size(); ++i) x0[i] = (i + 0.5) / x0.size();
    for (int op = 0; op < ref::SF_COUNT; ++op) {
      V want = ref::special(x0, op, 32);
      double mean = 0, den = 0, num = 0;
      for (double v : want) mean += v / want.size();
      for (double v : want) num += (v - mean) * (v - mean), den += v * v;
      double worst = std::sqrt(num / den);
      for (int it = 1; it < 32; ++it) {
        V got = ref::special(x0, op, it);
        double e = 0;
        for (size_t i = 0; i < got.size(); ++i) e += (got[i] - want[i]) * (got[i] - want[i]);
        worst = std::min(worst, std::sqrt(e / den));
      }
      power.push_back(worst);
    }
    out("special_check_power", power);
  }
  out("gemm", ref::gemm(V{1, 2, 3, 4}, V{1, 0, 0, 1}, &a, 2, 2, 2, 2.0, 0.5));
  out("matvec", ref::matvec(V{1, 2, 3, 4, 5, 6}, V{1, 1, 1}, 2, 3));
  out("matvec_t", ref::matvec_t(V{1, 2, 3, 4, 5, 6}, V{1, 1}, 2, 3));
  out("syrk", ref::syrk(V{1, 2, 3, 4}, V{1, 1, 1, 1}, 2, 2, 1.0, 1.0));
  out("syr2k", ref::syr2k(V{1, 0, 0, 1}, V{1, 2, 3, 4}, V{0, 0, 0, 0}, 2, 2, 1.0, 0.0));
  V data = {1, 10, 3, 20, 5, 30};  // 3 samples x 2 features
  auto mu = ref::col_mean(data, 3, 2);
  out("col_mean", mu);
  out("col_std", ref::col_std(data, mu, 3, 2, 0.005));
  out("gram_cols", ref::gram_cols(V{1, 2, 3, 4}, 2, 2));
  V ones(25, 1.0);
  out("pb_conv2d_centre", {ref::pb_conv2d(ones, 5, 5)[12], ref::pb_conv2d(ones, 5, 5)[0]});
  V ey(4, 0.0), ex(4, 0.0), hz = {1, 2, 3, 4};
  ref::fdtd2d_step(ex, ey, hz, V{7}, 0, 2, 2);
  out("fdtd2d_step", {ey[0], ey[1], ey[2], ey[3], ex[1], ex[3], hz[0]});
  V q, r;
  ref::gramschmidt(V{3, 1, 4, 1}, 2, 2, q, r);
  out("gramschmidt", {r[0], r[1], r[3], q[0], q[2]});
  ref::HydroState s;
  s.n = 3;
  s.rho = {1, 2, 4}, s.mom = {1, 2, 4}, s.ene = {2.5, 5, 10};
  s.u.resize(3), s.p.resize(3), s.c.resize(3), s.dt.resize(3);
  ref::hydro_primitive(s);
  ref::hydro_sound(s);
  ref::hydro_local_dt(s, 0.1);
  out("hydro_primitive", {s.u[0], s.p[0], s.p[2], s.c[0], s.dt[0], ref::hydro_min_dt(s)});
  out("minmod", {ref::minmod(1, 2), ref::minmod(-3, -2), ref::minmod(1, -1)});
  out("hash32", {(double)ref::hash32(0), (double)ref::hash32(1)});
  ref::Walk w = ref::mc_walk(1, 0, 1.0f, 0.1f);  // p_end = 1: exactly one step
  out("mc_walk_one_step", {(double)w.steps, (double)(w.tally == 0.9f * w.x)});
  out("c_vector_add", counts(ref::c_vector_add(1000)));
  out("c_saxpy", counts(ref::c_saxpy(1000)));
  out("c_matmul", counts(ref::c_matmul(256)));
  out("c_conv2d", counts(ref::c_conv2d(512, 512, 3)));
  out("c_reduce_dot", {ref::c_reduce_sum(1024).flops, ref::c_reduce_sum(1024).dram_bytes,
                       ref::c_dot(1024).flops, ref::c_dot(1024).dram_bytes});
  out("c_histogram", counts(ref::c_histogram(1000)));
  out("c_stencil2d5", counts(ref::c_stencil2d5(4, 5, 8)));
  out("c_stencil3d7", counts(ref::c_stencil3d7(3, 4, 5, 4)));
  out("c_special", counts(ref::c_special(100, ref::SF_SIN, 32, 8)));
  return 0;
}
