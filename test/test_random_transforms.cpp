// The validator against brute force: random small integer matrices on the
// example UREs at small bounds. Enumeration of the bounded domain decides each
// condition independently of isl; the two verdicts must agree on every case.
// Accepted designs are then compiled, simulated and compared with the
// reference interpreter.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <set>
#include <unistd.h>

#include "codegen/CodeGenCM.h"
#include "Emit.h"
#include "exec/ExprCompiler.h"
#include "exec/KernelExecutor.h"
#include "lower/LowerToKernel.h"
#include "lower/Pipeline.h"
#include "exec/Simulator.h"
#include "BruteForce.h"
#include "CmBuild.h"
#include "TestUtil.h"
#include "analysis/Validate.h"

using namespace pulse;
using Catch::Contains;
using namespace pulse::test;

namespace {

/// "conv1d_sbm, 40 points, matrix [1, 1] [0, 1]"
std::string design_text(const std::string &spec, const ir::UreProgram &program,
                        const std::vector<std::vector<int64_t>> &matrix) {
    std::ostringstream out;
    out << spec << ", " << program.domain_size() << " points, matrix";
    for (const auto &row : matrix) {
        out << " [";
        for (size_t j = 0; j < row.size(); j++) out << (j ? ", " : "") << row[j];
        out << "]";
    }
    return out.str();
}

/// Z accumulates over b as well as q. With the source loops (c, q) the
/// dependence on b - 1 crosses array instances; with (c, q, b) it is an
/// ordinary dependence of a three-loop transform ("SRC" = 3 picks that).
ir::UreProgram accumulate_over_b(const Params &params) {
    const int C = (int)params.get("C", 3), Q = (int)params.get("Q", 2), B = (int)params.get("B", 2);
    Var c("c"), q("q"), b("b"), s("s"), t("t");
    Input x(Float(32), 1, "x");
    Func X(Float(32), {c, q, b}, Place::Device, "X"), Z(Float(32), {c, q, b}, Place::Device, "Z"),
        Out(Place::Device, "Out");
    X(c, q, b) = x(c + q + b);
    Z(c, q, b) = select(b == 0, 0.0f, Z(c, q, b - 1)) + X(c, q, b);
    Out(c, q) = select(b == B - 1, Z(c, q, b));
    X.merge_ures(Z, Out).set_bounds(c, 0, C, q, 0, Q, b, 0, B);
    if (params.get("SRC", 2) == 3) {
        X.space_time_transform({c, q, b}, {s, t}, {1, 0, 0, /**/ 0, 1, Q});
    } else {
        X.space_time_transform({c, q}, {s, t}, {1, 0, /**/ 0, 1});
    }
    return Out.lower();
}

/// A spec, and the ranges its sizes are drawn from.
struct Family {
    std::string name;
    std::function<ir::UreProgram(const Params &)> build;
    std::vector<std::pair<const char *, std::pair<int, int>>> size_ranges;  ///< parameter -> [lo, hi]
    int cases;
};

std::function<ir::UreProgram(const Params &)> registered(const std::string &spec) {
    return [spec](const Params &p) { return build_spec(spec, p).output.lower(); };
}

std::vector<Family> families() {
    return {
        {"conv1d_sbm", registered("conv1d_sbm"), {{"C", {1, 6}}, {"Q", {1, 5}}, {"B", {1, 2}}}, 300},
        {"conv1d_fsm", registered("conv1d_fsm"), {{"C", {1, 5}}, {"Q", {1, 4}}, {"B", {1, 2}}}, 150},
        {"conv1d_fbs_stride2", registered("conv1d_fbs_stride2"), {{"C", {1, 5}}, {"Q", {1, 5}}, {"B", {1, 2}}}, 150},
        {"conv2d_sbm", registered("conv2d_sbm"), {{"C", {1, 4}}, {"P", {1, 3}}, {"Q", {1, 3}}, {"R", {1, 2}}, {"B", {1, 1}}}, 300},
        {"matmul", registered("matmul"), {{"I", {1, 4}}, {"J", {1, 4}}, {"K", {1, 4}}, {"N", {1, 2}}}, 300},
        {"accumulate_over_b", accumulate_over_b, {{"C", {1, 4}}, {"Q", {1, 3}}, {"B", {1, 3}}, {"SRC", {2, 3}}}, 150},
        // Wide arrays: more PEs than a warp has lanes (several PEs per lane on a GPU).
        {"conv1d_sbm", registered("conv1d_sbm"), {{"C", {30, 70}}, {"Q", {1, 3}}, {"B", {1, 1}}}, 150},
        {"conv1d_fbs", registered("conv1d_fbs"), {{"C", {33, 60}}, {"Q", {1, 3}}, {"B", {1, 1}}}, 100},
    };
}

/// One accepted random design, kept for the simulation test.
struct Design {
    const Family *family;
    Params params;
    std::vector<std::vector<int64_t>> matrix;
};

/// What one pass over the random cases found.
struct Agreement {
    int cases = 0, disagreements = 0;
    std::map<Verdict, int> by_verdict;
    std::vector<Design> accepted;
    std::vector<std::string> reports;  ///< one per disagreement
};

/// Runs every random case once (the test cases below share the run).
const Agreement &run_agreement() {
    static Agreement run;
    static bool done = false;
    if (done) return run;
    done = true;
    // PULSE_FUZZ_SEED=n draws other cases (a failure's text names its design).
    const char *seed_text = std::getenv("PULSE_FUZZ_SEED");
    std::mt19937 rng(seed_text ? (uint32_t)std::strtoul(seed_text, nullptr, 10) : 20240607u);
    std::uniform_int_distribution<int> entry(-2, 2);
    static const std::vector<Family> all = families();
    // PULSE_RANDOM_SCALE=n runs n times the cases (a longer fuzzing run).
    const char *scale_text = std::getenv("PULSE_RANDOM_SCALE");
    const int scale = scale_text ? std::max(1, std::atoi(scale_text)) : 1;
    for (const Family &family : all) {
        // A few matrices per drawn size, so lowering is not repeated for every case.
        const int per_size = 10;
        for (int drawn = 0; drawn < family.cases * scale; drawn += per_size) {
            Params p;
            for (const auto &[name, range] : family.size_ranges) {
                p.set(name, std::uniform_int_distribution<int>(range.first, range.second)(rng));
            }
            ir::UreProgram program = family.build(p);
            const size_t columns = program.schedule.transform->source_loops.size();
            for (int m = 0; m < per_size; m++) {
                std::vector<std::vector<int64_t>> matrix(2, std::vector<int64_t>(columns));
                for (auto &row : matrix)
                    for (auto &v : row) v = entry(rng);
                program.schedule.transform->matrix = matrix;

                BruteResult brute = brute_force(program);
                ValidatorResult validator = run_validator(program);
                run.cases++;
                run.by_verdict[brute.verdict]++;
                const std::string why = compare_with_brute_force(program, brute, validator);
                if (!why.empty()) {
                    run.disagreements++;
                    run.reports.push_back("disagreement on " + design_text(family.name, program, matrix) + ": " + why);
                }
                const Verdict verdict = validator.verdict;
                if (verdict == Verdict::Accept) run.accepted.push_back({&family, p, matrix});
            }
        }
    }
    return run;
}

}  // namespace

