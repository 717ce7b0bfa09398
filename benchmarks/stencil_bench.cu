// Single-sweep 2-D and 3-D stencils with constant coefficients, fp32 and fp64:
//   Out(i, j) = sum over the stencil's points (dx, dy) of c(dx, dy) * u(i + R + dx, j + R + dy)
//   Out(i, j, k) = sum over the points (dx, dy, dz) of c(dx, dy, dz) * u(i + 1 + dx, j + 1 + dy, k + 1 + dz)
// (Out is u's interior; R the stencil's radius), the stencils and
// coefficients of examples/stencil/stencil.cpp: 5pt (star, R = 1), 9pt (3x3
// box), 25pt (5x5 box), star2 (star, R = 2), and in 3-D 3d7pt (star, R = 1)
// and 3d27pt (3x3x3 box). Pulse's generated kernels against a plain CUDA
// kernel and, for the 2-D fp32 stencils, NPP's nppiFilter_32f_C1R, each
// checked, timed, and set against the floor measured in the same run.
//
// Layout (dimension 0 innermost): u has extents (W + 2R, H + 2R), Out (W, H);
// both have row pitches rounded up to a multiple of 32 elements, so the pitch
// path is exercised whenever a width is not a multiple of 32 (e.g. 8191 x 8193).
// In 3-D u has extents (W + 2, H + 2, D + 2), Out (W, H, D), rows pitched so
// and planes packed (plane pitch = row pitch x rows).
//
// Build (scripts/gpu_bench_stencil.sh does this from a folder of generated
// kernels), one line:
//   nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo -I<pulse>/runtime -I<generated>
//        -DWITH_PULSE -include pulse_stencils.h benchmarks/stencil_bench.cu
//        <generated>/stencil2d_5pt_f32.cu ... -lnppif -lnppc -o stencil_bench
// where pulse_stencils.h defines PULSE_STENCILS, the Pulse kernels as
// X(shape, type) (e.g. X(5pt, f32) X(25pt, f64): stencil2d_5pt_f32(u, Out,
// stream) from the generated stencil2d_5pt_f32.cu), and PULSE_VARIANTS, other
// mappings as V(shape, type, tag) naming stencil2d_{shape}_{type}_{tag} (a
// header because nvcc splits -D values at commas); PULSE_STENCILS3D and
// PULSE_VARIANTS3D likewise name stencil3d_{shape}_{type}[_{tag}] (shape 7pt
// or 27pt). -DPULSE_BENCH_NO_NPP leaves NPP out.
//
// Run: stencil_bench [--size3d W H D] [W H [STENCIL...]] (default 8192 8192
// in 2-D, 512 512 512 in 3-D, every stencil; STENCIL names a shape, 5pt or
// 3d7pt, a shape and type, 5pt_f64 or 3d27pt_f32, or 2d or 3d for all of
// them). Prints a table per stencil and type and one line
// `CSV,stencil2d,<kernel>,<shape>,<type>,<W>,<H>,<ms>,<fraction of floor>,<check>`
// per 2-D row (benchmarks/plot_stencil.py reads those) and
// `CSV,stencil3d,<kernel>,<shape>,<type>,<W>,<H>,<D>,<ms>,<fraction of floor>,<check>`
// per 3-D row. Exits non-zero if any check failed.
//
// Floor: W * H * 2 * sizeof(T) bytes (W * H * D * 2 * sizeof(T) in 3-D:
// every input read once, every output written once; the ring of u is
// ignored) at the device-to-device copy bandwidth. The FMAs (at most 27 per
// cell) are far below the FMA rate's floor at either precision, so the bytes
// alone are the floor.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "pulse_buffer.h"
#include "pulse_cuda.h"

#ifndef PULSE_BENCH_NO_NPP
#include <nppi_filtering_functions.h>
#endif

#ifndef PULSE_STENCILS
#define PULSE_STENCILS
#endif
#ifndef PULSE_VARIANTS
#define PULSE_VARIANTS
#endif
#ifndef PULSE_STENCILS3D
#define PULSE_STENCILS3D
#endif
#ifndef PULSE_VARIANTS3D
#define PULSE_VARIANTS3D
#endif

#ifdef WITH_PULSE
// The generated headers declare the same functions; a signature that
// disagrees with a pre-included header is a compile error.
#define X(shape, type) extern "C" cudaError_t stencil2d_##shape##_##type(pulse_buffer u, pulse_buffer Out, cudaStream_t stream);
PULSE_STENCILS
#undef X
#define V(shape, type, tag) \
    extern "C" cudaError_t stencil2d_##shape##_##type##_##tag(pulse_buffer u, pulse_buffer Out, cudaStream_t stream);
