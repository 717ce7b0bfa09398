// Iterative Jacobi stencils, fp32 and fp64: N time steps of the 2-D
// 5-point star (examples/stencil/jacobi.cpp, jacobi2d)
//   v(x, y) <- 0.25 * (v(x - 1, y) + v(x + 1, y) + v(x, y - 1) + v(x, y + 1))
// the 2-D 9-point box (jacobi2d with BOX=1)
//   v(x, y) <- 1/9 * (the sum of the 3 x 3 cells around, rows in order, each left to right)
// the 3-D 7-point star (jacobi3d)
//   v(x, y, z) <- 0.25 * v(x, y, z) + 0.125 * (the sum of its six neighbours)
// or the 3-D 27-point box (jacobi3d with BOX=1)
//   v(x, y, z) <- 1/27 * (the sum of the 3 x 3 x 3 cells around, planes in order, each as in 2-D)
// on the interior of a W x H (x D) grid, its boundary held. Pulse's
// temporal-blocked kernels (T steps per launch in overlapped tiles, N / T
// launches, the output of one the input of the next) against a plain kernel
// (one cell per thread) launched N times, each checked, timed, and set against
// the single-sweep roofline measured in the same run.
//
// Layout (dimension 0 innermost): two grids A and B, each W x H (x D) with a
// pad of P cells on every side (P >= the largest T; the pad is held, as the
// boundary is), rows pitched to a multiple of 32 elements, planes packed. A
// launch reads one grid with its pad (u: min -P, extent W + 2P, ...) and
// writes the other's cells (Out: min 0, extent W, ..., the same memory); n
// holds {W, H} or {W, H, D}.
//
// Build (scripts/gpu_bench_jacobi.sh does this from a folder of generated
// kernels), one line:
//   nvcc -O3 -std=c++17 -arch=sm_90 -I<pulse>/runtime -I<generated> -DWITH_PULSE
//        -include pulse_jacobi.h benchmarks/jacobi_bench.cu <generated>/jacobi*d_*.cu -o jacobi_bench
// where pulse_jacobi.h defines PULSE_JACOBI as a list of J(dims, type, T, name)
// (e.g. J(2, f32, 4, jacobi2d_f32_t4)), JB(type, T, name) for the 9-point
// box, JB3(type, T, name) for the 27-point box and JG(type, T, points, name)
// for a 2-D device-wide kernel (jacobi2d GRID=1: every tile resident at
// once, a cooperative launch; where the grid does not fit the GPU the launch
// fails with cudaErrorCooperativeLaunchTooLarge and its row says SKIP), and
// includes each kernel's header.
//
// Run: jacobi_bench [--size2d W H N] [--size3d W H D N] [2d] [box] [3d] [box3d]
// (default 8192 x 8192 and 512 x 512 x 512, N = 120 steps, rounded up to a
// multiple of each kernel's T; the boxes on the 2-D and 3-D sizes; every problem unless
// some are named). Prints a table per problem and type and one line
// `CSV,<problem>,<kernel>,<type>,<T>,<W>,<H>,<D>,<N>,<ms>,<Gcells/s>,<x roofline>,<check>`
// per row, problem jacobi2d, jacobi2d9 (the box), jacobi3d or jacobi3d27 (D = 1 in 2-D;
// benchmarks/plot_jacobi.py reads those). Exits non-zero if a check failed.
//
// Roofline: the single-sweep bound, copy bandwidth / (2 * sizeof(T)) cell
// updates per second (every cell read and written once per step): 8 B per
// update in fp32, 16 B in fp64. A temporal-blocked kernel beats it by doing
// several steps per trip through DRAM.
//
// Check: every kernel first runs a small problem (509 x 383, or 61 x 47 x 37;
// 24 steps) that is compared, cell by cell, with a CPU reference computing
// in the same type and order; at the timed size its result is compared with
// the plain kernel's. Both in a tolerance of 1e-5 (fp32) or 1e-12 (fp64) of
// the values' scale (the inputs lie in [0, 1)).
#include <algorithm>
#include <array>
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

