// 2-D convolution Out(i, j) = sum_{p<K} sum_{q<K} x(i + q, j + p) * w(q, p), fp32:
// Pulse's generated kernels against a plain CUDA kernel, NPP, cuDNN and a cuFFT
// convolution, each checked, timed, and set against floors measured in the
// same run (device-to-device copy bandwidth and the FP32 FMA rate).
//
// Layout (dimension 0 innermost): x has extents (W + K - 1, H + K - 1), w is a
// dense K x K array (w(q, p) at q + K * p), Out has extents (W, H). x and Out
// have row pitches rounded up to a multiple of 32 floats, so the pitch path is
// exercised whenever a width is not a multiple of 32 (e.g. 8191 x 8193).
//
// Build (scripts/gpu_bench.sh does this from a folder of generated kernels), one line:
//   nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo -I<pulse>/runtime -I<generated>
//        -DWITH_PULSE -DPULSE_KS="X(3) X(5) X(7)" benchmarks/conv2d_bench.cu
//        <generated>/conv2d_k3.cu <generated>/conv2d_k5.cu <generated>/conv2d_k7.cu
//        -lnppif -lnppc -lcudnn -lcufft -o conv2d_bench
// PULSE_KS (default X(3) X(5) X(7)) is the list of filter sizes; with WITH_PULSE
// each K needs conv2d_k{K}(x, w, Out, stream) from the generated conv2d_k{K}.cu,
// and -DPULSE_VARIANTS="V(7, pe64)" adds rows for conv2d_k7_pe64 (other
// mappings of a K in PULSE_KS).
// -DPULSE_BENCH_NO_NPP / -DPULSE_BENCH_NO_CUDNN leave those peers out.
//
// Run: conv2d_bench [W H [K...]] (default 8192 8192, every K built). Prints a table per K and one
// line `CSV,conv2d,<kernel>,<K>,<W>,<H>,<ms>,<fraction of floor>,<check>` per
// row (benchmarks/plot_conv.py reads those). Exits non-zero if any check failed.
//
// Floor for a problem: outputs * max(8 bytes / copy bandwidth, K^2 FMAs / FMA
// rate): every output written once and (ideally) every input read once.
#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
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
#ifndef PULSE_BENCH_NO_CUDNN
#include <cudnn.h>
#endif

#ifndef PULSE_KS
#define PULSE_KS X(3) X(5) X(7)
#endif
// Further Pulse kernels (other mappings of the same K), each V(K, tag) naming
// conv2d_k{K}_{tag}; every K among them is in PULSE_KS too.
#ifndef PULSE_VARIANTS
#define PULSE_VARIANTS
#endif

#ifdef WITH_PULSE
// The generated headers declare the same functions; declaring them here too
// keeps the bench independent of which headers were pre-included, and a
// signature that disagrees with a header is a compile error.
#define X(k) extern "C" cudaError_t conv2d_k##k(pulse_buffer x, pulse_buffer w, pulse_buffer Out, cudaStream_t stream);
PULSE_KS
#undef X
#define V(k, tag) extern "C" cudaError_t conv2d_k##k##_##tag(pulse_buffer x, pulse_buffer w, pulse_buffer Out, cudaStream_t stream);
PULSE_VARIANTS
#undef V
#endif