PULSE_VARIANTS
#undef V
#define X(shape, type) extern "C" cudaError_t stencil3d_##shape##_##type(pulse_buffer u, pulse_buffer Out, cudaStream_t stream);
PULSE_STENCILS3D
#undef X
#define V(shape, type, tag) \
    extern "C" cudaError_t stencil3d_##shape##_##type##_##tag(pulse_buffer u, pulse_buffer Out, cudaStream_t stream);
PULSE_VARIANTS3D
#undef V
#endif

namespace {

#include "bench_floors.h"
#include "bench_common.h"

// ---------------------------------------------------------------------------
// The stencils, as examples/stencil/stencil.cpp defines them. A coefficient
// that differs from the spec's fails the Pulse rows' check.

struct Shape {
    const char *name;
    int radius;
    bool box;  // (2R + 1)^2 box; else a star
};
constexpr Shape kShapes[] = {{"5pt", 1, false}, {"9pt", 1, true}, {"25pt", 2, true}, {"star2", 2, false}};
constexpr int kMaxRadius = 2;

/// c(dx, dy). Star: 0.5 at the centre, 0.125 / 2^(k-1) at distance k along
/// an axis. Box: (1 + 0.125 (dx - dy)) / (2R + 1)^2 (distinct coefficients,
/// so a transposed or mirrored window fails the check).
__host__ __device__ constexpr double coefficient(bool box, int radius, int dx, int dy) {
    if (box) return 1.0 / ((2 * radius + 1) * (2 * radius + 1)) * (1.0 + 0.125 * (dx - dy));
    if (dx == 0 && dy == 0) return 0.5;
    if (dx != 0 && dy != 0) return 0.0;
    const int k = dx + dy > 0 ? dx + dy : -(dx + dy);
    return k <= radius ? 0.125 / (1 << (k - 1)) : 0.0;
}

// ---------------------------------------------------------------------------
// The problem and its check

template<typename T>
struct Problem {
    int64_t W = 0, H = 0;
    int64_t host_stride = 0;  // row stride of hu, sized for the largest radius
    std::vector<T> hu;        // u for the largest radius; smaller radii use its top-left corner
    std::vector<std::pair<int64_t, int64_t>> samples;  // checked outputs (i, j)
};

/// Checks a W x H result (device, row pitch `pitch` elements) at the sample
/// points against the double-precision stencil (check_outputs).
template<typename T>
CheckResult check_result(const Problem<T> &pr, const Shape &shape, const T *device, int64_t pitch, double tolerance,
                         bool padding) {
    const int R = shape.radius;
    return check_outputs(pr.W, pr.H, pr.samples, device, pitch, tolerance, padding, [&](int64_t i, int64_t j) {
        double want = 0, scale = 0;
        for (int dy = -R; dy <= R; dy++)
            for (int dx = -R; dx <= R; dx++) {
                const double t =
                    coefficient(shape.box, R, dx, dy) * (double)pr.hu[(size_t)((j + R + dy) * pr.host_stride + i + R + dx)];
                want += t, scale += std::fabs(t);
            }
        return std::pair<double, double>(want, scale);
    });
}

// ---------------------------------------------------------------------------
// The plain kernel: one thread per output cell, the coefficients compile-time
// constants (the unrolled loops fold them, and the points off a star's shape
// cost nothing), the inputs through L1.

template<typename T, bool Box, int R>
__global__ void __launch_bounds__(256) plain_stencil(const T *__restrict__ u, int64_t u_pitch, T *__restrict__ out,
                                                      int64_t out_pitch, int W, int H) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= W || j >= H) return;
    const T *centre = u + (int64_t)(j + R) * u_pitch + (i + R);
    T sum = 0;
#pragma unroll
    for (int dy = -R; dy <= R; dy++)
#pragma unroll
        for (int dx = -R; dx <= R; dx++) {
            const double c = coefficient(Box, R, dx, dy);
            if (c != 0.0) sum += (T)c * __ldg(centre + (int64_t)dy * u_pitch + dx);
        }
    out[(int64_t)j * out_pitch + i] = sum;
}