TEST_CASE("the validator agrees with brute-force enumeration on random transforms", "[validator][random]") {
    const Agreement &run = run_agreement();
    for (const std::string &r : run.reports) UNSCOPED_INFO(r);
    const int cases = run.cases, disagreements = run.disagreements;
    std::map<Verdict, int> by_verdict = run.by_verdict;
    const std::vector<Design> &accepted = run.accepted;
    std::cout << "random transforms: " << cases << " cases, " << accepted.size() << " accepted ("
              << by_verdict[Verdict::Processor] << " processor-availability, " << by_verdict[Verdict::Data]
              << " data-availability, " << by_verdict[Verdict::CrossesInstances]
              << " instance-crossing rejections), " << disagreements << " disagreements\n";
    REQUIRE(cases >= 1000);
    REQUIRE(disagreements == 0);
    // Every verdict the test can tell apart must actually occur, or the test proves little.
    CHECK(by_verdict[Verdict::Accept] > 0);
    CHECK(by_verdict[Verdict::Processor] > 0);
    CHECK(by_verdict[Verdict::Data] > 0);
    CHECK(by_verdict[Verdict::CrossesInstances] > 0);
}

TEST_CASE("accepted random transforms simulate to the reference result", "[validator][random][simulate]") {
    const std::vector<Design> &accepted = run_agreement().accepted;
    REQUIRE(!accepted.empty());
    int simulated = 0;
    for (const Design &design : accepted) {
        ir::UreProgram program = design.family->build(design.params);
        program.schedule.transform->matrix = design.matrix;
        INFO(design_text(design.family->name, program, design.matrix));
        Buffers inputs = random_input_buffers(program, (uint32_t)simulated + 1);
        sys::SystolicProgram systolic = compile_to_systolic(program);
        Buffers result = simulate(systolic, inputs);
        REQUIRE(compare_outputs(ir::realize(program, inputs), result) == "");
        simulated++;
    }
    std::cout << "random transforms: " << simulated << " accepted designs simulated\n";
}

