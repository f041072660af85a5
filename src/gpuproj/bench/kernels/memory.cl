/* gpuproj memory kernels (OpenCL C).
 *
 * STREAM-like kernels, one float4 (16 bytes) per work-item, counted bytes per element:
 *   init  a[i] = s                  0 loads, 1 store   16 B
 *   read  v = a[i] (kept alive)     1 load,  0 stores  16 B
 *   copy  b[i] = a[i]               1 load,  1 store   32 B
 *   scale b[i] = s * a[i]           1 load,  1 store   32 B
 *   add   c[i] = a[i] + b[i]        2 loads, 1 store   48 B
 *   triad a[i] = b[i] + s * c[i]    2 loads, 1 store   48 B
 * Write-allocate traffic (CPUs) is not counted: the figure is what a GPU kernel moves.
 *
 * ws_read: work-group g walks float4 elements (start + lid + k * 2 * local size) & mask for
 * iters loads per work-item, two per step, from chunk start = (g * 40503) of 2 * local size
 * elements: a working set of (mask + 1) * 16 bytes read over and over, which a cache of that
 * size serves (L1 for a few KiB, L2 for a fraction of L2, DRAM above). Every work-group reads
 * across the whole set, so every compute unit does: a cache that holds less than the set
 * cannot serve it. (A step of the global size, before, had each work-item re-read the same
 * few elements where the global size is a multiple of a large power of two: on the H100 sets
 * of up to 4 MiB ran at the L1's rate and the 8 MiB L2 set half from L1.) The odd factor
 * scatters the groups' starting chunks, all distinct while the set has as many chunks as
 * there are groups, so that groups on one compute unit do not read each other's chunks.
 *
 * smem_read: 8 loads per loop iteration from a local (shared) array, from word base + k * 64
 * where base = (lid * stride) & 2047. stride 1: consecutive words, no bank conflict;
 * stride 32: every lane of a 32-wide warp hits the same bank (32-way conflict).
 *
 * chase: one work-item follows next[] (a random cycle) from start for steps loads: latency per
 *   load.
 * empty: launch overhead and per-block cost (the store never happens: sentinel is never a gid).
 */

#define WS_SCATTER 40503u  /* odd: chunk g * WS_SCATTER mod chunks is one-to-one */
#define SMEM_WORDS 4096
#define SMEM_BASE_MASK 2047
#define SMEM_OFF 64

__kernel void stream_init(__global float4* a, float s)
{
    a[get_global_id(0)] = (float4)(s);
}

__kernel void stream_read(__global const float4* a, __global float4* out, float s)
{
    size_t i = get_global_id(0);
    float4 v = a[i];
    /* data are >= 0 and s < 0, so the store never runs, yet the load cannot be removed */
    if (v.x + v.y + v.z + v.w == s) out[i] = v;
}

__kernel void stream_copy(__global const float4* a, __global float4* b)
{
    size_t i = get_global_id(0);
    b[i] = a[i];
}

__kernel void stream_scale(__global const float4* a, __global float4* b, float s)
{
    size_t i = get_global_id(0);
    b[i] = s * a[i];
}

__kernel void stream_add(__global const float4* a, __global const float4* b, __global float4* c)
{
    size_t i = get_global_id(0);
    c[i] = a[i] + b[i];
}

__kernel void stream_triad(__global float4* a, __global const float4* b, __global const float4* c,
                           float s)
{
    size_t i = get_global_id(0);
    a[i] = b[i] + s * c[i];
}

__kernel void ws_read(__global const float4* in, __global float* out, uint mask, uint iters)
{
    uint ls = (uint)get_local_size(0);
    uint idx = (uint)get_group_id(0) * WS_SCATTER * 2u * ls + (uint)get_local_id(0);
    float4 s0 = (float4)(0.0f), s1 = (float4)(0.0f);
    for (uint it = 0; it < iters; it += 2) {
        s0 += in[idx & mask];
        s1 += in[(idx + ls) & mask];
        idx += 2u * ls;
    }
    float r = s0.x + s0.y + s0.z + s0.w + s1.x + s1.y + s1.z + s1.w;
    if (r < 0.0f) out[get_global_id(0)] = r;   /* data are >= 0: never stored, but the loads stay */
}

__kernel void smem_read(__global float* out, uint iters, uint stride)
{
    __local float buf[SMEM_WORDS];
    uint lid = (uint)get_local_id(0);
    uint ls = (uint)get_local_size(0);
    for (uint i = lid; i < SMEM_WORDS; i += ls) buf[i] = (float)(i & 7);
    barrier(CLK_LOCAL_MEM_FENCE);
    /* volatile: every load is issued in every iteration (no hoisting out of the loop) */
    volatile __local float* vb = buf;
    uint base = (lid * stride) & SMEM_BASE_MASK;
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f, s4 = 0.0f, s5 = 0.0f, s6 = 0.0f, s7 = 0.0f;
    for (uint it = 0; it < iters; ++it) {
        s0 += vb[base + 0 * SMEM_OFF]; s1 += vb[base + 1 * SMEM_OFF];
        s2 += vb[base + 2 * SMEM_OFF]; s3 += vb[base + 3 * SMEM_OFF];
        s4 += vb[base + 4 * SMEM_OFF]; s5 += vb[base + 5 * SMEM_OFF];
        s6 += vb[base + 6 * SMEM_OFF]; s7 += vb[base + 7 * SMEM_OFF];
    }
    float r = s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7;
    /* never stored in a timed run; stride 0 (every load word 0 mod 64, r = 0) is the host's
       result check */
    if (r < 0.0f || stride == 0u) out[get_global_id(0)] = r;
}

__kernel void chase(__global const uint* next, __global uint* out, uint steps, uint start)
{
    uint j = start;
    for (uint it = 0; it < steps; ++it) j = next[j];
    out[0] = j;
}

__kernel void empty(__global float* out, uint sentinel)
{
    if ((uint)get_global_id(0) == sentinel) out[0] = 1.0f;
}
