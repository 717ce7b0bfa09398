// The CUDA backend as --emit cuda runs it: lower_to_kernel, optimize_kernel,
// print_cuda. What the printed text must hold for every example (full-warp
// lane exchanges outside lane-dependent branches, guarded accesses, arrays
// indexed by constants only), the taps of the conv1d designs, arrays wider
// than a warp and the refusal past 8 PEs per lane, a batch size that is a
// run-time size, outputs at affine indices and, where nvcc exists
// (PULSE_NVCC), that every printed kernel compiles for sm_90 without touching
// local memory and every check harness compiles.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "codegen/CodeGenCudaKernel.h"
#include "codegen/CodeGenReference.h"
#include "exec/KernelExecutor.h"
#include "lower/LowerToKernel.h"
#include "lower/Pipeline.h"
#include "exec/Simulator.h"
#include "TestUtil.h"

using namespace pulse;
using namespace Halide;
using namespace Halide::Internal;
using Catch::Matchers::Contains;

namespace {

/// Every registered spec; the list is checked to hold at least the examples
/// the harness scripts build, so a spec that stops registering is noticed.
std::vector<std::string> example_specs() {
    std::vector<std::string> specs = registered_specs();
    for (const char *known : {"conv1d_sbm", "conv1d_bsm", "conv1d_fsm", "conv1d_bfs", "conv1d_ffs", "conv1d_fbs",
                              "conv1d_fbs_stride2", "conv2d_sbm", "conv2d_ssam", "conv2d_os", "matmul", "matvec", "fir_stride2"}) {
        INFO(known);
        REQUIRE(std::find(specs.begin(), specs.end(), known) != specs.end());
    }
    return specs;
}

struct Generated {
    ir::UreProgram program;
    std::vector<std::string> inputs;  ///< in the spec's order
    kir::Kernel kernel;               ///< after optimize_kernel
    CudaKernelSources sources;
};

/// What --emit cuda prints for spec `spec_name`, the kernel named `name`
/// (default: the spec's name).
Generated generate(const std::string &spec_name, const Params &params = Params(), std::string name = "") {
    if (name.empty()) name = spec_name;
    Spec spec = build_spec(spec_name, params);
    Generated g;
    g.program = spec.output.lower();
    for (const Input &in : spec.inputs) g.inputs.push_back(in.name());
    g.kernel = lower_to_kernel(compile_to_systolic(g.program), name, g.inputs);
    optimize_kernel(g.kernel);
    g.sources = print_cuda(g.kernel, host_header_text(g.program, name, g.inputs, spec_description(spec_name)));
    return g;
}

/// The __global__ function of a printed kernel source.
std::string kernel_function(const std::string &source) {
    size_t begin = source.find("__global__ ");
    REQUIRE(begin != std::string::npos);
    size_t end = source.find("\n}\n", begin);
    REQUIRE(end != std::string::npos);
    return source.substr(begin, end + 3 - begin);
}

/// The host function of a printed kernel source (after the kernel).
std::string host_function(const std::string &source, const std::string &name) {
    size_t begin = source.find("extern \"C\" cudaError_t " + name + "(");
    REQUIRE(begin != std::string::npos);
    return source.substr(begin);
}

size_t count(const std::string &text, const std::regex &pattern) {
    return (size_t)std::distance(std::sregex_iterator(text.begin(), text.end(), pattern), std::sregex_iterator());
}

/// The accesses of arrays declared in a kernel function (`T name[N];`, not
/// `__shared__`) whose index is not an integer literal.
std::vector<std::string> run_time_indexed_arrays(const std::string &body) {
    std::vector<std::string> problems;
    const std::regex declaration(R"(\b[A-Za-z_]\w*\s+([A-Za-z_]\w*)\s*\[[^\]]*\]\s*;)");
    const std::regex literal(R"(\(?-?\d+(ll|u|ull)?\)?)");
    for (std::sregex_iterator d(body.begin(), body.end(), declaration), end; d != end; ++d) {
        const size_t line = body.rfind('\n', d->position());
        if (body.substr(line == std::string::npos ? 0 : line, d->position() - (line == std::string::npos ? 0 : line)).find("__shared__") !=
            std::string::npos) {
            continue;  // shared memory, indexed at run time by design
        }
        const std::regex access("\\b" + (*d)[1].str() + R"(\[([^\]]*)\])");
        for (std::sregex_iterator a(body.begin() + d->position() + d->length(), body.end(), access); a != end; ++a) {
            if (!std::regex_match((*a)[1].str(), literal)) problems.push_back(a->str());
        }
    }
    return problems;
}

/// Problems with the lane exchanges of a kernel body: each must be the whole
/// value of a LetStmt (inside an expression, `?:` or `&&` could skip it on
/// some lanes) and no IfThenElse around it may depend on the lane (the
/// shuffles are full-warp: every lane must reach them).
class ExchangeChecker : public IRVisitor {
public:
    std::vector<std::string> problems;
    int exchanges = 0;

    ExchangeChecker() { lane_dependent.push(kir::lane_var); }

private:
    Scope<> lane_dependent;        ///< lets whose values can differ between lanes
    std::set<const Call *> let_values;
    int divergent_guards = 0;

    bool varies(const Expr &e) const {
        bool exchange = false;
        kir::for_each_call(e, [&](const Call *c) { exchange |= kir::is_lane_exchange(c); });
        return exchange || expr_uses_vars(e, lane_dependent);
    }

