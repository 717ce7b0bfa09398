// split_steady_state (lower/SplitSteadyState.h) on kernels built by hand: a
// rolled loop whose lanes start and end at steps skewed by the lane (a mesh
// filling and draining) is split into its two ramps, which keep their
// conditions, and a steady loop of its own variable where each comparison
// of step and lane is the constant it is over the steady range and every
// lane; loops without such comparisons, with a short steady range, or whose
// steady loop would store, stay whole; the outputs are the same on the executor.
#include "passes/PassTest.h"

#include "ir/ExactSimplify.h"
#include "lower/SplitSteadyState.h"

using namespace pulse;
using namespace Halide;
using namespace Halide::Internal;

namespace {

using test::var;
using test::i32;

/// Lane l sums x[t - l] over its `span` steps t in [l, l + span) (a skewed
/// accumulation, as a mesh's PE does) and stores the sum in Out[l] at its
/// last step. The conditions are parameters so that the expected steady
/// body can be written with them folded:
///   active: l <= t && t < l + span;  first: t == l;  last: t == l + span - 1.
Stmt skewed_block(const Expr &t, const Expr &active, const Expr &first, const Expr &last) {
    const kir::Kernel shape = [] {
        kir::Kernel k;
        k.buffers = {test::buffer_arg("x", Int(32), 1, false), test::buffer_arg("Out", Int(32), 1, true)};
        return k;
    }();
    Expr l = test::lane(), at = t - l;
    Expr carry = kir::register_load(Int(32), "Z.carry", 0);
    Expr z = select(first, i32(0), carry) + test::guarded_load(shape, "x", {at});
    Stmt store = IfThenElse::make(last && active, test::guarded_store(shape, "Out", var("Z.t0"), {l}));
    Stmt keep = IfThenElse::make(active, kir::register_store("Z.carry", var("Z.t0"), 0));
    return LetStmt::make("Z.t0", z, Block::make(store, keep));
}

kir::Kernel skewed_kernel(const Stmt &loop) {
    kir::Kernel k;
    k.name = "split_test";
    k.buffers = {test::buffer_arg("x", Int(32), 1, false), test::buffer_arg("Out", Int(32), 1, true)};
    k.pe_count = 32;
    k.body = test::instance(kir::allocate_registers("Z.carry", Int(32), 1, Block::make(kir::register_store("Z.carry", i32(0), 0), loop)));
    return k;
}

Stmt skewed_loop(const std::string &v, int min, int extent, int span) {
    Expr t = var(v), l = test::lane();
    return test::serial(v, min, extent, skewed_block(t, l <= t && t < l + span, t == l, t == l + (span - 1)));
}

}  // namespace

TEST_CASE("split_steady_state splits a skewed loop at its ramps and folds the steady loop's comparisons",
          "[passes][split_steady_state]") {
    // 32 lanes of 64 steps each: steps 0 .. 94. l <= t and t == l vary over
    // lanes on steps 0 .. 31, t < l + 64 and t == l + 63 on 63 .. 94; one
    // step more on each side: the steady range is 33 .. 61.
    const kir::Kernel before = skewed_kernel(skewed_loop("t", 0, 95, 64));
    kir::Kernel after = before;
    split_steady_state(after);  // the pass alone

    Expr t = var("t"), s = var("t.steady"), l = test::lane();
    Stmt ramp_up = test::serial("t", 0, 33, skewed_block(t, l <= t && t < l + 64, t == l, t == l + 63));
    // The steady body simplified by the pass: no select, no store, the carry kept unconditionally.
    Stmt steady = test::serial("t.steady", 33, 29,
                               simplify_exact(skewed_block(s, const_true() && const_true(), const_false(), const_false())));
    Stmt ramp_down = test::serial("t", 62, 33, skewed_block(t, l <= t && t < l + 64, t == l, t == l + 63));
    const kir::Kernel expected = skewed_kernel(Block::make({ramp_up, steady, ramp_down}));
    REQUIRE_SAME_IR(after.body, expected.body);

    // x shorter than the steps read, so the ramps' loads past it read 0.
    for (uint32_t seed : {1u, 2u}) {
        Buffers buffers = test::make_buffers(before, {{"x", {80}}, {"Out", {32}}}, seed);
        REQUIRE(test::same_outputs(before, after, buffers) == "");
    }
}

TEST_CASE("split_steady_state splits a loop that stores at one lane every step (a drain PE's row), the store under its lane test",
          "[passes][split_steady_state]") {
    // As above, but lane 31 stores every step it is active (a segment's last row).
    Expr t = var("t"), l = test::lane();
    const kir::Kernel before = skewed_kernel(test::serial("t", 0, 95, skewed_block(t, l <= t && t < l + 64, t == l, l == 31)));
    kir::Kernel after = before;
    split_steady_state(after);
    // Three loops; the steady one keeps lane 31's store under its lane test,
    // its activity test and first-step select folded away.
    std::ostringstream text;
    text << after.body;
    const std::string ir = text.str();
    const size_t steady = ir.find("for (t.steady, 33, 30)");
    REQUIRE(steady != std::string::npos);
    const std::string steady_loop = ir.substr(steady, ir.find("for (t, 63,") - steady);
    CHECK(steady_loop.find("if (lane == 31) {") != std::string::npos);
    CHECK(steady_loop.find("pulse.store(\"Out\"") != std::string::npos);
    CHECK(steady_loop.find("select(") == std::string::npos);
    CHECK(steady_loop.find("lane <= ") == std::string::npos);
    for (uint32_t seed : {1u, 2u}) {
        Buffers buffers = test::make_buffers(before, {{"x", {80}}, {"Out", {32}}}, seed);
        REQUIRE(test::same_outputs(before, after, buffers) == "");
    }
}

TEST_CASE("split_steady_state leaves a loop whole without a steady range of its length, or outside an instance",
          "[passes][split_steady_state]") {
    // 32 lanes of 16 steps over 0 .. 49: some lane starts or ends on every step but 48, 49.
    const kir::Kernel short_steady = skewed_kernel(skewed_loop("t", 0, 50, 16));
    kir::Kernel after = short_steady;
    split_steady_state(after);
    REQUIRE_SAME_IR(after.body, short_steady.body);

    // No comparison of the step: nothing singles out the ends.
    Expr t = var("t"), l = test::lane();
    const kir::Kernel plain = skewed_kernel(test::serial("t", 0, 95, skewed_block(t, l < 16, l == 0, l == 3)));
    after = plain;
    split_steady_state(after);
    REQUIRE_SAME_IR(after.body, plain.body);

    // An array that stores every step (a stream, not an output-stationary
    // array): its steady loop would store, so the loop stays whole.
    const kir::Kernel streaming = skewed_kernel(test::serial("t", 0, 95, skewed_block(t, l <= t && t < l + 64, t == l, const_true())));
    after = streaming;
    split_steady_state(after);
    REQUIRE_SAME_IR(after.body, streaming.body);

    // A loop outside the array instance (a per-thread loop) is not a time loop.
    kir::Kernel outside = skewed_kernel(Evaluate::make(0));
    outside.body = test::serial("r", 0, 95, Block::make(skewed_loop("t", 0, 95, 64), Evaluate::make(0)));
    outside.body = Block::make(outside.body, test::instance(Evaluate::make(0)));
    after = outside;
    split_steady_state(after);
    REQUIRE_SAME_IR(after.body, outside.body);
}
