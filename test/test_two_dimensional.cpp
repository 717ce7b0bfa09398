// Two-dimensional arrays: a transform with two space rows runs as a linear
// array over a planned PE index (SystolicProgram.h, SpaceAxis), with its
// second row on each lane's register slots (a block of the first row's values
// per lane where it is wider than a warp) or, with gpu_threads(x, y), its
// rows on the lanes and the warps of a block. matmul_2d (Kung and
// Leiserson's output-stationary mesh) equals a CPU product at odd sizes on
// every evaluator and in both mappings; the report shows the grid; what a
// mapping cannot hold is refused with the fix; an invalid 2-D transform is
// refused naming its colliding points (test_validator.cpp).
#include <random>

#include "analysis/Report.h"
#include "analysis/Validate.h"
#include "exec/KernelExecutor.h"
#include "exec/Simulator.h"
#include "lower/LowerToKernel.h"
#include "lower/Pipeline.h"
#include "CroppedRun.h"
#include "TestUtil.h"

using namespace pulse;
using Catch::Matchers::Contains;
using pulse::test::params;

namespace {

/// a (K x M, row i of length K) and bm (N x K) with entries in [-1, 1].
Buffers random_operands(Halide::Type type, int M, int N, int K, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    Halide::Buffer<> a(type, {K, M}, "a"), bm(type, {N, K}, "bm");
    for (int i = 0; i < M; i++)
        for (int k = 0; k < K; k++) store_element(a, {k, i}, Scalar::cast(Scalar::of_double(unit(rng)), Halide::Float(64), type));
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++) store_element(bm, {j, k}, Scalar::cast(Scalar::of_double(unit(rng)), Halide::Float(64), type));
    return {{"a", a}, {"bm", bm}};
}

ir::UreProgram matmul_2d(std::initializer_list<std::pair<const char *, int64_t>> values) {
    return build_spec("matmul_2d", params(values)).output.lower();
}

/// `kernel`, already optimized, run by the executor on `inputs`, the output poisoned first.
Halide::Buffer<> executed_optimized(const kir::Kernel &kernel, const Buffers &inputs, const Halide::Buffer<> &like) {
    Buffers run = inputs;
    Halide::Buffer<> out = like.copy();
    poison(out);
    run["Out"] = out;
    execute_kernel(kernel, run);
    return run.at("Out");
}

/// `kernel` run by the executor on `inputs`, the output poisoned first.
Halide::Buffer<> executed(kir::Kernel kernel, const Buffers &inputs, const Halide::Buffer<> &like) {
    optimize_kernel(kernel);
    return executed_optimized(kernel, inputs, like);
}

}  // namespace

