// Times Pulse's matmul_2d (the variant in -I DIR, benchmarks/generate_matmul.sh)
// on M x N x K, checks it against cuBLAS SGEMM (TF32 off) on the same inputs, and
// times cuBLAS and an FMA-rate floor in the same run. Prints a line in words and
// `CSV,matmul,<M>,<N>,<K>,<Pulse ms>,<cuBLAS ms>,<Pulse / cuBLAS>,<check>`.
// Build: nvcc -O3 -std=c++17 -arch=sm_90 -I<pulse>/runtime -IDIR DIR/matmul_2d.cu
//        benchmarks/matmul_bench.cu -lcublas -o matmul_bench
// usage: matmul_bench M N K ROWS_PER_TILE (K as the kernel was generated for)
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cmath>
#include <cublas_v2.h>
#include "pulse_cuda.h"
#include "matmul_2d.h"

__global__ void fill(float *p, size_t n, unsigned seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
        p[i] = ((h & 0xffff) / 65535.0f) * 2.0f - 1.0f;
    }
}
// Independent FMA chains: the GPU's fp32 FMA rate, the floor of a matmul.
__global__ void fma_peak(float *out, int iters) {
    float a0 = threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, a4 = a0 + 4, a5 = a0 + 5, a6 = a0 + 6, a7 = a0 + 7;
    const float b = 0.999f, c = 0.001f;
    for (int i = 0; i < iters; i++) {
        a0 = fmaf(a0, b, c); a1 = fmaf(a1, b, c); a2 = fmaf(a2, b, c); a3 = fmaf(a3, b, c);
        a4 = fmaf(a4, b, c); a5 = fmaf(a5, b, c); a6 = fmaf(a6, b, c); a7 = fmaf(a7, b, c);
    }
    if (a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 == 1234.5f) out[0] = 1;
}
/// The median of `reps` timed runs after one untimed (pulse_cuda.h's timer).
template <typename F> float median_ms(F f, int reps = 9) { return (float)pulse::cuda::time_median_ms(f, 1, reps); }
int main(int argc, char **argv) {
    const long M = atol(argv[1]), N = atol(argv[2]), K = atol(argv[3]), I = atol(argv[4]);
    const long instances = M / I;
    float *a, *b, *c, *ref, *scratch;
    cudaMalloc(&a, M * K * 4); cudaMalloc(&b, K * N * 4); cudaMalloc(&c, M * N * 4); cudaMalloc(&ref, M * N * 4); cudaMalloc(&scratch, 4);
    fill<<<1024, 256>>>(a, M * K, 1); fill<<<1024, 256>>>(b, K * N, 2);
    cudaMemset(c, 0xff, M * N * 4);
    pulse_buffer A = matmul_2d_a_buffer(a, instances), B = matmul_2d_bm_buffer(b, instances), C = matmul_2d_Out_buffer(c, instances);
    if (A.extent[0] != K || A.extent[1] != M || B.extent[0] != N || B.extent[1] != K) { printf("layout mismatch: a %lld x %lld, bm %lld x %lld\n", (long long)A.extent[0], (long long)A.extent[1], (long long)B.extent[0], (long long)B.extent[1]); return 1; }
    PULSE_CUDA_CHECK(matmul_2d(A, B, C, 0));
    PULSE_CUDA_CHECK(cudaDeviceSynchronize());
    float pulse_ms = median_ms([&] { matmul_2d(A, B, C, 0); });
    cublasHandle_t h; cublasCreate(&h); cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH);
    const float one = 1, zero = 0;
    auto gemm = [&] { cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, b, N, a, K, &zero, ref, N); };
    float pedantic_ms = median_ms(gemm);
    cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
    float cublas_ms = median_ms(gemm);
    std::vector<float> got(M * N), want(M * N);
    cudaMemcpy(got.data(), c, M * N * 4, cudaMemcpyDeviceToHost); cudaMemcpy(want.data(), ref, M * N * 4, cudaMemcpyDeviceToHost);
    double worst = 0; long bad = 0;
    for (long i = 0; i < M * N; i++) { double d = fabs((double)got[i] - want[i]); worst = std::max(worst, d); bad += !(d <= 1e-3 * sqrt((double)K)); }
    int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    const int iters = 1 << 16;
    float peak_ms = median_ms([&] { fma_peak<<<sms * 8, 256>>>(scratch, iters); }, 5);
    double peak_flops = 2.0 * 8 * iters * (double)sms * 8 * 256 / (peak_ms * 1e-3);
    double flops = 2.0 * M * N * K;
    pulse_launch_info info = {}; matmul_2d_launch_info(&info);
    printf("%ld x %ld x %ld, tile %ld rows: %s (max |diff| %.3g vs cuBLAS, %ld over 1e-3 sqrt(K)); Pulse %.3f ms %.1f TFLOP/s (%d regs, %d blocks/SM); "
           "cuBLAS SGEMM %.3f ms %.1f TFLOP/s (pedantic %.3f ms); FMA floor %.3f ms (%.1f TFLOP/s); Pulse/cuBLAS %.3f, Pulse/floor %.3f\n",
           M, N, K, I, bad ? "FAIL" : "PASS", worst, bad, pulse_ms, flops / pulse_ms / 1e9, info.registers_per_thread, info.blocks_per_sm, cublas_ms, flops / cublas_ms / 1e9,
           pedantic_ms, flops / peak_flops * 1e3, peak_flops / 1e12, cublas_ms / pulse_ms, flops / peak_flops * 1e3 / pulse_ms);
    printf("CSV,matmul,%ld,%ld,%ld,%.4f,%.4f,%.4f,%s\n", M, N, K, pulse_ms, cublas_ms, cublas_ms / pulse_ms, bad ? "FAIL" : "PASS");
    return bad ? 1 : 0;
}