TEST_CASE("accepted random transforms run on the kernel executor to the reference result", "[kernel][random]") {
    // The GPU mapping of every accepted design, unrolled and with its time loop
    // rolled, run lane by lane on the CPU executor with its outputs poisoned.
    // Arrays wider than a warp run several PEs per lane; a design the mapping
    // cannot honour must be refused with a CompileError, never mis-compiled.
    const std::vector<Design> &accepted = run_agreement().accepted;
    REQUIRE(!accepted.empty());
    int executed = 0, refused = 0, several_per_lane = 0;
    std::map<std::string, int> refusals;
    KernelOptions rolled;
    rolled.max_unrolled_steps = 0;
    for (const Design &design : accepted) {
        ir::UreProgram program = design.family->build(design.params);
        program.schedule.transform->matrix = design.matrix;
        INFO(design_text(design.family->name, program, design.matrix));
        sys::SystolicProgram systolic = compile_to_systolic(program);
        std::vector<std::string> order;
        for (const ir::InputDecl &in : program.inputs) order.push_back(in.name);
        for (const KernelOptions &options : {KernelOptions{}, rolled}) {
            kir::Kernel kernel;
            try {
                kernel = lower_to_kernel(systolic, "k", order, options);
            } catch (const CompileError &e) {
                refusals[to_string(e.refusal)]++;
                refused++;
                continue;
            }
            optimize_kernel(kernel);
            several_per_lane += kernel.pes_per_lane > 1;
            REQUIRE(execute_against_reference(kernel, program, (uint32_t)executed + 7) == "");
            executed++;
        }
    }
    std::cout << "random transforms: " << executed << " kernels executed (" << several_per_lane
              << " with several PEs per lane), " << refused << " refused by the mapping\n";
    for (const auto &[reason, n] : refusals) std::cout << "  refused " << n << "x: " << reason << "\n";
    // The mapping must honour most accepted designs, or this proves little.
    REQUIRE(executed >= 2 * (int)accepted.size() * 9 / 10);
}

TEST_CASE("a sample of accepted random transforms runs on the CM emulation to the reference result", "[cm][random]") {
    // About 28 accepted designs (compiling a CM harness takes seconds): emitted
    // as CM, built against the CPU emulation, run with its own reference.
    const std::vector<Design> &accepted = run_agreement().accepted;
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("pulse_random_cm_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::vector<std::string> names;
    int refused = 0;
    const size_t step = std::max<size_t>(12, accepted.size() / 28);  // at any scale
    for (size_t i = 0; i < accepted.size(); i += step) {
        const Design &design = accepted[i];
        ir::UreProgram program = design.family->build(design.params);
        program.schedule.transform->matrix = design.matrix;
        std::vector<std::string> order;
        for (const ir::InputDecl &in : program.inputs) order.push_back(in.name);
        std::string name = "design" + std::to_string(i);
        try {
            emit_cm_emulation(compile_to_systolic(program), name, order, dir.string(), Target::cm_gen9());
        } catch (const CompileError &) {
            refused++;  // over the register budget (test_cm), or refused by the kernel mapping
            continue;
        }
        names.push_back(name);
    }
    std::string log;
    const int built = build_cm_emulations(dir, names, &log);
    INFO(log);
    REQUIRE(built == 0);
    int passed = 0;
    for (const std::string &n : names) {
        std::string out;
        INFO(n);
        CHECK(run_command("'" + (dir / (n + "_emu")).string() + "' 0 5", &out) == 0);
        CHECK(out == "PASS\n");
        passed += out == "PASS\n";
    }
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
    std::cout << "random transforms: " << passed << " of " << names.size() << " sampled designs pass on the CM emulation ("
              << refused << " over the CM register budget)\n";
    REQUIRE(names.size() >= 16);
}
