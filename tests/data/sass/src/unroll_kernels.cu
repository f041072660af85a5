// A loop nvcc unrolls as it likes (no #pragma unroll): 4x up to sm_90, 16x on sm_100 (CUDA
// 13.0). One FFMA and one load per iteration of the source code.
extern "C" __global__ void fma_loop_unrolled(float* y, const float* x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.f;
    for (int k = 0; k < n; ++k)
        acc = acc * a + x[k * gridDim.x * blockDim.x + i];
    y[i] = acc;
}