TEST_CASE("matmul_2d equals a CPU product at odd sizes, on every evaluator, in both mappings", "[two_dimensional]") {
    struct Case {
        int J, I, K, JO, IO;
        bool warps, f64;
        int broadcast = 0;  // 1: a broadcast along the rows (t = k + i); 2: both operands (t = k)
        int warp_rows = 0;  // with warps: values of i per warp (--pes-per-thread), a tile per thread
    };
    // J past 32 runs a block of ceil(J / 32) columns on each lane (37: 2 per lane, the last lane's block cut short).
    for (const Case c : {Case{5, 3, 7, 2, 3, false, false}, Case{32, 8, 9, 1, 2, false, true}, Case{7, 1, 5, 3, 1, false, false},
                         Case{37, 3, 6, 2, 1, false, false}, Case{128, 4, 5, 1, 2, false, true}, Case{70, 8, 3, 1, 1, false, false},
                         Case{1, 5, 3, 2, 2, false, false}, Case{5, 3, 7, 2, 3, true, false}, Case{31, 11, 6, 1, 2, true, true},
                         Case{3, 32, 4, 1, 1, true, false},
                         // a broadcast along the lanes (t = k + i), computed in place on each PE of a row
                         Case{5, 3, 7, 2, 3, false, false, 1}, Case{70, 4, 9, 1, 2, false, true, 1},
                         // both broadcast: nothing moves, so past 32 columns they interleave over the lanes
                         Case{5, 3, 7, 2, 3, false, false, 2}, Case{70, 3, 6, 2, 2, false, false, 2}, Case{128, 8, 5, 1, 2, false, true, 2},
                         Case{256, 8, 3, 1, 1, false, false, 2}, Case{7, 5, 4, 1, 2, true, false, 2},
                         // both broadcast on the lanes and warps of a block: a tile per thread, i blocked over
                         // the warps (the last warp's rows cut short), j interleaved over the lanes (past 32)
                         Case{70, 11, 5, 2, 2, true, false, 2, 3}, Case{64, 16, 4, 1, 3, true, true, 2, 8},
                         Case{20, 7, 6, 3, 1, true, false, 2, 1}, Case{45, 9, 3, 1, 2, true, false, 2, 2}}) {
        INFO("J=" << c.J << " I=" << c.I << " K=" << c.K << " JO=" << c.JO << " IO=" << c.IO << (c.warps ? " WARPS=1" : "")
                  << (c.f64 ? " FP64=1" : "") << " BROADCAST=" << c.broadcast << " warp rows " << c.warp_rows);
        const ir::UreProgram program = matmul_2d({{"J", c.J}, {"I", c.I}, {"K", c.K}, {"JO", c.JO}, {"IO", c.IO},
                                                  {"WARPS", c.warps}, {"FP64", c.f64}, {"BROADCAST", c.broadcast}});
        const Halide::Type type = c.f64 ? Halide::Float(64) : Halide::Float(32);
        const int M = c.I * c.IO, N = c.J * c.JO;
        const Buffers inputs = random_operands(type, M, N, c.K, 11 + c.J + c.K);
        const Buffers expected = ir::realize(program, inputs);
        const Halide::Buffer<> &out = expected.at("Out");
        REQUIRE(out.dim(0).extent() == N);
        REQUIRE(out.dim(1).extent() == M);
        for (int i = 0; i < M; i++) {
            for (int j = 0; j < N; j++) {
                double sum = 0;
                for (int k = 0; k < c.K; k++) sum += test::at(inputs.at("a"), {k, i}) * test::at(inputs.at("bm"), {j, k});
                INFO("Out(" << j << ", " << i << ")");
                CHECK(test::close(test::at(out, {j, i}), sum, c.f64 ? 1e-12 : 1e-5));
            }
        }
        const sys::SystolicProgram systolic = compile_to_systolic(program);
        REQUIRE(systolic.is_two_dimensional());
        CHECK(systolic.rows_on_warps == c.warps);
        CHECK(compare_outputs(expected, simulate(systolic, inputs), 0) == "");
        for (bool rolled : {false, true}) {
            INFO((rolled ? "time loop rolled" : "time loop unrolled"));
            KernelOptions options;
            if (rolled) options.max_unrolled_steps = 0;
            options.pes_per_thread = c.warp_rows;
            const kir::Kernel kernel = lower_to_kernel(systolic, "matmul_2d", {"a", "bm"}, options);
            CHECK(compare_outputs(expected, Buffers{{"Out", executed(kernel, inputs, out)}}, 0) == "");
            if (c.warp_rows) {
                // At run time: every output one row tile and one column short.
                kir::Kernel optimized = kernel;
                optimize_kernel(optimized);
                CHECK(test::run_cropped_against_reference(optimized, inputs, expected, 1) == "");
            }
        }
        // The mapping the kernel takes: I slots per lane, or I warps, or
        // tiles of ceil(J / 32) x warp_rows per thread on ceil(I / warp_rows) warps.
        KernelOptions options;
        options.pes_per_thread = c.warp_rows;
        kir::Kernel kernel = lower_to_kernel(systolic, "matmul_2d", {"a", "bm"}, options);
        const int rows = std::max(c.warp_rows, 1), columns = (c.J + 31) / 32;
        const bool tiled = c.warps && (rows > 1 || columns > 1);
        CHECK(kernel.pes_per_lane == (c.warps ? (tiled ? columns * rows : 1) : columns * c.I));
        CHECK(kernel.warps_per_array == (c.warps ? (c.I + rows - 1) / rows : 1));
        CHECK(kernel.warp_rows == (tiled ? rows : 0));
        // A broadcast along the lanes: a same-step chain the slots mapping runs
        // only in place (it refuses a chain whose value differs between PEs,
        // as this one's row index does across rows), so the kernel above exists.
        if (c.broadcast) CHECK(systolic.variable("A").dataflow == sys::Dataflow::Broadcast);
        if (c.broadcast == 2) CHECK(systolic.variable("B").dataflow == sys::Dataflow::Broadcast);
        // Columns interleave over the lanes only where nothing moves between
        // PEs and a lane holds several: the lanes then read consecutive columns.
        CHECK(kernel.interleaved_rows == (c.broadcast == 2 && !c.warps && c.J > 32 ? c.I : 0));
    }
}