/// A problem: its stencil (points: 5 or 9 in 2-D, 7 or 27 in 3-D) on W x H (x D)
/// cells (D = 1 in 2-D), N steps.
struct Size {
    int dims;
    int64_t w, h, d;
    int steps;
    int points = 0;
    const char *name() const {
        return dims == 3 ? (points == 27 ? "jacobi3d27" : "jacobi3d") : points == 9 ? "jacobi2d9" : "jacobi2d";
    }
};

/// The two padded grids of one problem.
template <typename T>
struct Grids {
    int dims, points;
    int64_t width, height, depth, pad, zpad, pitch, plane;
    DeviceBuffer<T> a, b;
    DeviceBuffer<int32_t> size;
    Grids(const Size &s, int64_t p)
        : dims(s.dims), points(s.points), width(s.w), height(s.h), depth(s.d), pad(p), zpad(s.dims == 3 ? p : 0), pitch(pitch_of(s, p)),
          plane(pitch * (s.h + 2 * p)), a(elements_of(s, p)), b(elements_of(s, p)), size(3) {
        int32_t n[3] = {(int32_t)s.w, (int32_t)s.h, (int32_t)s.d};
        PULSE_CUDA_CHECK(cudaMemcpy(size.data(), n, sizeof n, cudaMemcpyHostToDevice));
    }
    /// Rows of the padded grid, pitched to a multiple of 32 elements.
    static int64_t pitch_of(const Size &s, int64_t p) { return (s.w + 2 * p + 31) / 32 * 32; }
    static size_t elements_of(const Size &s, int64_t p) {
        return (size_t)(pitch_of(s, p) * (s.h + 2 * p) * (s.d + (s.dims == 3 ? 2 * p : 0)));
    }
    size_t elements() const { return (size_t)(plane * (depth + 2 * zpad)); }
    /// The offset of cell (x, y, z).
    int64_t at(int64_t x, int64_t y, int64_t z) const { return (z + zpad) * plane + (y + pad) * pitch + x + pad; }
    /// A w x h (x d) window of the grids' layout starting at `origin`.
    pulse_buffer view(T *origin, int64_t w, int64_t h, int64_t d) const {
        pulse_buffer v = dims == 3 ? pulse_dense_buffer(origin, {w, h, d}) : pulse_dense_buffer(origin, {w, h});
        v.stride[1] = pitch;
        if (dims == 3) v.stride[2] = plane;
        return v;
    }
    /// Grid `g` with its pad, as a kernel reads it.
    pulse_buffer padded(T *g) const {
        pulse_buffer v = view(g, width + 2 * pad, height + 2 * pad, depth + 2 * zpad);
        for (int k = 0; k < dims; k++) v.min[k] = -pad;
        return v;
    }
    /// Grid `g`'s cells, as a kernel writes them.
    pulse_buffer cells(T *g) const { return view(g + at(0, 0, 0), width, height, depth); }
    pulse_buffer size_buffer() const { return pulse_dense_buffer(size.data(), {dims}); }
};

/// Random values in [0, 1) over the whole padded grid (boundary and pad included: they are held).
template <typename T>
std::vector<T> random_grid(size_t elements, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::vector<T> v(elements);
    for (T &x : v) x = (T)unit(rng);
    return v;
}

/// One step at cell c (its neighbours `pitch` and `plane` elements away), in
/// the kernels' order of operations.
template <typename T>
__host__ __device__ inline T jacobi_update(const T *c, int dims, int points, int64_t pitch, int64_t plane) {
    if (dims == 2 && points == 9) {
        T sum = c[-pitch - 1];
        for (int k = 1; k < 9; k++) sum = sum + c[(k / 3 - 1) * pitch + (k % 3 - 1)];
        return (T)(1.0 / 9.0) * sum;
    }
    if (dims == 2) return (T)0.25 * (((c[-1] + c[1]) + c[-pitch]) + c[pitch]);
    if (points == 27) {
        T sum = c[-plane - pitch - 1];
        for (int k = 1; k < 27; k++) sum = sum + c[(k / 9 - 1) * plane + (k / 3 % 3 - 1) * pitch + (k % 3 - 1)];
        return (T)(1.0 / 27.0) * sum;
    }
    return (T)0.25 * c[0] + (T)0.125 * (((((c[-1] + c[1]) + c[-pitch]) + c[pitch]) + c[-plane]) + c[plane]);
}

