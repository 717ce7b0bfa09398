// Table inputs: an input of fixed extents (`Input tab(Int(32), {5, 3},
// "tab")`) read at data-dependent indices, each clamped into the table. Every
// evaluator reads the same element (the clamp is part of the value); the
// kernel reads the whole table where it is used and the host function asks
// for all of it; what a table cannot take is refused with the fix.
#include <filesystem>
#include <random>
#include <unistd.h>

#include "codegen/CodeGenCudaKernel.h"
#include "exec/KernelExecutor.h"
#include "exec/Simulator.h"
#include "lower/LowerToKernel.h"
#include "lower/Pipeline.h"
#include "CmBuild.h"
#include "CroppedRun.h"
#include "Emit.h"
#include "TestUtil.h"

using namespace pulse;
using Catch::Matchers::Contains;

namespace {

constexpr int I = 7, J = 5;

/// V(i, j) = tab(x(i), x(i + j) - 2) + V(i, j - 1); Out(i) = V(i, J - 1):
/// indices past the table's edges on both sides. Returns V, the nest's owner.
Func table_spec(Input &x, Input &tab) {
    Var i("i"), j("j"), s("s"), t("t");
    Func V(Int(32), {i, j}, Place::Device, "V"), Out(Place::Device, "Out");
    V(i, j) = tab(x(i), x(i + j) - 2) + select(j > 0, V(i, j - 1), 0);
    Out(i) = select(j == J - 1, V(i, j));
    V.merge_ures(Out).set_bounds(i, 0, I, j, 0, J);
    V.space_time_transform({i, j}, {s, t}, {1, 0, /**/ 1, 1});
    return V;
}

}  // namespace

TEST_CASE("tables: a read at data-dependent indices clamps each into the table, on every evaluator", "[tables]") {
    Input x(Int(32), 1, "x"), tab(Int(32), {5, 3}, "tab");
    CHECK(tab.table_extents() == std::vector<int>{5, 3});
    // A braced list of one is a table of one dimension, not that many dimensions.
    Input one(Int(32), {9}, "one");
    CHECK(one.dimensions() == 1);
    CHECK(one.table_extents() == std::vector<int>{9});
    const ir::UreProgram program = table_spec(x, tab).lower();
    REQUIRE(program.input("tab").is_table());
    CHECK(program.input("tab").table_extents == std::vector<int64_t>{5, 3});
    // The table's region is the whole table, whatever its reads; x's its reads.
    const auto regions = infer_input_regions(program);
    CHECK(regions.at("tab")[0].min == 0);
    CHECK(regions.at("tab")[0].max == 4);
    CHECK(regions.at("tab")[1].max == 2);
    CHECK(regions.at("x")[0].max == I + J - 2);
    const Buffers random = random_inputs(program, 3);
    CHECK(random.at("tab").dim(0).extent() == 5);
    CHECK(random.at("tab").dim(1).extent() == 3);

    std::mt19937 rng(77);
    Halide::Buffer<> xs(Int(32), {I + J - 1}, "x"), table(Int(32), {5, 3}, "tab");
    std::vector<int> xv(I + J - 1);
    for (int k = 0; k < I + J - 1; k++) store_element(xs, {k}, Scalar::of_int(xv[k] = (int)(rng() % 13) - 4));  // [-4, 8]
    for (int a = 0; a < 5; a++)
        for (int c = 0; c < 3; c++) store_element(table, {a, c}, Scalar::of_int(10 * a + c));
    const Buffers inputs{{"x", xs}, {"tab", table}};
    Halide::Buffer<> out(Int(32), {I}, "Out");
    auto clamp = [](int v, int hi) { return std::min(std::max(v, 0), hi); };
    for (int i = 0; i < I; i++) {
        int sum = 0;
        for (int j = 0; j < J; j++) sum += 10 * clamp(xv[i], 4) + clamp(xv[i + j] - 2, 2);
        store_element(out, {i}, Scalar::of_int(sum));
    }
    const Buffers expected{{"Out", out}};
    CHECK(compare_outputs(expected, ir::realize(program, inputs), 0) == "");
    const sys::SystolicProgram systolic = compile_to_systolic(program);
    CHECK(compare_outputs(expected, simulate(systolic, inputs), 0) == "");
    for (bool rolled : {false, true}) {
        INFO((rolled ? "time loop rolled" : "time loop unrolled"));
        KernelOptions options;
        if (rolled) options.max_unrolled_steps = 0;
        kir::Kernel kernel = lower_to_kernel(systolic, "table", {"x", "tab"}, options);
        // Read where used (through L1), and all of it required of the buffer given.
        const kir::BufferArg &b = kernel.buffer("tab");
        CHECK(b.cache == kir::InputCache::L1);
        CHECK(b.table);
        REQUIRE(b.required.size() == 2);
        REQUIRE(b.required[1].has_value());
        CHECK(Halide::Internal::equal(b.required[1]->max, Halide::Internal::make_const(Halide::Int(64), 2)));
        optimize_kernel(kernel);
        CHECK(test::run_cropped_against_reference(kernel, inputs, expected, 0) == "");
        CHECK(test::run_cropped_against_reference(kernel, inputs, expected, 1) == "");
    }
}