TEST_CASE("interleaved columns: random widths past a warp equal a CPU product, the last block of lanes cut short", "[two_dimensional]") {
    // Both operands broadcast, so nothing moves and a lane's columns are
    // interleaved (column 32 c + lane); widths that leave some lanes a column
    // fewer than others, and run-time row tiles one short of the spec's.
    std::mt19937 rng(2711);
    for (int draw = 0; draw < 8; draw++) {
        const int J = std::uniform_int_distribution<int>(33, 250)(rng);
        const int max_rows = (int)std::min<int64_t>(8, max_pes_per_lane_two_dimensional / ((J + 31) / 32));
        const int I = std::uniform_int_distribution<int>(1, max_rows)(rng);
        const int K = std::uniform_int_distribution<int>(1, 9)(rng);
        const int IO = std::uniform_int_distribution<int>(1, 3)(rng);
        const bool f64 = draw % 3 == 2;
        INFO("J=" << J << " I=" << I << " K=" << K << " IO=" << IO << (f64 ? " FP64=1" : ""));
        const ir::UreProgram program =
            matmul_2d({{"J", J}, {"I", I}, {"K", K}, {"JO", 1}, {"IO", IO}, {"FP64", f64}, {"BROADCAST", 2}});
        const Halide::Type type = f64 ? Halide::Float(64) : Halide::Float(32);
        const int M = I * IO, N = J;
        const Buffers inputs = random_operands(type, M, N, K, 100 + draw);
        const Buffers expected = ir::realize(program, inputs);
        for (int i = 0; i < M; i++) {
            for (int j = 0; j < N; j++) {
                double sum = 0;
                for (int k = 0; k < K; k++) sum += test::at(inputs.at("a"), {k, i}) * test::at(inputs.at("bm"), {j, k});
                CHECK(test::close(test::at(expected.at("Out"), {j, i}), sum, f64 ? 1e-12 : 1e-5));
            }
        }
        const sys::SystolicProgram systolic = compile_to_systolic(program);
        for (bool rolled : {false, true}) {
            INFO((rolled ? "time loop rolled" : "time loop unrolled"));
            KernelOptions options;
            if (rolled) options.max_unrolled_steps = 0;
            const kir::Kernel kernel = lower_to_kernel(systolic, "matmul_2d", {"a", "bm"}, options);
            CHECK(kernel.interleaved_rows == I);
            CHECK(kernel.threads_in_use() == 32);
            CHECK(compare_outputs(expected, Buffers{{"Out", executed(kernel, inputs, expected.at("Out"))}}, 0) == "");
            // At run time: every output one row tile and one column short.
            kir::Kernel optimized = kernel;
            optimize_kernel(optimized);
            CHECK(test::run_cropped_against_reference(optimized, inputs, expected, 1) == "");
        }
    }
}