/// N steps on the CPU.
template <typename T>
void reference_steps(std::vector<T> &grid, const Grids<T> &g, int steps) {
    std::vector<T> next = grid;
    const int64_t z0 = g.dims == 3 ? 1 : 0, z1 = g.dims == 3 ? g.depth - 1 : 1;
    for (int s = 0; s < steps; s++) {
        for (int64_t z = z0; z < z1; z++)
            for (int64_t y = 1; y < g.height - 1; y++)
                for (int64_t x = 1; x < g.width - 1; x++) {
                    const int64_t i = g.at(x, y, z);
                    next[i] = jacobi_update(&grid[i], g.dims, g.points, g.pitch, g.plane);
                }
        std::swap(grid, next);
    }
}

template <typename T>
__global__ void plain_jacobi_step(const T *__restrict__ in, T *__restrict__ out, int dims, int points, int64_t w, int64_t h,
                                  int64_t d, int64_t pitch, int64_t plane) {
    const int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, y = (int64_t)blockIdx.y * blockDim.y + threadIdx.y,
                  z = blockIdx.z;
    if (x >= w || y >= h) return;
    const int64_t i = z * plane + y * pitch + x;
    const T *c = in + i;
    T v = *c;
    if (x >= 1 && x < w - 1 && y >= 1 && y < h - 1 && (dims == 2 || (z >= 1 && z < d - 1))) v = jacobi_update(c, dims, points, pitch, plane);
    out[i] = v;
}