    using IRVisitor::visit;
    void visit(const LetStmt *op) override {
        if (const Call *c = op->value.as<Call>(); c && kir::is_lane_exchange(c)) let_values.insert(c);
        op->value.accept(this);
        if (varies(op->value)) lane_dependent.push(op->name);
        op->body.accept(this);
    }
    void visit(const Let *op) override {
        op->value.accept(this);
        if (varies(op->value)) lane_dependent.push(op->name);
        op->body.accept(this);
    }
    void visit(const IfThenElse *op) override {
        op->condition.accept(this);
        bool divergent = varies(op->condition);
        divergent_guards += divergent;
        op->then_case.accept(this);
        if (op->else_case.defined()) op->else_case.accept(this);
        divergent_guards -= divergent;
    }
    void visit(const Call *op) override {
        if (kir::is_lane_exchange(op)) {
            exchanges++;
            std::ostringstream text;
            text << Expr(op);
            if (!let_values.count(op)) problems.push_back("not the value of a let: " + text.str());
            if (divergent_guards) problems.push_back("under a lane-dependent guard: " + text.str());
        }
        IRVisitor::visit(op);
    }
};

/// The global accesses of a printed kernel: each must be guarded by its
/// buffer's bounds, on its own line (`(GUARD ? x_data[...] : 0)`,
/// `if (GUARD) Out_data[...] = ...`) or by a then-branch whose condition names
/// that buffer's extents (the warp's interior check); each output store must
/// also sit under the lane's activity (`active_...`).
struct AccessCheck {
    std::vector<std::string> problems;
    int guarded = 0, interior = 0, stores = 0;
};

AccessCheck check_accesses(const kir::Kernel &kernel, const std::string &source) {
    AccessCheck result;
    // The branches open at each line: their conditions, and whether the line
    // is in the then-branch (an else-branch covers nothing).
    struct Open {
        std::string condition;
        bool then_branch;
    };
    std::vector<Open> open;
    // The values of the constants defined so far: a test or a stored value
    // may be a constant's (a packed kernel's `if (pulse_vlane(if_lanes, 0) &&
    // ...)`, a vector stored through `pulse_stored`), read with its value.
    std::map<std::string, std::string> values;
    auto with_values = [&](const std::string &text) {
        std::string all = text;
        for (int depth = 0; depth < 2; depth++) {
            std::string more;
            static const std::regex identifier(R"([A-Za-z_]\w*)");
            for (std::sregex_iterator it(all.begin(), all.end(), identifier), end; it != end; ++it) {
                auto value = values.find(it->str());
                if (value != values.end()) more += " " + value->second;
            }
            all = text + more;
        }
        return all;
    };
    std::istringstream lines(kernel_function(source));
    for (std::string line; std::getline(lines, line);) {
        std::string text = line.substr(std::min(line.find_first_not_of(' '), line.size()));
        if (text.rfind("const ", 0) == 0) {
            const size_t eq = text.find(" = ");
            const size_t name_at = eq == std::string::npos ? eq : text.rfind(' ', eq - 1);
            if (name_at != std::string::npos) values[text.substr(name_at + 1, eq - name_at - 1)] = text.substr(eq + 3);
        }
        if (text == "}") {
            if (!open.empty()) open.pop_back();
            continue;
        }
        if (text == "} else {") {
            if (!open.empty()) open.back().then_branch = false;
            continue;
        }
        if (!text.empty() && (text.back() == '{' || text[0] == '{')) {  // if, for, an array instance or a scope
            bool is_if = text.rfind("if (", 0) == 0 && text.size() > 7;
            open.push_back({is_if ? with_values(text.substr(4, text.size() - 7)) : "", is_if});
            continue;
        }
        auto under = [&](const std::string &own, const std::string &word) {
            bool found = own.find(word) != std::string::npos;
            for (const Open &o : open) found |= o.then_branch && o.condition.find(word) != std::string::npos;
            return found;
        };
        for (const kir::BufferArg &b : kernel.buffers) {
            // A table is read at clamped indices, with no bounds test (KernelIR.h).
            if (b.placement != kir::Placement::Global || b.table) continue;
            const std::string access = b.name + "_data[", bounds = b.name + ".extent[";
            for (size_t at = text.find(access); at != std::string::npos; at = text.find(access, at + 1)) {
                // Outputs are written, never read.
                std::string own = b.is_output ? (text.rfind("if (", 0) == 0 ? text.substr(0, at) : "")
                                              : (at >= 2 && text.compare(at - 2, 2, "? ") == 0 ? text.substr(0, at) : "");
                // A store whose guard folded to false (a reduction's, in the copy
                // of an instance for a warp outside the outputs) is dead.
                if (b.is_output && text.rfind("if (false) ", 0) == 0) continue;
                if (own.find(bounds) != std::string::npos) result.guarded++;
                else if (under("", bounds)) result.interior++;
                else result.problems.push_back("unguarded: " + text);
                if (b.is_output) {
                    result.stores++;
                    // A reduction's element is stored once, by lane 0, after its shuffle tree.
                    const bool reduction_by_lane_0 = under(own, "(lane == 0)") && with_values(text).find("_reduce") != std::string::npos;
                    if (!under(own, "active_") && !reduction_by_lane_0) result.problems.push_back("a store outside the lane's activity: " + text);
                }
            }
        }
    }
    return result;
}

/// Runs `command`, returning its exit status and (merged) output. Several
/// threads may run commands at once: the pipe is closed on exec ("e"), so no
/// child holds another's pipe open.
int run_command(const std::string &command, std::string &output) {
    FILE *pipe = popen((command + " 2>&1").c_str(), "re");
    if (!pipe) return -1;
    char buffer[4096];
    while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
    int status = pclose(pipe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("cuda: every example prints a kernel, a host function, a header and a harness", "[cuda]") {
    for (const std::string &name : example_specs()) {
        INFO(name);
        Generated g = generate(name);
        const CudaKernelSources &s = g.sources;
        CHECK_THAT(s.kernel, Contains("__global__ void __launch_bounds__(256) " + name + "_kernel(pulse_buffer "));
        CHECK_THAT(s.kernel, Contains("extern \"C\" cudaError_t " + name + "(pulse_buffer "));
        CHECK_THAT(s.header, Contains("#include \"pulse_buffer.h\""));
        CHECK_THAT(s.header, Contains("cudaError_t " + name + "(pulse_buffer "));
        CHECK_THAT(s.check, Contains(name + "_reference("));
        CHECK_THAT(s.check, Contains("PULSE_CUDA_CHECK(" + name + "("));
        // The readable comment block: UREs, transform, array, registers.
        CHECK_THAT(s.kernel, Contains("// Space-time transform:"));
        CHECK_THAT(s.kernel, Contains("// Registers per lane:"));
        // An array in the kernel (a register array) is indexed by constants
        // only: a run-time index would put it in local memory.
        std::string body = kernel_function(s.kernel);
        CHECK(run_time_indexed_arrays(body) == std::vector<std::string>{});
        // Every lane exchange is a full-warp intrinsic...
        // (A vector's, pulse_vshfl_*, is pulse_vectors.cuh's full-warp shuffle.)
        const size_t vector_exchanges = count(body, std::regex(R"(pulse_vshfl_\w+\()"));
        size_t exchanges = count(body, std::regex(R"(__(shfl\w*|ballot)_sync\()"));
        CHECK(count(body, std::regex(R"(__(shfl\w*|ballot)_sync\(0xffffffffu, )")) == exchanges);
        exchanges += vector_exchanges;
        // ...that every lane reaches: a let of its own, under no lane-dependent branch.
        ExchangeChecker checker;
        kir::on_large_stack([&] { g.kernel.body.accept(&checker); });
        CHECK(checker.problems == std::vector<std::string>{});
        CHECK((size_t)checker.exchanges == exchanges);
    }
    // The checks themselves: an array indexed by the lane, and the body under
    // a branch some lanes skip, are caught.
    CHECK(run_time_indexed_arrays("float h[4];\nh[0] = a;\nh[3] = b;\nconst float v = h[lane];\n") ==
          std::vector<std::string>{"h[lane]"});
    CHECK(run_time_indexed_arrays("    __shared__ __align__(16) int32_t t[8];\nconst int v = t[lane];\n").empty());
    Generated g = generate("conv1d_sbm");
    Stmt divergent = IfThenElse::make(Variable::make(Int(32), kir::lane_var) < 16, g.kernel.body);
    ExchangeChecker checker;
    kir::on_large_stack([&] { divergent.accept(&checker); });
    REQUIRE(!checker.problems.empty());
    CHECK_THAT(checker.problems.front(), Contains("under a lane-dependent guard: ") && Contains("pulse.shfl_up("));
}

TEST_CASE("cuda: min_blocks_per_sm becomes the second bound of __launch_bounds__", "[cuda]") {
    Spec spec = build_spec("conv1d_sbm", Params());
    ir::UreProgram program = spec.output.lower();
    KernelOptions options;
    options.min_blocks_per_sm = 3;
    kir::Kernel kernel = lower_to_kernel(compile_to_systolic(program), "k", {"x", "w"}, options);
    optimize_kernel(kernel);
    CHECK_THAT(print_cuda(kernel).kernel, Contains("__global__ void __launch_bounds__(256, 3) k_kernel("));
    CHECK_THAT(generate("conv1d_sbm").sources.kernel, Contains("__global__ void __launch_bounds__(256) conv1d_sbm_kernel("));
}

TEST_CASE("cuda: a block's arrays past 48 KiB live in dynamic shared memory, the host checks the opt-in limit", "[cuda]") {
    // jacobi3d, 27-point box, fp64, the 32 x 32 plane over a block: three
    // values a step, 16 KiB each. With 100000 bytes a run holds five: 80 KiB.
    const Params params = test::params({{"BOX", 1}, {"PLANE", 1}, {"F64", 1}, {"T", 2}, {"PE", 32}, {"TH", 32}, {"TZ", 7},
                                        {"BX", 1}, {"BY", 1}, {"BZ", 1}});
    ir::UreProgram program = build_spec("jacobi3d", params).output.lower();
    KernelOptions options;
    options.max_unrolled_steps = 0;
    options.max_shared_bytes = 100000;
    kir::Kernel kernel = lower_to_kernel(compile_to_systolic(program), "k", {"u", "n"}, options);
    optimize_kernel(kernel);
    CHECK(kir::shared_bytes(kernel.body) == 81920);
    const std::string text = print_cuda(kernel).kernel;
    CHECK_THAT(text, Contains("extern __shared__ __align__(16) unsigned char pulse_shared[];  // 81920 bytes"));
    CHECK_THAT(text, Contains("double *const exchange_float64 = (double *)(pulse_shared + 0);"));
    CHECK_THAT(text, !Contains("__shared__ __align__(16) double"));
    CHECK_THAT(text, Contains("cudaDeviceGetAttribute(&opt_in, cudaDevAttrMaxSharedMemoryPerBlockOptin, device)") &&
                         Contains("if (opt_in < 81920) return k_refuse(cudaErrorInvalidConfiguration, \"the kernel needs 81920 bytes of shared memory per block, more than this device allows\");") &&
                         Contains("cudaFuncSetAttribute(k_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 81920)") &&
                         Contains("k_kernel<<<(unsigned)blocks, 1024, 81920, stream>>>"));
    CHECK(execute_against_reference(kernel, program, 4) == "");
    // By default the same moves take runs that fit 48 KiB, static.
    options.max_shared_bytes = kir::shared_bytes_per_block;
    kir::Kernel fits = lower_to_kernel(compile_to_systolic(program), "k", {"u", "n"}, options);
    optimize_kernel(fits);
    CHECK(kir::shared_bytes(fits.body) <= kir::shared_bytes_per_block);
    CHECK_THAT(print_cuda(fits).kernel, Contains("__shared__ __align__(16) double exchange_float64[") && !Contains("pulse_shared"));
    // Past what sm_90 lets a block opt in to: refused.
    options.max_shared_bytes = kir::max_opt_in_shared_bytes + 1;
    CHECK_THROWS_WITH(lower_to_kernel(compile_to_systolic(program), "k", {"u", "n"}, options),
                      Contains("max_shared_bytes 232449 is outside [1, 232448]"));
}

TEST_CASE("cuda: a grid-synchronised kernel is a cooperative launch with its exchange arrays allocated per call", "[cuda]") {
    const Params params = test::params({{"GRID", 1}, {"T", 3}, {"PE", 16}, {"TH", 8}, {"BX", 2}, {"BY", 2}});
    Generated g = generate("jacobi2d", params, "k");
    const std::string &text = g.sources.kernel;
    CHECK_THAT(text, Contains("#include <cooperative_groups.h>"));
    CHECK_THAT(text, Contains("k_kernel(pulse_buffer u, pulse_buffer n, pulse_buffer Out, float *__restrict__ U_grid, int64_t warps)"));
    CHECK_THAT(text, Contains("cooperative_groups::this_grid().sync();"));
    // Two slots of the 128 PEs per instance: a step's values and the step's before.
    CHECK_THAT(text, Contains("e = cudaMallocAsync((void **)&U_grid, (size_t)warps * 256 * sizeof(float), stream);"));
    CHECK_THAT(text, Contains("void *arguments[] = {&u, &n, &Out, &U_grid, (void *)&warps};"));
    CHECK_THAT(text, Contains("cudaLaunchCooperativeKernel((const void *)k_kernel, dim3((unsigned)blocks), dim3(128), arguments, 0, stream);"));
    CHECK_THAT(text, Contains("if (U_grid) cudaFreeAsync(U_grid, stream);"));
    CHECK_THAT(text, !Contains("<<<"));
    // Three steps, a barrier between each two (the step's copies in the
    // interior and edge versions of the tile).
    size_t barriers = 0;
    for (size_t at = text.find("this_grid().sync()"); at != std::string::npos; at = text.find("this_grid().sync()", at + 1)) barriers++;
    CHECK(barriers % 3 == 0);
}

TEST_CASE("cuda: calls on several streams never overwrite constant memory another call's kernel reads", "[cuda]") {
    // conv1d_sbm's weights are in constant memory: each call waits, on its
    // stream, for the launch before it, under a lock, and records its own.
    Generated g = generate("conv1d_sbm");
    const std::string &text = g.sources.kernel;
    CHECK_THAT(text, Contains("static std::mutex conv1d_sbm_constant_lock;") && Contains("static cudaEvent_t conv1d_sbm_constant_read[64];"));
    const size_t lock = text.find("std::lock_guard<std::mutex> constant_lock(conv1d_sbm_constant_lock);");
    const size_t wait = text.find("e = read ? cudaStreamWaitEvent(stream, read, 0) : cudaEventCreateWithFlags(&read, cudaEventDisableTiming);");
    const size_t copy = text.find("cudaMemcpyToSymbolAsync(w_constant");
    const size_t launch = text.find("conv1d_sbm_kernel<<<");
    const size_t record = text.find("const cudaError_t recorded = cudaEventRecord(constant_read, stream);");
    REQUIRE(lock != std::string::npos);
    CHECK(lock < wait);
    CHECK(wait < copy);
    CHECK(copy < launch);
    CHECK(launch < record);
    // The harness runs two streams at once, the weights negated on the second, every call checked.
    CHECK_THAT(g.sources.check, Contains("for (auto &v : w_host2) v = (float)(-v);") &&
                                    Contains("conv1d_sbm_reference(x_host.data(), w_host2.data(), Out_expected2.data(), instances);") &&
                                    Contains("conv1d_sbm(x_second, w_second, Out_out, streams[1])") &&
                                    Contains("two streams at once"));
    // A kernel without constant inputs takes no lock, and its harness no second stream.
    Generated plain = generate("matvec");
    CHECK_THAT(plain.sources.kernel, !Contains("_constant_lock") && Contains("return launched;"));
    CHECK_THAT(plain.sources.check, !Contains("two streams at once"));
}

TEST_CASE("cuda: a packed value read only as its relu binds the relu in its let, inside its tree of maxima", "[cuda][vectors]") {
    // The packed aligner reads H only as max(H, 0): its carry, Best, H - OPEN
    // for E and for F of the slot above. bind_relus folds the relu into H's
    // let (one __vimax3_s16x2_relu or relu maximum with E), and every read
    // is H itself, at the last step (12 steps: 6 lanes, 7 residues) too;
    // F of slot 1 reads H of slot 0 from its let, not H's definition again.
    const Generated g = generate("align_sw_ragged_profile_i16", test::params({{"K", 4}, {"S", 7}}));
    const std::string text = kernel_function(g.sources.kernel);
    CHECK_THAT(text, Contains("const pulse_i16x2 H_v0_t0_s = pulse_vmax_relu("));
    CHECK_THAT(text, Contains("pulse_vmax(Best_reduce[0], H_v0_t0_s)"));
    CHECK_THAT(text, Contains("pulse_vmax(Best_reduce[0], H_v0_t11_s)"));
    CHECK_THAT(text, Contains("const pulse_i16x2 F_v1_t1 = pulse_vaddmax(F_v0_t1, pulse_vbroadcast<pulse_i16x2>((-1)), "
                              "pulse_vadd(H_v0_t1_s, pulse_vbroadcast<pulse_i16x2>((-11))));"));
    CHECK_THAT(text, !Contains("pulse_vmax_relu(H_"));
}

TEST_CASE("cuda: taps become shuffles in the direction of dp", "[cuda]") {
    // SBM: partial sums move up one lane per step (Z, dp = 1, dt = 1); weights
    // are a same-step copy chain of w(q), the same value on every lane, so no
    // lane hears it from the chain's source: w is read from constant memory.
    Generated sbm = generate("conv1d_sbm");
    CHECK(std::regex_search(sbm.sources.kernel, std::regex(R"(const float Z_t\d+_up1 = __shfl_up_sync\(0xffffffffu, [^;]*, 1\);)")));
    CHECK_THAT(sbm.sources.kernel, !Contains("__shfl_down_sync("));
    CHECK_THAT(sbm.sources.kernel, !Contains("__ballot_sync("));
    CHECK(sbm.kernel.buffer("w").placement == kir::Placement::Constant);
    CHECK_THAT(sbm.sources.kernel, Contains("= w_constant["));
    // FBS: inputs move down one lane per step (X(c + 1, q - 1): dp = -1).
    Generated fbs = generate("conv1d_fbs");
    CHECK(std::regex_search(fbs.sources.kernel, std::regex(R"(const float X_t\d+_down1 = __shfl_down_sync\(0xffffffffu, [^;]*, 1\);)")));
    CHECK_THAT(fbs.sources.kernel, !Contains("__shfl_up_sync("));
    // FSM: partial sums move down (Z(c, q + 1) with s = q: dp = -1).
    Generated fsm = generate("conv1d_fsm");
    CHECK(std::regex_search(fsm.sources.kernel, std::regex(R"(const float Z_t\d+_down1 = __shfl_down_sync\(0xffffffffu, [^;]*, 1\);)")));
    // FFS: weights wait two steps (t = 2c + q, W: dp = 1, dt = 2): the weight
    // of step 2 is what the lane below held at step 0, not at step 1.
    Generated ffs = generate("conv1d_ffs");
    CHECK_THAT(ffs.sources.kernel, Contains("const float W_t0_up1 = __shfl_up_sync(0xffffffffu, W_t0, 1);"));
    std::smatch w2, w3;
    REQUIRE(std::regex_search(ffs.sources.kernel, w2, std::regex(R"(const float W_t2 = [^;]*;)")));
    CHECK_THAT(w2.str(), Contains("W_t0_up1"));
    REQUIRE(std::regex_search(ffs.sources.kernel, w3, std::regex(R"(const float W_t3 = [^;]*;)")));
    CHECK_THAT(w3.str(), Contains("W_t1_up1"));
    CHECK_THAT(w3.str(), !Contains("W_t2_up1"));
}

TEST_CASE("cuda: every access is guarded by its buffer's bounds or the warp's interior check, every store by the lane's activity (a reduction's by lane 0)",
          "[cuda]") {
    for (const std::string &name : example_specs()) {
        INFO(name);
        Generated g = generate(name);
        AccessCheck check = check_accesses(g.kernel, g.sources.kernel);
        CHECK(check.problems == std::vector<std::string>{});
        CHECK(check.stores > 0);
        CHECK(check.guarded > 0);  // every example has tails or borders: a guarded copy exists
        if (name == "conv1d_sbm") CHECK(check.interior > 0);  // and its interior runs without guards
        // An input placed in constant memory: the host function checks that the
        // buffer holds the region before copying it.
        for (const kir::BufferArg &b : g.kernel.buffers) {
            if (b.placement != kir::Placement::Constant) continue;
            CHECK_THAT(host_function(g.sources.kernel, name),
                       Contains("if (region_min[pulse_d] < " + b.name + ".min[pulse_d] || region_min[pulse_d] + region_extent[pulse_d] > " + b.name +
                                ".min[pulse_d] + " + b.name + ".extent[pulse_d]) return " + name + "_refuse(cudaErrorInvalidValue, \"input " + b.name + " does not cover the region the kernel copies to constant memory (see the header)\");"));
        }
    }
    // The check itself: loads that lost their guards, printed, are caught.
    Generated g = generate("conv1d_sbm");
    g.kernel.body = kir::replace_calls(g.kernel.body, [](const Call *op) -> Expr {
        if (op->name != kir::intrinsic::load) return Expr();
        kir::Access a = kir::access_of(op);
        return kir::load(op->type, a.buffer, const_true(), a.coords);
    });
    AccessCheck broken = check_accesses(g.kernel, print_cuda(g.kernel).kernel);
    REQUIRE(!broken.problems.empty());
    CHECK_THAT(broken.problems.front(), Contains("x_data["));
}

TEST_CASE("cuda: an array wider than a warp runs several PEs per lane", "[cuda]") {
    // SBM has C + Q - 1 PEs: C = 40, Q = 5 is 44 PEs, two per lane.
    Params params = test::params({{"C", 40}});
    Generated g = generate("conv1d_sbm", params);
    CHECK(g.kernel.pes_per_lane == 2);
    CHECK_THAT(g.sources.kernel, Contains("// Array: 44 PEs (2 per lane"));
    // Only the top slot of a lane hands its partial sum across the lane's end;
    // slot 0 takes slot 1's from the lane below by a shuffle, slot 1 takes
    // slot 0's of its own lane from a register.
    CHECK(std::regex_search(g.sources.kernel, std::regex(R"(const float Z_v1_t\d+_up1 = __shfl_up_sync\(0xffffffffu, )")));
    CHECK(!std::regex_search(g.sources.kernel, std::regex(R"(Z_v0_t\d+_up1 = )")));
    // The kernel it prints computes what the reference does.
    CHECK(execute_against_reference(g.kernel, build_spec("conv1d_sbm", params).output.lower(), 5) == "");
    // 256 PEs is the widest a warp runs: 8 per lane.
    CHECK(generate("conv1d_sbm", test::params({{"C", 252}})).kernel.pes_per_lane == 8);
}

TEST_CASE("cuda: a test the same on every lane around shuffles is a warp vote, a lane's guard is not", "[cuda]") {
    Generated g = generate("conv2d_ssam", test::params({{"K", 5}, {"RT", 2}}));
    const std::string body = kernel_function(g.sources.kernel);
    // The interior test (a function of the warp's grid point and the buffer sizes).
    CHECK(count(body, std::regex(R"(if \(__all_sync\(0xffffffffu, )")) == 1);
    // The stores' guards depend on the lane: plain ifs.
    CHECK_THAT(body, Contains("if (active_"));
    CHECK(!std::regex_search(body, std::regex(R"(__all_sync\(0xffffffffu, active)")));
    // Inside a walk (split: a serial loop over instances) the test stays a plain if.
    Generated walk = generate("conv2d_ssam", test::params({{"K", 5}, {"RT", 2}, {"S", 3}}));
    CHECK(kernel_function(walk.sources.kernel).find("__all_sync") == std::string::npos);
}

TEST_CASE("cuda: an array over the warps of a block is a block with shared memory and barriers", "[cuda]") {
    Params params = test::params({{"K", 5}, {"PE", 70}, {"THREADS", 1}, {"RT", 2}});
    Generated g = generate("conv2d_ssam", params);
    CHECK(g.kernel.warps_per_array == 3);
    const std::string body = kernel_function(g.sources.kernel);
    CHECK_THAT(body, Contains("__launch_bounds__(96)"));
    CHECK_THAT(body, Contains("const int array_warp = threadIdx.x / 32;"));
    CHECK_THAT(body, Contains("__shared__ __align__(16) float exchange_float32["));
    CHECK_THAT(body, Contains("__syncthreads();"));
    CHECK_THAT(host_function(g.sources.kernel, "conv2d_ssam"), Contains("<<<(unsigned)blocks, 96, 0, stream>>>"));
    CHECK_THAT(g.sources.kernel, Contains("// Array: 70 PEs (3 warps of a block"));
    CHECK(execute_against_reference(g.kernel, build_spec("conv2d_ssam", params).output.lower(), 3) == "");
}

TEST_CASE("cuda: an array wider than 8 PEs per lane is refused with the bounds that fit", "[cuda]") {
    // SBM has C + Q - 1 PEs (Q = 5): C = 253 is 257; c fits up to 252, q up to
    // 4. C = 300 is 304: q alone cannot help, the 300 outputs need 300 PEs.
    struct Case {
        int64_t c;
        std::vector<std::string> phrases;
    };
    for (const Case &k : {Case{253, {"the array has 257 PEs", "c fits with extent <= 252", "q fits with extent <= 4"}},
                          Case{300, {"the array has 304 PEs", "c fits with extent <= 252", "q cannot fit"}}}) {
        INFO("C = " << k.c);
        try {
            generate("conv1d_sbm", test::params({{"C", k.c}}));
            FAIL_CHECK("an array of " << k.c + 4 << " PEs was accepted");
        } catch (const pulse::CompileError &e) {
            std::string m = e.what();
            CHECK_THAT(m, Contains("a warp runs at most 256 (8 per lane)"));
            for (const std::string &phrase : k.phrases) CHECK_THAT(m, Contains(phrase));
        }
    }
}

TEST_CASE("cuda: the printer refuses IR it cannot print, naming it", "[cuda]") {
    Generated g = generate("conv1d_sbm");
    kir::Kernel kernel = g.kernel;
    Expr mystery = Call::make(Int(32), "mystery_intrinsic", {kir::warp_index()}, Call::Extern);
    kernel.body = Block::make(LetStmt::make("m", mystery, Evaluate::make(0)), kernel.body);
    REQUIRE_THROWS_WITH(print_cuda(kernel), Contains("cuda printer: cannot print the call mystery_intrinsic("));
    kernel.body = Block::make(Evaluate::make(mystery), g.kernel.body);
    REQUIRE_THROWS_WITH(print_cuda(kernel), Contains("cuda printer: cannot print the statement"));
}

TEST_CASE("cuda: the batch size is a run-time size: the grid follows the output extents", "[cuda]") {
    Generated g = generate("conv1d_sbm");  // B = 4 arrays of C = 16 outputs, Out(b * 16 + c)
    // One grid loop, b, whose extent is read from Out's extent at run time.
    REQUIRE(g.kernel.grid.size() == 1);
    CHECK(g.kernel.grid[0].var == "b");
    CHECK(expr_uses_var(g.kernel.grid[0].extent, "Out.extent.0"));
    CHECK(!is_const(simplify(g.kernel.grid[0].extent)));
    std::string host = host_function(g.sources.kernel, "conv1d_sbm");
    std::smatch warps;
    REQUIRE(std::regex_search(host, warps, std::regex(R"(const int64_t warps = [^;]*;)")));
    CHECK_THAT(warps.str(), Contains("Out.extent[0]"));
    CHECK_THAT(g.sources.kernel, Contains("if (warp_index >= warps) return;"));
    CHECK_THAT(g.sources.header, Contains("cudaError_t conv1d_sbm(pulse_buffer x, pulse_buffer w, pulse_buffer Out, cudaStream_t stream);"));
    // The kernel printed for B = 4 runs a batch of 7 (its inputs sized for 7) as the reference does.
    CHECK(execute_against_reference(g.kernel, build_spec("conv1d_sbm", test::params({{"B", 7}})).output.lower(), 5) == "");
    // The harness sizes its buffers from the reference's layout at a batch it may be given.
    CHECK_THAT(g.sources.check, Contains("int64_t instances = conv1d_sbm_default_instances();"));
    CHECK_THAT(g.sources.check, Contains("conv1d_sbm_Out_region(pulse_d, instances, &Out_min[pulse_d], &Out_extent[pulse_d]);"));
}

TEST_CASE("cuda: the host header states what the kernel computes, its buffer sizes and named size queries", "[cuda]") {
    Generated g = generate("conv1d_sbm");
    const std::string &h = g.sources.header;
    CHECK_THAT(h, Contains("// Generated by Pulse " + std::string(version()) + ". conv1d_sbm: 1-D convolution, SBM: inputs stay, weights broadcast"));
    CHECK_THAT(g.sources.kernel, Contains("// Generated by Pulse " + std::string(version()) + "."));
    CHECK_THAT(emit_reference_cpp(g.program, "conv1d_sbm", g.inputs), Contains("Generated by Pulse " + std::string(version()) + "."));
    CHECK_THAT(h, Contains("// What it computes: Out from x, w by the UREs below"));
    CHECK_THAT(h, Contains("//   x: input, float, 68 elements, indices [0, 67]\n"));
    CHECK_THAT(h, Contains("//   Out: output, float, 64 elements, indices [0, 63]\n"));
    CHECK_THAT(h, Contains("#ifdef __cplusplus\nextern \"C\" {\n#endif"));
    CHECK_THAT(h, Contains("static inline void conv1d_sbm_x_region(int dim, int64_t instances, int64_t *min, int64_t *extent)"));
    CHECK_THAT(h, Contains("static inline int64_t conv1d_sbm_w_elements(int64_t instances)"));
    CHECK_THAT(h, Contains("static inline int64_t conv1d_sbm_Out_elements(int64_t instances)"));
    // No size query by buffer number, and no comment that numbers them.
    CHECK_THAT(h, !Contains("_input_region(") && !Contains("_output_region(") && !Contains("(0: "));
    // The kernel's extern "C" entry point sits inside the extern "C" block.
    CHECK(h.find("extern \"C\" {") < h.find("cudaError_t conv1d_sbm("));
    CHECK(h.find("cudaError_t conv1d_sbm(") < h.find("}  // extern \"C\""));
}

TEST_CASE("cuda: the host function refuses buffers the kernel cannot index, before it launches", "[cuda]") {
    // conv2d_ssam: x and w 2-D, Out 2-D. Each buffer's dimensions, negative
    // extents and missing data are checked first; the grid's size before the
    // launch; the harness calls the function with each buffer one dimension
    // short and expects the refusal.
    Generated g = generate("conv2d_ssam", test::params({{"K", 3}}));
    const std::string host = host_function(g.sources.kernel, "conv2d_ssam");
    for (const char *b : {"x", "w", "Out"}) {
        INFO(b);
        const std::string what = std::string(b[0] == 'O' ? "output " : "input ") + b;
        CHECK_THAT(host, Contains(std::string("if (") + b + ".dimensions != 2) return conv2d_ssam_refuse(cudaErrorInvalidValue, \"" + what +
                                  ": the kernel indexes 2 dimension(s); set its dimensions to 2\");"));
        CHECK_THAT(host, Contains(std::string("if (") + b + ".extent[pulse_d] < 0) return conv2d_ssam_refuse(cudaErrorInvalidValue, \"" + what +
                                  ": a negative extent\");"));
        CHECK_THAT(host, Contains(std::string("if (elements > 0 && ") + b + ".data == nullptr) return conv2d_ssam_refuse(cudaErrorInvalidValue, \"" +
                                  what + ": no data (a null pointer) for its elements\");"));
    }
    // The kernel indexes dimension 0 as dense: any other stride of a buffer in
    // global memory is refused (w goes to constant memory, copied row by row).
    for (const char *b : {"x", "Out"}) {
        const std::string what = std::string(b[0] == 'O' ? "output " : "input ") + b;
        CHECK_THAT(host, Contains(std::string("if (elements > 0 && ") + b + ".stride[0] != 1) return conv2d_ssam_refuse(cudaErrorInvalidValue, \"" +
                                  what + ": its first dimension has a stride other than 1;"));
        CHECK_THAT(g.sources.kernel, !Contains(std::string("* ") + b + ".stride[0])"));
    }
    // The harness checks that refusal on the GPU with the first global buffer.
    CHECK_THAT(g.sources.check, Contains("strided.stride[0] = 2;") && Contains("its first dimension has a stride other than 1"));
    CHECK(host.find(".dimensions != 2") < host.find("const int64_t warps ="));
    CHECK(host.find("if (blocks > 2147483647) return conv2d_ssam_refuse(cudaErrorInvalidConfiguration,") < host.find("<<<"));
    // Each call starts with no refusal; the checks of the descriptors can be compiled out.
    CHECK(host.find("conv2d_ssam_refusal = \"\";") < host.find("#ifndef PULSE_NO_HOST_CHECKS"));
    CHECK(host.find("#ifndef PULSE_NO_HOST_CHECKS") < host.find(".dimensions != 2"));
    CHECK(host.find("#endif") < host.find("const int64_t warps ="));
    CHECK_THAT(g.sources.header, Contains("cudaErrorInvalidValue, launching nothing, if a buffer has other\n/// dimensions than listed"));
    CHECK_THAT(g.sources.header, Contains("const char *conv2d_ssam_last_refusal(void);"));
    // The launch-info query: the block, resources and blocks per SM of this device.
    CHECK_THAT(g.sources.header, Contains("cudaError_t conv2d_ssam_launch_info(pulse_launch_info *info);"));
    CHECK_THAT(g.sources.kernel, Contains("cudaFuncGetAttributes(&attributes, conv2d_ssam_kernel)") &&
                                     Contains("cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, conv2d_ssam_kernel, 256, 0)") &&
                                     Contains("info->cooperative = 0;"));
    CHECK_THAT(g.sources.check, Contains("PULSE_CUDA_CHECK(conv2d_ssam_launch_info(&info));"));
    CHECK_THAT(g.sources.check, Contains("args[wrong].dimensions -= 1;") &&
                                    Contains("if (conv2d_ssam(args[0], args[1], args[2], 0) != cudaErrorInvalidValue") &&
                                    Contains("if (std::strstr(conv2d_ssam_last_refusal(), names[wrong]) == nullptr"));
}

TEST_CASE("cuda: outputs at affine indices are stored at their index, in buffers with non-zero minima", "[cuda]") {
    // test_affine_outputs (C = 6, Q = 3, B = 3, SBM: lane = c + q, outputs at
    // q = 2): Rev((B - 1 - b) * C + (C - 1 - c) + 3) is Rev(22 - 6b - lane),
    // over [3, 20]; Grid(c + 2, b - 1) is Grid(lane, b - 1), over [2, 7] x [-1, 1].
    Generated g = generate("test_affine_outputs");
    CHECK(g.kernel.buffer("Rev").dimensions == 1);
    CHECK(g.kernel.buffer("Grid").dimensions == 2);
    class Stores : public IRVisitor {
    public:
        std::map<std::string, std::vector<kir::Access>> of;
        using IRVisitor::visit;
        void visit(const Call *op) override {
            if (op->name == kir::intrinsic::store) of[kir::access_of(op).buffer].push_back(kir::access_of(op));
            IRVisitor::visit(op);
        }
    } stores;
    kir::on_large_stack([&] { g.kernel.body.accept(&stores); });
    Expr b = Variable::make(Int(32), "b"), lane = Variable::make(Int(32), kir::lane_var);
    REQUIRE(!stores.of["Rev"].empty());
    for (const kir::Access &a : stores.of["Rev"]) {
        REQUIRE(a.coords.size() == 1);
        CHECK(can_prove(a.coords[0] == 22 - 6 * b - lane));
    }
    REQUIRE(!stores.of["Grid"].empty());
    for (const kir::Access &a : stores.of["Grid"]) {
        REQUIRE(a.coords.size() == 2);
        CHECK(can_prove(a.coords[0] == lane && a.coords[1] == b - 1));
    }
    // The printed stores index from each buffer's own minimum.
    // (Dimension 0 is dense: its offset is not scaled by a stride.)
    CHECK_THAT(g.sources.kernel, Contains("- Rev.min[0])] = ") && !Contains("* Rev.stride[0]"));
    CHECK_THAT(g.sources.kernel, Contains("- Grid.min[1]) * Grid.stride[1])") && !Contains("* Grid.stride[0]"));
    // On the executor, into buffers over those boxes, it equals the reference.
    CHECK(execute_against_reference(g.kernel, g.program, 5) == "");
    // The harness sizes each output by the box the reference lays it out over.
    CHECK_THAT(g.sources.check, Contains("test_affine_outputs_Rev_region(pulse_d, instances, &Rev_min[pulse_d], &Rev_extent[pulse_d]);"));
    CHECK_THAT(g.sources.check, Contains("test_affine_outputs_Grid_region(pulse_d, instances, &Grid_min[pulse_d], &Grid_extent[pulse_d]);"));
}

TEST_CASE("cuda: a buffer named like a variable of the host code is refused, and the host code's loops never shadow one", "[cuda]") {
    // Edit distance's output is `d`, the letter the host code's loops once used.
    for (const char *out : {"d", "e", "warps"}) {
        INFO(out);
        Var i("i"), j("j"), s("s"), t("t");
        pulse::Input a(Int(32), 1, "a");
        pulse::Func D(Int(32), {j, i}, Place::Device, "D"), Out(Place::Device, out);
        D(j, i) = select(i == 0 || j == 0, 0, D(j - 1, i - 1) + a(i - 1));
        Out(j, i) = D(j, i);
        D.merge_ures(Out).set_bounds(j, 0, 5, i, 0, 7);
        D.space_time_transform({j, i}, {s, t}, {0, 1, /**/ 1, 1});
        ir::UreProgram program = Out.lower();
        kir::Kernel kernel = lower_to_kernel(compile_to_systolic(program), "named", {"a"});
        optimize_kernel(kernel);
        if (std::string(out) == "d") {
            CudaKernelSources sources = print_cuda(kernel, host_header_text(program, "named", {"a"}, ""));
            CHECK(sources.kernel.find("int d = 0") == std::string::npos);
            CHECK(sources.check.find("int d = 0") == std::string::npos);
            CHECK_THAT(sources.kernel, Contains("d.extent[pulse_d]"));
        } else {
            REQUIRE_THROWS_WITH(print_cuda(kernel), Contains(std::string("kernel named: output ") + out +
                                                             " is named like a variable of the generated CUDA host code; rename it in the spec"));
        }
    }
}

#ifdef PULSE_NVCC
TEST_CASE("cuda: a kernel lowered with the stride of dimension 0 indexes by it and accepts any", "[cuda]") {
    Spec spec = build_spec("conv2d_ssam", test::params({{"K", 3}}));
    const ir::UreProgram program = spec.output.lower();
    std::vector<std::string> inputs;
    for (const Input &in : spec.inputs) inputs.push_back(in.name());
    KernelOptions options;
    options.dense_first_dimension = false;  // --strided-first-dimension
    kir::Kernel kernel = lower_to_kernel(compile_to_systolic(program), "conv2d_ssam", inputs, options);
    optimize_kernel(kernel);
    CHECK_FALSE(kernel.dense_first_dimension);
    const CudaKernelSources sources = print_cuda(kernel, host_header_text(program, "conv2d_ssam", inputs, spec_description("conv2d_ssam")));
    const std::string host = host_function(sources.kernel, "conv2d_ssam");
    for (const char *b : {"x", "Out"}) {
        INFO(b);
        CHECK_THAT(sources.kernel, Contains(std::string("* ") + b + ".stride[0])"));
        CHECK_THAT(host, !Contains(std::string(b) + ".stride[0] != 1"));
    }
    CHECK_THAT(sources.check, !Contains("strided.stride[0] = 2;"));
    CHECK_THAT(sources.header, !Contains("not dense"));
    // The default kernel says it in its header.
    CHECK_THAT(generate("conv2d_ssam", test::params({{"K", 3}})).sources.header, Contains("is not dense (stride 1)"));
}

TEST_CASE("cuda: every printed kernel compiles for sm_90 with no stack frame and no spills, and every harness compiles",
          "[cuda][nvcc]") {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("pulse_test_cuda_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    struct Case {
        std::string spec, name;
        Params params;
    };
    std::vector<Case> cases;
    // (The packed aligners at K = 4, S = 7: the same code, a third of it, for
    // the longest compile of the suite.)
    auto compile_params = [](const std::string &spec) {
        return spec == "align_sw_blocked_i16" || spec == "align_sw_ragged_i16" || spec == "align_sw_ragged_profile_i16" ||
                       spec == "align_sw_ragged_segment_profile_i16"
                   ? test::params({{"K", 4}, {"S", 7}})
                   : Params();
    };
    for (const std::string &spec : example_specs()) cases.push_back({spec, spec, compile_params(spec)});
    // The packed aligner's sums saturating (__vaddss2).
    cases.push_back({"align_sw_ragged_profile_i16", "align_sw_ragged_profile_i16_saturate", test::params({{"K", 4}, {"S", 7}, {"SATURATE", 1}})});
    // Arrays wider than a warp: 2 and 8 PEs per lane.
    cases.push_back({"conv1d_sbm", "conv1d_sbm_c40", test::params({{"C", 40}})});
    cases.push_back({"conv1d_sbm", "conv1d_sbm_c252", test::params({{"C", 252}})});
    // Arrays over the warps of a block: 3 warps (2-D), 2 warps walking planes (3-D, fp64).
    cases.push_back({"conv2d_ssam", "conv2d_ssam_threads70", test::params({{"K", 5}, {"PE", 70}, {"THREADS", 1}})});
    cases.push_back({"stencil3d_7pt", "stencil3d_7pt_threads64", test::params({{"F64", 1}, {"PE", 64}, {"THREADS", 1}})});
    // The image staged in shared memory: per warp of a block, and per block.
    cases.push_back({"stencil2d_9pt", "stencil2d_9pt_shared", test::params({{"CACHE", 2}})});
    cases.push_back({"stencil2d_5pt", "stencil2d_5pt_shared_threads", test::params({{"CACHE", 2}, {"PE", 64}, {"THREADS", 1}})});
    // Every block at once, a grid barrier per step (cooperative groups).
    cases.push_back({"jacobi2d", "jacobi2d_grid", test::params({{"GRID", 1}, {"T", 4}, {"PE", 32}, {"TH", 8}})});
    // Compiles DIR/FILE.cu to an object; returns nvcc's status, its output in `output`.
    auto compile = [&](const std::string &file, const std::string &flags, std::string &output) {
        return run_command(std::string(PULSE_NVCC) + " -std=c++17 -arch=sm_90 -I" + dir.string() + " -I" PULSE_RUNTIME_DIR +
                               flags + " -c " + (dir / (file + ".cu")).string() + " -o " + (dir / (file + ".o")).string(),
                           output);
    };
    // The sources first (the compiler runs on one thread), then nvcc on a few
    // at once: its runs are processes of their own, and this test is the
    // longest of the suite.
    struct Compiled {
        std::string name, output, harness_output;
        int status = -1, harness_status = -1;
    };
    std::vector<Compiled> compiled;
    for (const Case &c : cases) {
        INFO(c.name);
        Generated g = generate(c.spec, c.params, c.name);
        std::ofstream(dir / (c.name + ".cu")) << g.sources.kernel;
        std::ofstream(dir / (c.name + ".h")) << g.sources.header;
        // The harness, against the emitted reference.
        std::ofstream(dir / (c.name + "_check.cu")) << g.sources.check;
        std::ofstream(dir / (c.name + "_reference.h")) << emit_reference_cpp(g.program, c.name, g.inputs);
        compiled.push_back({c.name, "", "", -1, -1});
    }
    const size_t width = std::max(2u, std::thread::hardware_concurrency());
    for (size_t first = 0; first < compiled.size(); first += width) {
        std::vector<std::future<void>> running;
        for (size_t i = first; i < std::min(first + width, compiled.size()); i++) {
            running.push_back(std::async(std::launch::async, [&compile, &job = compiled[i]] {
                job.status = compile(job.name, " -O3 -Xptxas -v", job.output);
                // (The harness is host code, and compiling it is the check: unoptimised, a fifth faster.)
                job.harness_status = compile(job.name + "_check", " -O0", job.harness_output);
            }));
        }
        for (std::future<void> &f : running) f.get();
    }
    for (const Compiled &c : compiled) {
        INFO(c.name);
        INFO(c.output);
        REQUIRE(c.status == 0);
        CHECK(c.output.find("warning") == std::string::npos);
        std::smatch m;
        REQUIRE(std::regex_search(c.output, m,
                                  std::regex(c.name + R"(_kernel[^\n]*\n\s*(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)")));
        CHECK(m[1] == "0");
        CHECK(m[2] == "0");
        CHECK(m[3] == "0");
        INFO(c.harness_output);
        CHECK(c.harness_status == 0);
    }
    fs::remove_all(dir);
}
#endif
