// The floors the benchmarks measure in each run: device-to-device
// copy bandwidth (read + write) and the FP32 FMA rate, and a problem's floor
// from them, the set-up every benchmark starts with, and the protocol of a
// row (check once, then time). Included by the
// benchmarks (after pulse_cuda.h, inside their anonymous namespace).
#ifndef PULSE_BENCH_FLOORS_H
#define PULSE_BENCH_FLOORS_H

/// Many independent FMA chains per thread so that the FMA pipes, not latency,
/// bound the kernel; the result is stored only under a condition the compiler
/// cannot decide, which keeps every chain live.
constexpr int kFmaChains = 8;
__global__ void __launch_bounds__(256) fma_rate_kernel(float *sink, int iterations, float a, float b) {
    float v[kFmaChains];
#pragma unroll
    for (int c = 0; c < kFmaChains; c++) v[c] = threadIdx.x * 1e-3f + c;
#pragma unroll 16
    for (int i = 0; i < iterations; i++) {
#pragma unroll
        for (int c = 0; c < kFmaChains; c++) v[c] = fmaf(v[c], a, b);
    }
    float s = 0;
#pragma unroll
    for (int c = 0; c < kFmaChains; c++) s += v[c];
    if (s == -1.0f) sink[0] = s;
}

struct Floors {
    double bandwidth = 0;  // bytes/s, read + write
    double fma_rate = 0;   // FMA/s
    double seconds(double outputs, double fmas_per_output) const {
        return outputs * std::max(8.0 / bandwidth, fmas_per_output / fma_rate);
    }
};

Floors measure_floors(const cudaDeviceProp &prop, cudaStream_t stream) {
    Floors f;
    {
        // Far larger than L2, so the copy streams through DRAM both ways.
        const size_t bytes = (size_t)1 << 30;
        pulse::cuda::DeviceBuffer<char> src(bytes), dst(bytes);
        PULSE_CUDA_CHECK(cudaMemset(src.data(), 1, bytes));
        double ms = pulse::cuda::time_median_ms([&] {
            PULSE_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, stream));
        }, 3, 20, stream);
        f.bandwidth = 2.0 * (double)bytes / (ms * 1e-3);
    }
    {
        pulse::cuda::DeviceBuffer<float> sink(1);
        const int threads = 256;
        const int blocks = prop.multiProcessorCount * (prop.maxThreadsPerMultiProcessor / threads) * 8;
        const int iterations = 4096;
        double ms = pulse::cuda::time_median_ms([&] {
            fma_rate_kernel<<<blocks, threads, 0, stream>>>(sink.data(), iterations, 0.9999f, 1e-4f);
        }, 3, 20, stream);
        f.fma_rate = (double)blocks * threads * iterations * kFmaChains / (ms * 1e-3);
    }
    return f;
}

/// The GPU and its floors, the first lines of every log.
inline void print_floors(const cudaDeviceProp &prop, const Floors &floors) {
    std::printf("GPU: %s (%d SMs)\n", prop.name, prop.multiProcessorCount);
    std::printf("copy bandwidth (D2D, read + write): %.1f GB/s\n", floors.bandwidth / 1e9);
    std::printf("FP32 FMA rate: %.2f T FMA/s\n", floors.fma_rate / 1e12);
}

/// What every benchmark sets up first: device 0's properties, a stream, and
/// the floors, printed.
struct BenchStart {
    cudaDeviceProp prop;
    cudaStream_t stream;
    Floors floors;
};
BenchStart start_bench() {
    BenchStart b;
    PULSE_CUDA_CHECK(cudaGetDeviceProperties(&b.prop, 0));
    // A blocking stream: it orders with the synchronous uploads (legacy
    // default stream) that set each problem up.
    PULSE_CUDA_CHECK(cudaStreamCreate(&b.stream));
    b.floors = measure_floors(b.prop, b.stream);
    print_floors(b.prop, b.floors);
    return b;
}

/// The exit status of a benchmark whose rows all ran: 1 (and how many) if
/// any row failed its check.
int bench_exit_status(int failures) {
    if (!failures) return 0;
    std::printf("\n%d row(s) failed their check\n", failures);
    return 1;
}

struct CheckResult {
    bool ok = true;
    double max_error = 0;  // |got - want| / the sum of the terms' magnitudes, the largest over the samples
    std::string detail;
};

/// A row's check, then its time: `run_and_check` runs the row once (Out
/// poisoned) and checks it; then `run` is timed (median of 25 after 3 warm-ups,
/// left NAN if anything threw). Returns the check column ("PASS (max err ..)"
/// or "FAIL ..."); a failed or throwing row counts in `failures`.
template <typename RunAndCheck>
std::string check_then_time(RunAndCheck &&run_and_check, const std::function<void()> &run, cudaStream_t stream,
                            int &failures, double &ms) {
    std::string check;
    ms = NAN;
    try {
        CheckResult c = run_and_check();
        char buf[64];
        std::snprintf(buf, sizeof buf, "(max err %.2g)", c.max_error);
        check = c.ok ? std::string("PASS ") + buf : "FAIL " + c.detail;
        if (!c.ok) failures++;
        ms = pulse::cuda::time_median_ms(run, 3, 25, stream);
    } catch (const std::exception &e) {
        if (check.empty() || check.rfind("PASS", 0) == 0) failures++;
        check = std::string("FAIL ") + e.what();
        cudaGetLastError();  // clear a non-sticky error so later rows can run
    }
    return check;
}

#endif