template<typename T>
void launch_plain(const Shape &shape, const T *u, int64_t u_pitch, T *out, int64_t out_pitch, int W, int H,
                  cudaStream_t stream) {
    const dim3 block(32, 8), grid((unsigned)((W + 31) / 32), (unsigned)((H + 7) / 8));
    if (shape.box && shape.radius == 1) plain_stencil<T, true, 1><<<grid, block, 0, stream>>>(u, u_pitch, out, out_pitch, W, H);
    else if (shape.box && shape.radius == 2) plain_stencil<T, true, 2><<<grid, block, 0, stream>>>(u, u_pitch, out, out_pitch, W, H);
    else if (!shape.box && shape.radius == 1) plain_stencil<T, false, 1><<<grid, block, 0, stream>>>(u, u_pitch, out, out_pitch, W, H);
    else if (!shape.box && shape.radius == 2) plain_stencil<T, false, 2><<<grid, block, 0, stream>>>(u, u_pitch, out, out_pitch, W, H);
    else throw std::runtime_error(std::string("no plain kernel for ") + shape.name);
    PULSE_CUDA_CHECK(cudaGetLastError());
}

// ---------------------------------------------------------------------------
// Pulse kernels

using PulseFn = cudaError_t (*)(pulse_buffer, pulse_buffer, cudaStream_t);
struct PulseKernel {
    const char *shape, *type, *tag;  // tag "" for the chosen mapping
    PulseFn fn;
};
const PulseKernel kPulseKernels[] = {
#ifdef WITH_PULSE
#define X(shape, type) {#shape, #type, "", stencil2d_##shape##_##type},
    PULSE_STENCILS
#undef X
#define V(shape, type, tag) {#shape, #type, #tag, stencil2d_##shape##_##type##_##tag},
    PULSE_VARIANTS
#undef V
#endif
    {nullptr, nullptr, nullptr, nullptr}};

// ---------------------------------------------------------------------------
// Rows of the table

struct Row {
    std::string label;   // for people
    std::string kernel;  // for the CSV line
    std::function<void()> run;  // enqueues one sweep on the stream
};

int failures = 0;

template<typename T> const char *type_name() { return sizeof(T) == 4 ? "f32" : "f64"; }

template<typename T>
double floor_seconds(int64_t W, int64_t H, const Floors &floors) {
    return (double)W * H * 2.0 * sizeof(T) / floors.bandwidth;
}

template<typename T>
void print_header(const Shape &shape, int64_t W, int64_t H, const Floors &floors) {
    std::printf("\nstencil2d %s %s W=%lld H=%lld: %.1f M cells; floor %.4f ms (%d B per cell)\n", shape.name, type_name<T>(),
                (long long)W, (long long)H, (double)W * H / 1e6, floor_seconds<T>(W, H, floors) * 1e3, (int)(2 * sizeof(T)));
    std::printf("  %-40s %10s %10s %9s  %s\n", "kernel", "ms", "Gcell/s", "of floor", "check");
}

template<typename T>
void print_row(const std::string &label, const std::string &kernel, const Shape &shape, int64_t W, int64_t H, double ms,
               const Floors &floors, const std::string &check) {
    const double fraction = floor_seconds<T>(W, H, floors) / (ms * 1e-3);
    std::printf("  %-40s %10.4f %10.2f %9.3f  %s\n", label.c_str(), ms, (double)W * H / (ms * 1e-3) / 1e9, fraction, check.c_str());
    const std::string status = check.substr(0, check.find(' '));
    std::printf("CSV,stencil2d,%s,%s,%s,%lld,%lld,%.6f,%.4f,%s\n", kernel.c_str(), shape.name, type_name<T>(), (long long)W,
                (long long)H, ms, fraction, status.c_str());
    std::fflush(stdout);
}

/// The output buffers and what every row of one problem shares.
template<typename T>
struct Bench {
    const Problem<T> &pr;
    const Shape &shape;
    const Floors &floors;
    cudaStream_t stream;
    T *out;
    int64_t out_pitch;
    size_t out_bytes;
    double tolerance;

    void poison() const { PULSE_CUDA_CHECK(cudaMemsetAsync(out, 0xff, out_bytes, stream)); }

    /// Poisons Out, runs once and checks (with `padding`, Out's row padding too).
    CheckResult run_and_check(const std::function<void()> &run, bool padding = true) const {
        poison();
        run();
        PULSE_CUDA_CHECK(cudaStreamSynchronize(stream));
        PULSE_CUDA_CHECK(cudaGetLastError());
        return check_result(pr, shape, out, out_pitch, tolerance, padding);
    }

    /// Checks a row, then times it. A failed check is reported and counted;
    /// the row is still timed unless it threw.
    void run_row(const Row &row) const {
        double ms;
        const std::string check = check_then_time([&] { return run_and_check(row.run); }, row.run, stream, failures, ms);
        print_row<T>(row.label, row.kernel, shape, pr.W, pr.H, ms, floors, check);
    }
};

