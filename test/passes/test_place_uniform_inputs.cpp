// place_uniform_inputs alone on hand-built kernels: an input read only at
// coordinates that are the same on every lane and bounded at generation time
// (constants, loops of constant bounds) moves to constant memory with the
// region those reads cover; its reads lose their guards, except reads past
// what the domain reads, which keep a guard of the region
// (PlaceUniformInputs.h). Anything else stays in global memory, untouched.
#include "passes/PassTest.h"

#include "lower/PlaceUniformInputs.h"

using namespace pulse;
using namespace Halide;
using namespace Halide::Internal;

namespace {

using test::instance;
using test::var;

constexpr int pes = 30;  // PEs of the array: lanes 30 and 31 idle

/// The PE's element of the tile: tile * 30 + lane.
Expr element() { return var("tile") * pes + test::lane(); }

Stmt serial(const std::string &name, int extent, const Stmt &body) {
    return For::make(name, 0, extent, ForType::Serial, DeviceAPI::None, body);
}

Stmt in_tile(const Stmt &inner) { return LetStmt::make("tile", cast(Int(32), kir::warp_index()), inner); }

/// An input whose domain reads [min, max] per dimension (as infer_input_regions records).
kir::BufferArg input(const std::string &name, Type type, const std::vector<std::pair<int64_t, int64_t>> &domain_reads) {
    kir::BufferArg b = test::buffer_arg(name, type, (int)domain_reads.size(), false);
    b.domain_reads = domain_reads;
    return b;
}

/// A kernel of 30 PEs, one warp per tile of 30 elements of Out's dimension 0.
kir::Kernel tiled_kernel(const std::vector<kir::BufferArg> &buffers) {
    kir::Kernel k;
    k.name = "uniform_test";
    k.buffers = buffers;
    k.pe_count = pes;
    k.grid.push_back({"tile", 0, (kir::buffer_extent("Out", 0) + (pes - 1)) / pes});
    return k;
}

/// place_uniform_inputs alone on a copy; its result is compared as the pass
/// leaves it, without the simplify_exact the pipeline runs after every pass.
kir::Kernel run_place_uniform_inputs(const kir::Kernel &before) {
    kir::Kernel after = before;
    place_uniform_inputs(after);
    return after;
}

/// `name` as the pass leaves it when it stays in global memory.
void require_global(const kir::Kernel &k, const std::string &name) {
    const kir::BufferArg &b = k.buffer(name);
    REQUIRE(b.placement == kir::Placement::Global);
    REQUIRE(b.region_min.empty());
    REQUIRE(b.region_extent.empty());
}

}  // namespace

TEST_CASE("place_uniform_inputs moves a filter read at constant-bound loop indices to constant memory", "[passes][place_uniform_inputs]") {
    // W: a 5-tap filter, row 1 of a 2-D input; A: the signal, read per lane.
    kir::Kernel before = tiled_kernel({input("W", Int(32), {{0, 4}, {1, 1}}), test::buffer_arg("A", Int(32), 1, false),
                                       test::buffer_arg("Out", Int(32), 2, true)});
    Expr k = var("k"), x = element();
    // for k in [0, 5): instance { let w = W(k, 1); if (lane < 30) Out(x, k) = w * A[x + k] + W(2, 1) }
    // (W(2, 1) is read inside the idle-lane guard, at a constant.)
    auto kernel_body = [&](const std::function<Expr(const std::vector<Expr> &)> &w_read) {
        return in_tile(serial("k", 5, instance(LetStmt::make(
            "w", w_read({k, 1}),
            IfThenElse::make(test::lane() < pes,
                             test::guarded_store(before, "Out", var("w") * test::guarded_load(before, "A", {x + k}) + w_read({2, 1}), {x, k}))))));
    };
    before.body = kernel_body([&](const std::vector<Expr> &c) { return test::guarded_load(before, "W", c); });

    kir::Kernel after = run_place_uniform_inputs(before);

    // W covers k in [0, 4] by row 1: region [0, 5) x [1, 2), inside the
    // domain's reads, so its loads need no guard. A depends on the lane: it stays.
    const kir::BufferArg &w = after.buffer("W");
    REQUIRE(w.placement == kir::Placement::Constant);
    REQUIRE(w.region_min == std::vector<int64_t>{0, 1});
    REQUIRE(w.region_extent == std::vector<int64_t>{5, 1});
    require_global(after, "A");
    REQUIRE(after.buffer("Out").placement == kir::Placement::Global);
    Stmt expected = kernel_body([](const std::vector<Expr> &c) { return kir::load(Int(32), "W", const_true(), c); });
    REQUIRE_SAME_IR(after.body, expected);

    // W of 5 x 3 covers the region; 73 outputs make a partial last tile.
    Buffers buffers = test::make_buffers(before, {{"W", {5, 3}}, {"A", {79}}, {"Out", {73, 5}}}, 11);
    REQUIRE(test::same_outputs(before, after, buffers) == "");
}