TEST_CASE("a tile per thread with its operands staged in shared memory a run of steps at a time equals a CPU product",
          "[two_dimensional][shared]") {
    // matmul_2d on the lanes and warps of a block, both operands broadcast
    // (a tile of ceil(J / 32) x warp_rows PEs per thread), both cached in
    // shared memory and staged `steps` steps of the rolled time loop at a
    // time: the block's rows of a and columns of bm for those steps, read by
    // every warp. Steps that leave a remainder after the last whole run, row
    // tiles one short at run time, J past 32 and not a multiple of it.
    // Double-buffered: each run's copy loaded while the run before computes,
    // into the other half of the copies (one run only, several, a remainder).
    struct Case {
        int J, I, K, IO, warp_rows, steps;
        bool f64, double_buffer;
    };
    for (const Case c : {Case{40, 6, 37, 2, 2, 8, false, false}, Case{64, 16, 29, 1, 8, 4, false, false},
                         Case{33, 9, 24, 3, 3, 5, true, false}, Case{20, 4, 40, 2, 1, 16, false, false},
                         Case{40, 6, 37, 2, 2, 8, false, true}, Case{33, 9, 24, 3, 3, 5, true, true},
                         Case{64, 16, 20, 2, 8, 12, false, true}, Case{70, 5, 45, 2, 5, 4, false, true}}) {
        INFO("J=" << c.J << " I=" << c.I << " K=" << c.K << " IO=" << c.IO << " warp rows " << c.warp_rows << " steps " << c.steps
                  << (c.f64 ? " FP64=1" : "") << (c.double_buffer ? " double-buffered" : ""));
        const ir::UreProgram program = matmul_2d({{"J", c.J}, {"I", c.I}, {"K", c.K}, {"JO", 1}, {"IO", c.IO}, {"WARPS", 1},
                                                  {"FP64", c.f64}, {"BROADCAST", 2}, {"SHARED", 1}});
        const Halide::Type type = c.f64 ? Halide::Float(64) : Halide::Float(32);
        const Buffers inputs = random_operands(type, c.I * c.IO, c.J, c.K, 300 + c.J);
        const Buffers expected = ir::realize(program, inputs);
        KernelOptions options;
        options.max_unrolled_steps = 0;
        options.pes_per_thread = c.warp_rows;
        options.shared_steps = c.steps;
        options.shared_double_buffer = c.double_buffer;
        kir::Kernel kernel = lower_to_kernel(compile_to_systolic(program), "matmul_2d", {"a", "bm"}, options);
        optimize_kernel(kernel);
        // Staged, a tile's columns are blocked by lane (one vector load from the copy).
        CHECK(kernel.warp_columns_blocked == (c.J > 32 || c.warp_rows > 1));
        // The runs' copies: one shared array per operand, a run's box each:
        // bm's whole lanes of columns, a's rows of every warp, each step's
        // rows side by side (padded to 4 words, and 4 more on a multiple of 32).
        std::ostringstream printed;
        kir::print(printed, kernel);
        CHECK_THAT(printed.str(), Contains("allocate a.shared[") && Contains("allocate bm.shared[") && Contains("a.shared.copy"));
        const int64_t rows = (c.I + c.warp_rows - 1) / c.warp_rows * c.warp_rows, rounded = (rows + 3) / 4 * 4, padded = rounded + (rounded % 32 ? 0 : 4);
        CHECK(kernel.block_shared_bytes() == kernel.arrays_per_block() * (c.double_buffer ? 2 : 1) * (int64_t)type.bytes() * c.steps *
                                                 (padded + (c.J + 31) / 32 * 32));
        CHECK(compare_outputs(expected, Buffers{{"Out", executed_optimized(kernel, inputs, expected.at("Out"))}}, 0) == "");
        CHECK(test::run_cropped_against_reference(kernel, inputs, expected, 1) == "");
    }
}