/// Every row of one stencil and type.
template<typename T>
void run_problem(const Problem<T> &pr, const Shape &shape, const Floors &floors, const cudaDeviceProp &prop, T *du, T *dout,
                 size_t out_bytes, cudaStream_t stream) {
    const int R = shape.radius;
    const int64_t W = pr.W, H = pr.H, UW = W + 2 * R, UH = H + 2 * R;
    const int64_t u_pitch = round_up(UW, 32), out_pitch = round_up(W, 32);
    PULSE_CUDA_CHECK(cudaMemcpy2D(du, u_pitch * sizeof(T), pr.hu.data(), pr.host_stride * sizeof(T), UW * sizeof(T), UH,
                                  cudaMemcpyHostToDevice));
    // Relative to sum |c * u|: a few roundings per point of the sum.
    const double tolerance = sizeof(T) == 4 ? 1e-5 : 1e-12;
    const Bench<T> bench{pr, shape, floors, stream, dout, out_pitch, out_bytes, tolerance};
    print_header<T>(shape, W, H, floors);

    const pulse_buffer bu = pulse_pitched_buffer(du, UW, UH, u_pitch);
    const pulse_buffer bo = pulse_pitched_buffer(dout, W, H, out_pitch);
    bool pulse_found = false;
    for (const PulseKernel &k : kPulseKernels) {
        if (!k.fn || std::strcmp(k.shape, shape.name) != 0 || std::strcmp(k.type, type_name<T>()) != 0) continue;
        pulse_found = true;
        const std::string name = std::string("stencil2d_") + k.shape + "_" + k.type + (*k.tag ? std::string("_") + k.tag : "");
        auto fn = k.fn;
        bench.run_row(Row{"Pulse " + name, *k.tag ? std::string("pulse_") + k.tag : "pulse",
                          [=] { PULSE_CUDA_CHECK(fn(bu, bo, stream)); }});
    }
    if (!pulse_found) std::printf("  note: no Pulse kernel for %s %s\n", shape.name, type_name<T>());

    bench.run_row(Row{"plain CUDA (1 thread/cell, constant c)", "plain",
                      [=] { launch_plain<T>(shape, du, u_pitch, dout, out_pitch, (int)W, (int)H, stream); }});

#ifndef PULSE_BENCH_NO_NPP
    // nppiFilter_32f_C1R with the stencil as a (2R + 1)^2 filter (zeros off
    // a star's shape), the anchor at its centre and the source pointer on
    // u(R, R): the window of Out(i, j) is u(i.., j..). NPP documents its
    // coefficients in reverse order; the orientations npp_orientations lists
    // are tried in turn and the row says which one passed (the box stencils'
    // coefficients are distinct under reversal and transposition).
    if constexpr (sizeof(T) == 4) {
        const char *label = "NPP nppiFilter_32f_C1R";
        try {
            const int K = 2 * R + 1;
            std::vector<float> hc((size_t)K * K);
            for (int dy = -R; dy <= R; dy++)
                for (int dx = -R; dx <= R; dx++) hc[(size_t)(dx + R + K * (dy + R))] = (float)coefficient(shape.box, R, dx, dy);
            const NppStreamContext ctx = npp_context(prop, stream);
            pulse::cuda::DeviceBuffer<float> kernel((size_t)K * K);
            const float *src = du + (int64_t)R * u_pitch + R;
            float *dst = dout;
            Row row{label, "npp", [=, &kernel] {
                        NPP_CHECK(nppiFilter_32f_C1R_Ctx(src, (Npp32s)(u_pitch * sizeof(float)), dst,
                                                         (Npp32s)(out_pitch * sizeof(float)), NppiSize{(int)W, (int)H},
                                                         kernel.data(), NppiSize{K, K}, NppiPoint{R, R}, ctx));
                    }};
            const auto orientations = npp_orientations(hc, K);
            bool matched = false;
            for (const auto &[note, weights] : orientations) {
                kernel.upload(weights);
                // The values only: a write into the row padding is run_row's to report.
                if (bench.run_and_check(row.run, false).ok) {
                    row.label += note;
                    if (!note.empty()) std::printf("  note: NPP matched Out with%s\n", note.c_str());
                    matched = true;
                    break;
                }
            }
            if (!matched) kernel.upload(orientations.front().second);  // report the documented orientation's failure
            bench.run_row(row);
        } catch (const std::exception &e) {
            failures++;
            cudaGetLastError();
            print_row<T>(label, "npp", shape, W, H, NAN, floors, std::string("FAIL ") + e.what());
        }
    }
#else
    (void)prop;
#endif
}

