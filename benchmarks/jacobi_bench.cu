// Iterative 2-D Jacobi (the 5-point star of examples/stencil/jacobi.cpp),
// fp32 and fp64: N time steps of
//   v(x, y) <- 0.25 * (v(x - 1, y) + v(x + 1, y) + v(x, y - 1) + v(x, y + 1))
// on the interior of a W x H grid, its boundary ring held. Pulse's
// temporal-blocked kernels (jacobi2d: T steps per launch in overlapped tiles,
// N / T launches, the output of one the input of the next) against a plain
// kernel (one cell per thread) launched N times, each checked, timed, and set
// against the single-sweep roofline measured in the same run.
//
// Layout (dimension 0 innermost): two grids A and B, each W x H with a pad of
// P cells on every side (P >= the largest T; the pad is held, as the ring is),
// rows pitched to a multiple of 32 elements. A launch reads one grid with its
// pad (u: min -P, extent W + 2P) and writes the other's W x H cells (Out:
// min 0, extent W, the same memory); n holds {W, H}.
//
// Build (scripts/gpu_bench_jacobi.sh does this from a folder of generated
// kernels), one line:
//   nvcc -O3 -std=c++17 -arch=sm_90 -I<pulse>/runtime -I<generated> -DWITH_PULSE
//        -include pulse_jacobi.h benchmarks/jacobi_bench.cu <generated>/jacobi2d_*.cu -o jacobi_bench
// where pulse_jacobi.h defines PULSE_JACOBI as a list of J(type, T, name)
// (e.g. J(f32, 4, jacobi2d_f32_t4)) and includes each kernel's header.
//
// Run: jacobi_bench [W H N] (default 8192 8192 120; N is rounded up to a
// multiple of each kernel's T). Prints a table per type and one line
// `CSV,jacobi2d,<kernel>,<type>,<T>,<W>,<H>,<N>,<ms>,<Gcells/s>,<x roofline>,<check>`
// per row (benchmarks/plot_jacobi.py reads those). Exits non-zero if a check failed.
//
// Roofline: the single-sweep bound, copy bandwidth / (2 * sizeof(T)) cell
// updates per second (every cell read and written once per step): 8 B per
// update in fp32, 16 B in fp64. A temporal-blocked kernel beats it by doing
// several steps per trip through DRAM.
//
// Check: every kernel first runs a small problem (509 x 383, 24 steps) that
// is compared, cell by cell, with a CPU reference computing in the same type
// and order; at the timed size its result is compared with the plain
// kernel's. Both in a tolerance of 1e-5 (fp32) or 1e-12 (fp64) of the values'
// scale (the inputs lie in [0, 1)).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "pulse_buffer.h"
#include "pulse_cuda.h"

#ifndef PULSE_JACOBI
#define PULSE_JACOBI
#endif