namespace {

#define X(k) k,
constexpr int kFilterSizes[] = {PULSE_KS};
#undef X

constexpr int max_filter_size() {
    int m = 1;
    for (int k : kFilterSizes) m = k > m ? k : m;
    return m;
}
constexpr int kMaxK = max_filter_size();
static_assert(kMaxK * kMaxK * sizeof(float) <= 60 * 1024, "the plain kernel's filter must fit in constant memory");

void check_cufft(cufftResult r, const char *call) {
    if (r != CUFFT_SUCCESS) throw std::runtime_error(std::string(call) + " failed: cufftResult " + std::to_string((int)r));
}
#define CUFFT_CHECK(call) check_cufft((call), #call)

#ifndef PULSE_BENCH_NO_CUDNN
void check_cudnn(cudnnStatus_t s, const char *call) {
    if (s != CUDNN_STATUS_SUCCESS) throw std::runtime_error(std::string(call) + " failed: " + cudnnGetErrorString(s));
}
#define CUDNN_CHECK(call) check_cudnn((call), #call)
#endif

// ---------------------------------------------------------------------------
// Floors and the helpers shared with stencil_bench.cu

#include "bench_floors.h"
#include "bench_common.h"

// ---------------------------------------------------------------------------
// The problem and its check

struct Problem {
    int64_t W = 0, H = 0;
    int64_t host_stride = 0;       // row stride of the host copy of x (sized for the largest K)
    std::vector<float> hx;         // x for the largest K; smaller K use its top-left corner
    std::vector<std::pair<int64_t, int64_t>> samples;  // checked outputs (i, j)
};

/// Checks a W x H result (device, row pitch `pitch` floats) at the sample
/// points against the double-precision convolution (check_outputs).
CheckResult check_result(const Problem &pr, const std::vector<float> &hw, int K, const float *device, int64_t pitch,
                         double tolerance, bool padding) {
    return check_outputs(pr.W, pr.H, pr.samples, device, pitch, tolerance, padding, [&](int64_t i, int64_t j) {
        double want = 0, scale = 0;
        for (int p = 0; p < K; p++)
            for (int q = 0; q < K; q++) {
                const double t = (double)pr.hx[(size_t)((j + p) * pr.host_stride + i + q)] * hw[q + K * p];
                want += t, scale += std::fabs(t);
            }
        return std::pair<double, double>(want, scale);
    });
}

// ---------------------------------------------------------------------------
// The plain kernel: one thread per output, the filter in constant memory (all
// lanes read the same weight: a broadcast), the inputs through L1.

__constant__ float plain_weights[kMaxK * kMaxK];

template<int K>
__global__ void __launch_bounds__(256) plain_conv2d(const float *__restrict__ x, int64_t x_pitch, float *__restrict__ out,
                                                     int64_t out_pitch, int W, int H) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= W || j >= H) return;
    const float *row = x + (int64_t)j * x_pitch + i;
    float sum = 0;
#pragma unroll
    for (int p = 0; p < K; p++)
#pragma unroll
        for (int q = 0; q < K; q++) sum = fmaf(__ldg(row + (int64_t)p * x_pitch + q), plain_weights[q + K * p], sum);
    out[(int64_t)j * out_pitch + i] = sum;
}

void launch_plain(int K, const float *x, int64_t x_pitch, float *out, int64_t out_pitch, int W, int H, cudaStream_t stream) {
    const dim3 block(32, 8), grid((unsigned)((W + 31) / 32), (unsigned)((H + 7) / 8));
    switch (K) {
#define X(k)                                                                              \
    case k: plain_conv2d<k><<<grid, block, 0, stream>>>(x, x_pitch, out, out_pitch, W, H); \
        break;
        PULSE_KS
#undef X
    default: throw std::runtime_error("no plain kernel for K = " + std::to_string(K));
    }
    PULSE_CUDA_CHECK(cudaGetLastError());
}

#ifdef WITH_PULSE
struct PulseVariant {
    int K;
    const char *tag;
    cudaError_t (*fn)(pulse_buffer, pulse_buffer, pulse_buffer, cudaStream_t);
};
const PulseVariant kPulseVariants[] = {
#define V(k, tag) {k, #tag, conv2d_k##k##_##tag},
    PULSE_VARIANTS
#undef V
    {0, nullptr, nullptr}};

cudaError_t (*pulse_kernel(int K))(pulse_buffer, pulse_buffer, pulse_buffer, cudaStream_t) {
    switch (K) {
#define X(k) \
    case k: return conv2d_k##k;
        PULSE_KS
#undef X
    }
    return nullptr;
}
#endif

// ---------------------------------------------------------------------------
// cuFFT: Out is the valid part of a linear convolution with the flipped
// filter. Both operands are zero-padded to an FFT-friendly size of at least
// the input's, so the circular wrap never reaches a valid output; the output
// then sits at offset (K - 1, K - 1) of the inverse transform.

