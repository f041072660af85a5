// Shared host machinery of the suite drivers: options, device buffers, input fill, result
// checks, timing with CUDA events and one JSON line per (kernel, config) on stdout.
//
// Every driver is one kernel family. Each kernel is written as a "case" function that
// allocates its buffers, fills them and then either checks the result against the CPU
// reference (ref.h) or times the launch; both paths run the same launch code.
//
// Output lines (stdout, one JSON object each; docs/suite.md describes the fields):
//   {"type":"device", ...}   once, the GPU the driver ran on
//   {"type":"check", ...}    one per kernel: relative L2 error against the CPU reference
//   {"type":"time", ...}     one per (kernel, config): median time of one launch, counts
//   {"type":"profile", ...}  --profile: the kernel was launched once (under ncu); which
//                            launch indices of the process belong to it
//   {"type":"skip", ...}     a config that could not run here (not enough device memory)
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#define CK(call)                                                                      \
  do {                                                                                \
    cudaError_t e_ = (call);                                                          \
    if (e_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,       \
                   cudaGetErrorString(e_));                                           \
      std::exit(3);                                                                   \
    }                                                                                 \
  } while (0)

// Input helpers at global scope, so that their kernel names start with "aux_" (ncu's
// name filter in collect.sh leaves every aux_* kernel out of the profiles).
// splitmix64: a counter-based hash, so inputs depend on (seed, index) only
__host__ __device__ inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// uniform in [0, 1) with 24 (float) or 53 (double) random bits
__host__ __device__ inline double unit_double(uint64_t h) { return (h >> 11) * (1.0 / 9007199254740992.0); }

template <typename T>
__global__ void aux_fill_uniform(T* x, size_t n, uint64_t seed, double lo, double hi) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    x[i] = (T)(lo + (hi - lo) * unit_double(mix64(seed ^ mix64(i))));
}

__global__ void aux_fill_int(int* x, size_t n, uint64_t seed, int lo, int hi) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    x[i] = lo + (int)(mix64(seed ^ mix64(i)) % (uint64_t)(hi - lo + 1));
}

// Keeps the GPU busy for `ns` nanoseconds of its global timer (one thread). time_once queues
// it ahead of the start event, so that the event gets its timestamp only after the host has
// queued the measured launch behind it: the host's launch submission stays outside the timed
// interval (without it, a warm run records ev0 on an idle GPU and times the submission too).
__global__ void aux_spin(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

namespace suite {

// ---------------------------------------------------------------- options

struct Options {
  std::vector<std::string> sizes;    // size names to time (empty: all of the family)
  std::vector<std::string> kernels;  // kernels to run (empty: all)
  bool check = true;                 // run the result checks first
  bool time = true;                  // run the timed configs
  bool profile = false;              // one launch per config, no warm-up, no flush (for ncu)
  bool flush = true;                 // overwrite L2 before each timed launch (cold cache)
  bool list = false;                 // print kernel/config names and exit (no GPU needed)
  int warmup = 3;                    // fewest untimed launches after the sizing launch
  double warmup_s = 0.05;            // and warm up for at least this many wall-clock seconds
  int min_reps = 5;                  // fewest timed launches (3 for launches over 50 ms)
  int max_reps = 50;                 // most timed launches
  double target_s = 0.2;             // aim for this much timed GPU time per config
  uint64_t seed = 0;                 // input seed (0: from the clock; printed in checks)
};

inline std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

inline bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

inline void usage(const char* prog, const std::vector<std::string>& sizes) {
  std::fprintf(stderr,
               "usage: %s [--sizes a,b] [--kernels k1,k2] [--no-check | --check-only]\n"
               "          [--profile] [--no-flush] [--warmup N] [--warmup-s S] [--min-reps N]\n"
               "          [--max-reps N] [--target-s S] [--seed N] [--list]\nsizes:",
               prog);
  for (auto& s : sizes) std::fprintf(stderr, " %s", s.c_str());
  std::fprintf(stderr, "\n");
}

inline Options parse_options(int argc, char** argv, const std::vector<std::string>& size_names) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        usage(argv[0], size_names);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--sizes") o.sizes = split_commas(next());
    else if (a == "--kernels") o.kernels = split_commas(next());
    else if (a == "--no-check") o.check = false;
    else if (a == "--check-only") o.time = false;
    else if (a == "--profile") { o.profile = true; o.check = false; o.flush = false; }
    else if (a == "--no-flush") o.flush = false;
    else if (a == "--list") o.list = true;
    else if (a == "--warmup") o.warmup = std::atoi(next().c_str());
    else if (a == "--warmup-s") o.warmup_s = std::atof(next().c_str());
    else if (a == "--min-reps") o.min_reps = std::atoi(next().c_str());
    else if (a == "--max-reps") o.max_reps = std::atoi(next().c_str());
    else if (a == "--target-s") o.target_s = std::atof(next().c_str());
    else if (a == "--seed") o.seed = std::strtoull(next().c_str(), nullptr, 10);
    else if (a == "-h" || a == "--help") { usage(argv[0], size_names); std::exit(0); }
    else {
      std::fprintf(stderr, "unknown argument '%s'\n", a.c_str());
      usage(argv[0], size_names);
      std::exit(2);
    }
  }
  for (auto& s : o.sizes)
    if (!contains(size_names, s)) {
      std::fprintf(stderr, "unknown size '%s'\n", s.c_str());
      usage(argv[0], size_names);
      std::exit(2);
    }
  if (o.min_reps < 1) o.min_reps = 1;
  if (o.max_reps < o.min_reps) o.max_reps = o.min_reps;
  if (o.seed == 0)
    o.seed = (uint64_t)std::chrono::system_clock::now().time_since_epoch().count() | 1u;
  return o;
}

