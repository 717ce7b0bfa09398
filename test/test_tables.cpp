// Table inputs: an input of fixed extents (`Input tab(Int(32), {5, 3},
// "tab")`) read at data-dependent indices, each clamped into the table. Every
// evaluator reads the same element (the clamp is part of the value); the
// kernel reads the whole table where it is used and the host function asks
// for all of it; what a table cannot take is refused with the fix.
#include <filesystem>
#include <random>
#include <unistd.h>

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
    tab.in(V).store_in(MemoryType::Shared);
    CHECK_THROWS_WITH(lower_to_kernel(compile_to_systolic(V.lower()), "table", {"x", "tab"}),
                      Contains("tab is a table, read at data-dependent indices") && Contains("drop the staging"));
}