/// Whether the command line's stencil list (empty: all) names this one:
/// `name` (5pt, 3d7pt), `name`_`type`, or its dimensionality (2d, 3d).
bool selected(const std::vector<std::string> &only, const std::string &name, const char *type, const char *dims) {
    if (only.empty()) return true;
    for (const std::string &s : only)
        if (s == name || s == name + "_" + type || s == dims) return true;
    return false;
}
bool selected(const std::vector<std::string> &only, const Shape &shape, const char *type) {
    return selected(only, shape.name, type, "2d");
}

template<typename T>
void run_type(int64_t W, int64_t H, const std::vector<std::string> &only, const Floors &floors, const cudaDeviceProp &prop,
              std::mt19937_64 &rng, cudaStream_t stream) {
    bool any = false;
    for (const Shape &s : kShapes) any |= selected(only, s, type_name<T>());
    if (!any) return;
    // One host copy of u, sized for the largest radius; smaller radii read
    // its top-left corner. Uniform in [-1, 1], never zero-filled.
    Problem<T> pr;
    pr.W = W, pr.H = H;
    pr.host_stride = W + 2 * kMaxRadius;
    pr.hu.resize((size_t)(pr.host_stride * (H + 2 * kMaxRadius)));
    {
        std::uniform_real_distribution<T> value(-1, 1);
        for (T &v : pr.hu) v = value(rng);
    }
    pr.samples = sample_points(W, H, rng);
    const int64_t max_u_pitch = round_up(W + 2 * kMaxRadius, 32), out_pitch = round_up(W, 32);
    pulse::cuda::DeviceBuffer<T> du((size_t)(max_u_pitch * (H + 2 * kMaxRadius))), dout((size_t)(out_pitch * H));
    for (const Shape &s : kShapes) {
        if (!selected(only, s, type_name<T>())) continue;
        run_problem<T>(pr, s, floors, prop, du.data(), dout.data(), dout.bytes(), stream);
    }
}

// ---------------------------------------------------------------------------
// 3-D stencils (radius 1): u has extents (W + 2, H + 2, D + 2), Out (W, H, D).

struct Shape3 {
    const char *name;  // as the generated kernels name it: stencil3d_{name}_{type}
    bool box;          // 3x3x3 box; else the 7-point star
};
constexpr Shape3 kShapes3[] = {{"7pt", false}, {"27pt", true}};

/// c(dx, dy, dz), as examples/stencil/stencil.cpp defines it. Star: 0.25 at
/// the centre, 0.125 at each of its six neighbours. Box: (1 + dx/8 - dy/16 +
/// dz/32) / 27 (distinct coefficients: a mirrored or transposed window fails
/// the check).
__host__ __device__ constexpr double coefficient3(bool box, int dx, int dy, int dz) {
    if (box) return (1.0 + 0.125 * dx - 0.0625 * dy + 0.03125 * dz) / 27;
    const int axes = (dx != 0) + (dy != 0) + (dz != 0);
    return axes == 0 ? 0.25 : axes == 1 ? 0.125 : 0.0;
}

struct Size3 {
    int64_t W = 512, H = 512, D = 512;
};

/// A row-major 3-D buffer: rows of `pitch` elements, planes of pitch * height.
pulse_buffer pitched_buffer_3d(const void *data, int64_t width, int64_t height, int64_t depth, int64_t pitch) {
    pulse_buffer b{};
    b.data = const_cast<void *>(data);
    b.dimensions = 3;
    b.extent[0] = width, b.extent[1] = height, b.extent[2] = depth;
    b.stride[0] = 1, b.stride[1] = pitch, b.stride[2] = pitch * height;
    return b;
}

/// Every corner, points on every face, and random interior points of a W x H x D output.
std::vector<std::array<int64_t, 3>> sample_points_3d(const Size3 &n, std::mt19937_64 &rng) {
    std::vector<std::array<int64_t, 3>> s;
    for (int c = 0; c < 8; c++) s.push_back({c & 1 ? n.W - 1 : 0, c & 2 ? n.H - 1 : 0, c & 4 ? n.D - 1 : 0});
    std::uniform_int_distribution<int64_t> x(0, n.W - 1), y(0, n.H - 1), z(0, n.D - 1);
    for (int k = 0; k < 256; k++) {
        s.push_back({0, y(rng), z(rng)}), s.push_back({n.W - 1, y(rng), z(rng)});
        s.push_back({x(rng), 0, z(rng)}), s.push_back({x(rng), n.H - 1, z(rng)});
        s.push_back({x(rng), y(rng), 0}), s.push_back({x(rng), y(rng), n.D - 1});
    }
    for (int k = 0; k < 24000; k++) s.push_back({x(rng), y(rng), z(rng)});
    return s;
}