TEST_CASE("tables: staged in shared memory in batches of loads ahead of their stores, every entry of a table of many passes",
          "[tables]") {
    // Out(i) = sum over j of tab(i, j): each entry of a 67 x 97 table read
    // once, so any entry copied wrong or not at all changes a sum (or is
    // caught as read before any write). 9312 entries laid out (3 PEs a
    // lane: rows of 96) over the block's 256 threads: 37 passes, copied in
    // batches of 16 loads, the last batch partly past the table.
    constexpr int rows = 67, columns = 97;
    Var i("i"), j("j"), s("s"), t("t");
    Input tab(Int(32), {rows, columns}, "tab");
    Func V(Int(32), {i, j}, Place::Device, "V"), Out(Place::Device, "Out");
    V(i, j) = tab(i, j) + select(j > 0, V(i, j - 1), 0);
    Out(i) = select(j == columns - 1, V(i, j));
    V.merge_ures(Out).set_bounds(i, 0, rows, j, 0, columns);
    V.space_time_transform({i, j}, {s, t}, {1, 0, /**/ 1, 1});
    tab.in(V).store_in(MemoryType::Shared);
    const ir::UreProgram program = V.lower();
    const sys::SystolicProgram systolic = compile_to_systolic(program);
    kir::Kernel kernel = lower_to_kernel(systolic, "sums", {"tab"});
    optimize_kernel(kernel);
    REQUIRE(kernel.block_arrays.size() == 1);
    CHECK(kernel.block_arrays[0].elements == 97 * 96);
    for (uint32_t seed : {1u, 2u}) {
        const Buffers inputs = random_inputs(program, seed);
        const Buffers expected = ir::realize(program, inputs);
        CHECK(test::run_cropped_against_reference(kernel, inputs, expected, 0) == "");
    }
    // The setup: a loop of 3 iterations, each 16 loads (lets) and then 16 stores.
    const std::string cuda = print_cuda(kernel).kernel;
    const size_t setup = cuda.find("for (int tab_shared_pass = 0; tab_shared_pass < 0 + 3; ++tab_shared_pass)");
    const size_t filled = cuda.find("__syncthreads();");
    REQUIRE(setup != std::string::npos);
    REQUIRE(filled != std::string::npos);
    const std::string copy = cuda.substr(setup, filled - setup);
    INFO(copy);
    size_t loads = 0, at = 0;
    while ((at = copy.find("tab_data[", at)) != std::string::npos) loads++, at++;
    CHECK(loads == 16);
    const size_t last_load = copy.rfind("tab_data["), first_store = copy.find("tab_shared[");
    CHECK(last_load < first_store);
    // A setup that skips the last batch (its entries in the table included) is caught.
    const auto *loop = kernel.block_setup.as<Halide::Internal::For>();
    REQUIRE(loop);
    kir::Kernel short_copy = kernel;
    short_copy.block_setup = Halide::Internal::For::make(
        loop->name, loop->min, loop->extent, loop->for_type, loop->device_api,
        Halide::Internal::IfThenElse::make(Halide::Internal::Variable::make(Halide::Int(32), loop->name) < 2, loop->body));
    const Buffers inputs = random_inputs(program, 3);
    CHECK_THAT(test::run_cropped_against_reference(short_copy, inputs, ir::realize(program, inputs), 0),
               Contains("before any write"));
}

