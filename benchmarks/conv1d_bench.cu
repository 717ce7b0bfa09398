// 1-D convolution Out(n) = sum_q x(n + q) * w(q): a Pulse kernel against a plain
// CUDA kernel for the same job, and both against the bandwidth floor measured
// in the same run (a device-to-device copy).
//
// The Pulse kernel comes from `conv1d -g DESIGN --param Q=.. --param C=.. --emit cuda`;
// build one binary per kernel (its functions carry the spec's name):
//   nvcc -O3 -std=c++17 -arch=sm_90 -I<pulse>/runtime -I<generated dir> \
//        -DPULSE_KERNEL=conv1d_sbm -DPULSE_KERNEL_HEADER='"conv1d_sbm.h"' -DFILTER_Q=5 \
//        benchmarks/conv1d_bench.cu <generated dir>/conv1d_sbm.cu -o conv1d_sbm_q5_bench
// and run `conv1d_sbm_q5_bench [outputs]` (default 2^25 outputs).
//
// Layout (from the conv1d spec): x covers [0, outputs + Q - 2], w [0, Q - 1],
// Out(c, b) is dense with output n = b * C + c at element n, so the plain
// kernel and the Pulse kernel write the same array.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "pulse_cuda.h"
#include PULSE_KERNEL_HEADER

#ifndef FILTER_Q
#error "define FILTER_Q, the filter length the Pulse kernel was generated with"
#endif

#define PULSE_CAT2(a, b) a##b
#define PULSE_CAT(a, b) PULSE_CAT2(a, b)
#define KERNEL_FN(suffix) PULSE_CAT(PULSE_KERNEL, suffix)
#define PULSE_STR2(a) #a
#define PULSE_STR(a) PULSE_STR2(a)

namespace {

__constant__ float filter_weights[FILTER_Q];

/// The plain kernel: one thread per output, the filter in constant memory
/// (every lane reads the same weight: one broadcast), the inputs through L1.
template<int Q>
__global__ void __launch_bounds__(256) plain_conv1d(const float *__restrict__ x, float *__restrict__ out, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float sum = 0;
#pragma unroll
    for (int q = 0; q < Q; q++) sum += x[i + q] * filter_weights[q];
    out[i] = sum;
}

}  // namespace

int main(int argc, char **argv) {
    const int Q = FILTER_Q;
    const int64_t wanted = argc > 1 ? std::atoll(argv[1]) : (int64_t)1 << 25;
    try {
        cudaDeviceProp prop;
        PULSE_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
        // Outputs per array instance: the extent of c.
        const int64_t per_instance = KERNEL_FN(_cuda_output_extent)(0, 0, 1);
        const int64_t instances = (wanted + per_instance - 1) / per_instance;
        const int64_t n = KERNEL_FN(_cuda_output_elements)(0, instances);
        const int64_t nx = KERNEL_FN(_cuda_input_elements)(0, instances);
        if (KERNEL_FN(_cuda_input_elements)(1, instances) != Q || nx != n + Q - 1) {
            std::printf("FAIL: the kernel's layout is not the conv1d layout this benchmark assumes (x %lld for %lld outputs)\n",
                        (long long)nx, (long long)n);
            return 1;
        }
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> value(0.1f, 1.0f);
        std::vector<float> hx(nx), hw(Q);
        for (float &v : hx) v = value(rng) * (rng() & 1 ? 1 : -1);
        for (float &v : hw) v = value(rng) * (rng() & 1 ? 1 : -1);
        pulse::cuda::DeviceBuffer<float> dx(nx), dw(Q), dout(n), dplain(n);
        dx.upload(hx);
        dw.upload(hw);
        PULSE_CUDA_CHECK(cudaMemcpyToSymbol(filter_weights, hw.data(), Q * sizeof(float)));
        dout.fill_bytes(0xff);
        dplain.fill_bytes(0xff);

        // The floor: a device-to-device copy of the same number of bytes as
        // the convolution must move (each input once, each output once).
        const double bytes = 4.0 * (double)nx + 4.0 * (double)n;
        pulse::cuda::DeviceBuffer<char> copy_src((size_t)(bytes / 2)), copy_dst((size_t)(bytes / 2));
        PULSE_CUDA_CHECK(cudaMemset(copy_src.data(), 1, copy_src.bytes()));
        double copy_ms = pulse::cuda::time_median_ms([&] {
            PULSE_CUDA_CHECK(cudaMemcpyAsync(copy_dst.data(), copy_src.data(), copy_src.bytes(), cudaMemcpyDeviceToDevice, 0));
        }, 3, 25);
        const double copy_bw = 2.0 * (double)copy_src.bytes() / (copy_ms * 1e-3);  // read + write
        const double floor_s = bytes / copy_bw;

        double pulse_ms = pulse::cuda::time_median_ms([&] {
            PULSE_CUDA_CHECK(PULSE_KERNEL(dx.data(), dw.data(), dout.data(), instances, 0));
        }, 3, 25);
        const unsigned blocks = (unsigned)((n + 255) / 256);
        double plain_ms = pulse::cuda::time_median_ms([&] { plain_conv1d<Q><<<blocks, 256>>>(dx.data(), dplain.data(), n); }, 3, 25);

        // Both kernels against a double-precision CPU sum (every output).
        std::vector<float> got = dout.download(), plain = dplain.download();
        double err_pulse = 0, err_plain = 0;
        for (int64_t i = 0; i < n; i++) {
            double want = 0;
            for (int q = 0; q < Q; q++) want += (double)hx[i + q] * hw[q];
            double scale = std::max(1.0, std::fabs(want));
            double e1 = std::fabs(got[i] - want) / scale, e2 = std::fabs(plain[i] - want) / scale;
            if (!(e1 <= 1e-5) || !(e2 <= 1e-5)) {
                std::printf("FAIL %s Q=%d: output %lld: pulse %.9g plain %.9g expected %.9g\n", PULSE_STR(PULSE_KERNEL), Q,
                            (long long)i, got[i], plain[i], want);
                return 1;
            }
            err_pulse = std::max(err_pulse, e1), err_plain = std::max(err_plain, e2);
        }
        auto line = [&](const char *kernel, double ms) {
            std::printf("%-18s Q=%-3d outputs %lld  %8.4f ms  %7.2f Goutputs/s  %5.3f of floor\n", kernel, Q, (long long)n, ms,
                        n / (ms * 1e-3) / 1e9, floor_s / (ms * 1e-3));
        };
        std::printf("%s, %s, Q=%d, copy bandwidth %.1f GB/s, floor %.4f ms (%.0f MB moved), max rel err pulse %.2g plain %.2g\n",
                    prop.name, PULSE_STR(PULSE_KERNEL), Q, copy_bw / 1e9, floor_s * 1e3, bytes / 1e6, err_pulse, err_plain);
        line(PULSE_STR(PULSE_KERNEL), pulse_ms);
        line("plain CUDA", plain_ms);
    } catch (const std::exception &e) {
        std::printf("FAIL: %s\n", e.what());
        return 1;
    }
    return 0;
}
