// stage_in_shared (lower/StageInShared.h) on kernels built by hand: an input
// cached in shared memory is copied, box by box, into a shared array by all
// threads of the array instance between the instance's start and a barrier,
// read from there, and a last barrier closes the instance; inputs not cached
// in shared memory, or not read, are left alone.
#include "passes/PassTest.h"

#include "ir/ExactSimplify.h"
#include "lower/StageInShared.h"

using namespace pulse;
using namespace Halide;
using namespace Halide::Internal;
using Catch::Matchers::Contains;

namespace {

using test::var;
using test::i32;

/// The instance's shape: 2 warps (64 threads, thread t = array.warp*32 +
/// lane), instance (b, r) writes Out(b*62 + t, r*2 + i) for t < 62 and rows
/// i = 0, 1 of a loop of constant bounds.
constexpr int kColumns = 62, kRows = 2, kThreads = 64;

Expr thread() { return var(kir::array_warp_var) * kir::warp_size + test::lane(); }

/// Instances along Out's dimension 0 (the grid's inner loop).
Expr column_blocks() {
    Expr n = kir::buffer_extent("Out", 0) + kir::buffer_min("Out", 0);
    return max((n + make_const(Int(64), kColumns - 1)) / make_const(Int(64), kColumns), make_const(Int(64), 1));
}

/// The kernel: b and r decoded from warp.index, then the instance `body`.
/// `x_cache` is where the schedule keeps x. The whole body may be wrapped
/// (the shared array's allocation) by `around`.
kir::Kernel make_kernel(kir::InputCache x_cache, const Stmt &instance_body,
                        const std::function<Stmt(const Stmt &)> &around = nullptr) {
    kir::Kernel k;
    k.name = "stage_test";
    kir::BufferArg x = test::buffer_arg("x", Int(32), 2, false);
    x.cache = x_cache;
    k.buffers = {x, test::buffer_arg("w", Int(32), 1, false), test::buffer_arg("Out", Int(32), 2, true)};
    Expr rows = kir::buffer_extent("Out", 1) + kir::buffer_min("Out", 1);
    k.grid.push_back({"b", 0, column_blocks()});
    k.grid.push_back({"r", 0, (max(rows, make_const(Int(64), 0)) + make_const(Int(64), kRows - 1)) / make_const(Int(64), kRows)});
    k.warps_per_array = 2;
    k.pe_count = kThreads;
    Stmt body = ProducerConsumer::make(kir::array_instance_marker, true, instance_body);
    body = LetStmt::make("r", cast(Int(32), kir::warp_index() / column_blocks()), body);
    body = LetStmt::make("b", cast(Int(32), kir::warp_index() % column_blocks()), body);
    k.body = around ? around(body) : body;
    return k;
}

/// The instance body with its two reads of x given by `read_x(coords, guard)`:
/// Out(c0, c1) = x(c0, c1) * w(i) + x(c0 + 2, c1 + 1), the second read also
/// guarded by t < 40 (a guard other than the bounds).
Stmt instance_body(const kir::Kernel &k, const std::function<Expr(const std::vector<Expr> &, const Expr &)> &read_x) {
    Expr t = thread(), i = var("i");
    std::vector<Expr> c{var("b") * kColumns + t, var("r") * kRows + i};
    std::vector<Expr> shifted{c[0] + 2, c[1] + 1};
    const kir::BufferArg &x = k.buffer("x");
    Expr value = read_x(c, kir::in_bounds(x, c)) * kir::load(Int(32), "w", kir::in_bounds(k.buffer("w"), {i}), {i}) +
                 read_x(shifted, kir::in_bounds(x, shifted) && t < 40);
    Stmt store = IfThenElse::make(t < kColumns, kir::store("Out", kir::in_bounds(k.buffer("Out"), c), value, c));
    return For::make("i", i32(0), i32(kRows), ForType::Serial, DeviceAPI::None, store);
}

/// x read from global memory, as before the pass.
Expr global_x(const std::vector<Expr> &coords, const Expr &guard) { return kir::load(Int(32), "x", guard, coords); }

kir::Kernel input_kernel(kir::InputCache x_cache) {
    kir::Kernel k = make_kernel(x_cache, Evaluate::make(0));  // for the buffers' guards
    return make_kernel(x_cache, instance_body(k, global_x));
}

/// Odd sizes: 2 x 3 instances, the last ones partly outside Out, and boxes
/// that reach past x's edges (read as 0).
std::map<std::string, std::vector<int>> sizes() { return {{"x", {71, 5}}, {"w", {3}}, {"Out", {67, 5}}}; }

}  // namespace