namespace {

#include "bench_floors.h"

using pulse::cuda::DeviceBuffer;

/// The two padded grids of one problem.
template <typename T>
struct Grids {
    int64_t width, height, pad, pitch;
    DeviceBuffer<T> a, b;
    DeviceBuffer<int32_t> size;
    Grids(int64_t w, int64_t h, int64_t p)
        : width(w), height(h), pad(p), pitch((w + 2 * p + 31) / 32 * 32), a(pitch * (h + 2 * p)), b(pitch * (h + 2 * p)),
          size(2) {
        int32_t n[2] = {(int32_t)w, (int32_t)h};
        PULSE_CUDA_CHECK(cudaMemcpy(size.data(), n, sizeof n, cudaMemcpyHostToDevice));
    }
    size_t elements() const { return (size_t)(pitch * (height + 2 * pad)); }
    /// Grid `g` with its pad, as a kernel reads it.
    pulse_buffer padded(T *g) const {
        pulse_buffer d = pulse_pitched_buffer(g, width + 2 * pad, height + 2 * pad, pitch);
        d.min[0] = d.min[1] = -pad;
        return d;
    }
    /// Grid `g`'s W x H cells, as a kernel writes them.
    pulse_buffer cells(T *g) const { return pulse_pitched_buffer(g + pad * pitch + pad, width, height, pitch); }
    pulse_buffer size_buffer() const { return pulse_dense_buffer(size.data(), {2}); }
};

/// Random values in [0, 1) over the whole padded grid (ring and pad included: they are held).
template <typename T>
std::vector<T> random_grid(size_t elements, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::vector<T> v(elements);
    for (T &x : v) x = (T)unit(rng);
    return v;
}

/// N steps on the CPU, in the kernels' type and order of operations.
template <typename T>
void reference_steps(std::vector<T> &grid, int64_t w, int64_t h, int64_t pad, int64_t pitch, int steps) {
    std::vector<T> next = grid;
    for (int s = 0; s < steps; s++) {
        for (int64_t y = 1; y < h - 1; y++) {
            for (int64_t x = 1; x < w - 1; x++) {
                const T *c = &grid[(y + pad) * pitch + x + pad];
                next[(y + pad) * pitch + x + pad] = (T)0.25 * (((c[-1] + c[1]) + c[-pitch]) + c[pitch]);
            }
        }
        std::swap(grid, next);
    }
}

template <typename T>
__global__ void plain_jacobi_step(const T *__restrict__ in, T *__restrict__ out, int64_t w, int64_t h, int64_t pitch) {
    const int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, y = (int64_t)blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    const T *c = in + y * pitch + x;
    T v = *c;
    if (x >= 1 && x < w - 1 && y >= 1 && y < h - 1) v = (T)0.25 * (((c[-1] + c[1]) + c[-pitch]) + c[pitch]);
    out[y * pitch + x] = v;
}

/// One kernel of the table: `steps_per_launch` steps per call of `launch(in, out)`.
template <typename T>
struct Kernel {
    std::string name;
    int steps_per_launch;
    std::function<cudaError_t(const Grids<T> &, T *in, T *out, cudaStream_t)> launch;
};

/// Runs `steps` steps of `k` from grid a (result in a or b; returns it).
template <typename T>
T *run_steps(const Kernel<T> &k, Grids<T> &g, int steps, cudaStream_t stream) {
    T *in = g.a.data(), *out = g.b.data();
    for (int s = 0; s < steps; s += k.steps_per_launch) {
        PULSE_CUDA_CHECK(k.launch(g, in, out, stream));
        std::swap(in, out);
    }
    return in;
}

/// Max |got - expected| over the W x H cells, relative to 1 (the values' scale).
template <typename T>
double max_error(const std::vector<T> &got, const std::vector<T> &expected, const Grids<T> &g) {
    double worst = 0;
    for (int64_t y = 0; y < g.height; y++) {
        for (int64_t x = 0; x < g.width; x++) {
            size_t i = (size_t)((y + g.pad) * g.pitch + x + g.pad);
            double e = std::fabs((double)got[i] - (double)expected[i]);
            if (!(e <= worst)) worst = std::isnan(e) ? INFINITY : e;
        }
    }
    return worst;
}

template <typename T>
std::vector<T> download(const Grids<T> &g, const T *grid) {
    std::vector<T> host(g.elements());
    PULSE_CUDA_CHECK(cudaMemcpy(host.data(), grid, host.size() * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
}

template <typename T>
void upload_both(Grids<T> &g, const std::vector<T> &host) {
    PULSE_CUDA_CHECK(cudaMemcpy(g.a.data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
    PULSE_CUDA_CHECK(cudaMemcpy(g.b.data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
}

template <typename T>
int run_type(const char *type, const std::vector<Kernel<T>> &kernels, int64_t w, int64_t h, int steps, int64_t pad,
             const BenchStart &bench) {
    const double tolerance = sizeof(T) == 4 ? 1e-5 : 1e-12;
    const double roofline = bench.floors.bandwidth / (2.0 * sizeof(T));  // cell updates per second
    int failures = 0;
    std::printf("\njacobi2d %s W=%lld H=%lld: roofline %.1f G cell-updates/s (%d B per update)\n", type, (long long)w,
                (long long)h, roofline / 1e9, (int)(2 * sizeof(T)));
    std::printf("  %-34s %3s %6s %10s %10s %9s  %s\n", "kernel", "T", "steps", "ms", "Gcells/s", "x roof", "check");
    // The small problem against the CPU.
    const int64_t sw = 509, sh = 383;
    const int small_steps = 24;
    Grids<T> small(sw, sh, pad);
    std::vector<T> start_small = random_grid<T>(small.elements(), 11);
    std::vector<T> expected_small = start_small;
    reference_steps(expected_small, sw, sh, pad, small.pitch, small_steps);
    // The timed problem; the plain kernel's result is the reference there.
    Grids<T> big(w, h, pad);
    std::vector<T> start = random_grid<T>(big.elements(), 7);
    std::vector<T> plain_result;
    for (const Kernel<T> &k : kernels) {
        const int n = (steps + k.steps_per_launch - 1) / k.steps_per_launch * k.steps_per_launch;
        std::string check;
        {
            upload_both(small, start_small);
            const int n_small = small_steps / k.steps_per_launch * k.steps_per_launch;
            std::vector<T> expected = start_small;
            if (n_small != small_steps) reference_steps(expected, sw, sh, pad, small.pitch, n_small);
            T *result = run_steps(k, small, n_small, bench.stream);
            PULSE_CUDA_CHECK(cudaStreamSynchronize(bench.stream));
            double e = max_error(download(small, result), n_small == small_steps ? expected_small : expected, small);
            if (!(e <= tolerance)) {
                char text[160];
                std::snprintf(text, sizeof text, "FAIL (%d steps at %lldx%lld: max error %.3g)", n_small, (long long)sw,
                              (long long)sh, e);
                check = text;
            }
        }
        upload_both(big, start);
        double ms = pulse::cuda::time_median_ms([&] { run_steps(k, big, n, bench.stream); }, 1, 5, bench.stream);
        // One more run from the start, for the result.
        upload_both(big, start);
        T *result = run_steps(k, big, n, bench.stream);
        PULSE_CUDA_CHECK(cudaStreamSynchronize(bench.stream));
        std::vector<T> got = download(big, result);
        if (check.empty()) {
            if (plain_result.empty() && k.steps_per_launch == 1) {
                plain_result = got;
                check = "PASS (the reference at this size)";
            } else if (n != steps) {
                check = "PASS (small problem; other step count here)";
            } else {
                double e = max_error(got, plain_result, big);
                char text[96];
                std::snprintf(text, sizeof text, "%s (max diff to plain %.2g)", e <= tolerance ? "PASS" : "FAIL", e);
                check = text;
            }
        }
        if (check.rfind("FAIL", 0) == 0) failures++;
        const double updates = (double)w * h * n, rate = updates / (ms * 1e-3);
        std::printf("  %-34s %3d %6d %10.3f %10.1f %9.2f  %s\n", k.name.c_str(), k.steps_per_launch, n, ms, rate / 1e9,
                    rate / roofline, check.c_str());
        std::printf("CSV,jacobi2d,%s,%s,%d,%lld,%lld,%d,%.4f,%.2f,%.4f,%s\n", k.name.c_str(), type, k.steps_per_launch,
                    (long long)w, (long long)h, n, ms, rate / 1e9, rate / roofline, check.rfind("FAIL", 0) == 0 ? "FAIL" : "PASS");
    }
    return failures;
}

template <typename T>
Kernel<T> plain_kernel() {
    return Kernel<T>{"plain CUDA (1 cell/thread, N launches)", 1, [](const Grids<T> &g, T *in, T *out, cudaStream_t s) {
                         dim3 threads(32, 8), blocks((unsigned)((g.width + 31) / 32), (unsigned)((g.height + 7) / 8));
                         const int64_t offset = g.pad * g.pitch + g.pad;
                         plain_jacobi_step<T><<<blocks, threads, 0, s>>>(in + offset, out + offset, g.width, g.height, g.pitch);
                         return cudaGetLastError();
                     }};
}

}  // namespace

int main(int argc, char **argv) {
    int64_t w = 8192, h = 8192;
    int steps = 120;
    if (argc >= 3) w = std::atoll(argv[1]), h = std::atoll(argv[2]);
    if (argc >= 4) steps = std::atoi(argv[3]);
    if (w < 3 || h < 3 || steps < 1) {
        std::fprintf(stderr, "usage: jacobi_bench [W H [N]] (W, H >= 3, N >= 1)\n");
        return 2;
    }
    BenchStart bench = start_bench();
    std::vector<Kernel<float>> f32{plain_kernel<float>()};
    std::vector<Kernel<double>> f64{plain_kernel<double>()};
    int64_t pad = 1;
#define J(type, T, name)                                                                                          \
    pad = std::max<int64_t>(pad, T);                                                                              \
    type.push_back({#name, T, [](const auto &g, auto *in, auto *out, cudaStream_t s) {                            \
                        return name(g.padded(in), g.size_buffer(), g.cells(out), s);                              \
                    }});
    PULSE_JACOBI
#undef J
    return bench_exit_status(run_type("f32", f32, w, h, steps, pad, bench) + run_type("f64", f64, w, h, steps, pad, bench));
}
