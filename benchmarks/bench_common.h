// Helpers the 2-D benchmarks (conv2d_bench.cu, stencil_bench.cu) share: row
// pitches, the sampled output points every check visits, the check itself,
// and NPP's error check, stream context and filter orientations. Included after pulse_cuda.h (and, without
// PULSE_BENCH_NO_NPP, after nppi_filtering_functions.h), inside the
// benchmark's anonymous namespace.
#ifndef PULSE_BENCH_COMMON_H
#define PULSE_BENCH_COMMON_H

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

/// All four corners, points along every edge, and random interior points of
/// a W x H output.
std::vector<std::pair<int64_t, int64_t>> sample_points(int64_t W, int64_t H, std::mt19937_64 &rng) {
    std::vector<std::pair<int64_t, int64_t>> s = {{0, 0}, {W - 1, 0}, {0, H - 1}, {W - 1, H - 1}};
    std::uniform_int_distribution<int64_t> col(0, W - 1), row(0, H - 1);
    for (int n = 0; n < 512; n++) {
        s.push_back({col(rng), 0});
        s.push_back({col(rng), H - 1});
        s.push_back({0, row(rng)});
        s.push_back({W - 1, row(rng)});
    }
    for (int n = 0; n < 24000; n++) s.push_back({col(rng), row(rng)});
    return s;
}

/// Compares a W x H result (device, row pitch `pitch` elements) against a
/// double-precision reference at every sample point: `reference(i, j)`
/// returns {the sum, the sum of its terms' magnitudes}. With `padding` the
/// columns between W and the pitch must still hold the poison bytes (0xff): a
/// kernel must not write outside Out's extents.
template<typename T, typename Reference>
CheckResult check_outputs(int64_t W, int64_t H, const std::vector<std::pair<int64_t, int64_t>> &samples, const T *device,
                          int64_t pitch, double tolerance, bool padding, Reference &&reference) {
    const int64_t width = padding ? pitch : W;
    std::vector<T> got((size_t)(width * H));
    PULSE_CUDA_CHECK(cudaMemcpy2D(got.data(), width * sizeof(T), device, pitch * sizeof(T), width * sizeof(T), H,
                                  cudaMemcpyDeviceToHost));
    CheckResult r;
    char buf[256];
    for (auto [i, j] : samples) {
        const std::pair<double, double> want = reference(i, j);
        const T g = got[(size_t)(j * width + i)];
        const double e = std::fabs((double)g - want.first) / std::max(want.second, 1e-300);
        if (!(e <= tolerance)) {  // NaN (an unwritten output) fails too
            std::snprintf(buf, sizeof buf, "Out(%lld, %lld) = %.17g, expected %.17g", (long long)i, (long long)j, (double)g,
                          want.first);
            r.ok = false, r.detail = buf;
            return r;
        }
        r.max_error = std::max(r.max_error, e);
    }
    if (padding) {
        for (int64_t j = 0; j < H; j++)
            for (int64_t i = W; i < pitch; i++) {
                const unsigned char *bytes = reinterpret_cast<const unsigned char *>(&got[(size_t)(j * width + i)]);
                if (std::any_of(bytes, bytes + sizeof(T), [](unsigned char b) { return b != 0xff; })) {
                    std::snprintf(buf, sizeof buf, "wrote the row padding at (%lld, %lld)", (long long)i, (long long)j);
                    r.ok = false, r.detail = buf;
                    return r;
                }
            }
    }
    return r;
}

#ifndef PULSE_BENCH_NO_NPP
void check_npp(NppStatus s, const char *call) {
    // Positive values are warnings; NPP reports errors as negative codes.
    if (s < 0) throw std::runtime_error(std::string(call) + " failed: NppStatus " + std::to_string((int)s));
}
#define NPP_CHECK(call) check_npp((call), #call)

/// The context NPP's _Ctx functions take: the device's properties and the stream.
NppStreamContext npp_context(const cudaDeviceProp &prop, cudaStream_t stream) {
    NppStreamContext ctx{};
    ctx.hStream = stream;
    PULSE_CUDA_CHECK(cudaGetDevice(&ctx.nCudaDeviceId));
    ctx.nMultiProcessorCount = prop.multiProcessorCount;
    ctx.nMaxThreadsPerMultiProcessor = prop.maxThreadsPerMultiProcessor;
    ctx.nMaxThreadsPerBlock = prop.maxThreadsPerBlock;
    ctx.nSharedMemPerBlock = prop.sharedMemPerBlock;
    ctx.nCudaDevAttrComputeCapabilityMajor = prop.major;
    ctx.nCudaDevAttrComputeCapabilityMinor = prop.minor;
    PULSE_CUDA_CHECK(cudaStreamGetFlags(stream, &ctx.nStreamFlags));
    return ctx;
}

/// The orientations of a K x K filter w (w(q, p) at q + K * p) that the
/// benchmarks try on nppiFilter, each with the note its row gets: the
/// documented one first (coefficients reversed), then unreversed, transposed
/// and reversed, transposed.
std::vector<std::pair<std::string, std::vector<float>>> npp_orientations(const std::vector<float> &w, int K) {
    std::vector<float> transposed((size_t)K * K);
    for (int p = 0; p < K; p++)
        for (int q = 0; q < K; q++) transposed[(size_t)(p + K * q)] = w[(size_t)(q + K * p)];
    return {{"", std::vector<float>(w.rbegin(), w.rend())},
            {" (w unreversed)", w},
            {" (w transposed, reversed)", std::vector<float>(transposed.rbegin(), transposed.rend())},
            {" (w transposed)", transposed}};
}
#endif

#endif