TEST_CASE("staging a run of steps at a time without a loop or an input to stage is refused with the fix", "[two_dimensional][shared][errors]") {
    auto error = [](const ir::UreProgram &program, KernelOptions options) {
        try {
            kir::Kernel kernel = lower_to_kernel(compile_to_systolic(program), "matmul_2d", {"a", "bm"}, options);
            optimize_kernel(kernel);
        } catch (const CompileError &e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    KernelOptions options;
    options.shared_steps = 8;
    // Nothing cached in shared memory.
    CHECK_THAT(error(matmul_2d({{"J", 5}, {"I", 3}, {"K", 20}, {"BROADCAST", 2}}), options),
               Contains("--shared-steps=8 stages inputs cached in shared memory") && Contains("or drop --shared-steps"));
    // Double buffering without runs to buffer.
    KernelOptions alone;
    alone.shared_double_buffer = true;
    CHECK_THAT(error(matmul_2d({{"J", 5}, {"I", 3}, {"K", 20}, {"BROADCAST", 2}, {"SHARED", 1}}), alone),
               Contains("name the run's length with --shared-steps=N, or drop --double-buffer"));
    // The time loop unrolled: no rolled loop to run in runs.
    CHECK_THAT(error(matmul_2d({{"J", 5}, {"I", 3}, {"K", 20}, {"BROADCAST", 2}, {"SHARED", 1}}), options),
               Contains("no rolled loop of at least 8 steps reads a") && Contains("--unroll-steps=0"));
}

TEST_CASE("a 2-D array's report shows its grid and counts its PEs, not its linear index", "[two_dimensional]") {
    std::ostringstream text;
    const sys::SystolicProgram slots = compile_to_systolic(matmul_2d({{"J", 5}, {"I", 3}, {"K", 7}}));
    print_report(text, slots, false);
    // a moves 3 PEs (a column) in the linear index: all 3 slots of a lane read another lane; bm moves 1: slot 0 does.
    CHECK(analyze_design(slots).exchanges_per_step == 3 + 1);
    CHECK_THAT(text.str(), Contains("2-D, 5 x 3 = 15 PEs: s1 in [0, 4] on the lanes, s2 in [0, 2] on each lane's register slots"));
    // (lanes, warps): lanes past s1's 5 values are idle, not PEs of the grid.
    const sys::SystolicProgram warps = compile_to_systolic(matmul_2d({{"J", 5}, {"I", 3}, {"K", 7}, {"WARPS", 1}}));
    CHECK(warps.pe_count == 2 * 32 + 5);
    const DesignMetrics m = analyze_design(warps);
    CHECK(m.exchanges_per_step == 1 + 1);  // a across lanes, bm across warps (through shared memory)
    CHECK(m.pe_count == 15);
    CHECK(m.domain_points == 5 * 3 * 7);
    CHECK(m.steps == 7 + 4 + 2);
    CHECK(m.utilization == Approx(105.0 / (15.0 * 13.0)));
    std::ostringstream json;
    print_report(json, warps, true);
    CHECK_THAT(json.str(), Contains("\"space_axes\": [{\"var\": \"s1\", \"min\": 0, \"extent\": 5, \"stride\": 1}, "
                                    "{\"var\": \"s2\", \"min\": 0, \"extent\": 3, \"stride\": 32}]"));
}

TEST_CASE("what a 2-D mapping cannot hold is refused with the fix", "[two_dimensional][errors]") {
    auto kernel_error = [](const ir::UreProgram &program) {
        try {
            lower_to_kernel(compile_to_systolic(program), "matmul_2d", {"a", "bm"});
        } catch (const CompileError &e) {
            return std::make_pair(e.refusal, std::string(e.what()));
        }
        return std::make_pair(Refusal::Misuse, std::string("no error"));
    };
    // More than 64 PEs on a lane: 8 columns of 9 rows.
    auto [slots, slots_text] = kernel_error(matmul_2d({{"J", 256}, {"I", 9}, {"K", 3}}));
    CHECK(slots == Refusal::TooManyPes);
    CHECK_THAT(slots_text, Contains("s1 (256 values, 0 .. 255): 8 per lane") && Contains("s2 (9 values, 0 .. 8)") &&
                               Contains("72 PEs per lane, more than 64") && Contains("gpu_threads(s1, s2)"));
    // More than 32 warps.
    ir::UreProgram tall = matmul_2d({{"J", 4}, {"I", 3}, {"K", 3}, {"WARPS", 1}});
    tall.schedule.transform->matrix = {{0, 1, 0}, {0, 0, 17}, {1, 1, 1}};  // s2 = 17 i: 35 values
    auto [warps, warps_text] = kernel_error(tall);
    CHECK(warps == Refusal::TooManyPes);
    CHECK_THAT(warps_text, Contains("on the warps of a block; a block has at most 32 warps"));
    // A first row wider than a warp (j + 16 i: 36 values) runs two of its
    // values per lane on slots; on the lanes of gpu_threads two per lane
    // make a tile, which holds only where nothing moves: a moves along s1.
    ir::UreProgram wide = matmul_2d({{"J", 4}, {"I", 3}, {"K", 3}});
    wide.schedule.transform->matrix = {{0, 1, 16}, {0, 0, 1}, {1, 1, 1}};
    CHECK(lower_to_kernel(compile_to_systolic(wide), "matmul_2d", {"a", "bm"}).pes_per_lane == 2 * 3);
    wide.schedule.gpu_threads = {"s1", "s2"};
    auto [threads, threads_text] = kernel_error(wide);
    CHECK(threads == Refusal::TapBeyondWarp);
    CHECK_THAT(threads_text, Contains("A moves 1 PEs, but the array runs a tile of 2 PEs per thread") &&
                                 Contains("drop --pes-per-thread and keep s1 within 32 values"));
    // More than 64 PEs per thread in a tile: 2 columns of 36 rows per warp.
    ir::UreProgram tile = matmul_2d({{"J", 40}, {"I", 36}, {"K", 3}, {"WARPS", 1}, {"BROADCAST", 2}});
    KernelOptions rows;
    rows.pes_per_thread = 33;
    try {
        lower_to_kernel(compile_to_systolic(tile), "matmul_2d", {"a", "bm"}, rows);
        FAIL("a tile of 66 PEs per thread was accepted");
    } catch (const CompileError &e) {
        CHECK(e.refusal == Refusal::TooManyPes);
        CHECK_THAT(std::string(e.what()), Contains("66 PEs per thread, more than 64"));
    }
    // --pes-per-thread on the slots mapping names what to add.
    try {
        lower_to_kernel(compile_to_systolic(matmul_2d({{"J", 4}, {"I", 3}, {"K", 3}})), "matmul_2d", {"a", "bm"}, rows);
        FAIL("--pes-per-thread on a 2-D array on slots was accepted");
    } catch (const CompileError &e) {
        CHECK_THAT(std::string(e.what()), Contains("add gpu_threads(s1, s2) to the schedule, or drop the option"));
    }
    // gpu_threads naming one space row of two, or a loop outside the array.
    ir::UreProgram one = matmul_2d({{"J", 4}, {"I", 3}, {"K", 3}});
    one.schedule.gpu_threads = {"s2"};
    CHECK_THAT(kernel_error(one).second, Contains("name both space loops, gpu_threads(s1, s2)"));
    one.schedule.gpu_threads = {"k"};
    CHECK_THAT(kernel_error(one).second, Contains("gpu_threads(k): only the array's space loops 's1' and 's2' map to threads"));
}

TEST_CASE("a 2-D array lowered for one mapping is not mapped as the other", "[two_dimensional][errors]") {
    sys::SystolicProgram slots = compile_to_systolic(matmul_2d({{"J", 4}, {"I", 3}, {"K", 3}}));
    slots.source.schedule.gpu_threads = {"s1", "s2"};
    REQUIRE_THROWS_WITH(lower_to_kernel(slots, "matmul_2d", {"a", "bm"}), Contains("lower the program again"));
}

TEST_CASE("conv2d_2d equals a CPU convolution at odd sizes, on every evaluator, in every mapping", "[two_dimensional]") {
    struct Case {
        int K, C, R, CO, RO;
        bool warps;
        bool inplace = false;     // the image read in place: a tile of PEs per thread
        bool shared = false;      // the box a tile reads staged in shared memory (columns blocked by lane)
        int pes_per_thread = 0;   // rows of a tile per warp
        bool order = false;       // t = p + K q: a filter column per block of steps
    };
    for (const Case c : {Case{3, 6, 3, 2, 2, false}, Case{5, 32, 7, 1, 2, false}, Case{1, 3, 1, 3, 3, false}, Case{4, 5, 9, 2, 1, true},
                         Case{3, 31, 3, 1, 3, true}, Case{3, 40, 6, 2, 1, true, true, false, 2}, Case{5, 70, 9, 1, 2, true, true, true, 3},
                         Case{4, 33, 5, 2, 2, true, true, true, 5}, Case{3, 31, 17, 1, 2, true, true, true, 17, true},
                         Case{5, 40, 12, 2, 1, true, true, false, 6, true}}) {
        INFO("K=" << c.K << " C=" << c.C << " R=" << c.R << " CO=" << c.CO << " RO=" << c.RO << (c.warps ? " WARPS=1" : "")
                  << (c.inplace ? " INPLACE=1" : "") << (c.shared ? " SHARED=1" : "") << (c.order ? " ORDER=1" : "")
                  << " --pes-per-thread=" << c.pes_per_thread);
        const ir::UreProgram program = build_spec("conv2d_2d", params({{"K", c.K}, {"C", c.C}, {"R", c.R}, {"CO", c.CO}, {"RO", c.RO},
                                                                        {"WARPS", c.warps}, {"INPLACE", c.inplace}, {"SHARED", c.shared},
                                                                        {"ORDER", c.order}}))
                                           .output.lower();
        const int W = c.C * c.CO, H = c.R * c.RO;
        Buffers inputs = random_input_buffers(program, 5 + c.K + c.C);
        const Buffers expected = ir::realize(program, inputs);
        const Halide::Buffer<> &out = expected.at("Out");
        REQUIRE(out.dim(0).extent() == W);
        REQUIRE(out.dim(1).extent() == H);
        for (int y = 0; y < H; y++) {
            for (int x = 0; x < W; x++) {
                double sum = 0;
                for (int p = 0; p < c.K; p++)
                    for (int q = 0; q < c.K; q++) sum += test::at(inputs.at("x"), {x + q, y + p}) * test::at(inputs.at("w"), {q, p});
                INFO("Out(" << x << ", " << y << ")");
                CHECK(test::close(test::at(out, {x, y}), sum, 1e-4));
            }
        }
        const sys::SystolicProgram systolic = compile_to_systolic(program);
        CHECK(compare_outputs(expected, simulate(systolic, inputs), 0) == "");
        for (bool rolled : {false, true}) {
            INFO((rolled ? "time loop rolled" : "time loop unrolled"));
            KernelOptions options;
            if (rolled) options.max_unrolled_steps = 0;
            options.pes_per_thread = c.pes_per_thread;
            const kir::Kernel kernel = lower_to_kernel(systolic, "conv2d_2d", {"x", "w"}, options);
            const int columns = (c.C + 31) / 32, tile_rows = std::max(c.pes_per_thread, 1);
            CHECK(kernel.pes_per_lane == (!c.warps ? c.R : c.inplace ? columns * tile_rows : 1));
            CHECK(kernel.warp_columns_blocked == (c.inplace && c.shared));
            // The rolled loop's blocks are the time row's period, a filter
            // row or column (K steps), not the second space row's.
            if (rolled && c.K > 1) CHECK_THAT(kernel.description, Contains("rolled: a loop over blocks of " + std::to_string(c.K) + " steps"));
            CHECK(compare_outputs(expected, Buffers{{"Out", executed(kernel, inputs, out)}}, 0) == "");
        }
    }
}

namespace {

/// A running sum along ii, carried along j: V(ii, io, j) = V(ii - 1, io, j) +
/// V(ii, io, j - 1) + x(ii, io, j) (a term dropped at ii = 0 or j = 0), as a
/// 2-D array with io on the lanes, ii on the slots and t = j: the read of
/// the slot below is in the same step. `reverse` reads the slot above
/// (ii + 1) instead; `threads` maps the rows to (lanes, warps).
ir::UreProgram slot_chain(int I, int O, int J, bool reverse, bool threads) {
    Var ii("ii"), io("io"), j("j"), s1("s1"), s2("s2"), t("t");
    Input x(Int(32), 3, "x");
    Func V(Int(32), {ii, io, j}, Place::Device, "V"), Out(Place::Device, "Out");
    Expr along = reverse ? select(ii < I - 1, V(ii + 1, io, j), 0) : select(ii > 0, V(ii - 1, io, j), 0);
    V(ii, io, j) = along + select(j > 0, V(ii, io, j - 1), 0) + x(ii, io, j);
    Out(ii, io, j) = V(ii, io, j);
    V.merge_ures(Out).set_bounds(ii, 0, I, io, 0, O, j, 0, J);
    V.space_time_transform({ii, io, j}, {s1, s2, t}, {0, 1, 0, /**/ 1, 0, 0, /**/ 0, 0, 1});
    if (threads) V.gpu_threads(s1, s2);
    return Out.lower();
}

}  // namespace

TEST_CASE("a 2-D array on lanes and register slots reads a lower slot of its lane in the same step", "[two_dimensional]") {
    std::mt19937 rng(77);
    // 5 slots on 3 lanes; 7 slots on 40 values of io (two columns a lane, the second cut short).
    for (const auto &[I, O, J] : {std::tuple{5, 3, 4}, {7, 40, 3}}) {
        INFO(I << " slots, " << O << " lanes' values, " << J << " steps");
        const ir::UreProgram program = slot_chain(I, O, J, false, false);
        CHECK(check_transform(program).verdict.kind == VerdictKind::Valid);
        Halide::Buffer<int32_t> x({I, O, J}, "x"), expected({I, O, J}, "Out");
        for (int c = 0; c < J; c++)
            for (int o = 0; o < O; o++)
                for (int i = 0; i < I; i++) {
                    const int v = (int)(rng() % 19) - 9;
                    x(i, o, c) = v;
                    expected(i, o, c) = v + (i > 0 ? expected(i - 1, o, c) : 0) + (c > 0 ? expected(i, o, c - 1) : 0);
                }
        const Buffers inputs{{"x", Halide::Buffer<>(x)}};
        CHECK(compare_outputs({{"Out", expected}}, ir::realize(program, inputs), 0) == "");
        const sys::SystolicProgram systolic = compile_to_systolic(program);
        CHECK(compare_outputs({{"Out", expected}}, simulate(systolic, inputs), 0) == "");
        for (const int64_t unrolled : {int64_t(1024), int64_t(0)}) {
            KernelOptions options;
            options.max_unrolled_steps = unrolled;
            kir::Kernel kernel = lower_to_kernel(systolic, "V", {"x"}, options);
            optimize_kernel(kernel);
            CHECK(test::run_cropped_against_reference(kernel, inputs, {{"Out", expected}}, 0) == "");
            CHECK(test::run_cropped_against_reference(kernel, inputs, {{"Out", expected}}, 1) == "");
        }
    }
    // The slot above is computed after this one; on (lanes, warps) the rows are threads of one step.
    for (const auto &[reverse, threads] : {std::pair{true, false}, {false, true}}) {
        const TransformCheck check = check_transform(slot_chain(5, 3, 4, reverse, threads));
        CHECK(check.verdict.kind == VerdictKind::DataAvailability);
        CHECK_THAT(check.verdict.message, Contains("from a lower slot of the same lane (dp = (0, d), d > 0)"));
    }
}