TEST_CASE("tables: the CM emulation reads them", "[tables][cm]") {
    Input x(Int(32), 1, "x"), tab(Int(32), {5, 3}, "tab");
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("pulse_test_tables_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    emit_cm_emulation(compile_to_systolic(table_spec(x, tab).lower()), "table", {"x", "tab"}, dir.string(), Target::cm_gen9());
    std::string log;
    const int built = test::build_cm_emulations(dir, {"table"}, &log);
    INFO(log);
    REQUIRE(built == 0);
    std::string out;
    CHECK(run_command("'" + (dir / "table_emu").string() + "' 0 3", &out) == 0);
    CHECK(out == "PASS\n");
    std::filesystem::remove_all(dir);
}

TEST_CASE("tables: what a table cannot take is refused with the fix", "[tables]") {
    CHECK_THROWS_WITH(Input(Int(32), std::vector<int>{5, 0}, "tab"), Contains("table tab: extent 0 of dimension 1 is not positive"));
    CHECK_THROWS_WITH(Input(Int(32), std::vector<int>{}, "tab"), Contains("Input tab: an input needs at least one dimension, not 0"));
    Input x(Int(32), 1, "x"), tab(Int(32), {5, 3}, "tab");
    Func V = table_spec(x, tab);
    tab.in(V).store_in(MemoryType::Global);
    CHECK_THROWS_WITH(lower_to_kernel(compile_to_systolic(V.lower()), "table", {"x", "tab"}),
                      Contains("tab is a table, read at data-dependent indices") && Contains("stage it in shared memory"));
}

TEST_CASE("tables: staged in shared memory, once per block, before the warps past the grid leave", "[tables]") {
    Input x(Int(32), 1, "x"), tab(Int(32), {5, 3}, "tab");
    Func V = table_spec(x, tab);
    tab.in(V).store_in(MemoryType::Shared);
    const ir::UreProgram program = V.lower();
    const sys::SystolicProgram systolic = compile_to_systolic(program);
    const Buffers inputs = random_inputs(program, 5);
    const Buffers expected = ir::realize(program, inputs);
    for (bool rolled : {false, true}) {
        INFO((rolled ? "time loop rolled" : "time loop unrolled"));
        KernelOptions options;
        if (rolled) options.max_unrolled_steps = 0;
        kir::Kernel kernel = lower_to_kernel(systolic, "table", {"x", "tab"}, options);
        CHECK(kernel.buffer("tab").cache == kir::InputCache::Shared);
        optimize_kernel(kernel);
        // One array for the block, the whole table with rows dense (the
        // reads' first index is x's value, not the lane's), filled by the
        // block setup; the body only reads it.
        REQUIRE(kernel.block_arrays.size() == 1);
        CHECK(kernel.block_arrays[0].elements == 15);
        CHECK(kernel.block_arrays[0].type == Halide::Int(32));
        REQUIRE(kernel.block_setup.defined());
        CHECK(test::run_cropped_against_reference(kernel, inputs, expected, 0) == "");
        CHECK(test::run_cropped_against_reference(kernel, inputs, expected, 1) == "");
        const std::string cuda = print_cuda(kernel).kernel;
        const size_t declared = cuda.find("__shared__ __align__(16) int32_t tab_shared[15];  // one for the block");
        const size_t filled = cuda.find("__syncthreads();"), leave = cuda.find("if (warp_index >= warps) return;");
        CHECK(declared != std::string::npos);
        CHECK(declared < filled);
        CHECK(filled < leave);
        CHECK(cuda.find("tab_data[") < filled);  // no read of the table in global memory past the setup
        CHECK(cuda.find("tab_data[", filled) == std::string::npos);
        // A setup that leaves entries out (those of lanes 0 to 7 of warp 0:
        // the first 8): the body's read of one is caught.
        kernel.block_setup = Halide::Internal::IfThenElse::make(Halide::Internal::Variable::make(Halide::Int(32), kir::lane_var) >= 8,
                                                                kernel.block_setup);
        CHECK_THAT(test::run_cropped_against_reference(kernel, inputs, expected, 0), Contains("before any write"));
    }
    // CM has no shared memory: refused with the fix.
    kir::Kernel for_cm = lower_to_kernel(systolic, "table", {"x", "tab"});
    CHECK_THROWS_WITH(optimize_kernel(for_cm, Target::cm_gen9()), Contains("cached in shared memory"));
}