// ---------------------------------------------------------------- JSON output

// Builds one JSON object; numbers with 17 significant digits so nothing is lost.
struct Json {
  std::string s = "{";
  Json& raw(const char* k, const std::string& v) {
    if (s.size() > 1) s += ",";
    s += "\"";
    s += k;
    s += "\":";
    s += v;
    return *this;
  }
  Json& str(const char* k, const std::string& v) {
    std::string q = "\"";
    for (char c : v) {
      if (c == '"' || c == '\\') q += '\\';
      q += c;
    }
    return raw(k, q + "\"");
  }
  Json& num(const char* k, double v) {
    if (!std::isfinite(v)) return raw(k, "null");
    char b[40];
    std::snprintf(b, sizeof b, "%.17g", v);
    return raw(k, b);
  }
  Json& integer(const char* k, long long v) { return raw(k, std::to_string(v)); }
  Json& boolean(const char* k, bool v) { return raw(k, v ? "true" : "false"); }
  Json& nums(const char* k, const std::vector<double>& v) {
    std::string a = "[";
    char b[40];
    for (size_t i = 0; i < v.size(); ++i) {
      std::snprintf(b, sizeof b, "%.9g", v[i]);
      a += (i ? "," : "");
      a += b;
    }
    return raw(k, a + "]");
  }
  void print() {
    std::printf("%s}\n", s.c_str());
    std::fflush(stdout);
  }
};

// ---------------------------------------------------------------- launches

// Every measured kernel launch goes through launch(), which counts them: under ncu (with
// the aux_* helpers filtered out) the n-th profiled result is the n-th counted launch, so
// --profile lines can say which ncu result IDs belong to which (kernel, config).
inline long long& launch_counter() {
  static long long n = 0;
  return n;
}

template <typename... KArgs, typename... Args>
void launch(void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t smem, Args... args) {
  kernel<<<grid, block, smem>>>(args...);
  CK(cudaGetLastError());
  ++launch_counter();
}
// input fills and other helpers: named aux_*, not counted, and left out of ncu runs by the
// kernel-name filter of collect.sh, so launch_counter() equals the ncu result ID
template <typename... KArgs, typename... Args>
void launch_aux(void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t smem, Args... args) {
  kernel<<<grid, block, smem>>>(args...);
  CK(cudaGetLastError());
}

inline long long blocks_of(dim3 g) { return (long long)g.x * g.y * g.z; }
inline int threads_of(dim3 b) { return (int)(b.x * b.y * b.z); }
inline unsigned cdiv(size_t a, size_t b) { return (unsigned)((a + b - 1) / b); }

// ---------------------------------------------------------------- buffers and inputs