TEST_CASE("place_uniform_inputs keeps a region guard on reads past what the domain reads", "[passes][place_uniform_inputs]") {
    // A rolled loop of 7 steps where only k < 5 does work: the filter is read
    // at every step (the value unused on the idle ones), but the domain reads W[0..4].
    kir::Kernel before = tiled_kernel({input("W", Float(32), {{0, 4}}), test::buffer_arg("A", Float(32), 1, false),
                                       test::buffer_arg("Out", Float(32), 2, true)});
    Expr k = var("k"), x = element();
    auto kernel_body = [&](const Expr &w_read) {
        return in_tile(serial("k", 7, instance(LetStmt::make(
            "w", w_read, IfThenElse::make(k < 5, test::guarded_store(before, "Out", Variable::make(Float(32), "w") * test::guarded_load(before, "A", {x + k}), {x, k}))))));
    };
    before.body = kernel_body(test::guarded_load(before, "W", {k}));

    kir::Kernel after = run_place_uniform_inputs(before);

    // The region is clamped to [0, 5); the load keeps a guard, now against
    // that region (k in [0, 5)), so steps 5 and 6 read 0 and never past it.
    kir::BufferArg placed = before.buffer("W");
    placed.placement = kir::Placement::Constant;
    placed.region_min = {0};
    placed.region_extent = {5};
    const kir::BufferArg &w = after.buffer("W");
    REQUIRE(w.placement == kir::Placement::Constant);
    REQUIRE(w.region_min == placed.region_min);
    REQUIRE(w.region_extent == placed.region_extent);
    Stmt expected = kernel_body(kir::load(Float(32), "W", kir::in_bounds(placed, {k}), {k}));
    REQUIRE_SAME_IR(after.body, expected);

    // W exactly the domain's 5 taps: a read at 5 or 6 unguarded would be outside it.
    Buffers buffers = test::make_buffers(before, {{"W", {5}}, {"A", {65}}, {"Out", {59, 5}}}, 12);
    REQUIRE(test::same_outputs(before, after, buffers) == "");
}

TEST_CASE("place_uniform_inputs leaves an input whose reads differ between lanes or are not bounded at generation time",
          "[passes][place_uniform_inputs]") {
    // One kernel shape; each section breaks one precondition for W.
    kir::BufferArg w_arg = input("W", Int(32), {{0, 4}});
    Expr k = var("k"), x = element();
    Expr loop_extent = 5;
    std::function<Expr(const kir::Kernel &)> second_read;  // a second read of W, beside W[k]
    SECTION("one read of W depends on the lane") {
        second_read = [&](const kir::Kernel &kernel) { return test::guarded_load(kernel, "W", {test::lane() % 5}); };
    }
    SECTION("the loop's extent is W's run-time extent") {
        loop_extent = cast(Int(32), kir::buffer_extent("W", 0));
        second_read = [&](const kir::Kernel &kernel) { return test::guarded_load(kernel, "W", {0}); };
    }
    SECTION("the schedule caches W in L1") {
        w_arg.cache = kir::InputCache::L1;
        second_read = [&](const kir::Kernel &kernel) { return test::guarded_load(kernel, "W", {0}); };
    }
    kir::Kernel before = tiled_kernel({w_arg, test::buffer_arg("A", Int(32), 1, false), test::buffer_arg("Out", Int(32), 2, true)});
    // for k in [0, extent): instance { Out(x, k) = W[k] * A[x + k] + second read of W }
    before.body = in_tile(For::make(
        "k", 0, loop_extent, ForType::Serial, DeviceAPI::None,
        instance(test::guarded_store(before, "Out", test::guarded_load(before, "W", {k}) * test::guarded_load(before, "A", {x + k}) + second_read(before), {x, k}))));

    kir::Kernel after = run_place_uniform_inputs(before);

    require_global(after, "W");
    require_global(after, "A");
    REQUIRE_SAME_IR(after.body, before.body);

    Buffers buffers = test::make_buffers(before, {{"W", {5}}, {"A", {41}}, {"Out", {37, 5}}}, 13);
    REQUIRE(test::same_outputs(before, after, buffers) == "");
}

