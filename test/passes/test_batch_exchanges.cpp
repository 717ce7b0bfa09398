// batch_exchanges alone, on kernels of several warps built by hand: each
// move (array_shift let) is hoisted to the run of moves before it unless
// something between binds a name it reads or writes an array it reads; a
// run holds no more values than a block's shared memory. The IR is compared
// node for node, the executor runs the kernel before and after, and
// exchange_across_warps then needs one barrier per run.
#include "passes/PassTest.h"

#include "lower/BatchExchanges.h"
#include "lower/ExchangeAcrossWarps.h"

using namespace pulse;
using namespace Halide;
using namespace Halide::Internal;

namespace {

using test::var;

Expr thread() { return var(kir::array_warp_var) * kir::warp_size + test::lane(); }

kir::Kernel make_kernel(int warps, std::vector<kir::BufferArg> buffers, const Stmt &instance) {
    return test::kernel_over_warps("batch_test", warps, std::move(buffers), instance);
}

int barriers(const Stmt &s) {
    int n = 0;
    class Count : public IRVisitor {
    public:
        int &n;
        explicit Count(int &n) : n(n) {}
        using IRVisitor::visit;
        void visit(const Call *op) override {
            n += op->name == kir::intrinsic::barrier;
            IRVisitor::visit(op);
        }
    } count(n);
    s.accept(&count);
    return n;
}

/// `before` and `after` batch_exchanges, and both after exchange_across_warps,
/// give the same outputs on buffers of each size.
void require_same_outputs(const kir::Kernel &before, const kir::Kernel &after, const std::vector<int> &sizes) {
    kir::Kernel before_lowered = before, after_lowered = after;
    exchange_across_warps(before_lowered);
    exchange_across_warps(after_lowered);
    for (int n : sizes) {
        INFO("x and Out of " << n);
        Buffers buffers = test::make_buffers(before, {{"x", {n}}, {"Out", {n}}}, 11 + n);
        REQUIRE(test::same_outputs(before, after, buffers) == "");
        REQUIRE(test::same_outputs(before, after_lowered, buffers) == "");
        REQUIRE(test::same_outputs(before_lowered, after_lowered, buffers) == "");
    }
}

}  // namespace

TEST_CASE("batch_exchanges hoists each move to the run before it where nothing it reads changes in between",
          "[passes][batch_exchanges]") {
    // Two warps. a starts a run; b (of v, ready since the top) joins it above
    // w and the register write; c reads w, written after the run: a new run
    // where c is; d reads R and v: nothing writes R between c and d, so it
    // joins c's run above the let r; e reads R after `R[0] = c + d`: a
    // third run.
    const kir::BufferArg x = test::buffer_arg("x", Int(32), 1, false), out = test::buffer_arg("Out", Int(32), 1, true);
    Expr i = var("b") * 64 + thread();
    Expr v = var("v"), w = var("w"), r0 = kir::register_load(Int(32), "R", 0);
    Stmt store = kir::store("Out", kir::in_bounds(out, {i}),
                            var("a") + var("b2") * 2 + var("c") * 3 + var("d") * 5 + var("e") * 7 + var("r"), {i});
    auto let = [](const std::string &n, const Expr &value, const Stmt &body) { return LetStmt::make(n, value, body); };
    auto shift = [](const Expr &value, int d) { return kir::array_shift(value, d); };
    Expr load_x = kir::load(Int(32), "x", kir::in_bounds(x, {i}), {i});
    Stmt e_to_end = let("e", shift(r0, -1), store);
    Stmt before_body =
        let("v", load_x,
            let("a", shift(v, 1),
                let("w", var("a") + v,
                    Block::make(kir::register_store("R", w, 0),
                                let("b2", shift(v * 3, -2),
                                    let("c", shift(w, 1),
                                        let("r", r0,
                                            let("d", shift(r0 + v, 2),
                                                Block::make(kir::register_store("R", var("c") + var("d"), 0), e_to_end)))))))));
    const kir::Kernel before = make_kernel(2, {x, out}, kir::allocate_registers("R", Int(32), 1, before_body));

    kir::Kernel after = before;
    batch_exchanges(after);

    Stmt expected_body =
        let("v", load_x,
            let("a", shift(v, 1),
                let("b2", shift(v * 3, -2),
                    let("w", var("a") + v,
                        Block::make(kir::register_store("R", w, 0),
                                    let("c", shift(w, 1),
                                        let("d", shift(r0 + v, 2),
                                            let("r", r0, Block::make(kir::register_store("R", var("c") + var("d"), 0), e_to_end)))))))));
    REQUIRE_SAME_IR(after.body, make_kernel(2, {x, out}, kir::allocate_registers("R", Int(32), 1, expected_body)).body);
    require_same_outputs(before, after, {63, 64, 150});

    // Four runs before (b2 and c already adjacent), three after: a barrier each.
    kir::Kernel before_lowered = before;
    exchange_across_warps(before_lowered);
    exchange_across_warps(after);
    CHECK(barriers(before_lowered.body) == 4);
    CHECK(barriers(after.body) == 3);
}

