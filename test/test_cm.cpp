// The CM backend end to end: every example's kernel is generated, compiled
// with the host C++ compiler against the CPU emulation of CM, run thread by
// thread and compared with the emitted reference on random inputs.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <unistd.h>

#include "codegen/CodeGenCM.h"
#include "Emit.h"
#include "CmBuild.h"
#include "lower/CheckCmSupport.h"
#include "lower/Pipeline.h"
#include "TestUtil.h"
#include "pulse/pulse.h"

using namespace pulse;
using pulse::test::build_cm_emulations;

namespace {

struct Case {
    std::string spec;
    std::vector<std::pair<std::string, int64_t>> params;
    int64_t instances;  ///< run-time instance count the harness is run with (besides the spec's)
};

Params make_params(const Case &c) {
    Params p;
    for (const auto &[k, v] : c.params) p.set(k, v);
    return p;
}

std::string case_id(const Case &c) {
    std::string id = c.spec;
    for (const auto &[k, v] : c.params) id += "_" + k + std::to_string(v);
    return id;
}

std::filesystem::path scratch_directory(const std::string &what) {
    std::filesystem::path dir = std::filesystem::temp_directory_path() / ("pulse_test_cm_" + std::to_string(::getpid())) / what;
    std::filesystem::create_directories(dir);
    return dir;
}

/// Removes the test's scratch files when the test program exits.
struct ScratchCleanup {
    ~ScratchCleanup() {
        std::error_code ignored;
        std::filesystem::remove_all(std::filesystem::temp_directory_path() / ("pulse_test_cm_" + std::to_string(::getpid())), ignored);
    }
} scratch_cleanup;

std::string read_text(const std::filesystem::path &path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Every example at two sizes; the second size of each has a PE count that is
/// not a power of two (so the I/O vectors are padded). The conv1d designs write
/// their output at an affine index, Out(b * C + c).
std::vector<Case> cases() {
    std::vector<Case> all;
    for (const char *d : {"sbm", "bsm", "fsm", "bfs", "ffs", "fbs", "fbs_stride2"}) {
        std::string spec = std::string("conv1d_") + d;
        all.push_back({spec, {}, 2});
        all.push_back({spec, {{"C", 12}, {"Q", 3}, {"B", 3}}, 5});
    }
    all.push_back({"conv2d_sbm", {}, 3});
    all.push_back({"conv2d_sbm", {{"C", 8}, {"P", 2}, {"Q", 2}, {"R", 3}, {"B", 2}}, 4});
    all.push_back({"matmul", {}, 3});
    all.push_back({"matmul", {{"I", 6}, {"J", 4}, {"K", 3}, {"N", 2}}, 5});
    all.push_back({"matvec", {}, 2});
    all.push_back({"matvec", {{"I", 11}, {"J", 5}, {"N", 2}}, 4});
    all.push_back({"fir_stride2", {}, 2});
    all.push_back({"fir_stride2", {{"C", 8}, {"K", 4}, {"B", 2}}, 3});
    // Outputs at affine indices: boxes that do not start at 0, one whose
    // minimum moves with the run-time instance count (AffineOutputSpec.cpp).
    all.push_back({"test_affine_outputs", {}, 5});
    all.push_back({"test_affine_outputs", {{"C", 5}, {"Q", 4}, {"B", 2}}, 1});
    // 2-D arrays: the mesh (values move along both rows), and both operands
    // broadcast with 40 columns interleaved over the lanes (2 on lanes 0 to 7).
    all.push_back({"matmul_2d", {}, 3});
    all.push_back({"matmul_2d", {{"J", 40}, {"I", 3}, {"K", 5}, {"BROADCAST", 2}}, 2});
    return all;
}

std::vector<std::string> input_order(const Spec &spec) {
    std::vector<std::string> order;
    for (const Input &in : spec.inputs) order.push_back(in.name());
    return order;
}


}  // namespace

/// Emits every example's CM kernel, host program and reference into `dir`
/// (the CM emulation's sources), checks the kernel's text, and returns the
/// names and the cases.
static std::vector<std::string> emit_every_example(const std::filesystem::path &dir, const std::vector<Case> &all) {
    std::vector<std::string> names;
    bool saw_odd_pe_count = false;
    for (const Case &c : all) {
        INFO(case_id(c));
        Spec spec = build_spec(c.spec, make_params(c));
        sys::SystolicProgram program = compile_to_systolic(spec.output.lower());
        int64_t npe = program.pe_count;
        saw_odd_pe_count |= (npe & (npe - 1)) != 0;
        std::string name = case_id(c);
        emit_cm_emulation(program, name, input_order(spec), dir.string(), Target::cm_gen9());
        // The kernel is the kernel IR's warp: lane l of each vector is lane l of the warp.
        std::string kernel = read_text(dir / (name + "_genx.cpp"));
        const int lanes = cm_lanes(lower_to_target(program, name, input_order(spec), {}, Target::cm_gen9()));
        CHECK(lanes % 8 == 0);
        CHECK(kernel.find("_GENX_MAIN_ void " + name + "(") != std::string::npos);
        CHECK(kernel.find("vector<int, " + std::to_string(lanes) + "> lane(lane_init)") != std::string::npos);
        CHECK(std::filesystem::exists(dir / (name + "_host.cpp")));
        names.push_back(name);
    }
    CHECK(saw_odd_pe_count);
    return names;
}

// The printing alone (the compiler's part, which the sanitized build runs;
// the emulation's build below spends its time in the host compiler).
TEST_CASE("cm: every example prints a CM kernel, host program and reference", "[cm]") {
    emit_every_example(scratch_directory("examples_printed"), cases());
}

TEST_CASE("cm: every example runs on the CM emulation and matches the reference", "[cm]") {
    std::filesystem::path dir = scratch_directory("examples");
    std::vector<Case> all = cases();
    const std::vector<std::string> names = emit_every_example(dir, all);
    std::string log;
    REQUIRE(build_cm_emulations(dir, names, &log) == 0);
    for (size_t i = 0; i < all.size(); i++) {
        INFO(names[i]);
        std::string binary = (dir / (names[i] + "_emu")).string();
        std::string out;
        // The spec's instance count, then another one with another seed.
        CHECK(run_command("'" + binary + "' 0 1", &out) == 0);
        CHECK(out == "PASS\n");
        CHECK(run_command("'" + binary + "' " + std::to_string(all[i].instances) + " 7", &out) == 0);
        CHECK(out == "PASS\n");
    }
}

TEST_CASE("cm: the emulation harness catches a wrong kernel", "[cm]") {
    std::filesystem::path dir = scratch_directory("mutant");
    Spec spec = build_spec("conv1d_sbm");
    sys::SystolicProgram program = compile_to_systolic(spec.output.lower());
    emit_cm_emulation(program, "conv1d_sbm", input_order(spec), dir.string(), Target::cm_gen9());
    // Shift the first partial sums the wrong way: from lane l + 1 instead of l - 1.
    std::filesystem::path kernel = dir / "conv1d_sbm_genx.cpp";
    std::string text = read_text(kernel);
    std::smatch shift;
    REQUIRE(std::regex_search(text, shift, std::regex(R"((\w+)\.select<(\d+), 1>\(1\) = (\w+)\.select<\2, 1>\(0\);)")));
    text.replace(shift.position(0), shift.length(0),
                 shift[1].str() + ".select<" + shift[2].str() + ", 1>(0) = " + shift[3].str() + ".select<" + shift[2].str() + ", 1>(1);");
    std::ofstream(kernel) << text;
    std::string log;
    REQUIRE(build_cm_emulations(dir, {"conv1d_sbm"}, &log) == 0);
    std::string out;
    CHECK(run_command("'" + (dir / "conv1d_sbm_emu").string() + "' 0 1", &out) == 1);
    CHECK(out.rfind("FAIL: Out[", 0) == 0);
}

TEST_CASE("cm: a design over the register budget is rejected with the numbers and the fix", "[cm]") {
    Params params;
    params.set("I", 16);
    params.set("K", 64);
    Spec spec = build_spec("matmul", params);
    sys::SystolicProgram program = compile_to_systolic(spec.output.lower());
    // Lowered for a target with twice the registers: the same kernel IR as
    // Gen9's, which it fits. Its time loop rolled (an unrolled body of 80
    // steps took most of a minute here): the registers are the same.
    Target large = Target::cm_gen9();
    large.cm = CmTarget{"large GRF", 256, 64};
    KernelOptions rolled;
    rolled.max_unrolled_steps = 0;
    kir::Kernel kernel = lower_to_target(program, "matmul_big", input_order(spec), rolled, large);
    CHECK_NOTHROW(print_cm_kernel(kernel, large));
    CmRegisterPlan plan = plan_cm_registers(kernel, CmTarget::gen9());
    CHECK(plan.bytes > plan.available);
    CHECK(plan.available == 4096);
    // On Gen9 the pass list refuses it (check_cm_support), before printing.
    try {
        check_cm_support(kernel, CmTarget::gen9());
        FAIL("expected a CompileError");
    } catch (const CompileError &e) {
        CHECK(e.refusal == Refusal::ResourceLimit);
        std::string m = e.what();
        CHECK(m.find("needs about " + std::to_string(plan.bytes) + " bytes of registers") != std::string::npos);
        CHECK(m.find("has 4096 (128 registers of 32 bytes)") != std::string::npos);
        CHECK(m.find("A (64 values x 16 lanes): 4096 bytes") != std::string::npos);
        CHECK(m.find("fewer PEs (16 now") != std::string::npos);
        CHECK(m.find("a target with a larger GRF") != std::string::npos);
    }
    // The pass list refuses it when lowering for Gen9: shown on jacobi2d,
    // whose lowering takes a fraction of a second (this matmul's, a minute).
    Spec jacobi = build_spec("jacobi2d", Params());
    const sys::SystolicProgram jacobi_program = compile_to_systolic(jacobi.output.lower());
    REQUIRE_THROWS_WITH(lower_to_target(jacobi_program, "jacobi2d", input_order(jacobi), {}, Target::cm_gen9()),
                        Catch::Contains("bytes of registers per thread but target Gen9 has 4096"));
}

TEST_CASE("cm: the emulation rejects at compile time what CM rejects", "[cm]") {
    std::filesystem::path dir = scratch_directory("static");
    write_cm_emulation_header(dir.string());
    auto compiles = [&](const std::string &name, const std::string &body, std::string *log) {
        std::ofstream(dir / (name + ".cpp")) << "#include <cm/cm.h>\nint main() {\n" << body << "\nreturn 0;\n}\n";
        return run_command(cm_emulation_compile_command((dir / (name + ".cpp")).string(), (dir / name).string()), log) == 0;
    };
    std::string log;
    CHECK(compiles("ok", "vector<float, 8> v = 1.0f; vector<float, 4> r = v.select<4, 2>(0); (void)r;", &log));
    CHECK_FALSE(compiles("too_long", "vector<float, 8> v = 1.0f; vector<float, 4> r = v.select<4, 3>(0); (void)r;", &log));
    CHECK(log.find("select<size, stride> region is larger than the vector") != std::string::npos);
    CHECK_FALSE(compiles("sizes", "vector<float, 8> a = 1.0f; vector<float, 4> b = 2.0f; auto c = a + b; (void)c;", &log));
    CHECK_FALSE(compiles("scatter12",
                         "SurfaceIndex s; vector<uint, 12> o = 0; vector<float, 12> v; read(s, 0, o, v);", &log));
    CHECK(log.find("scattered read/write moves 8 or 16 elements") != std::string::npos);
    CHECK_FALSE(compiles("block24", "SurfaceIndex s; vector<float, 6> v; read(s, 0, v);", &log));
    CHECK(log.find("oword block read/write moves") != std::string::npos);
    // An operation the emulation does not implement does not compile.
    CHECK_FALSE(compiles("missing", "vector<float, 8> v = 1.0f; auto r = cm_sum<float>(v); (void)r;", &log));
}

TEST_CASE("cm: a read of a later step, never taken on the domain, compiles and runs", "[cm]") {
    // Q = 1: Z(c, q - 1) is never read; t = c - q gives it dt = -1 (the
    // validator accepts it). The kernel must neither name a value of a
    // negative step nor read one.
    std::filesystem::path dir = scratch_directory("later_step");
    Params params;
    params.set("C", 4), params.set("Q", 1), params.set("B", 1);
    Spec spec = build_spec("conv1d_sbm", params);
    ir::UreProgram program = spec.output.lower();
    program.schedule.transform->matrix = {{-1, 0}, {1, -1}};
    emit_cm_emulation(compile_to_systolic(program), "later_step", input_order(spec), dir.string(), Target::cm_gen9());
    std::string log;
    REQUIRE(build_cm_emulations(dir, {"later_step"}, &log) == 0);
    std::string out;
    CHECK(run_command("'" + (dir / "later_step_emu").string() + "' 0 3", &out) == 0);
    CHECK(out == "PASS\n");
}

TEST_CASE("cm: a same-step read of another variable along the lanes compiles and runs", "[cm]") {
    // B copies A from the PE below in the step that computes A (dt = 0,
    // dp = 1), and A reads no such tap of itself: the shifted copy of A must
    // be made once A is final, where B can read it (it was declared only
    // inside a self-chain's loop, or not at all).
    std::filesystem::path dir = scratch_directory("same_step_other");
    Var i("i"), j("j"), s("s"), t("t");
    Input x(Float(32), 1, "x");
    Func A(Float(32), {i, j}, Place::Device, "A"), B(Float(32), {i, j}, Place::Device, "B"), Out(Place::Device, "Out");
    A(i, j) = x(i + j) * 2.0f;
    B(i, j) = select(i == 0, x(j), A(i - 1, j));
    Out(i, j) = B(i, j);
    A.merge_ures(B, Out).set_bounds(i, 0, 6, j, 0, 3);
    A.space_time_transform({i, j}, {s, t}, {1, 0, /**/ 0, 1});
    emit_cm_emulation(compile_to_systolic(Out.lower()), "same_step_other", {"x"}, dir.string(), Target::cm_gen9());
    std::string log;
    const int built = build_cm_emulations(dir, {"same_step_other"}, &log);
    INFO(log);
    REQUIRE(built == 0);
    std::string out;
    CHECK(run_command("'" + (dir / "same_step_other_emu").string() + "' 0 3", &out) == 0);
    CHECK(out == "PASS\n");
}

TEST_CASE("cm: a same-step chain of a value that differs between PEs compiles and runs", "[cm]") {
    // B copies along the PEs in one step from the nearest PE whose i % 3 == 0,
    // each source holding its own x: the kernel IR finds the source lane
    // (chain_source; a ballot on CUDA, a shift-and-merge per hop on CM) and
    // reads it (shfl_idx; an iselect on CM).
    std::filesystem::path dir = scratch_directory("chain_source");
    Var i("i"), j("j"), s("s"), t("t");
    Input x(Float(32), 1, "x");
    Func B(Float(32), {i, j}, Place::Device, "B"), Out(Place::Device, "Out");
    B(i, j) = select(i % 3 == 0, x(i + j), B(i - 1, j));
    Out(i, j) = B(i, j);
    B.merge_ures(Out).set_bounds(i, 0, 11, j, 0, 3);
    B.space_time_transform({i, j}, {s, t}, {1, 0, /**/ 0, 1});
    emit_cm_emulation(compile_to_systolic(Out.lower()), "chain_source", {"x"}, dir.string(), Target::cm_gen9());
    std::string kernel = read_text(dir / "chain_source_genx.cpp");
    CHECK(kernel.find(".iselect(") != std::string::npos);
    CHECK(kernel.find("hop++") != std::string::npos);
    std::string log;
    const int built = build_cm_emulations(dir, {"chain_source"}, &log);
    INFO(log);
    REQUIRE(built == 0);
    std::string out;
    CHECK(run_command("'" + (dir / "chain_source_emu").string() + "' 0 3", &out) == 0);
    CHECK(out == "PASS\n");
}

TEST_CASE("cm: a rolled time loop runs: serial loops and register arrays as matrix rows", "[cm]") {
    // --unroll-steps=8: the time loop is rolled by its period, values read
    // across blocks carried in register arrays (matrix<T, N, W> on CM).
    std::filesystem::path dir = scratch_directory("rolled");
    KernelOptions options;
    options.max_unrolled_steps = 8;
    std::vector<std::string> names;
    for (const char *spec_name : {"matmul", "conv1d_ffs"}) {
        Spec spec = build_spec(spec_name, Params());
        const std::string name = std::string(spec_name) + "_rolled";
        emit_cm_emulation(compile_to_systolic(spec.output.lower()), name, input_order(spec), dir.string(), Target::cm_gen9(), options);
        std::string kernel = read_text(dir / (name + "_genx.cpp"));
        CHECK(kernel.find("matrix<") != std::string::npos);
        CHECK(kernel.find("for (int t_block") != std::string::npos);
        names.push_back(name);
    }
    std::string log;
    const int built = build_cm_emulations(dir, names, &log);
    INFO(log);
    REQUIRE(built == 0);
    for (const std::string &n : names) {
        INFO(n);
        std::string out;
        CHECK(run_command("'" + (dir / (n + "_emu")).string() + "' 0 3", &out) == 0);
        CHECK(out == "PASS\n");
        CHECK(run_command("'" + (dir / (n + "_emu")).string() + "' 3 5", &out) == 0);
        CHECK(out == "PASS\n");
    }
}

TEST_CASE("cm: the schedule's mapping is the kernel IR's: tiles and gpu_blocks run on CM", "[cm]") {
    // conv2d_ssam tiles its rows (tile(r, ro, ri, 8)); conv2d_sbm with
    // gpu_blocks naming one instance loop runs the other one per thread.
    std::filesystem::path dir = scratch_directory("schedules");
    Spec ssam = build_spec("conv2d_ssam", Params());
    emit_cm_emulation(compile_to_systolic(ssam.output.lower()), "ssam", input_order(ssam), dir.string(), Target::cm_gen9());
    Spec sbm = build_spec("conv2d_sbm", Params());
    ir::UreProgram conv2d = sbm.output.lower();
    conv2d.schedule.gpu_blocks = {"b"};
    emit_cm_emulation(compile_to_systolic(conv2d), "sbm_blocks", input_order(sbm), dir.string(), Target::cm_gen9());
    std::string log;
    const int built = build_cm_emulations(dir, {"ssam", "sbm_blocks"}, &log);
    INFO(log);
    REQUIRE(built == 0);
    for (const char *n : {"ssam", "sbm_blocks"}) {
        INFO(n);
        std::string out;
        CHECK(run_command("'" + (dir / (std::string(n) + "_emu")).string() + "' 0 3", &out) == 0);
        CHECK(out == "PASS\n");
    }
    // What the mapping refuses, CM refuses with the mapping's words.
    conv2d.schedule.gpu_blocks.clear();
    conv2d.schedule.gpu_threads = {"b"};
    REQUIRE_THROWS_WITH(lower_to_target(compile_to_systolic(conv2d), "k", input_order(sbm), {}, Target::cm_gen9()),
                        Catch::Contains("gpu_threads(b): only the array's space loop"));
    // An array spread over the warps of a block has no CM form, nor an input staged in shared memory.
    Spec wide = build_spec("conv2d_ssam", test::params({{"K", 3}, {"PE", 40}, {"THREADS", 1}, {"RT", 2}}));
    REQUIRE_THROWS_WITH(lower_to_target(compile_to_systolic(wide.output.lower()), "k", input_order(wide), {}, Target::cm_gen9()),
                        Catch::Contains("a CM array runs on one hardware thread"));
    Spec staged = build_spec("conv2d_ssam", test::params({{"K", 3}, {"CACHE", 2}, {"RT", 2}}));
    REQUIRE_THROWS_WITH(lower_to_target(compile_to_systolic(staged.output.lower()), "k", input_order(staged), {}, Target::cm_gen9()),
                        Catch::Contains("input x is cached in shared memory"));
    // Nor has CM a grid-wide barrier (the device-wide Jacobi, gpu_grid_sync).
    Spec grid = build_spec("jacobi2d", test::params({{"GRID", 1}, {"T", 2}, {"PE", 8}, {"TH", 8}}));
    REQUIRE_THROWS_WITH(lower_to_target(compile_to_systolic(grid.output.lower()), "k", input_order(grid), {}, Target::cm_gen9()),
                        Catch::Contains("synchronises its instances over the grid (gpu_grid_sync)") &&
                            Catch::Contains("drop gpu_grid_sync"));
}