TEST_CASE("place_uniform_inputs places a region up to the constant-memory budget and no larger", "[passes][place_uniform_inputs]") {
    // W(i, j) for i in [0, 91), j in [0, rows): 4-byte elements, so 90 rows
    // make 32760 bytes (within the 32 KiB budget) and 91 rows 33124 (over it).
    const int columns = 91;
    int rows = 0;
    bool fits = false;
    SECTION("90 rows fit") { rows = 90, fits = true; }
    SECTION("91 rows do not") { rows = 91, fits = false; }
    REQUIRE((int64_t(columns) * rows * 4 <= constant_memory_budget) == fits);
    kir::Kernel before = tiled_kernel({input("W", Float(32), {{0, columns - 1}, {0, rows - 1}}), test::buffer_arg("Out", Float(32), 2, true)});
    before.grid[0].extent = make_const(Int(64), 1);  // one array instance: every lane reads the same
    Expr i = var("i"), j = var("j");
    // for i, for j: if (lane == 0) Out(i, j) = W(i, j) * 2
    auto kernel_body = [&](const Expr &w_read) {
        return serial("i", columns, serial("j", rows, IfThenElse::make(test::lane() == 0, test::guarded_store(before, "Out", w_read * 2.0f, {i, j}))));
    };
    before.body = kernel_body(test::guarded_load(before, "W", {i, j}));

    kir::Kernel after = run_place_uniform_inputs(before);

    if (fits) {
        const kir::BufferArg &w = after.buffer("W");
        REQUIRE(w.placement == kir::Placement::Constant);
        REQUIRE(w.region_min == std::vector<int64_t>{0, 0});
        REQUIRE(w.region_extent == std::vector<int64_t>{columns, rows});
        REQUIRE_SAME_IR(after.body, kernel_body(kir::load(Float(32), "W", const_true(), {i, j})));
    } else {
        require_global(after, "W");
        REQUIRE_SAME_IR(after.body, before.body);
    }

    Buffers buffers = test::make_buffers(before, {{"W", {columns, rows}}, {"Out", {columns, rows}}}, 14);
    REQUIRE(test::same_outputs(before, after, buffers) == "");
}

TEST_CASE("place_uniform_inputs keeps all inputs together within the constant bank", "[passes][place_uniform_inputs]") {
    // W and V of 91 x 80 floats (29120 bytes) each fit the per-input budget,
    // but not both the total (CUDA's 64 KiB bank, less the compiler's share):
    // W, first in argument order, is placed; V stays in global memory.
    const int columns = 91, rows = 80;
    REQUIRE(int64_t(columns) * rows * 4 <= constant_memory_budget);
    REQUIRE(2 * int64_t(columns) * rows * 4 > constant_memory_total_budget);
    kir::Kernel before = tiled_kernel({input("W", Float(32), {{0, columns - 1}, {0, rows - 1}}),
                                       input("V", Float(32), {{0, columns - 1}, {0, rows - 1}}),
                                       test::buffer_arg("Out", Float(32), 2, true)});
    before.grid[0].extent = make_const(Int(64), 1);
    Expr i = var("i"), j = var("j");
    auto kernel_body = [&](const Expr &w_read, const Expr &v_read) {
        return serial("i", columns, serial("j", rows, IfThenElse::make(test::lane() == 0, test::guarded_store(before, "Out", w_read + v_read, {i, j}))));
    };
    before.body = kernel_body(test::guarded_load(before, "W", {i, j}), test::guarded_load(before, "V", {i, j}));

    kir::Kernel after = run_place_uniform_inputs(before);

    REQUIRE(after.buffer("W").placement == kir::Placement::Constant);
    require_global(after, "V");
    REQUIRE_SAME_IR(after.body, kernel_body(kir::load(Float(32), "W", const_true(), {i, j}), test::guarded_load(before, "V", {i, j})));
    Buffers buffers = test::make_buffers(before, {{"W", {columns, rows}}, {"V", {columns, rows}}, {"Out", {columns, rows}}}, 15);
    REQUIRE(test::same_outputs(before, after, buffers) == "");
}
