// 1-D convolution Out(i) = sum_{q<Q} x(i + q) * w(q), fp32: Pulse's generated
// kernels (designs SBM and FBS) against a plain CUDA kernel for the same job,
// each checked, timed, and set against floors measured in the same run
// (device-to-device copy bandwidth and the FP32 FMA rate).
//
// Layout: x has extent N + Q - 1, w extent Q, Out extent N, all dense. A
// generated kernel reads N from Out's extent, so any N works.
//
// Build (scripts/gpu_bench.sh does this from a folder of generated kernels), one line:
//   nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo -I<pulse>/runtime -I<generated>
//        -DWITH_PULSE -DPULSE_QS="X(5) X(17)"
//        -DPULSE_CONV1D="X(sbm_q5) X(fbs_q5) X(sbm_q17) X(fbs_q17)" benchmarks/conv1d_bench.cu
//        <generated>/conv1d_sbm_q5.cu <generated>/conv1d_fbs_q5.cu ... -o conv1d_bench
// PULSE_QS (default X(5) X(17)) lists the filter lengths; PULSE_CONV1D lists
// the Pulse kernels as X({design}_q{Q}), each conv1d_{design}_q{Q}(x, w, Out,
// stream) from the generated conv1d_{design}_q{Q}.cu (one token per kernel:
// nvcc splits -D values at commas). A kernel whose Q is not in PULSE_QS is
// reported and skipped.
//
// Run: conv1d_bench [N] (default 2^27). Prints a table per Q and one line
// `CSV,conv1d,<kernel>,<Q>,<N>,1,<ms>,<fraction of floor>,<check>` per row
// (benchmarks/plot_conv.py reads those). Exits non-zero if any check failed.
//
// Floor for a problem: N * max(8 bytes / copy bandwidth, Q FMAs / FMA rate):
// every input read once and every output written once, or the FMAs alone.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "pulse_buffer.h"
#include "pulse_cuda.h"

#ifndef PULSE_QS
#define PULSE_QS X(5) X(17)
#endif

#ifdef WITH_PULSE
#ifndef PULSE_CONV1D
#error "WITH_PULSE needs PULSE_CONV1D, the Pulse kernels as X({design}_q{Q}) ..."
#endif
// The generated headers declare the same functions; a signature that
// disagrees with a pre-included header is a compile error.
#define X(name) extern "C" cudaError_t conv1d_##name(pulse_buffer x, pulse_buffer w, pulse_buffer Out, cudaStream_t stream);
PULSE_CONV1D
#undef X
#endif