__global__ void multiply_spectra(cufftComplex *a, const cufftComplex *__restrict__ b, int64_t n, float scale) {
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < n; t += (int64_t)gridDim.x * blockDim.x) {
        cufftComplex u = a[t], v = b[t];
        a[t] = make_cuComplex((u.x * v.x - u.y * v.y) * scale, (u.x * v.y + u.y * v.x) * scale);
    }
}

/// The smallest n' >= n with no prime factor above 7 (cuFFT's fast radices).
int64_t fft_size(int64_t n) {
    for (int64_t m = n;; m++) {
        int64_t r = m;
        for (int f : {2, 3, 5, 7})
            while (r % f == 0) r /= f;
        if (r == 1) return m;
    }
}

struct CufftPlan {
    cufftHandle handle = 0;
    bool made = false;
    ~CufftPlan() {
        if (made) cufftDestroy(handle);
    }
};

// ---------------------------------------------------------------------------
// Rows of the table

struct Row {
    std::string label;   // for people
    std::string kernel;  // for the CSV line
    double tolerance = 1e-4;
    bool padding = false;                // check Out's row padding too
    std::function<void()> poison, run;   // run enqueues one convolution on the stream
    const float *out = nullptr;          // where the W x H result lands
    int64_t out_pitch = 0;
};

int failures = 0;

void print_header(int K, int64_t W, int64_t H, const Floors &floors) {
    const double outputs = (double)W * H;
    std::printf("\nconv2d K=%d W=%lld H=%lld: %.1f M outputs; floor %.4f ms (bytes %.4f ms, FMAs %.4f ms)\n", K, (long long)W,
                (long long)H, outputs / 1e6, floors.seconds(outputs, (double)K * K) * 1e3, outputs * 8.0 / floors.bandwidth * 1e3,
                outputs * K * K / floors.fma_rate * 1e3);
    std::printf("  %-40s %10s %10s %9s  %s\n", "kernel", "ms", "Gout/s", "of floor", "check");
}

void print_row(const std::string &label, const std::string &kernel, int K, int64_t W, int64_t H, double ms,
               const Floors &floors, const std::string &check) {
    const double outputs = (double)W * H;
    const double fraction = floors.seconds(outputs, (double)K * K) / (ms * 1e-3);
    std::printf("  %-40s %10.4f %10.2f %9.3f  %s\n", label.c_str(), ms, outputs / (ms * 1e-3) / 1e9, fraction, check.c_str());
    const std::string status = check.substr(0, check.find(' '));
    std::printf("CSV,conv2d,%s,%d,%lld,%lld,%.6f,%.4f,%s\n", kernel.c_str(), K, (long long)W, (long long)H, ms, fraction,
                status.c_str());
    std::fflush(stdout);
}

/// Checks a row (after NaN-poisoning its output), then times it. A failed
/// check is reported and counted; the row is still timed unless it threw.
void run_row(const Row &row, const Problem &pr, const std::vector<float> &hw, int K, const Floors &floors,
             cudaStream_t stream) {
    double ms;
    const std::string check = check_then_time(
        [&] {
            row.poison();
            row.run();
            PULSE_CUDA_CHECK(cudaStreamSynchronize(stream));
            PULSE_CUDA_CHECK(cudaGetLastError());
            return check_result(pr, hw, K, row.out, row.out_pitch, row.tolerance, row.padding);
        },
        row.run, stream, failures, ms);
    print_row(row.label, row.kernel, K, pr.W, pr.H, ms, floors, check);
}

#ifndef PULSE_BENCH_NO_CUDNN
const char *cudnn_algo_name(cudnnConvolutionFwdAlgo_t a) {
    switch (a) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "implicit_gemm";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "implicit_precomp_gemm";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "gemm";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "direct";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "fft";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "fft_tiling";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "winograd";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return "winograd_nonfused";
    default: return "other";
    }
}

/// Owns the cuDNN descriptors of one problem.
struct CudnnConv {
    cudnnTensorDescriptor_t x = nullptr, y = nullptr;
    cudnnFilterDescriptor_t w = nullptr;
    cudnnConvolutionDescriptor_t conv = nullptr;
    ~CudnnConv() {
        if (x) cudnnDestroyTensorDescriptor(x);
        if (y) cudnnDestroyTensorDescriptor(y);
        if (w) cudnnDestroyFilterDescriptor(w);
        if (conv) cudnnDestroyConvolutionDescriptor(conv);
    }
};
#endif

}  // namespace