TEST_CASE("batch_exchanges starts a new run where the shared memory of a block is full", "[passes][batch_exchanges]") {
    // 32 warps, fp64 values moved through shared memory: a value takes two
    // halves of 1024 x 8 bytes, so a run of 48 KiB holds three. Four moves of
    // four values, each followed by a let that reads it: s0, s1 and s2 run
    // together, s3 starts its own run.
    const kir::BufferArg x = test::buffer_arg("x", Float(64), 1, false), out = test::buffer_arg("Out", Float(64), 1, true);
    Expr i = var("b") * 1024 + thread();
    Expr load_x = kir::load(Float(64), "x", kir::in_bounds(x, {i}), {i});
    auto v = [](int k) { return var("v" + std::to_string(k), Float(64)); };
    auto s = [](int k) { return var("s" + std::to_string(k), Float(64)); };
    auto y = [](int k) { return var("y" + std::to_string(k), Float(64)); };
    const int distance[4] = {40, -33, 1, 2};
    Stmt store = kir::store("Out", kir::in_bounds(out, {i}), y(2) + s(3), {i});
    std::vector<std::pair<std::string, Expr>> values, moved, sums;
    for (int k = 0; k < 4; k++) values.push_back({"v" + std::to_string(k), load_x * (k + 1)});
    auto shift = [&](int k) { return std::make_pair("s" + std::to_string(k), kir::array_shift(v(k), distance[k], true)); };
    auto sum = [&](int k) { return std::make_pair("y" + std::to_string(k), k == 0 ? s(0) + make_const(Float(64), 1.0) : s(k) + y(k - 1)); };
    std::vector<std::pair<std::string, Expr>> before_lets = values, after_lets = values;
    for (int k = 0; k < 3; k++) {
        before_lets.push_back(shift(k));
        before_lets.push_back(sum(k));
    }
    before_lets.push_back(shift(3));
    for (int k = 0; k < 3; k++) after_lets.push_back(shift(k));
    for (int k = 0; k < 3; k++) after_lets.push_back(sum(k));
    after_lets.push_back(shift(3));
    const kir::Kernel before = make_kernel(32, {x, out}, test::lets(before_lets, store));

    kir::Kernel after = before;
    batch_exchanges(after);
    REQUIRE_SAME_IR(after.body, make_kernel(32, {x, out}, test::lets(after_lets, store)).body);
    require_same_outputs(before, after, {1023, 1100});
    exchange_across_warps(after);
    CHECK(barriers(after.body) == 2);
}

TEST_CASE("batch_exchanges leaves an array of one warp as it is", "[passes][batch_exchanges]") {
    const kir::BufferArg x = test::buffer_arg("x", Int(32), 1, false), out = test::buffer_arg("Out", Int(32), 1, true);
    Expr i = var("b") * 32 + test::lane();
    Expr v = var("v");
    Stmt body = LetStmt::make(
        "v", kir::load(Int(32), "x", kir::in_bounds(x, {i}), {i}),
        LetStmt::make("u", v + 1,
                      LetStmt::make("up", kir::lane_shift(v, 1), kir::store("Out", kir::in_bounds(out, {i}), var("up") + var("u"), {i}))));
    kir::Kernel k = make_kernel(1, {x, out}, body);
    const Stmt original = k.body;
    batch_exchanges(k);
    REQUIRE_SAME_IR(k.body, original);
}