namespace {

#define X(q) q,
constexpr int kFilterLengths[] = {PULSE_QS};
#undef X

constexpr int max_filter_length() {
    int m = 1;
    for (int q : kFilterLengths) m = q > m ? q : m;
    return m;
}
constexpr int kMaxQ = max_filter_length();
static_assert(kMaxQ * sizeof(float) <= 60 * 1024, "the plain kernel's filter must fit in constant memory");

// ---------------------------------------------------------------------------
// Floors (bench_floors.h, shared with conv2d_bench)

#include "bench_floors.h"

// ---------------------------------------------------------------------------
// The plain kernel: one thread per output, the filter in constant memory
// (every lane reads the same weight: one broadcast), the inputs through L1.

__constant__ float plain_weights[kMaxQ];

template<int Q>
__global__ void __launch_bounds__(256) plain_conv1d(const float *__restrict__ x, float *__restrict__ out, int64_t n) {
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float sum = 0;
#pragma unroll
    for (int q = 0; q < Q; q++) sum = fmaf(__ldg(x + i + q), plain_weights[q], sum);
    out[i] = sum;
}

void launch_plain(int Q, const float *x, float *out, int64_t n, cudaStream_t stream) {
    const unsigned blocks = (unsigned)((n + 255) / 256);
    switch (Q) {
#define X(q)                                                      \
    case q: plain_conv1d<q><<<blocks, 256, 0, stream>>>(x, out, n); \
        break;
        PULSE_QS
#undef X
    default: throw std::runtime_error("no plain kernel for Q = " + std::to_string(Q));
    }
    PULSE_CUDA_CHECK(cudaGetLastError());
}

#ifdef WITH_PULSE
struct PulseKernel {
    std::string design;
    int q = 0;
    cudaError_t (*fn)(pulse_buffer, pulse_buffer, pulse_buffer, cudaStream_t) = nullptr;
};

/// The kernels in PULSE_CONV1D, their design and Q read off the name.
std::vector<PulseKernel> pulse_kernels() {
    std::vector<PulseKernel> kernels;
    auto add = [&](const std::string &name, cudaError_t (*fn)(pulse_buffer, pulse_buffer, pulse_buffer, cudaStream_t)) {
        const size_t at = name.rfind("_q");
        if (at == std::string::npos) throw std::runtime_error("PULSE_CONV1D: '" + name + "' is not {design}_q{Q}");
        kernels.push_back({name.substr(0, at), std::atoi(name.c_str() + at + 2), fn});
    };
#define X(name) add(#name, conv1d_##name);
    PULSE_CONV1D
#undef X
    return kernels;
}
#endif

// ---------------------------------------------------------------------------
// The check

/// Compares Out against a double-precision sum at every sample point (a NaN,
/// from the poison, means an output was never written).
CheckResult check_result(const std::vector<float> &hx, const std::vector<float> &hw, int Q, const std::vector<int64_t> &samples,
                         const float *device, int64_t n, double tolerance) {
    std::vector<float> got((size_t)n);
    PULSE_CUDA_CHECK(cudaMemcpy(got.data(), device, (size_t)n * sizeof(float), cudaMemcpyDeviceToHost));
    CheckResult r;
    for (int64_t i : samples) {
        double want = 0, scale = 0;
        for (int q = 0; q < Q; q++) {
            double t = (double)hx[(size_t)(i + q)] * hw[q];
            want += t, scale += std::fabs(t);
        }
        const double e = std::fabs((double)got[(size_t)i] - want) / std::max(scale, 1e-30);
        if (!(e <= tolerance)) {
            char buf[160];
            std::snprintf(buf, sizeof buf, "Out(%lld) = %.9g, expected %.9g", (long long)i, got[(size_t)i], want);
            r.ok = false, r.detail = buf;
            return r;
        }
        r.max_error = std::max(r.max_error, e);
    }
    return r;
}

// ---------------------------------------------------------------------------
// Rows of the table

int failures = 0;

void print_row(const std::string &label, const std::string &kernel, int Q, int64_t n, double ms, const Floors &floors,
               const std::string &check) {
    const double fraction = floors.seconds((double)n, Q) / (ms * 1e-3);
    std::printf("  %-28s %10.4f %10.2f %9.3f  %s\n", label.c_str(), ms, (double)n / (ms * 1e-3) / 1e9, fraction, check.c_str());
    const std::string status = check.substr(0, check.find(' '));
    std::printf("CSV,conv1d,%s,%d,%lld,1,%.6f,%.4f,%s\n", kernel.c_str(), Q, (long long)n, ms, fraction, status.c_str());
    std::fflush(stdout);
}

/// NaN-poisons Out, runs once and checks, then times. A failed check is
/// reported and counted; the row is still timed unless it threw.
void run_row(const std::string &label, const std::string &kernel, int Q, const std::function<void()> &run,
             pulse::cuda::DeviceBuffer<float> &out, const std::vector<float> &hx, const std::vector<float> &hw,
             const std::vector<int64_t> &samples, const Floors &floors, cudaStream_t stream) {
    const int64_t n = (int64_t)out.size();
    double ms = NAN;
    const std::string check = check_then_time(
        [&] {
            PULSE_CUDA_CHECK(cudaMemsetAsync(out.data(), 0xff, out.bytes(), stream));
            run();
            PULSE_CUDA_CHECK(cudaStreamSynchronize(stream));
            PULSE_CUDA_CHECK(cudaGetLastError());
            return check_result(hx, hw, Q, samples, out.data(), n, 1e-4);
        },
        run, stream, failures, ms);
    print_row(label, kernel, Q, n, ms, floors, check);
}

}  // namespace