template <typename T>
struct DevBuf {
  T* p = nullptr;
  size_t n = 0;
  DevBuf() = default;
  explicit DevBuf(size_t count) : n(count) { CK(cudaMalloc(&p, std::max<size_t>(1, n) * sizeof(T))); }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  ~DevBuf() {
    if (p) cudaFree(p);
  }
  size_t bytes() const { return n * sizeof(T); }
  std::vector<T> host() const {
    std::vector<T> h(n);
    CK(cudaMemcpy(h.data(), p, bytes(), cudaMemcpyDeviceToHost));
    return h;
  }
  void upload(const std::vector<T>& h) {
    CK(cudaMemcpy(p, h.data(), std::min(h.size(), n) * sizeof(T), cudaMemcpyHostToDevice));
  }
  // all bytes 0xFF: NaN for floating point, so an element the kernel did not write fails
  void poison() { CK(cudaMemset(p, 0xFF, bytes())); }
  void zero() { CK(cudaMemset(p, 0, bytes())); }
};

// a different stream of numbers for every buffer of a run
inline uint64_t next_seed(uint64_t& s) { return s = mix64(s); }

template <typename T>
void fill_uniform(DevBuf<T>& b, uint64_t& seed, double lo = -1.0, double hi = 1.0) {
  launch_aux(aux_fill_uniform<T>, dim3(std::min<size_t>(cdiv(b.n, 256), 65536)), dim3(256), 0, b.p,
         b.n, next_seed(seed), lo, hi);
}

inline void fill_int(DevBuf<int>& b, uint64_t& seed, int lo, int hi) {
  launch_aux(aux_fill_int, dim3(std::min<size_t>(cdiv(b.n, 256), 65536)), dim3(256), 0, b.p, b.n,
         next_seed(seed), lo, hi);
}

