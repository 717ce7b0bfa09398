// simplify_exact (ir/ExactSimplify.h) alone: Halide's simplifier without the
// rewrites that change a value's bits, and IndexArithmetic, which tells the
// index arithmetic it may still simplify freely.
#include <catch2/catch.hpp>

#include "ir/Affine.h"
#include "ir/ExactSimplify.h"
#include "ir/IndexArithmetic.h"
#include "ir/KernelIR.h"
#include "ir/UreProgram.h"

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

TEST_CASE("simplify_exact wraps conversions of constants, also once a let or a peeled select makes them constant", "[simplify]") {
    // uint32 4 - 5 is 2^32 - 1; to int32 it is -1, not Halide's overflow marker.
    Expr big = make_const(UInt(32), 4294967295u);
    CHECK(equal(simplify_exact(Cast::make(Int(32), big)), Expr(-1)));
    CHECK(equal(simplify_exact(Cast::make(Int(32), make_const(Int(64), int64_t(1) << 32) + 5)), Expr(5)));
    // The constant reaches the conversion through a let, and through a select
    // of a constant condition inside a let (a peeled first step).
    Expr u = var(UInt(32), "u");
    Stmt through_let = LetStmt::make("u", big, Evaluate::make(Cast::make(Int(32), u) % 10007));
    CHECK((equal(simplify_exact(through_let), Evaluate::make(Expr(-1) % 10007)) ||
           equal(simplify_exact(through_let), Evaluate::make(Expr(10006)))));
    Expr chosen = select(var(Int(32), "t") < 1, make_const(UInt(32), 5), value(UInt(32), "carry"));
    Stmt peeled = LetStmt::make("t", 0, LetStmt::make("u", chosen, Evaluate::make(Cast::make(Int(32), make_const(UInt(32), 4) - u) + value(Int(32), "y"))));
    class FindOverflow : public IRVisitor {
    public:
        bool found = false;
        using IRVisitor::visit;
        void visit(const Call *op) override {
            found |= op->name == "signed_integer_overflow" || is_signed_integer_overflow(op);
            IRVisitor::visit(op);
        }
    } find;
    simplify_exact(peeled).accept(&find);
    CHECK(!find.found);
    simplify(peeled).accept(&find);
    CHECK(find.found);  // what Halide alone makes of it
}

TEST_CASE("simplify_exact never chains ifs whose conditions a later if does not exclude", "[simplify]") {
    // Halide 14 turns these three into `if (lane < 2) .. else if (30 <= lane)
    // .. else if (lane < 1)`, which never stores 3.
    Expr lane = var(Int(32), "lane");
    auto store = [](int v) { return Store::make("b", v, v, Parameter(), const_true(), ModulusRemainder()); };
    Stmt three = Block::make({IfThenElse::make(lane < 2, store(1)), IfThenElse::make(30 <= lane, store(2)), IfThenElse::make(lane < 1, store(3))});
    auto stores_at = [&](const Stmt &s, int lane_value) {
        // Which of the stores run for one lane: the conditions folded.
        std::vector<int> run;
        std::function<void(const Stmt &)> walk = [&](const Stmt &x) {
            if (const Block *b = x.as<Block>()) {
                walk(b->first);
                walk(b->rest);
            } else if (const IfThenElse *i = x.as<IfThenElse>()) {
                Expr c = simplify(substitute("lane", Expr(lane_value), i->condition));
                if (is_const_one(c)) walk(i->then_case);
                else if (i->else_case.defined()) walk(i->else_case);
            } else if (const Store *st = x.as<Store>()) {
                run.push_back((int)*as_const_int(st->value));
            }
        };
        walk(s);
        return run;
    };
    CHECK(stores_at(simplify_exact(three), 0) == std::vector<int>{1, 3});
    CHECK(stores_at(simplify(three), 0) == std::vector<int>{1});  // Halide 14 alone
    CHECK(stores_at(simplify_exact(three), 31) == std::vector<int>{2});
    // Ifs of one condition still merge.
    Stmt same = Block::make(IfThenElse::make(lane < 2, store(1)), IfThenElse::make(lane < 2, store(2)));
    CHECK(simplify_exact(same).as<IfThenElse>() != nullptr);
}

TEST_CASE("varies_with sees a variable that cancels in integer sums", "[simplify]") {
    Expr s = var(Int(32), "s"), t = var(Int(32), "t");
    // Halide's simplifier leaves this as written; it does not depend on s.
    Expr cancelled = (s * 2) + ((s * -2) - t);
    CHECK(equal(simplify(cancelled), cancelled));
    CHECK(!pulse::varies_with(cancelled, "s"));
    CHECK(!pulse::varies_with(value(Int(32), "x") + cast(Int(64), cancelled) * 3, "s"));
    CHECK(pulse::varies_with(s * 2 + t, "s"));
    CHECK(pulse::varies_with((s * 2 + t) / 2 - s, "s"));  // under a division: looked into, and s is there
    CHECK(pulse::varies_with(cast(Int(64), s * 2) - cast(Int(64), s) * 2, "s"));  // a widening conversion of what wraps
    CHECK(!pulse::varies_with(cast(Int(8), s * 256) + t, "s"));  // s * 256 is 0 modulo 2^8
    CHECK(pulse::varies_with(select(s < 3, t, t + 1), "s"));
    CHECK(!pulse::varies_with(select(s - s < 3, t, t + 1), "s"));
}

TEST_CASE("simplify_exact keeps a select's undefined branch where it is taken", "[simplify]") {
    // select(c, true, u) is undefined where c is false; Halide folds it to
    // c || u, which an evaluator finds undefined everywhere.
    const Expr c = var(Int(32), "i") % 3 != 0, u = pulse::ir::undefined_value(Bool());
    const Expr e = select(c, const_true(), u);
    CHECK(simplify(e).as<Select>() == nullptr);
    const Expr simplified = simplify_exact(e);
    const Select *kept = simplified.as<Select>();
    REQUIRE(kept != nullptr);
    CHECK(pulse::ir::is_undefined_value(kept->false_value));
    CHECK(equal(pulse::ir::defined_condition(simplify_exact(e)), simplify_exact(c)));
    // A constant condition still picks its branch.
    CHECK(equal(simplify_exact(select(const_true(), value(Int(16), "a"), pulse::ir::undefined_value(Int(16)))), value(Int(16), "a")));
    CHECK(pulse::ir::is_undefined_value(simplify_exact(select(const_false(), value(Int(16), "a"), pulse::ir::undefined_value(Int(16))))));
}

TEST_CASE("simplify_exact folds an operation whose operands become constants only in Halide's run", "[simplify]") {
    // min and max of int32 constants are folded by Halide, inside the
    // subtraction hidden from it (constants alone are not index arithmetic);
    // brought back, the subtraction and the sum around it are folded too:
    // a staged box's extent is a constant, not (5 - -31) + 1.
    const Expr e = (Min::make(Expr(5), Expr(7)) - Max::make(Expr(-31), Expr(-40))) + 1;
    const Expr r = simplify_exact(e);
    REQUIRE(as_const_int(r));
    CHECK(*as_const_int(r) == 37);
    // Folded with the language's wrapping: INT32_MAX + 1 is INT32_MIN.
    const Expr wraps = (Min::make(Expr(INT32_MAX), Expr(INT32_MAX)) - Max::make(Expr(-1), Expr(-2))) + 0;
    REQUIRE(as_const_int(simplify_exact(wraps)));
    CHECK(*as_const_int(simplify_exact(wraps)) == INT32_MIN);
}