/// One kernel of the table: `steps_per_launch` steps per call of `launch(in, out)`.
template <typename T>
struct Kernel {
    int dims, points;
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

/// False if one launch of `k` on `g` is refused as a cooperative launch
/// larger than the GPU holds at once (a device-wide kernel on a large grid).
template <typename T>
bool fits(const Kernel<T> &k, Grids<T> &g, cudaStream_t stream) {
    const cudaError_t e = k.launch(g, g.a.data(), g.b.data(), stream);
    if (e == cudaErrorCooperativeLaunchTooLarge) {
        (void)cudaGetLastError();
        return false;
    }
    PULSE_CUDA_CHECK(e);
    PULSE_CUDA_CHECK(cudaStreamSynchronize(stream));
    return true;
}

/// Max |got - expected| over the grid's cells, relative to 1 (the values' scale).
template <typename T>
double max_error(const std::vector<T> &got, const std::vector<T> &expected, const Grids<T> &g) {
    double worst = 0;
    for (int64_t z = 0; z < g.depth; z++)
        for (int64_t y = 0; y < g.height; y++)
            for (int64_t x = 0; x < g.width; x++) {
                const size_t i = (size_t)g.at(x, y, z);
                const double e = std::fabs((double)got[i] - (double)expected[i]);
                if (!(e <= worst)) worst = std::isnan(e) ? INFINITY : e;
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
int run_type(const char *type, const std::vector<Kernel<T>> &all, const Size &size, int64_t pad, const BenchStart &bench) {
    std::vector<Kernel<T>> kernels;
    for (const Kernel<T> &k : all)
        if (k.dims == size.dims && k.points == size.points) kernels.push_back(k);
    const double tolerance = sizeof(T) == 4 ? 1e-5 : 1e-12;
    const double roofline = bench.floors.bandwidth / (2.0 * sizeof(T));  // cell updates per second
    int failures = 0;
    const int64_t w = size.w, h = size.h, d = size.d;
    std::printf("\n%s %s W=%lld H=%lld D=%lld: roofline %.1f G cell-updates/s (%d B per update)\n", size.name(), type,
                (long long)w, (long long)h, (long long)d, roofline / 1e9, (int)(2 * sizeof(T)));
    std::printf("  %-34s %3s %6s %10s %10s %9s  %s\n", "kernel", "T", "steps", "ms", "Gcells/s", "x roof", "check");
    // The small problem against the CPU.
    const Size small_size = size.dims == 3 ? Size{3, 61, 47, 37, 24, size.points} : Size{2, 509, 383, 1, 24, size.points};
    Grids<T> small(small_size, pad);
    std::vector<T> start_small = random_grid<T>(small.elements(), 11);
    std::vector<T> expected_small = start_small;
    reference_steps(expected_small, small, small_size.steps);
    // The timed problem; the plain kernel's result is the reference there.
    Grids<T> big(size, pad);
    std::vector<T> start = random_grid<T>(big.elements(), 7);
    std::vector<T> plain_result;
    for (const Kernel<T> &k : kernels) {
        const int n = (size.steps + k.steps_per_launch - 1) / k.steps_per_launch * k.steps_per_launch;
        std::string check;
        // A device-wide kernel runs only where every block fits the GPU at once.
        if (!fits(k, big, bench.stream)) {
            std::printf("  %-34s %3d %6d %10s %10s %9s  %s\n", k.name.c_str(), k.steps_per_launch, n, "-", "-", "-",
                        "SKIP (the grid does not fit the GPU at once)");
            std::printf("CSV,%s,%s,%s,%d,%lld,%lld,%lld,%d,,,,SKIP\n", size.name(), k.name.c_str(), type, k.steps_per_launch,
                        (long long)w, (long long)h, (long long)d, n);
            continue;
        }
        if (fits(k, small, bench.stream)) {
            upload_both(small, start_small);
            const int n_small = small_size.steps / k.steps_per_launch * k.steps_per_launch;
            std::vector<T> expected = start_small;
            if (n_small != small_size.steps) reference_steps(expected, small, n_small);
            T *result = run_steps(k, small, n_small, bench.stream);
            PULSE_CUDA_CHECK(cudaStreamSynchronize(bench.stream));
            double e = max_error(download(small, result), n_small == small_size.steps ? expected_small : expected, small);
            if (!(e <= tolerance)) {
                char text[160];
                std::snprintf(text, sizeof text, "FAIL (%d steps at %lldx%lldx%lld: max error %.3g)", n_small,
                              (long long)small_size.w, (long long)small_size.h, (long long)small_size.d, e);
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
            } else if (n != size.steps) {
                check = "PASS (small problem; other step count here)";
            } else {
                double e = max_error(got, plain_result, big);
                char text[96];
                std::snprintf(text, sizeof text, "%s (max diff to plain %.2g)", e <= tolerance ? "PASS" : "FAIL", e);
                check = text;
            }
        }
        if (check.rfind("FAIL", 0) == 0) failures++;
        const double updates = (double)w * h * d * n, rate = updates / (ms * 1e-3);
        std::printf("  %-34s %3d %6d %10.3f %10.1f %9.2f  %s\n", k.name.c_str(), k.steps_per_launch, n, ms, rate / 1e9,
                    rate / roofline, check.c_str());
        std::printf("CSV,%s,%s,%s,%d,%lld,%lld,%lld,%d,%.4f,%.2f,%.4f,%s\n", size.name(), k.name.c_str(), type,
                    k.steps_per_launch, (long long)w, (long long)h, (long long)d, n, ms, rate / 1e9, rate / roofline,
                    check.rfind("FAIL", 0) == 0 ? "FAIL" : "PASS");
    }
    return failures;
}

template <typename T>
Kernel<T> plain_kernel(int dims, int points) {
    return Kernel<T>{dims, points, "plain CUDA (1 cell/thread, N launches)", 1, [](const Grids<T> &g, T *in, T *out, cudaStream_t s) {
                         dim3 threads(32, 8), blocks((unsigned)((g.width + 31) / 32), (unsigned)((g.height + 7) / 8),
                                                     (unsigned)g.depth);
                         const int64_t offset = g.at(0, 0, 0);
                         plain_jacobi_step<T><<<blocks, threads, 0, s>>>(in + offset, out + offset, g.dims, g.points,
                                                                         g.width, g.height, g.depth, g.pitch, g.plane);
                         return cudaGetLastError();
                     }};
}

int usage() {
    std::fprintf(stderr, "usage: jacobi_bench [--size2d W H N] [--size3d W H D N] [2d] [box] [3d] [box3d] (W, H, D >= 3, N >= 1)\n");
    return 2;
}

}  // namespace

int main(int argc, char **argv) {
    Size size2{2, 8192, 8192, 1, 120, 5}, size3{3, 512, 512, 512, 120, 7};
    bool want2 = false, want_box = false, want3 = false, want_box3 = false;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        if (a == "--size2d" && i + 3 < argc) {
            size2.w = std::atoll(argv[i + 1]), size2.h = std::atoll(argv[i + 2]), size2.steps = std::atoi(argv[i + 3]);
            i += 3;
        } else if (a == "--size3d" && i + 4 < argc) {
            size3.w = std::atoll(argv[i + 1]), size3.h = std::atoll(argv[i + 2]), size3.d = std::atoll(argv[i + 3]);
            size3.steps = std::atoi(argv[i + 4]);
            i += 4;
        } else if (a == "2d") {
            want2 = true;
        } else if (a == "box") {
            want_box = true;
        } else if (a == "3d") {
            want3 = true;
        } else if (a == "box3d") {
            want_box3 = true;
        } else {
            return usage();
        }
    }
    if (!want2 && !want_box && !want3 && !want_box3) want2 = want_box = want3 = want_box3 = true;
    for (const Size &s : {size2, size3})
        if (s.w < 3 || s.h < 3 || (s.dims == 3 && s.d < 3) || s.steps < 1) return usage();
    Size box = size2, box3 = size3;
    box.points = 9;
    box3.points = 27;
    BenchStart bench = start_bench();
    std::vector<Kernel<float>> f32{plain_kernel<float>(2, 5), plain_kernel<float>(2, 9), plain_kernel<float>(3, 7),
                                   plain_kernel<float>(3, 27)};
    std::vector<Kernel<double>> f64{plain_kernel<double>(2, 5), plain_kernel<double>(2, 9), plain_kernel<double>(3, 7),
                                    plain_kernel<double>(3, 27)};
    int64_t pad = 1;
#define PULSE_JACOBI_ENTRY(dims, points, type, T, name)                                                           \
    pad = std::max<int64_t>(pad, T);                                                                              \
    type.push_back({dims, points, #name, T, [](const auto &g, auto *in, auto *out, cudaStream_t s) {              \
                        return name(g.padded(in), g.size_buffer(), g.cells(out), s);                              \
                    }});
#define J(dims, type, T, name) PULSE_JACOBI_ENTRY(dims, dims == 2 ? 5 : 7, type, T, name)
#define JB(type, T, name) PULSE_JACOBI_ENTRY(2, 9, type, T, name)
#define JB3(type, T, name) PULSE_JACOBI_ENTRY(3, 27, type, T, name)
    // A device-wide kernel reads no pad (its tiles do not overlap).
#define JG(type, T, points, name)                                                                                 \
    type.push_back({2, points, #name, T, [](const auto &g, auto *in, auto *out, cudaStream_t s) {                 \
                        return name(g.padded(in), g.size_buffer(), g.cells(out), s);                              \
                    }});
    PULSE_JACOBI
#undef JG
#undef JB3
#undef JB
#undef J
#undef PULSE_JACOBI_ENTRY
    int failures = 0;
    for (const Size &s : {size2, box, size3, box3}) {
        if (!(s.points == 27 ? want_box3 : s.dims == 3 ? want3 : s.points == 9 ? want_box : want2)) continue;
        failures += run_type("f32", f32, s, pad, bench) + run_type("f64", f64, s, pad, bench);
    }
    return bench_exit_status(failures);
}