int main(int argc, char **argv) {
    const int64_t W = argc > 2 ? std::atoll(argv[1]) : 8192;
    const int64_t H = argc > 2 ? std::atoll(argv[2]) : 8192;
    // Filter sizes to run (default: all built), e.g. for a profiler.
    std::vector<int> only;
    for (int i = 3; i < argc; i++) only.push_back(std::atoi(argv[i]));
    if (W < 1 || H < 1 || argc == 2) {
        std::fprintf(stderr, "usage: conv2d_bench [W H [K...]]\n");
        return 2;
    }
    try {
        const BenchStart start = start_bench();
        const cudaDeviceProp &prop = start.prop;
        cudaStream_t stream = start.stream;
        const Floors &floors = start.floors;
        std::printf("peers: plain CUDA, cuFFT%s%s%s\n",
#ifndef PULSE_BENCH_NO_NPP
                    ", NPP",
#else
                    "",
#endif
#ifndef PULSE_BENCH_NO_CUDNN
                    ", cuDNN",
#else
                    "",
#endif
#ifdef WITH_PULSE
                    "; Pulse kernels for every K"
#else
                    "; no Pulse kernels (built without WITH_PULSE)"
#endif
        );

        // One host copy of x, sized for the largest K; smaller K read its
        // top-left corner. Uniform in [-1, 1].
        Problem pr;
        pr.W = W, pr.H = H;
        pr.host_stride = W + kMaxK - 1;
        std::mt19937_64 rng(12345);
        pr.hx.resize((size_t)(pr.host_stride * (H + kMaxK - 1)));
        {
            std::uniform_real_distribution<float> value(-1.0f, 1.0f);
            for (float &v : pr.hx) v = value(rng);
        }
        pr.samples = sample_points(W, H, rng);

        const int64_t out_pitch = round_up(W, 32);
        const int64_t max_x_pitch = round_up(W + kMaxK - 1, 32);
        pulse::cuda::DeviceBuffer<float> dx((size_t)(max_x_pitch * (H + kMaxK - 1))), dout((size_t)(out_pitch * H));
        pulse::cuda::DeviceBuffer<float> dw((size_t)kMaxK * kMaxK);
        auto poison_out = [&] { PULSE_CUDA_CHECK(cudaMemsetAsync(dout.data(), 0xff, dout.bytes(), stream)); };

        for (int K : kFilterSizes) {
            if (!only.empty() && std::find(only.begin(), only.end(), K) == only.end()) continue;
            const int64_t XW = W + K - 1, XH = H + K - 1;
            const int64_t x_pitch = round_up(XW, 32);
            PULSE_CUDA_CHECK(cudaMemcpy2D(dx.data(), x_pitch * sizeof(float), pr.hx.data(), pr.host_stride * sizeof(float),
                                          XW * sizeof(float), XH, cudaMemcpyHostToDevice));
            std::vector<float> hw((size_t)K * K);
            {
                std::uniform_real_distribution<float> value(-1.0f, 1.0f);
                for (float &v : hw) v = value(rng);
            }
            PULSE_CUDA_CHECK(cudaMemcpy(dw.data(), hw.data(), hw.size() * sizeof(float), cudaMemcpyHostToDevice));
            PULSE_CUDA_CHECK(cudaMemcpyToSymbol(plain_weights, hw.data(), hw.size() * sizeof(float)));
            print_header(K, W, H, floors);

#ifdef WITH_PULSE
            {
                Row row;
                row.label = "Pulse conv2d_k" + std::to_string(K);
                row.kernel = "pulse";
                row.padding = true;
                row.poison = poison_out;
                const pulse_buffer bx = pulse_pitched_buffer(dx.data(), XW, XH, x_pitch);
                const pulse_buffer bw = pulse_dense_buffer(dw.data(), {K, K});
                const pulse_buffer bo = pulse_pitched_buffer(dout.data(), W, H, out_pitch);
                auto fn = pulse_kernel(K);
                row.run = [=] { PULSE_CUDA_CHECK(fn(bx, bw, bo, stream)); };
                row.out = dout.data(), row.out_pitch = out_pitch;
                run_row(row, pr, hw, K, floors, stream);
                for (const PulseVariant &v : kPulseVariants) {
                    if (v.K != K || !v.fn) continue;
                    row.label = "Pulse conv2d_k" + std::to_string(K) + "_" + v.tag;
                    row.kernel = std::string("pulse_") + v.tag;
                    auto vfn = v.fn;
                    row.run = [=] { PULSE_CUDA_CHECK(vfn(bx, bw, bo, stream)); };
                    run_row(row, pr, hw, K, floors, stream);
                }
            }
#endif
            {
                Row row;
                row.label = "plain CUDA (1 thread/output, __constant__ w)";
                row.kernel = "plain";
                row.padding = true;
                row.poison = poison_out;
                row.run = [&, K, x_pitch] { launch_plain(K, dx.data(), x_pitch, dout.data(), out_pitch, (int)W, (int)H, stream); };
                row.out = dout.data(), row.out_pitch = out_pitch;
                run_row(row, pr, hw, K, floors, stream);
            }

#ifndef PULSE_BENCH_NO_NPP
            // nppiFilter computes a true convolution (its coefficients are
            // "stored in reverse order"): dst(x, y) = sum_{i,j} src(x - a + i,
            // y - a + j) * kernel(K-1-i, K-1-j) with anchor a, so the kernel is w
            // reversed. With the anchor at the centre and the source pointer on
            // x(a, a), the window of Out(i, j) is x(i.., j..). For odd K the
            // centred window stays inside x whichever way NPP reads the anchor
            // (even K is skipped: a misread anchor could read outside x). If
            // the reversed kernel fails the check, the unreversed one is tried,
            // and the row says which orientation it timed.
            if (K % 2 == 0) {
                std::printf("  note: NPP skipped for even K\n");
            } else try {
                const int a = (K - 1) / 2;
                const NppStreamContext ctx = npp_context(prop, stream);
                pulse::cuda::DeviceBuffer<float> kernel((size_t)K * K);
                const float *src = dx.data() + (int64_t)a * x_pitch + a;
                Row row;
                row.label = "NPP nppiFilter_32f_C1R";
                row.kernel = "npp";
                row.padding = true;
                row.poison = poison_out;
                row.run = [&, K, a, x_pitch, src] {
                    NPP_CHECK(nppiFilter_32f_C1R_Ctx(src, (Npp32s)(x_pitch * sizeof(float)), dout.data(),
                                                     (Npp32s)(out_pitch * sizeof(float)), NppiSize{(int)W, (int)H}, kernel.data(),
                                                     NppiSize{K, K}, NppiPoint{a, a}, ctx));
                };
                row.out = dout.data(), row.out_pitch = out_pitch;
                // The documented orientation first; if it fails the check, the
                // other three (unreversed, transposed, both), and the row says
                // which one it timed.
                const auto orientations = npp_orientations(hw, K);
                bool matched = false;
                for (const auto &[note, weights] : orientations) {
                    kernel.upload(weights);
                    poison_out();
                    row.run();
                    PULSE_CUDA_CHECK(cudaStreamSynchronize(stream));
                    if (check_result(pr, hw, K, dout.data(), out_pitch, row.tolerance, false).ok) {
                        row.label += note;
                        if (!note.empty()) std::printf("  note: NPP matched Out with%s\n", note.c_str());
                        matched = true;
                        break;
                    }
                }
                if (!matched) kernel.upload(orientations.front().second);  // report the documented orientation's failure
                run_row(row, pr, hw, K, floors, stream);
            } catch (const std::exception &e) {
                failures++;
                print_row("NPP nppiFilter_32f_C1R", "npp", K, W, H, NAN, floors, std::string("FAIL ") + e.what());
            }
#endif

#ifndef PULSE_BENCH_NO_CUDNN
            // One image, one channel, NCHW fully packed (cuDNN's FFT and
            // Winograd algorithms need packed tensors, so it gets packed copies
            // of x and Out rather than the pitched ones), no padding, cross-
            // correlation, FMA math (no TF32). The algorithm is the fastest one
            // cudnnFindConvolutionForwardAlgorithm measures.
            try {
                cudnnHandle_t handle;
                CUDNN_CHECK(cudnnCreate(&handle));
                struct HandleGuard {
                    cudnnHandle_t h;
                    ~HandleGuard() { cudnnDestroy(h); }
                } guard{handle};
                CUDNN_CHECK(cudnnSetStream(handle, stream));
                CudnnConv d;
                CUDNN_CHECK(cudnnCreateTensorDescriptor(&d.x));
                CUDNN_CHECK(cudnnCreateTensorDescriptor(&d.y));
                CUDNN_CHECK(cudnnCreateFilterDescriptor(&d.w));
                CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&d.conv));
                CUDNN_CHECK(cudnnSetTensor4dDescriptor(d.x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, (int)XH, (int)XW));
                // w is already in cuDNN's (r, s) order: w(q, p) = filter(r = p, s = q).
                CUDNN_CHECK(cudnnSetFilter4dDescriptor(d.w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 1, 1, K, K));
                CUDNN_CHECK(cudnnSetConvolution2dDescriptor(d.conv, 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
                CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv, CUDNN_FMA_MATH));
                int n, c, h, w;
                CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(d.conv, d.x, d.w, &n, &c, &h, &w));
                if (n != 1 || c != 1 || h != H || w != W) throw std::runtime_error("cuDNN output dimensions differ from Out");
                CUDNN_CHECK(cudnnSetTensor4dDescriptor(d.y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, (int)H, (int)W));
                pulse::cuda::DeviceBuffer<float> xp((size_t)(XW * XH)), yp((size_t)(W * H));
                PULSE_CUDA_CHECK(cudaMemcpy2D(xp.data(), XW * sizeof(float), dx.data(), x_pitch * sizeof(float), XW * sizeof(float),
                                              XH, cudaMemcpyDeviceToDevice));
                cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
                int returned = 0;
                CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithm(handle, d.x, d.w, d.conv, d.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                                 &returned, perf));
                int pick = -1;
                for (int t = 0; t < returned && pick < 0; t++)
                    if (perf[t].status == CUDNN_STATUS_SUCCESS) pick = t;
                if (pick < 0) throw std::runtime_error("cudnnFindConvolutionForwardAlgorithm found no working algorithm");
                const cudnnConvolutionFwdAlgo_t algo = perf[pick].algo;
                const size_t workspace_bytes = perf[pick].memory;
                const cudnnMathType_t math = perf[pick].mathType;
                std::printf("  note: cuDNN picked %s (%s, %.1f MB workspace, %.4f ms in its own search)\n", cudnn_algo_name(algo),
                            math == CUDNN_FMA_MATH       ? "FMA math"
                            : math == CUDNN_DEFAULT_MATH ? "default math"
                                                         : "tensor-op math",
                            workspace_bytes / 1e6, perf[pick].time);
                pulse::cuda::DeviceBuffer<char> workspace(workspace_bytes);
                Row row;
                row.label = std::string("cuDNN ") + cudnn_algo_name(algo);
                row.kernel = "cudnn";
                row.poison = [&] { PULSE_CUDA_CHECK(cudaMemsetAsync(yp.data(), 0xff, yp.bytes(), stream)); };
                row.run = [&] {
                    const float alpha = 1, beta = 0;
                    CUDNN_CHECK(cudnnConvolutionForward(handle, &alpha, d.x, xp.data(), d.w, dw.data(), d.conv, algo,
                                                        workspace.data(), workspace_bytes, &beta, d.y, yp.data()));
                };
                row.out = yp.data(), row.out_pitch = W;
                run_row(row, pr, hw, K, floors, stream);
            } catch (const std::exception &e) {
                failures++;
                print_row("cuDNN", "cudnn", K, W, H, NAN, floors, std::string("FAIL ") + e.what());
            }