template<typename T>
struct Problem3 {
    Size3 n;
    std::vector<T> hu;  // u, dense: rows of W + 2, planes of (W + 2) * (H + 2)
    std::vector<std::array<int64_t, 3>> samples;
    T at(int64_t i, int64_t j, int64_t k) const { return hu[(size_t)((k * (n.H + 2) + j) * (n.W + 2) + i)]; }
};

/// Checks Out (device, row pitch `pitch`, plane pitch pitch * H) at the sample
/// points against the double-precision stencil, and its row padding (the
/// columns between W and the pitch) for the poison bytes.
template<typename T>
CheckResult check_result_3d(const Problem3<T> &pr, const Shape3 &shape, const T *device, int64_t pitch, double tolerance) {
    const Size3 &n = pr.n;
    std::vector<T> got((size_t)(pitch * n.H * n.D));
    PULSE_CUDA_CHECK(cudaMemcpy(got.data(), device, got.size() * sizeof(T), cudaMemcpyDeviceToHost));
    auto out = [&](int64_t i, int64_t j, int64_t k) { return got[(size_t)((k * n.H + j) * pitch + i)]; };
    CheckResult r;
    char buf[256];
    for (const auto &[i, j, k] : pr.samples) {
        double want = 0, scale = 0;
        for (int dz = -1; dz <= 1; dz++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    const double t = coefficient3(shape.box, dx, dy, dz) * (double)pr.at(i + 1 + dx, j + 1 + dy, k + 1 + dz);
                    want += t, scale += std::fabs(t);
                }
        const T g = out(i, j, k);
        const double e = std::fabs((double)g - want) / std::max(scale, 1e-300);
        if (!(e <= tolerance)) {  // NaN (an unwritten output) fails too
            std::snprintf(buf, sizeof buf, "Out(%lld, %lld, %lld) = %.17g, expected %.17g", (long long)i, (long long)j,
                          (long long)k, (double)g, want);
            r.ok = false, r.detail = buf;
            return r;
        }
        r.max_error = std::max(r.max_error, e);
    }
    for (int64_t k = 0; k < n.D; k++)
        for (int64_t j = 0; j < n.H; j++)
            for (int64_t i = n.W; i < pitch; i++) {
                const T v = out(i, j, k);
                const unsigned char *bytes = reinterpret_cast<const unsigned char *>(&v);
                if (std::any_of(bytes, bytes + sizeof(T), [](unsigned char b) { return b != 0xff; })) {
                    std::snprintf(buf, sizeof buf, "wrote the row padding at (%lld, %lld, %lld)", (long long)i, (long long)j,
                                  (long long)k);
                    r.ok = false, r.detail = buf;
                    return r;
                }
            }
    return r;
}

/// The plain kernel: one thread per output cell, the coefficients
/// compile-time constants (the star's missing points cost nothing), the
/// inputs through L1.
template<typename T, bool Box>
__global__ void __launch_bounds__(256) plain_stencil3d(const T *__restrict__ u, int64_t u_pitch, int64_t u_plane,
                                                        T *__restrict__ out, int64_t out_pitch, int64_t out_plane, int W, int H) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    const int k = blockIdx.z;
    if (i >= W || j >= H) return;
    const T *centre = u + (int64_t)(k + 1) * u_plane + (int64_t)(j + 1) * u_pitch + (i + 1);
    T sum = 0;
#pragma unroll
    for (int dz = -1; dz <= 1; dz++)
#pragma unroll
        for (int dy = -1; dy <= 1; dy++)
#pragma unroll
            for (int dx = -1; dx <= 1; dx++) {
                const double c = coefficient3(Box, dx, dy, dz);
                if (c != 0.0) sum += (T)c * __ldg(centre + dz * u_plane + dy * u_pitch + dx);
            }
    out[(int64_t)k * out_plane + (int64_t)j * out_pitch + i] = sum;
}

const PulseKernel kPulseKernels3d[] = {
#ifdef WITH_PULSE
#define X(shape, type) {#shape, #type, "", stencil3d_##shape##_##type},
    PULSE_STENCILS3D
#undef X
#define V(shape, type, tag) {#shape, #type, #tag, stencil3d_##shape##_##type##_##tag},
    PULSE_VARIANTS3D
#undef V
#endif
    {nullptr, nullptr, nullptr, nullptr}};