int main(int argc, char **argv) {
    const int64_t n = argc > 1 ? std::atoll(argv[1]) : (int64_t)1 << 27;
    if (n < 1) {
        std::fprintf(stderr, "usage: conv1d_bench [N]\n");
        return 2;
    }
    try {
        const BenchStart start = start_bench();
        cudaStream_t stream = start.stream;
        const Floors &floors = start.floors;
#ifdef WITH_PULSE
        const std::vector<PulseKernel> kernels = pulse_kernels();
        for (const PulseKernel &k : kernels)
            if (std::find(std::begin(kFilterLengths), std::end(kFilterLengths), k.q) == std::end(kFilterLengths))
                std::printf("note: conv1d_%s_q%d skipped: Q=%d is not in PULSE_QS\n", k.design.c_str(), k.q, k.q);
#else
        std::printf("no Pulse kernels (built without WITH_PULSE)\n");
#endif

        // x for the longest filter, uniform in [-1, 1]; shorter filters use a prefix.
        std::mt19937_64 rng(12345);
        std::vector<float> hx((size_t)(n + kMaxQ - 1));
        {
            std::uniform_real_distribution<float> value(-1.0f, 1.0f);
            for (float &v : hx) v = value(rng);
        }
        // The first and last outputs (where the input ends) and random ones.
        std::vector<int64_t> samples;
        for (int64_t i = 0; i < std::min<int64_t>(n, 1024); i++) samples.push_back(i), samples.push_back(n - 1 - i);
        {
            std::uniform_int_distribution<int64_t> pick(0, n - 1);
            for (int s = 0; s < 40000; s++) samples.push_back(pick(rng));
        }

        pulse::cuda::DeviceBuffer<float> dx(hx.size()), dout((size_t)n), dw((size_t)kMaxQ);
        dx.upload(hx);

        for (int Q : kFilterLengths) {
            std::vector<float> hw((size_t)Q);
            {
                std::uniform_real_distribution<float> value(-1.0f, 1.0f);
                for (float &v : hw) v = value(rng);
            }
            PULSE_CUDA_CHECK(cudaMemcpy(dw.data(), hw.data(), hw.size() * sizeof(float), cudaMemcpyHostToDevice));
            PULSE_CUDA_CHECK(cudaMemcpyToSymbol(plain_weights, hw.data(), hw.size() * sizeof(float)));
            const double outputs = (double)n;
            std::printf("\nconv1d Q=%d N=%lld: floor %.4f ms (bytes %.4f ms, FMAs %.4f ms)\n", Q, (long long)n,
                        floors.seconds(outputs, Q) * 1e3, outputs * 8.0 / floors.bandwidth * 1e3, outputs * Q / floors.fma_rate * 1e3);
            std::printf("  %-28s %10s %10s %9s  %s\n", "kernel", "ms", "Gout/s", "of floor", "check");

#ifdef WITH_PULSE
            const pulse_buffer bx = pulse_dense_buffer(dx.data(), {n + Q - 1});
            const pulse_buffer bw = pulse_dense_buffer(dw.data(), {Q});
            const pulse_buffer bo = pulse_dense_buffer(dout.data(), {n});
            for (const PulseKernel &k : kernels) {
                if (k.q != Q) continue;
                auto fn = k.fn;
                run_row(std::string("Pulse conv1d_") + k.design + "_q" + std::to_string(Q), std::string("pulse_") + k.design, Q,
                        [=] { PULSE_CUDA_CHECK(fn(bx, bw, bo, stream)); }, dout, hx, hw, samples, floors, stream);
            }
#endif
            run_row("plain CUDA", "plain", Q, [&] { launch_plain(Q, dx.data(), dout.data(), n, stream); }, dout, hx, hw, samples,
                    floors, stream);
        }
        PULSE_CUDA_CHECK(cudaStreamDestroy(stream));
    } catch (const std::exception &e) {
        std::printf("FAIL: %s\n", e.what());
        return 1;
    }
    return bench_exit_status(failures);
}
