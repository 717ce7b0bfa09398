// hoist_loads alone on hand-built kernels: in each array instance's
// straight-line code, a load that uses no value bound inside the instance is
// issued once, as a let at the top of the instance (HoistLoads.h); any other
// load stays where it is.
#include "passes/PassTest.h"

#include "lower/HoistLoads.h"

using namespace pulse;
using namespace Halide;
using namespace Halide::Internal;

namespace {

using test::instance;
using test::var;

constexpr int pes = 30;  // PEs of the array: lanes 30 and 31 idle

/// The PE's element of the tile: tile * 30 + lane (the lowering writes the PE index out).
Expr element() { return var("tile") * pes + test::lane(); }

/// `inner` inside the decoding of the warp's tile (one grid loop over Out's dimension 0).
Stmt in_tile(const Stmt &inner) { return LetStmt::make("tile", cast(Int(32), kir::warp_index()), inner); }

/// A kernel of 30 PEs, one warp per tile of 30 elements of Out's dimension 0.
kir::Kernel tiled_kernel(const std::vector<kir::BufferArg> &buffers) {
    kir::Kernel k;
    k.name = "hoist_test";
    k.buffers = buffers;
    k.pe_count = pes;
    k.grid.push_back({"tile", 0, (kir::buffer_extent("Out", 0) + (pes - 1)) / pes});
    return k;
}

/// hoist_loads alone on a copy; its result is compared as the pass leaves it,
/// without the simplify_exact the pipeline runs after every pass.
kir::Kernel run_hoist_loads(const kir::Kernel &before) {
    kir::Kernel after = before;
    hoist_loads(after);
    return after;
}

}  // namespace

TEST_CASE("hoist_loads issues each load of values from outside the instance once, at its top", "[passes][hoist_loads]") {
    kir::Kernel before = tiled_kernel({test::buffer_arg("A", Int(32), 1, false), test::buffer_arg("Out", Int(32), 2, true)});
    Expr k = var("k"), x = element();
    Expr here = test::guarded_load(before, "A", {x + k}), next = test::guarded_load(before, "A", {x + k + 1});
    // A per-thread serial loop k around the instance: k is bound outside it,
    // so loads that use k still move (to the top of the instance, inside the loop).
    auto around_instance = [&](const Stmt &s) { return in_tile(For::make("k", 0, 2, ForType::Serial, DeviceAPI::None, instance(s))); };
    // let sum = A[x + k] + A[x + k + 1]; if (lane < 30) Out(x, k) = sum + A[x + k]
    // (the second read of A[x + k] is inside the idle-lane guard).
    Expr sum = var("sum");
    before.body = around_instance(LetStmt::make(
        "sum", here + next, IfThenElse::make(test::lane() < pes, test::guarded_store(before, "Out", sum + here, {x, k}))));

    kir::Kernel after = run_hoist_loads(before);

    // Two distinct loads, named BUFFER.regN in the order met; the repeated
    // A[x + k] reuses the first, and the one in the guard leaves it (its own
    // bounds guard makes it safe anywhere).
    Expr reg0 = var("A.reg0"), reg1 = var("A.reg1");
    Stmt expected = around_instance(LetStmt::make(
        "A.reg0", here,
        LetStmt::make("A.reg1", next,
                      LetStmt::make("sum", reg0 + reg1,
                                    IfThenElse::make(test::lane() < pes, test::guarded_store(before, "Out", sum + reg0, {x, k}))))));
    REQUIRE_SAME_IR(after.body, expected);

    // Odd sizes: 3 tiles, the last partial; A shorter than x + k + 1 reaches (guarded reads).
    Buffers buffers = test::make_buffers(before, {{"A", {77}}, {"Out", {73, 2}}}, 1);
    REQUIRE(test::same_outputs(before, after, buffers) == "");
}

