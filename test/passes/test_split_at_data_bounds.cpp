// split_at_data_bounds (lower/SplitAtDataBounds.h) on kernels built by hand:
// a loop whose lanes stop at a run-time bound skewed by the lane (a ragged
// instance's activity, `t < n + lane`, n read from an input) is split where
// the comparison first fails on some lane, the first loop with it folded to
// true; a comparison with a value that differs between lanes, and a short
// loop, leave the loop whole; the outputs are the same on the executor at
// bounds before, inside and past the loop, and a split one iteration late
// is caught.
#include "passes/PassTest.h"

#include "lower/SplitAtDataBounds.h"

using namespace pulse;
using namespace Halide;
using namespace Halide::Internal;

namespace {

using test::var;
using test::i32;

/// Lane l sums x[t] over the steps t in [0, extent) where `active` holds and
/// stores the sum in Out[l]; `bound` is bound before the loop.
kir::Kernel bounded_kernel(int extent, const Expr &bound, const Expr &active) {
    kir::Kernel k;
    k.name = "split_bounds_test";
    k.buffers = {test::buffer_arg("x", Int(32), 1, false), test::buffer_arg("n", Int(32), 1, false),
                 test::buffer_arg("Out", Int(32), 1, true)};
    k.pe_count = 32;
    const Expr t = var("t"), l = test::lane();
    const Expr acc = kir::register_load(Int(32), "S.acc", 0);
    const Stmt step = LetStmt::make("active", active, IfThenElse::make(var("active", Bool()), kir::register_store("S.acc", acc + test::guarded_load(k, "x", {t}), 0)));
    const Stmt loop = test::serial("t", 0, extent, step);
    const Stmt store = test::guarded_store(k, "Out", acc, {l});
    const Stmt body = LetStmt::make("n.bound", bound, Block::make({kir::register_store("S.acc", i32(0), 0), loop, store}));
    k.body = test::instance(kir::allocate_registers("S.acc", Int(32), 1, body));
    return k;
}

/// The serial loops of `s`, outermost first, in order.
std::vector<const For *> loops_of(const Stmt &s) {
    struct Collect : IRVisitor {
        std::vector<const For *> loops;
        using IRVisitor::visit;
        void visit(const For *op) override { loops.push_back(op), IRVisitor::visit(op); }
    } collect;
    s.accept(&collect);
    return collect.loops;
}


/// `kernel` with the value of let `name` plus one.
kir::Kernel let_plus_one(kir::Kernel kernel, const std::string &name) {
    struct Later : IRMutator {
        std::string name;
        using IRMutator::visit;
        Stmt visit(const LetStmt *op) override {
            if (op->name != name) return IRMutator::visit(op);
            return LetStmt::make(op->name, op->value + 1, mutate(op->body));
        }
    } later;
    later.name = name;
    kernel.body = later.mutate(kernel.body);
    return kernel;
}

}  // namespace

TEST_CASE("split_at_data_bounds splits a loop where its lanes' run-time bound first fails, folding it before",
          "[passes][split_at_data_bounds]") {
    // t < n + lane on every lane while t < n: the first loop folds it.
    const Expr n = test::guarded_load(bounded_kernel(100, i32(0), const_true()), "n", {i32(0)});
    const kir::Kernel before = bounded_kernel(100, n, var("t") < var("n.bound") + test::lane());
    kir::Kernel after = before;
    split_at_data_bounds(after);  // the pass alone
    const std::vector<const For *> loops = loops_of(after.body);
    REQUIRE(loops.size() == 2);
    // (Only the activity reads the bound.)
    CHECK(!stmt_uses_var(loops[0]->body, "n.bound"));
    CHECK(stmt_uses_var(loops[1]->body, "n.bound"));
    // Bounds before the loop, at its first steps, inside, at its end and past it.
    int mutant_caught = 0;
    const kir::Kernel late = let_plus_one(after, "t.split");
    for (int bound : {-40, -5, 0, 1, 37, 68, 99, 100, 131}) {
        INFO("n = " << bound);
        Buffers buffers = test::make_buffers(before, {{"x", {100}}, {"n", {1}}, {"Out", {32}}}, 7 + bound);
        store_element(buffers.at("n"), {0}, Scalar::of_int(bound));
        CHECK(test::same_outputs(before, after, buffers) == "");
        mutant_caught += test::same_outputs(before, late, buffers) != "";
    }
    CHECK(mutant_caught >= 3);
}

TEST_CASE("split_at_data_bounds leaves a loop whole where the bound differs between lanes, or the loop is short",
          "[passes][split_at_data_bounds]") {
    const kir::Kernel shape = bounded_kernel(100, i32(0), const_true());
    // A bound loaded per lane: the split point would differ between lanes.
    const Expr per_lane = test::guarded_load(shape, "n", {test::lane()});
    kir::Kernel varying = bounded_kernel(100, per_lane, var("t") < var("n.bound"));
    const kir::Kernel varying_before = varying;
    split_at_data_bounds(varying);
    REQUIRE_SAME_IR(varying.body, varying_before.body);
    // 64 iterations: a drain's few steps, left whole.
    const Expr n = test::guarded_load(shape, "n", {i32(0)});
    kir::Kernel short_loop = bounded_kernel(64, n, var("t") < var("n.bound") + test::lane());
    const kir::Kernel short_before = short_loop;
    split_at_data_bounds(short_loop);
    REQUIRE_SAME_IR(short_loop.body, short_before.body);
}