#endif

            // cuFFT. Timed: R2C of the zero-padded input, the pointwise product
            // with the filter's spectrum (1 / size folded in), C2R. Not timed:
            // the plans, zero-padding x into the transform's input (a copy an
            // FFT pipeline would fuse elsewhere), the filter's transform (done
            // once per filter), and reading Out back out of the padded result
            // (it is checked in place, at offset (K - 1, K - 1)).
            try {
                const int64_t F0 = fft_size(XW), F1 = fft_size(XH), C0 = F0 / 2 + 1;
                const int64_t spectrum = F1 * C0;
                pulse::cuda::DeviceBuffer<float> real_in((size_t)(F0 * F1)), real_out((size_t)(F0 * F1));
                pulse::cuda::DeviceBuffer<cufftComplex> xs((size_t)spectrum), ws((size_t)spectrum);
                CufftPlan forward, inverse;
                CUFFT_CHECK(cufftPlan2d(&forward.handle, (int)F1, (int)F0, CUFFT_R2C));
                forward.made = true;
                CUFFT_CHECK(cufftPlan2d(&inverse.handle, (int)F1, (int)F0, CUFFT_C2R));
                inverse.made = true;
                CUFFT_CHECK(cufftSetStream(forward.handle, stream));
                CUFFT_CHECK(cufftSetStream(inverse.handle, stream));
                // The filter, flipped, in the corner of a zero F1 x F0 array;
                // real_in holds it until its transform is done (same stream).
                std::vector<float> flipped((size_t)(F0 * K), 0.0f);
                for (int p = 0; p < K; p++)
                    for (int q = 0; q < K; q++) flipped[(size_t)(p * F0 + q)] = hw[(K - 1 - q) + K * (K - 1 - p)];
                PULSE_CUDA_CHECK(cudaMemsetAsync(real_in.data(), 0, real_in.bytes(), stream));
                PULSE_CUDA_CHECK(cudaMemcpyAsync(real_in.data(), flipped.data(), flipped.size() * sizeof(float),
                                                 cudaMemcpyHostToDevice, stream));
                CUFFT_CHECK(cufftExecR2C(forward.handle, real_in.data(), ws.data()));
                PULSE_CUDA_CHECK(cudaMemsetAsync(real_in.data(), 0, real_in.bytes(), stream));
                PULSE_CUDA_CHECK(cudaMemcpy2DAsync(real_in.data(), F0 * sizeof(float), dx.data(), x_pitch * sizeof(float),
                                                   XW * sizeof(float), XH, cudaMemcpyDeviceToDevice, stream));
                PULSE_CUDA_CHECK(cudaStreamSynchronize(stream));
                const float scale = (float)(1.0 / ((double)F0 * (double)F1));
                const int blocks = prop.multiProcessorCount * 8;
                Row row;
                char label[96];
                std::snprintf(label, sizeof label, "cuFFT R2C*C2R %lldx%lld", (long long)F0, (long long)F1);
                row.label = label;
                row.kernel = "cufft";
                row.tolerance = 1e-3;
                row.poison = [&] { PULSE_CUDA_CHECK(cudaMemsetAsync(real_out.data(), 0xff, real_out.bytes(), stream)); };
                row.run = [&] {
                    CUFFT_CHECK(cufftExecR2C(forward.handle, real_in.data(), xs.data()));
                    multiply_spectra<<<blocks, 256, 0, stream>>>(xs.data(), ws.data(), spectrum, scale);
                    PULSE_CUDA_CHECK(cudaGetLastError());
                    CUFFT_CHECK(cufftExecC2R(inverse.handle, xs.data(), real_out.data()));
                };
                row.out = real_out.data() + (K - 1) * F0 + (K - 1), row.out_pitch = F0;
                run_row(row, pr, hw, K, floors, stream);
            } catch (const std::exception &e) {
                failures++;
                print_row("cuFFT", "cufft", K, W, H, NAN, floors, std::string("FAIL ") + e.what());
            }
        }
        PULSE_CUDA_CHECK(cudaStreamDestroy(stream));
    } catch (const std::exception &e) {
        std::printf("FAIL: %s\n", e.what());
        return 1;
    }
    return bench_exit_status(failures);
}