// ||got - ref||_2 / ||ref||_2 in double; infinity when any element is NaN/inf (unwritten)
template <typename T>
double rel_err(const std::vector<T>& got, const std::vector<double>& ref) {
  if (got.size() != ref.size()) return INFINITY;
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    double g = (double)got[i];
    if (!std::isfinite(g)) return INFINITY;
    num += (g - ref[i]) * (g - ref[i]);
    den += ref[i] * ref[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

// ---------------------------------------------------------------- the run context

// What a timed (kernel, config) reports besides its time. Counts are analytic, per launch:
// flops with FMA = 2; dram_bytes = the fewest bytes that must cross DRAM (each input read
// once, each output written once); working_set_bytes = distinct bytes touched.
struct Rec {
  std::string kernel, config, size, dtype, function;
  double flops = 0, dram_bytes = 0, working_set_bytes = 0;
  dim3 grid, block;
  size_t smem_bytes = 0;
  int launches = 1;  // launches in one run() call; time_s is per launch
};

struct Ctx {
  Options opt;
  std::string family;
  cudaDeviceProp prop{};
  uint64_t seed = 1;
  bool checking = false;  // true while a case runs at its check size
  int failures = 0;
  void* flush_buf = nullptr;
  size_t flush_bytes = 0;
  cudaEvent_t ev0{}, ev1{};

  void init(const std::string& fam, const Options& o) {
    family = fam;
    opt = o;
    seed = o.seed;
    int dev = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaGetDeviceProperties(&prop, dev));
    int drv = 0, rt = 0;
    CK(cudaDriverGetVersion(&drv));
    CK(cudaRuntimeGetVersion(&rt));
    CK(cudaEventCreate(&ev0));
    CK(cudaEventCreate(&ev1));
    // twice the L2: writing it evicts whatever a previous launch left there
    flush_bytes = 2 * (size_t)std::max(prop.l2CacheSize, 1 << 20);
    if (opt.flush) CK(cudaMalloc(&flush_buf, flush_bytes));
    Json j;
    j.str("type", "device").str("family", family).str("name", prop.name)
        .str("cc", std::to_string(prop.major) + "." + std::to_string(prop.minor))
        .integer("sm_count", prop.multiProcessorCount)
        .integer("l2_bytes", prop.l2CacheSize)
        .integer("global_mem_bytes", (long long)prop.totalGlobalMem)
        .integer("smem_per_sm_bytes", (long long)prop.sharedMemPerMultiprocessor)
        .integer("regs_per_sm", prop.regsPerMultiprocessor)
        .integer("max_threads_per_sm", prop.maxThreadsPerMultiProcessor)
        .integer("cuda_driver_version", drv).integer("cuda_runtime_version", rt)
        .integer("seed", (long long)(opt.seed & 0x7FFFFFFFFFFFFFFFull))
        .boolean("l2_flush", opt.flush).boolean("profile_mode", opt.profile);
    j.print();
  }

  // true when `bytes` more device memory can be taken; else prints a skip line
  bool fits(const std::string& kernel, const std::string& config, double bytes) {
    size_t free_b = 0, total_b = 0;
    CK(cudaMemGetInfo(&free_b, &total_b));
    if (bytes + (64 << 20) < (double)free_b) return true;
    Json j;
    j.str("type", "skip").str("family", family).str("kernel", kernel).str("config", config)
        .str("reason", "not enough device memory").num("need_bytes", bytes)
        .num("free_bytes", (double)free_b);
    j.print();
    return false;
  }

  // one relative error against the CPU reference; a NaN (unwritten output) always fails
  void report_check(const std::string& kernel, const std::string& config, double err, double tol) {
    bool ok = err <= tol;
    if (!ok) ++failures;
    Json j;
    j.str("type", "check").str("family", family).str("kernel", kernel).str("config", config)
        .num("rel_err", err).num("tol", tol).boolean("ok", ok)
        .integer("seed", (long long)(opt.seed & 0x7FFFFFFFFFFFFFFFull));
    j.print();
  }

  // exact check for integer results (histogram, counters)
  void report_exact(const std::string& kernel, const std::string& config, long long mismatches) {
    report_check(kernel, config, (double)mismatches, 0.0);
  }

  // One repetition: [spin] [L2 flush] ev0 run() ev1. The spin (SPIN_NS of GPU time, longer
  // than the host needs to queue ev0, run()'s launches and ev1) makes ev0 wait on a busy GPU,
  // so the interval ev0..ev1 holds the kernels' GPU time and the gaps between launches of
  // one run(), not the host's submission of the first launch.
  static constexpr unsigned long long SPIN_NS = 50000;
  double time_once(const std::function<void()>& run) {
    launch_aux(aux_spin, dim3(1), dim3(1), 0, SPIN_NS);
    if (opt.flush) CK(cudaMemsetAsync(flush_buf, (int)(launch_counter() & 0xFF), flush_bytes));
    CK(cudaEventRecord(ev0));
    run();
    CK(cudaEventRecord(ev1));
    CK(cudaEventSynchronize(ev1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, ev0, ev1));
    return ms * 1e-3;
  }

  // Largest relative step between the medians before and after one split point of the
  // repetitions (at least 5 on each side; 0 with fewer than 10 reps): a level shift inside one
  // config (two modes) shows here, with the median in one mode or the other.
  static double level_shift(const std::vector<double>& t) {
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      size_t m = v.size();
      return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
    };
    double best = 0, all = t.size() >= 10 ? median(t) : 0;
    for (size_t k = 5; all > 0 && k + 5 <= t.size(); ++k) {
      double a = median({t.begin(), t.begin() + k}), b = median({t.begin() + k, t.end()});
      best = std::max(best, std::fabs(a - b) / all);
    }
    return best;
  }

  // Times run() (which launches rec.launches kernels) and prints the "time" line: one sizing
  // launch, then warm-up launches (at least opt.warmup of them and at least opt.warmup_s
  // seconds of wall clock; none when the sizing launch took over 50 ms), then reps timed
  // launches sized by the last warm-up's time, each between two events (after an L2 flush
  // unless --no-flush); time_s = median / launches. Under --profile it launches once and
  // prints "profile".
  void measure(const Rec& rec, const std::function<void()>& run) {
    Json j;
    j.str("family", family).str("kernel", rec.kernel).str("config", rec.config)
        .str("size", rec.size).str("dtype", rec.dtype).str("function", rec.function)
        .num("flops", rec.flops).num("dram_bytes", rec.dram_bytes)
        .num("working_set_bytes", rec.working_set_bytes)
        .integer("grid_blocks", blocks_of(rec.grid)).integer("block_threads", threads_of(rec.block))
        .str("grid", std::to_string(rec.grid.x) + "x" + std::to_string(rec.grid.y) + "x" +
                         std::to_string(rec.grid.z))
        .str("block", std::to_string(rec.block.x) + "x" + std::to_string(rec.block.y) + "x" +
                          std::to_string(rec.block.z))
        .integer("smem_per_block_bytes", (long long)rec.smem_bytes)
        .integer("launches", rec.launches);
    if (opt.profile) {
      CK(cudaDeviceSynchronize());
      long long first = launch_counter();
      run();
      CK(cudaDeviceSynchronize());
      j.raw("type", "\"profile\"");
      j.integer("launch_first", first).integer("launch_count", launch_counter() - first);
      j.print();
      return;
    }
    // sizing launch (module load etc.), then the warm-up, by count and by time: with 2
    // warm-ups the 2026-11-24 data showed 8-16 % level shifts after a few tens of launches
    double t0 = time_once(run);
    auto wall0 = std::chrono::steady_clock::now();
    auto wall = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    };
    int warm = 0;
    if (t0 <= 0.05)
      while (warm < opt.warmup || wall() < opt.warmup_s) {
        t0 = time_once(run);
        ++warm;
      }
    double warm_wall = wall();
    int lo = t0 > 0.05 ? std::min(3, opt.min_reps) : opt.min_reps;
    int reps = (int)std::clamp(opt.target_s / std::max(t0, 1e-7), (double)lo, (double)opt.max_reps);
    std::vector<double> t(reps);
    for (int r = 0; r < reps; ++r) t[r] = time_once(run);
    std::vector<double> s = t;
    std::sort(s.begin(), s.end());
    double med = reps % 2 ? s[reps / 2] : 0.5 * (s[reps / 2 - 1] + s[reps / 2]);
    double mean = 0;
    for (double x : t) mean += x;
    mean /= reps;
    j.raw("type", "\"time\"");
    j.num("time_s", med / rec.launches).num("time_min_s", s.front() / rec.launches)
        .num("time_max_s", s.back() / rec.launches).num("time_mean_s", mean / rec.launches)
        .integer("reps", reps).integer("warmup", warm).num("warmup_wall_s", warm_wall)
        .num("level_shift", level_shift(t)).boolean("l2_flush", opt.flush)
        .nums("times_s", t);
    j.print();
  }
};