TEST_CASE("hoist_loads hoists the index of a gather but not the load at that index", "[passes][hoist_loads]") {
    kir::Kernel before = tiled_kernel({test::buffer_arg("I", Int(32), 1, false), test::buffer_arg("A", Int(32), 1, false),
                                       test::buffer_arg("Out", Int(32), 1, true)});
    Expr x = element(), index = var("index"), offset = var("offset");
    Expr index_read = test::guarded_load(before, "I", {x});
    Expr gathered = test::guarded_load(before, "A", {index});          // uses `index`, bound inside the instance
    Expr shifted = test::guarded_load(before, "A", {x + offset});      // `offset` is bound outside the instance
    Expr offset_read = test::guarded_load(before, "I", {var("tile")});  // outside the instance: not the pass's to move
    // let offset = I[tile]; instance { let index = I[x]; Out[x] = A[index] + A[x + offset] + I[x] }
    auto with_offset = [&](const Stmt &s) { return in_tile(LetStmt::make("offset", offset_read, instance(s))); };
    before.body = with_offset(LetStmt::make("index", index_read, test::guarded_store(before, "Out", gathered + shifted + index_read, {x})));

    kir::Kernel after = run_hoist_loads(before);

    // I[x] is loaded once (both uses read I.reg0), A[x + offset] moves too;
    // A[index] waits for `index` and stays.
    Expr i_reg = var("I.reg0"), a_reg = var("A.reg1");
    Stmt expected = with_offset(LetStmt::make(
        "I.reg0", index_read,
        LetStmt::make("A.reg1", shifted, LetStmt::make("index", i_reg, test::guarded_store(before, "Out", gathered + a_reg + i_reg, {x})))));
    REQUIRE_SAME_IR(after.body, expected);

    // I's values in [-9, 9] index A both inside and outside it (guarded).
    Buffers buffers = test::make_buffers(before, {{"I", {67}}, {"A", {7}}, {"Out", {61}}}, 2);
    REQUIRE(test::same_outputs(before, after, buffers) == "");
}

TEST_CASE("hoist_loads leaves loads that depend on the instance, read other lanes, or go through L1", "[passes][hoist_loads]") {
    kir::BufferArg through_l1 = test::buffer_arg("C", Int(32), 1, false);
    through_l1.cache = kir::InputCache::L1;  // the schedule's store_in(MemoryType::Global): loaded where used
    kir::Kernel before = tiled_kernel({test::buffer_arg("A", Int(32), 1, false), through_l1, test::buffer_arg("Out", Int(32), 2, true)});
    Expr x = element(), j = var("j"), first = var("first");
    Expr neighbour = kir::lane_shift(x, -1);  // x of the next lane (shfl_down)
    // instance {
    //   let first = x * 2; let at_first = A[first]       (uses a let bound inside)
    //   let from_next = A[shfl_down(x, 1)]              (a lane exchange in its coordinate)
    //   for j in [0, 2): Out(x, j) = at_first + from_next + A[x + j] + C[x]
    // }                                                  (A[x + j] uses the inner loop's j; C is read through L1)
    Stmt loop = For::make("j", 0, 2, ForType::Serial, DeviceAPI::None,
                          test::guarded_store(before, "Out", var("at_first") + var("from_next") + test::guarded_load(before, "A", {x + j}) + test::guarded_load(before, "C", {x}), {x, j}));
    before.body = in_tile(instance(LetStmt::make(
        "first", x * 2,
        LetStmt::make("at_first", test::guarded_load(before, "A", {first}), LetStmt::make("from_next", test::guarded_load(before, "A", {neighbour}), loop)))));

    kir::Kernel after = run_hoist_loads(before);

    // No load qualifies: the kernel comes back as it was.
    REQUIRE_SAME_IR(after.body, before.body);

    Buffers buffers = test::make_buffers(before, {{"A", {121}}, {"C", {45}}, {"Out", {53, 2}}}, 3);
    REQUIRE(test::same_outputs(before, after, buffers) == "");
}
