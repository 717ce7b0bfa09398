// The CUDA backend: the text it generates for every example, its rejection of
// arrays wider than a warp and, where nvcc exists (PULSE_NVCC), that every
// generated kernel compiles for sm_90 without touching local memory.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "CodeGenCuda.h"
#include "Pipeline.h"
#include "TestUtil.h"

using namespace pulse;

namespace {

const std::vector<std::string> &example_specs() {
    static const std::vector<std::string> specs = {
        "conv1d_sbm", "conv1d_bsm", "conv1d_fsm", "conv1d_bfs", "conv1d_ffs", "conv1d_fbs",
        "conv1d_fbs_stride2", "conv2d_sbm", "matmul", "matvec", "fir_stride2", "test_affine_outputs"};
    return specs;
}

std::vector<std::string> input_names(const Spec &spec) {
    std::vector<std::string> names;
    for (const Input &in : spec.inputs) names.push_back(in.name());
    return names;
}

CudaSources generate(const std::string &name, const Params &params = Params()) {
    Spec spec = build_spec(name, params);
    sys::SystolicProgram program = compile_to_systolic(spec.output.lower());
    return generate_cuda(program, name, input_names(spec));
}

/// Runs `command`, returning its exit status and (merged) output.
int run_command(const std::string &command, std::string &output) {
    FILE *pipe = popen((command + " 2>&1").c_str(), "r");
    if (!pipe) return -1;
    char buffer[4096];
    while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
    int status = pclose(pipe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("cuda: every example generates a kernel, a header and a harness", "[cuda]") {
    for (const std::string &name : example_specs()) {
        INFO(name);
        CudaSources s = generate(name);
        CHECK(s.kernel.find("__global__ void __launch_bounds__(256) " + name + "_kernel(") != std::string::npos);
        CHECK(s.kernel.find("cudaError_t " + name + "(") != std::string::npos);
        CHECK(s.header.find("cudaError_t " + name + "(") != std::string::npos);
        CHECK(s.check.find(name + "_reference(") != std::string::npos);
        // The readable header comment: UREs, transform, register plan.
        CHECK(s.kernel.find("// Space-time transform") != std::string::npos);
        CHECK(s.kernel.find("// Register plan") != std::string::npos);
        // No register arrays at all: a run-time index would put them in local memory.
        CHECK(!std::regex_search(s.kernel, std::regex(R"(_h\[)")));
        // Every shuffle is a full-warp shuffle issued outside any `if`.
        std::istringstream lines(s.kernel);
        for (std::string line; std::getline(lines, line);) {
            if (line.find("__shfl") == std::string::npos && line.find("__ballot") == std::string::npos) continue;
            if (line.find("//") != std::string::npos && line.find("//") < line.find("__")) continue;  // a comment
            INFO(line);
            CHECK(line.find("all_lanes_") != std::string::npos);
            CHECK(line.find("if (") == std::string::npos);
        }
    }
}

TEST_CASE("cuda: taps become shuffles in the direction of dp", "[cuda]") {
    // SBM: partial sums move up one lane per step; weights are a same-step
    // copy chain (dp = 1, dt = 0) of w(t), the same value on every lane, so
    // each lane loads it instead of hearing it from the chain's source.
    CudaSources sbm = generate("conv1d_sbm");
    CHECK(sbm.kernel.find("__shfl_up_sync(all_lanes_, Z_h1, 1)") != std::string::npos);
    CHECK(sbm.kernel.find("W_now = (active_ ? w[((int64_t)t - L.w_min0)] : (float)0);") != std::string::npos);
    CHECK(sbm.kernel.find("__ballot_sync") == std::string::npos);
    CHECK(sbm.kernel.find("__shfl_down_sync") == std::string::npos);
    // FBS: inputs move down one lane per step (X(c + 1, q - 1): dp = -1).
    CudaSources fbs = generate("conv1d_fbs");
    CHECK(fbs.kernel.find("__shfl_down_sync(all_lanes_, X_h1, 1)") != std::string::npos);
    // FFS: weights wait two steps (t = 2c + q): a history of two registers.
    CudaSources ffs = generate("conv1d_ffs");
    CHECK(ffs.kernel.find("W_h2 = W_h1;") != std::string::npos);
    CHECK(ffs.kernel.find("__shfl_up_sync(all_lanes_, W_h2, 1)") != std::string::npos);
}

TEST_CASE("cuda: input loads and output stores are guarded by the lane's activity", "[cuda]") {
    for (const std::string &name : example_specs()) {
        INFO(name);
        CudaSources s = generate(name);
        std::istringstream lines(s.kernel);
        for (std::string line; std::getline(lines, line);) {
            // Output stores.
            if (std::regex_search(line, std::regex(R"(\bOut\[)"))) CHECK(line.find("if (active_") != std::string::npos);
        }
        // Every in-loop input load is written `(active_ ? x[...] : 0)`.
        for (const char *input : {"x[", "w[", "a[", "bm[", "v[", "h["}) {
            size_t at = 0;
            while ((at = s.kernel.find(std::string(" ") + input, at)) != std::string::npos) {
                size_t line_start = s.kernel.rfind('\n', at);
                std::string before = s.kernel.substr(line_start, at - line_start);
                CHECK((before.find("active_ ?") != std::string::npos || before.find(") ?") != std::string::npos));
                at++;
            }
        }
    }
}

TEST_CASE("cuda: an array wider than a warp is rejected with the bounds that fit", "[cuda]") {
    // SBM has C + Q - 1 PEs: C = 40, Q = 5 needs 44 lanes; C fits up to 28.
    try {
        generate("conv1d_sbm", test::params({{"C", 40}}));
        FAIL("a 44-PE array was accepted");
    } catch (const CompileError &e) {
        std::string m = e.what();
        INFO(m);
        CHECK(m.find("44 PEs") != std::string::npos);
        CHECK(m.find("32 lanes") != std::string::npos);
        CHECK(m.find("c fits with extent <= 28") != std::string::npos);
        // q alone cannot help: the 40 outputs already need 40 lanes.
        CHECK(m.find("q cannot fit") != std::string::npos);
    }
    // Exactly 32 PEs is fine.
    CHECK_NOTHROW(generate("conv1d_sbm", test::params({{"C", 28}})));
}

TEST_CASE("cuda: the batch size is a run-time argument and the layout follows it", "[cuda]") {
    CudaSources s = generate("conv1d_sbm");
    // x covers [0, 16 * instances + 3]: its extent grows with the batch.
    CHECK(s.kernel.find("layout.x_extent0 = (int64_t)16 * instances + 3ll - layout.x_min0 + 1;") != std::string::npos);
    // Out(b * C + c): one dimension of 16 * instances elements from 0.
    CHECK(s.kernel.find("layout.Out_min0 = 0ll;") != std::string::npos);
    CHECK(s.kernel.find("layout.Out_extent0 = (int64_t)16 * instances;") != std::string::npos);
    CHECK(s.kernel.find("Out_extent1") == std::string::npos);
    CHECK(s.header.find("conv1d_sbm_cuda_default_instances() { return 4; }") != std::string::npos);
}

TEST_CASE("cuda: an output at affine indices is laid out over the box its index spans", "[cuda]") {
    // test_affine_outputs (C = 6, B = 3): Rev((B - 1 - b) * C + (C - 1 - c) + 3)
    // spans [3 + (3 - instances) * 6, 20]; Grid(c + 2, b - 1) spans [2, 7] x [-1, instances - 2].
    CudaSources s = generate("test_affine_outputs");
    CHECK(s.kernel.find("layout.Rev_min0 = (int64_t)-6 * instances + 21ll;") != std::string::npos);
    CHECK(s.kernel.find("layout.Rev_extent0 = (int64_t)6 * instances;") != std::string::npos);
    CHECK(s.kernel.find("layout.Grid_min0 = 2ll;") != std::string::npos);
    CHECK(s.kernel.find("layout.Grid_extent0 = 6ll;") != std::string::npos);
    CHECK(s.kernel.find("layout.Grid_min1 = -1ll;") != std::string::npos);
    CHECK(s.kernel.find("layout.Grid_extent1 = (int64_t)1 * instances;") != std::string::npos);
    CHECK(s.header.find("if (output == 0) return 1;") != std::string::npos);
    CHECK(s.header.find("if (output == 1) return 2;") != std::string::npos);
}

#ifdef PULSE_NVCC
TEST_CASE("cuda: every generated kernel compiles for sm_90 with no stack frame and no spills", "[cuda][nvcc]") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("pulse_test_cuda_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    for (const std::string &name : example_specs()) {
        INFO(name);
        CudaSources s = generate(name);
        std::ofstream(dir / (name + ".cu")) << s.kernel;
        std::ofstream(dir / (name + ".h")) << s.header;
        std::string output;
        std::string command = std::string(PULSE_NVCC) + " -arch=sm_90 -O3 -Xptxas -v -c " + (dir / (name + ".cu")).string() +
                              " -o " + (dir / (name + ".o")).string();
        int status = run_command(command, output);
        INFO(output);
        REQUIRE(status == 0);
        CHECK(output.find("warning") == std::string::npos);
        std::smatch m;
        REQUIRE(std::regex_search(output, m, std::regex(name + R"(_kernel[^\n]*\n\s*(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)")));
        CHECK(m[1] == "0");
        CHECK(m[2] == "0");
        CHECK(m[3] == "0");
    }
    fs::remove_all(dir);
}
#endif