template<typename T>
double floor_seconds_3d(const Size3 &n, const Floors &floors) {
    return (double)n.W * n.H * n.D * 2.0 * sizeof(T) / floors.bandwidth;
}

template<typename T>
void print_row_3d(const std::string &label, const std::string &kernel, const Shape3 &shape, const Size3 &n, double ms,
                  const Floors &floors, const std::string &check) {
    const double cells = (double)n.W * n.H * n.D;
    const double fraction = floor_seconds_3d<T>(n, floors) / (ms * 1e-3);
    std::printf("  %-40s %10.4f %10.2f %9.3f  %s\n", label.c_str(), ms, cells / (ms * 1e-3) / 1e9, fraction, check.c_str());
    const std::string status = check.substr(0, check.find(' '));
    std::printf("CSV,stencil3d,%s,%s,%s,%lld,%lld,%lld,%.6f,%.4f,%s\n", kernel.c_str(), shape.name, type_name<T>(),
                (long long)n.W, (long long)n.H, (long long)n.D, ms, fraction, status.c_str());
    std::fflush(stdout);
}

/// Every row of one 3-D stencil and type: the Pulse kernels, then the plain one.
template<typename T>
void run_problem_3d(const Problem3<T> &pr, const Shape3 &shape, const Floors &floors, T *du, T *dout, cudaStream_t stream) {
    const Size3 &n = pr.n;
    const int64_t u_pitch = round_up(n.W + 2, 32), out_pitch = round_up(n.W, 32);
    const int64_t u_plane = u_pitch * (n.H + 2), out_plane = out_pitch * n.H;
    const size_t out_bytes = (size_t)(out_plane * n.D) * sizeof(T);
    // u's planes are packed: its (H + 2) * (D + 2) rows are one pitched 2-D copy.
    PULSE_CUDA_CHECK(cudaMemcpy2D(du, u_pitch * sizeof(T), pr.hu.data(), (n.W + 2) * sizeof(T), (n.W + 2) * sizeof(T),
                                  (n.H + 2) * (n.D + 2), cudaMemcpyHostToDevice));
    const double tolerance = sizeof(T) == 4 ? 1e-5 : 1e-12;
    std::printf("\nstencil3d %s %s W=%lld H=%lld D=%lld: %.1f M cells; floor %.4f ms (%d B per cell)\n", shape.name,
                type_name<T>(), (long long)n.W, (long long)n.H, (long long)n.D, (double)n.W * n.H * n.D / 1e6,
                floor_seconds_3d<T>(n, floors) * 1e3, (int)(2 * sizeof(T)));
    std::printf("  %-40s %10s %10s %9s  %s\n", "kernel", "ms", "Gcell/s", "of floor", "check");
    auto run_row = [&](const Row &row) {
        double ms;
        const std::string check = check_then_time(
            [&] {
                PULSE_CUDA_CHECK(cudaMemsetAsync(dout, 0xff, out_bytes, stream));
                row.run();
                PULSE_CUDA_CHECK(cudaStreamSynchronize(stream));
                PULSE_CUDA_CHECK(cudaGetLastError());
                return check_result_3d(pr, shape, dout, out_pitch, tolerance);
            },
            row.run, stream, failures, ms);
        print_row_3d<T>(row.label, row.kernel, shape, n, ms, floors, check);
    };

    const pulse_buffer bu = pitched_buffer_3d(du, n.W + 2, n.H + 2, n.D + 2, u_pitch);
    const pulse_buffer bo = pitched_buffer_3d(dout, n.W, n.H, n.D, out_pitch);
    bool pulse_found = false;
    for (const PulseKernel &k : kPulseKernels3d) {
        if (!k.fn || std::strcmp(k.shape, shape.name) != 0 || std::strcmp(k.type, type_name<T>()) != 0) continue;
        pulse_found = true;
        const std::string name = std::string("stencil3d_") + k.shape + "_" + k.type + (*k.tag ? std::string("_") + k.tag : "");
        auto fn = k.fn;
        run_row(Row{"Pulse " + name, *k.tag ? std::string("pulse_") + k.tag : "pulse",
                    [=] { PULSE_CUDA_CHECK(fn(bu, bo, stream)); }});
    }
    if (!pulse_found) std::printf("  note: no Pulse kernel for 3d%s %s\n", shape.name, type_name<T>());

    const int W = (int)n.W, H = (int)n.H;
    const dim3 block(32, 8), grid((unsigned)((n.W + 31) / 32), (unsigned)((n.H + 7) / 8), (unsigned)n.D);
    run_row(Row{"plain CUDA (1 thread/cell, constant c)", "plain", [=] {
                    if (shape.box) plain_stencil3d<T, true><<<grid, block, 0, stream>>>(du, u_pitch, u_plane, dout, out_pitch, out_plane, W, H);
                    else plain_stencil3d<T, false><<<grid, block, 0, stream>>>(du, u_pitch, u_plane, dout, out_pitch, out_plane, W, H);
                    PULSE_CUDA_CHECK(cudaGetLastError());
                }});
}