TEST_CASE("stage_in_shared copies the box an instance reads into shared memory between barriers",
          "[passes][stage_in_shared]") {
    const kir::Kernel before = input_kernel(kir::InputCache::Shared);
    kir::Kernel after = before;
    stage_in_shared(after);
    after.body = simplify_exact(after.body);  // as the pipeline runs it after every pass

    // The box of x an instance reads, over its 64 threads and i in [0, 2):
    // dimension 0 from b*62 + [0, 63] and b*62 + 2 + [0, 63]: [b*62, b*62 + 65],
    // 66 wide; dimension 1 from r*2 + [0, 1] and r*2 + 1 + [0, 1]: [r*2, r*2 + 2],
    // 3 high. 198 elements, dimension 0 fastest.
    const int64_t width = kColumns + 4, height = kRows + 1, elements = width * height;
    const kir::BufferArg &x = before.buffer("x");
    Expr min0 = var("b") * kColumns, min1 = var("r") * kRows;

    // The copy: element e of the box by thread e % 64, ceil(198 / 64) = 4
    // elements a thread, in one batch (the loop x.shared.pass runs once): the
    // four loads (lets x.shared.copy ...) ahead of their stores, each element
    // past the box's last left out, 0 outside x through the load's bounds guard.
    const int64_t passes = (elements + kThreads - 1) / kThreads;
    std::vector<std::pair<std::string, Expr>> loads;
    std::vector<Stmt> stores;
    for (int64_t k = 0; k < passes; k++) {
        Expr e = (var("x.shared.pass") * i32(passes) + i32(k)) * kThreads + thread();
        std::vector<Expr> at{min0 + e % i32(width), min1 + e / i32(width)};
        const std::string name = k ? "x.shared.copy$" + std::to_string(k) : "x.shared.copy";
        loads.emplace_back(name, kir::load(Int(32), "x", e < i32(elements) && kir::in_bounds(x, at), at));
        stores.push_back(IfThenElse::make(e < i32(elements), Store::make("x.shared", var(name), e, Parameter(), const_true(), ModulusRemainder())));
    }
    Stmt copy = Block::make(stores);
    for (size_t k = loads.size(); k-- > 0;) copy = LetStmt::make(loads[k].first, loads[k].second, copy);
    copy = For::make("x.shared.pass", i32(0), i32(1), ForType::Serial, DeviceAPI::None, copy);
    // The reads: element (c0 - min0) + (c1 - min1) * 66 of the copy. Where the
    // guard is the bounds alone the copy's 0 stands in for it; the other
    // guard (t < 40) stays, as a select.
    auto shared_x = [&](const std::vector<Expr> &c, const Expr &guard) {
        Expr value = Load::make(Int(32), "x.shared", (c[0] - min0) + (c[1] - min1) * i32(width), Buffer<>(), Parameter(),
                                const_true(), ModulusRemainder());
        return equal(guard, kir::in_bounds(x, c)) ? value : select(guard, value, 0);
    };
    Stmt reads = instance_body(before, shared_x);
    // One shared array around the whole body.
    kir::Kernel expected = make_kernel(kir::InputCache::Shared, Block::make({copy, kir::barrier(), reads, kir::barrier()}),
                                       [&](const Stmt &s) {
                                           return Allocate::make("x.shared", Int(32), Halide::MemoryType::GPUShared,
                                                                 {i32(elements)}, const_true(), s);
                                       });
    // The pass promises the box and what is copied and read, not how its
    // index arithmetic is spelled: both sides in simplify_exact's normal form.
    expected.body = simplify_exact(expected.body);
    REQUIRE_SAME_IR(after.body, expected.body);

    // The executor also checks the staging: every element of the shared
    // array written before it is read, and no race (the barriers).
    for (uint32_t seed : {1u, 2u}) {
        Buffers buffers = test::make_buffers(before, sizes(), seed);
        REQUIRE(test::same_outputs(before, after, buffers) == "");
    }
}

TEST_CASE("stage_in_shared leaves inputs not cached in shared memory, or not read, as they are",
          "[passes][stage_in_shared]") {
    SECTION("x cached in registers") {
        const kir::Kernel before = input_kernel(kir::InputCache::Registers);
        kir::Kernel after = before;
        stage_in_shared(after);  // the pass alone
        REQUIRE_SAME_IR(after.body, before.body);
        Buffers buffers = test::make_buffers(before, sizes(), 3);
        REQUIRE(test::same_outputs(before, after, buffers) == "");
    }
    SECTION("x cached in shared memory but never read by an instance") {
        // Out(c) = w(i) only: no box to stage, no shared array allocated.
        kir::Kernel k = make_kernel(kir::InputCache::Shared, Evaluate::make(0));
        Expr t = thread(), i = var("i");
        std::vector<Expr> c{var("b") * kColumns + t, var("r") * kRows + i};
        Stmt store = IfThenElse::make(
            t < kColumns, kir::store("Out", kir::in_bounds(k.buffer("Out"), c),
                                     kir::load(Int(32), "w", kir::in_bounds(k.buffer("w"), {i}), {i}), c));
        const kir::Kernel before =
            make_kernel(kir::InputCache::Shared, For::make("i", i32(0), i32(kRows), ForType::Serial, DeviceAPI::None, store));
        kir::Kernel after = before;
        stage_in_shared(after);  // the pass alone
        REQUIRE_SAME_IR(after.body, before.body);
        Buffers buffers = test::make_buffers(before, sizes(), 4);
        REQUIRE(test::same_outputs(before, after, buffers) == "");
    }
}

TEST_CASE("stage_in_shared rejects a read of a shared-cached input whose box has no known size",
          "[passes][stage_in_shared]") {
    // x read at a row held in a let of the instance (a loaded value): its
    // range is not known before the instance runs.
    kir::Kernel k = make_kernel(kir::InputCache::Shared, Evaluate::make(0));
    Expr t = thread();
    std::vector<Expr> row{i32(0)};
    Expr first = kir::load(Int(32), "w", kir::in_bounds(k.buffer("w"), row), row);
    std::vector<Expr> c{var("b") * kColumns + t, var("row")};
    std::vector<Expr> out{var("b") * kColumns + t, var("r")};
    Stmt body = LetStmt::make(
        "row", first,
        IfThenElse::make(t < kColumns, kir::store("Out", kir::in_bounds(k.buffer("Out"), out),
                                                  kir::load(Int(32), "x", kir::in_bounds(k.buffer("x"), c), c), out)));
    kir::Kernel bad = make_kernel(kir::InputCache::Shared, body);
    REQUIRE_THROWS_WITH(stage_in_shared(bad), Contains("x.store_in(MemoryType::Shared)") && Contains("row") &&
                                                  Contains("has no range known"));
}