// ---------------------------------------------------------------- family driver

// One (kernel, size) the family can run. run(ctx, size) allocates, fills and then checks
// (ctx.checking) or measures.
struct Case {
  std::string kernel;
  std::function<void(Ctx&, const std::string& size)> run;
  std::vector<std::string> sizes;  // sizes this kernel is timed at (empty: all of the family)
  std::string check_size;          // size the result check runs at
  std::function<std::string(const std::string& size)> config;  // config string of a size
};

inline int family_main(int argc, char** argv, const std::string& family,
                       const std::vector<std::string>& size_names, const std::vector<Case>& cases) {
  Options o = parse_options(argc, argv, size_names);
  auto wanted = [&](const Case& c) { return o.kernels.empty() || contains(o.kernels, c.kernel); };
  auto sizes_of = [&](const Case& c) {
    std::vector<std::string> out;
    for (auto& s : (c.sizes.empty() ? size_names : c.sizes))
      if (o.sizes.empty() || contains(o.sizes, s)) out.push_back(s);
    return out;
  };
  for (auto& k : o.kernels) {
    bool known = false;
    for (auto& c : cases) known |= c.kernel == k;
    if (!known) {
      std::fprintf(stderr, "unknown kernel '%s'\n", k.c_str());
      return 2;
    }
  }
  if (o.list) {  // no CUDA call: works on machines without a GPU
    for (auto& c : cases) {
      if (!wanted(c)) continue;
      for (auto& s : sizes_of(c)) {
        Json j;
        j.str("type", "case").str("family", family).str("kernel", c.kernel).str("size", s)
            .str("config", c.config(s)).str("check_size", c.check_size);
        j.print();
      }
    }
    return 0;
  }
  Ctx ctx;
  ctx.init(family, o);
  if (o.check) {
    ctx.checking = true;
    for (auto& c : cases)
      if (wanted(c)) c.run(ctx, c.check_size);
    ctx.checking = false;
  }
  if (o.time)
    for (auto& c : cases)
      if (wanted(c))
        for (auto& s : sizes_of(c)) c.run(ctx, s);
  CK(cudaDeviceSynchronize());
  if (ctx.flush_buf) cudaFree(ctx.flush_buf);
  if (ctx.failures) std::fprintf(stderr, "%s: %d result check(s) failed\n", family.c_str(), ctx.failures);
  return ctx.failures ? 1 : 0;
}

}  // namespace suite