template<typename T>
void run_type_3d(const Size3 &n, const std::vector<std::string> &only, const Floors &floors, std::mt19937_64 &rng,
                 cudaStream_t stream) {
    bool any = false;
    for (const Shape3 &s : kShapes3) any |= selected(only, std::string("3d") + s.name, type_name<T>(), "3d");
    if (!any) return;
    // u uniform in [-1, 1], never zero-filled.
    Problem3<T> pr;
    pr.n = n;
    pr.hu.resize((size_t)((n.W + 2) * (n.H + 2) * (n.D + 2)));
    {
        std::uniform_real_distribution<T> value(-1, 1);
        for (T &v : pr.hu) v = value(rng);
    }
    pr.samples = sample_points_3d(n, rng);
    const int64_t u_pitch = round_up(n.W + 2, 32), out_pitch = round_up(n.W, 32);
    pulse::cuda::DeviceBuffer<T> du((size_t)(u_pitch * (n.H + 2) * (n.D + 2))), dout((size_t)(out_pitch * n.H * n.D));
    for (const Shape3 &s : kShapes3) {
        if (!selected(only, std::string("3d") + s.name, type_name<T>(), "3d")) continue;
        run_problem_3d<T>(pr, s, floors, du.data(), dout.data(), stream);
    }
}

}  // namespace

int main(int argc, char **argv) {
    const char *usage =
        "usage: stencil_bench [--size3d W H D] [W H [STENCIL...]]  (STENCIL: 5pt, 9pt, 25pt, star2, 3d7pt, 3d27pt, "
        "a shape and type such as 5pt_f64 or 3d7pt_f32, or 2d, 3d)\n";
    Size3 size3;
    int first = 1;
    if (argc > 1 && std::strcmp(argv[1], "--size3d") == 0) {
        if (argc < 5) {
            std::fprintf(stderr, "%s", usage);
            return 2;
        }
        size3.W = std::atoll(argv[2]), size3.H = std::atoll(argv[3]), size3.D = std::atoll(argv[4]);
        first = 5;
    }
    const int rest = argc - first;
    const int64_t W = rest >= 2 ? std::atoll(argv[first]) : 8192;
    const int64_t H = rest >= 2 ? std::atoll(argv[first + 1]) : 8192;
    std::vector<std::string> only;
    for (int i = first + 2; i < argc; i++) only.push_back(argv[i]);
    if (W < 1 || H < 1 || rest == 1 || size3.W < 1 || size3.H < 1 || size3.D < 1 || size3.D > 65535) {
        std::fprintf(stderr, "%s", usage);
        return 2;
    }
    try {
        const BenchStart start = start_bench();
        const cudaDeviceProp &prop = start.prop;
        cudaStream_t stream = start.stream;
        const Floors &floors = start.floors;
        int pulse_kernels = 0;
        for (const PulseKernel &k : kPulseKernels) pulse_kernels += k.fn != nullptr;
        for (const PulseKernel &k : kPulseKernels3d) pulse_kernels += k.fn != nullptr;
        std::printf("peers: plain CUDA%s; %d Pulse kernel(s)\n",
#ifndef PULSE_BENCH_NO_NPP
                    ", NPP (2-D fp32)",
#else
                    "",
#endif
                    pulse_kernels);
        std::mt19937_64 rng(12345);
        run_type<float>(W, H, only, floors, prop, rng, stream);
        run_type<double>(W, H, only, floors, prop, rng, stream);
        run_type_3d<float>(size3, only, floors, rng, stream);
        run_type_3d<double>(size3, only, floors, rng, stream);
        PULSE_CUDA_CHECK(cudaStreamDestroy(stream));
    } catch (const std::exception &e) {
        std::printf("FAIL: %s\n", e.what());
        return 1;
    }
    return bench_exit_status(failures);
}
