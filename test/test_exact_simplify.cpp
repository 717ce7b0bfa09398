// simplify_exact (ir/ExactSimplify.h) alone: Halide's simplifier without the
// rewrites that change a value's bits, and IndexArithmetic, which tells the
// index arithmetic it may still simplify freely.
#include <catch2/catch.hpp>

#include "ir/ExactSimplify.h"
#include "ir/IndexArithmetic.h"
#include "ir/KernelIR.h"

using namespace Halide;
using namespace Halide::Internal;
using pulse::simplify_exact;

namespace {

Expr var(Type t, const char *name) { return Variable::make(t, name); }
/// A value the simplifier knows nothing of: a call, as an input read is.
Expr value(Type t, const char *name) { return Call::make(t, name, {var(Int(32), "c")}, Call::Extern); }

}  // namespace

TEST_CASE("simplify_exact keeps float arithmetic as written", "[simplify]") {
    Expr a = value(Float(32), "a"), b = value(Float(32), "b");
    // Halide reassociates this to (b/a) + (b - a), rounded differently.
    Expr e = (b / a) - (a - b);
    CHECK(equal(simplify_exact(e), e));
    CHECK(!equal(simplify(e), e));
    // x * 0 and x - x are NaN for a NaN or infinite x.
    CHECK(equal(simplify_exact(a * 0.0f), a * 0.0f));
    CHECK(equal(simplify_exact(a - a), a - a));
    // select(a > b, a, b) is not max(a, b) when b is NaN.
    Expr pick = select(a > b, a, b);
    CHECK(simplify_exact(pick).as<Select>() != nullptr);
    CHECK(simplify(pick).as<Max>() != nullptr);
    // Exact folds still happen, inside the kept operations too.
    CHECK(equal(simplify_exact(select(const_true(), a, b) + b), a + b));
}

TEST_CASE("simplify_exact keeps int32 values from rewrites that assume no overflow", "[simplify]") {
    Expr x = value(Int(32), "x");
    // min(0, x + 25) -> min(x, -25) + 25 differs where x + 25 wraps.
    Expr e = min(0, x + 25);
    const Min *kept = simplify_exact(e).as<Min>();
    REQUIRE(kept != nullptr);
    CHECK((equal(simplify_exact(e), e) || equal(simplify_exact(e), min(x + 25, 0))));
    CHECK(simplify(e).as<Add>() != nullptr);
    // Constants fold with wrapping, not to Halide's overflow marker.
    CHECK(equal(simplify_exact(Expr(2147483647) + Expr(1)), Expr(-2147483647 - 1)));
    // Index arithmetic (loop variables and constants) is simplified as before.
    Expr c = var(Int(32), "c");
    CHECK(equal(simplify_exact((c + 3) + 4), c + 7));
    CHECK(equal(simplify_exact((c * 2) / 2), c));
    CHECK(equal(simplify_exact(c + 1 > c), const_true()));
}

TEST_CASE("IndexArithmetic tells indices from values through lets", "[simplify]") {
    Expr lane = var(Int(32), pulse::kir::lane_var);
    Expr loaded = pulse::kir::load(Int(32), "x", const_true(), {lane});
    Stmt body = LetStmt::make("i", lane + 1, LetStmt::make("v", loaded, LetStmt::make("w", var(Int(32), "v") * 2, Evaluate::make(0))));
    pulse::IndexArithmetic indices(body);
    CHECK(indices.is_index(var(Int(32), "i") * 4 + lane));
    CHECK(!indices.is_index(var(Int(32), "v") + 1));
    CHECK(!indices.is_index(var(Int(32), "w") + var(Int(32), "i")));
    CHECK(indices.reads_values(var(Int(32), "w")));
    // Constants alone are no index arithmetic (they may overflow).
    CHECK(!indices.is_index(Expr(2147483647) + Expr(1)));
    // A float converted to an integer is a value.
    CHECK(!indices.is_index(cast(Int(32), var(Float(32), "f")) + lane));
}
