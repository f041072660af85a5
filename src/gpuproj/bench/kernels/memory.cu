// gpuproj memory kernels (CUDA C++). Same names, arguments and byte counts as memory.cl (see its
// header for the formula and stream count of each kernel).

#define WS_SCATTER 40503u  // odd: chunk g * WS_SCATTER mod chunks is one-to-one (memory.cl)
#define SMEM_WORDS 4096
#define SMEM_BASE_MASK 2047
#define SMEM_OFF 64

__device__ __forceinline__ size_t gid1() { return (size_t)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ float4 add4(float4 a, float4 b)
{ return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w); }
__device__ __forceinline__ float4 mul4(float s, float4 a)
{ return make_float4(s * a.x, s * a.y, s * a.z, s * a.w); }
__device__ __forceinline__ float4 triad4(float4 b, float s, float4 c)
{ return make_float4(b.x + s * c.x, b.y + s * c.y, b.z + s * c.z, b.w + s * c.w); }

extern "C" __global__ void stream_init(float4* a, float s)
{
    a[gid1()] = make_float4(s, s, s, s);
}

extern "C" __global__ void stream_read(const float4* __restrict__ a, float4* out, float s)
{
    size_t i = gid1();
    float4 v = a[i];
    if (v.x + v.y + v.z + v.w == s) out[i] = v;  // data >= 0, s < 0: never stored
}

extern "C" __global__ void stream_copy(const float4* __restrict__ a, float4* __restrict__ b)
{
    size_t i = gid1();
    b[i] = a[i];
}

extern "C" __global__ void stream_scale(const float4* __restrict__ a, float4* __restrict__ b,
                                        float s)
{
    size_t i = gid1();
    b[i] = mul4(s, a[i]);
}

extern "C" __global__ void stream_add(const float4* __restrict__ a, const float4* __restrict__ b,
                                      float4* __restrict__ c)
{
    size_t i = gid1();
    c[i] = add4(a[i], b[i]);
}

extern "C" __global__ void stream_triad(float4* __restrict__ a, const float4* __restrict__ b,
                                        const float4* __restrict__ c, float s)
{
    size_t i = gid1();
    a[i] = triad4(b[i], s, c[i]);
}

extern "C" __global__ void ws_read(const float4* __restrict__ in, float* out, unsigned mask,
                                   unsigned iters)
{
    unsigned ls = blockDim.x;
    unsigned idx = blockIdx.x * WS_SCATTER * 2u * ls + threadIdx.x;
    float4 s0 = make_float4(0.f, 0.f, 0.f, 0.f), s1 = s0;
#pragma unroll 4
    for (unsigned it = 0; it < iters; it += 2) {
        s0 = add4(s0, in[idx & mask]);
        s1 = add4(s1, in[(idx + ls) & mask]);
        idx += 2u * ls;
    }
    float r = s0.x + s0.y + s0.z + s0.w + s1.x + s1.y + s1.z + s1.w;
    if (r < 0.0f) out[gid1()] = r;
}

extern "C" __global__ void smem_read(float* out, unsigned iters, unsigned stride)
{
    __shared__ float buf[SMEM_WORDS];
    unsigned lid = threadIdx.x;
    for (unsigned i = lid; i < SMEM_WORDS; i += blockDim.x) buf[i] = (float)(i & 7);
    __syncthreads();
    volatile float* vb = buf;  // every load issued in every iteration
    unsigned base = (lid * stride) & SMEM_BASE_MASK;
    float s0 = 0.f, s1 = 0.f, s2 = 0.f, s3 = 0.f, s4 = 0.f, s5 = 0.f, s6 = 0.f, s7 = 0.f;
    for (unsigned it = 0; it < iters; ++it) {
        s0 += vb[base + 0 * SMEM_OFF]; s1 += vb[base + 1 * SMEM_OFF];
        s2 += vb[base + 2 * SMEM_OFF]; s3 += vb[base + 3 * SMEM_OFF];
        s4 += vb[base + 4 * SMEM_OFF]; s5 += vb[base + 5 * SMEM_OFF];
        s6 += vb[base + 6 * SMEM_OFF]; s7 += vb[base + 7 * SMEM_OFF];
    }
    float r = s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7;
    // never stored in a timed run; stride 0 (every load word 0 mod 64, r = 0) is the host's
    // result check
    if (r < 0.0f || stride == 0u) out[gid1()] = r;
}

extern "C" __global__ void chase(const unsigned* next, unsigned* out, unsigned steps,
                                unsigned start)
{
    unsigned j = start;
    for (unsigned it = 0; it < steps; ++it) j = next[j];
    out[0] = j;
}

extern "C" __global__ void empty(float* out, unsigned sentinel)
{
    if ((unsigned)gid1() == sentinel) out[0] = 1.0f;
}
