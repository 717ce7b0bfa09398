// Every misuse of the language fails with a message that names the Func, the
// call and the problem.
#include "TestUtil.h"

using namespace pulse;
using Catch::Matchers::Contains;

namespace {

/// A well-formed 1-D convolution (SBM) to break one piece at a time.
struct Conv {
    Var c{"c"}, q{"q"}, s{"s"}, t{"t"};
    Input x{Float(32), 1, "x"}, w{Float(32), 1, "w"};
    Func X{Float(32), {c, q}, Place::Device, "X"}, W{Float(32), {c, q}, Place::Device, "W"},
        Z{Float(32), {c, q}, Place::Device, "Z"}, Out{Place::Device, "Out"};
    void define() {
        X(c, q) = x(c + q);
        W(c, q) = select(c == 0, w(q), W(c - 1, q));
        Z(c, q) = select(q == 0, 0.0f, Z(c, q - 1)) + X(c, q) * W(c, q);
        Out(c) = select(q == 3, Z(c, q));
    }
};

}  // namespace

TEST_CASE("a well-formed spec lowers", "[language]") {
    Conv k;
    k.define();
    k.X.merge_ures(k.W, k.Z, k.Out).set_bounds(k.c, 0, 8, k.q, 0, 4);
    k.X.space_time_transform({k.c, k.q}, {k.s, k.t}, {1, 1, 0, 1}, SpaceTimeTransform::CheckTime);
    ir::UreProgram p = k.Out.lower();
    REQUIRE(p.ures.size() == 4);
    REQUIRE(p.dependences.size() == 5);
    REQUIRE(p.schedule.transform->check_time);
    REQUIRE(p.schedule.transform->matrix == std::vector<std::vector<int64_t>>{{1, 1}, {0, 1}});
}

TEST_CASE("a recurrence call at a non-constant distance is rejected", "[language][errors]") {
    Conv k;
    k.X(k.c, k.q) = k.x(k.c + k.q);
    k.W(k.c, k.q) = select(k.c == 0, k.w(k.q), k.W(k.c - 1, k.q));
    k.Z(k.c, k.q) = select(k.q == 0, 0.0f, k.Z(k.c, k.q / 2)) + k.X(k.c, k.q) * k.W(k.c, k.q);
    k.Out(k.c) = select(k.q == 3, k.Z(k.c, k.q));
    k.X.merge_ures(k.W, k.Z, k.Out).set_bounds(k.c, 0, 8, k.q, 0, 4);
    REQUIRE_THROWS_WITH(k.Out.lower(), Contains("call Z(c, q/2) in the definition of Z") &&
                                           Contains("is not 'q' plus a constant") && Contains("not a uniform recurrence"));
}

TEST_CASE("unknown and repeated loop variables are rejected", "[language][errors]") {
    Conv k;
    k.define();
    k.X.merge_ures(k.W, k.Z, k.Out);
    Var nope("nope"), co("co"), ci("ci");
    REQUIRE_THROWS_WITH(k.X.tile(nope, co, ci, 4), Contains("X.tile: unknown loop variable 'nope'") && Contains("(c, q)"));
    REQUIRE_THROWS_WITH(k.X.reorder(k.c, k.c), Contains("X.reorder: loop variable 'c' is repeated"));
    REQUIRE_THROWS_WITH(k.X.gpu_blocks(nope), Contains("gpu_blocks: unknown loop variable 'nope'"));
    REQUIRE_THROWS_WITH(k.X.tile(k.c, k.q, ci, 4), Contains("loop variable 'q' is repeated"));
    REQUIRE_THROWS_WITH(k.X.set_bounds(nope, 0, 3), Contains("set_bounds: unknown loop variable 'nope'"));
    k.X.gpu_blocks(k.q);
    REQUIRE_THROWS_WITH(k.X.gpu_threads(k.q), Contains("'q' is repeated: it is already mapped to the GPU"));
    REQUIRE_THROWS_WITH(k.X.space_time_transform({k.c, k.q}, {k.c, k.t}, {1, 1, 0, 1}),
                        Contains("destination loop 'c' is repeated"));
}

TEST_CASE("Func with a repeated argument is rejected", "[language][errors]") {
    Var c("c");
    REQUIRE_THROWS_WITH(Func(Float(32), {c, c}, "Y"), Contains("Func Y(c, c): an argument is repeated"));
}

TEST_CASE("wrong arity is rejected for calls, definitions and input reads", "[language][errors]") {
    Conv k;
    REQUIRE_THROWS_WITH(Expr(k.W(k.c)), Contains("call to W: wrong number of arguments: 1 given, W has 2 (c, q)"));
    REQUIRE_THROWS_WITH(k.W(k.c) = k.w(k.c), Contains("definition of W: wrong number of arguments: 1 given"));
    REQUIRE_THROWS_WITH(k.x(k.c, k.q), Contains("input x has 1 dimension(s) but is read with 2 index(es)"));
    REQUIRE_THROWS_WITH(k.W(k.q, k.c) = k.w(k.c), Contains("defined as W(q, c) but declared as W(c, q)"));
    REQUIRE_THROWS_WITH(k.W(k.c + 1, k.q) = k.w(k.c), Contains("'c + 1' on the left-hand side must be a plain loop variable"));
}

TEST_CASE("mismatched types are rejected", "[language][errors]") {
    Conv k;
    REQUIRE_THROWS_WITH(k.W(k.c, k.q) = k.c + k.q,
                        Contains("definition of W: mismatched types: W is declared float32") && Contains("has type int32"));
}

TEST_CASE("a Func defined twice is rejected", "[language][errors]") {
    Conv k;
    k.X(k.c, k.q) = k.x(k.c + k.q);
    REQUIRE_THROWS_WITH(k.X(k.c, k.q) = k.x(k.c), Contains("Func X is defined twice"));
}

TEST_CASE("a missing bound is rejected", "[language][errors]") {
    Conv k;
    k.define();
    k.X.merge_ures(k.W, k.Z, k.Out).set_bounds(k.c, 0, 8);
    REQUIRE_THROWS_WITH(k.Out.lower(), Contains("missing bound for loop 'q' of X: add X.set_bounds(q, min, extent)"));
}

TEST_CASE("a transform matrix of the wrong shape is rejected", "[language][errors]") {
    Conv k;
    k.define();
    k.X.merge_ures(k.W, k.Z, k.Out).set_bounds(k.c, 0, 8, k.q, 0, 4);
    REQUIRE_THROWS_WITH(k.X.space_time_transform({k.c, k.q}, {k.s, k.t}, {1, 1, 0}),
                        Contains("the transform matrix has the wrong shape: 3 entries given, but 2 destination loops x 2 "
                                 "source loops need 4"));
    REQUIRE_THROWS_WITH(k.X.space_time_transform({k.c, k.q}, {k.s, k.t}, {1, 1, 0, 1}, {k.s}),
                        Contains("the reverse transform has 1 expressions; it needs one per source loop (2)"));
    REQUIRE_THROWS_WITH(k.X.space_time_transform({k.c, k.q}, {k.t}, {1, 1}), Contains("one space loop and one time loop"));
    k.X.space_time_transform({k.c, k.q}, {k.s, k.t}, {1, 1, 0, 1});
    REQUIRE_THROWS_WITH(k.X.space_time_transform({k.c, k.q}, {k.s, k.t}, {1, 1, 0, 1}),
                        Contains("X already has a space-time transform"));
}

TEST_CASE("merging and calling errors name the Funcs", "[language][errors]") {
    SECTION("a merged Func that is never defined") {
        Conv k;
        k.X(k.c, k.q) = k.x(k.c + k.q);
        k.X.merge_ures(k.W).set_bounds(k.c, 0, 8, k.q, 0, 4);
        REQUIRE_THROWS_WITH(k.X.lower(), Contains("Func W is merged into the loop nest of X but never defined"));
    }
    SECTION("a call to a Func that is not merged") {
        Conv k;
        k.define();
        k.X.merge_ures(k.Z, k.Out).set_bounds(k.c, 0, 8, k.q, 0, 4);
        REQUIRE_THROWS_WITH(k.X.lower(), Contains("Z calls W, which is not merged into the loop nest of X"));
    }
    SECTION("a same-point read of a later URE") {
        Conv k;
        k.X(k.c, k.q) = k.W(k.c, k.q);
        k.W(k.c, k.q) = k.w(k.q);
        k.X.merge_ures(k.W).set_bounds(k.c, 0, 8, k.q, 0, 4);
        REQUIRE_THROWS_WITH(k.X.lower(), Contains("reads W at the same point, but W does not come before X in merge order"));
    }
    SECTION("an output read by a URE") {
        Conv k;
        REQUIRE_THROWS_WITH(Expr(k.Out(k.c)), Contains("Out has no declared type and arguments, so it cannot be read"));
    }
    SECTION("a Func merged into two nests") {
        Conv k;
        Func A(Float(32), {k.c, k.q}, "A");
        k.X.merge_ures(k.W);
        REQUIRE_THROWS_WITH(A.merge_ures(k.W), Contains("W is already merged into the loop nest of X"));
    }
    SECTION("a variable that is not a loop") {
        Conv k;
        Var r("r");
        k.X(k.c, k.q) = k.x(k.c + r);
        k.X.set_bounds(k.c, 0, 8, k.q, 0, 4);
        REQUIRE_THROWS_WITH(k.X.lower(), Contains("definition of X uses variable 'r', which is not a loop of X(c, q)"));
    }
    SECTION("a non-affine input index") {
        Conv k;
        k.X(k.c, k.q) = k.x(k.c * k.q);
        k.X.set_bounds(k.c, 0, 8, k.q, 0, 4);
        REQUIRE_THROWS_WITH(k.X.lower(), Contains("index 'c*q' is not affine in the loop variables"));
    }
}

TEST_CASE("schedule arguments are checked", "[language][errors]") {
    Conv k;
    k.define();
    Var co("co"), ci("ci");
    k.X.merge_ures(k.W, k.Z, k.Out).set_bounds(k.c, 0, 10, k.q, 0, 4);
    REQUIRE_THROWS_WITH(k.X.tile(k.c, co, ci, 0), Contains("the factor must be positive"));
    REQUIRE_THROWS_WITH(k.X.set_bounds(k.q, 0, 4), Contains("loop 'q' is bounded twice"));
    k.X.tile(k.c, co, ci, 4).reorder(ci, k.q, co).gpu_blocks(co);
    // A factor that does not divide the extent leaves a partial last tile, guarded in the kernel.
    REQUIRE_NOTHROW(k.Out.lower());
    k.x.in(k.X).compute_at(k.X, co).store_in(MemoryType::Register);
    REQUIRE_THROWS_WITH(k.x.in(k.X).compute_at(k.X, k.c), Contains("compute_at: unknown loop variable 'c'"));
}

TEST_CASE("schedule primitives are recorded with their arguments", "[language]") {
    Conv k;
    k.define();
    Var co("co"), ci("ci");
    k.X.merge_ures(k.W, k.Z, k.Out).set_bounds(k.c, 0, 16, k.q, 0, 4);
    k.X.tile(k.c, co, ci, 8).reorder(ci, k.q, co).gpu_blocks(co).gpu_threads(ci);
    k.w.in(k.W).compute_at(k.X, co).store_in(MemoryType::Shared);
    k.X.space_time_transform({ci, k.q}, {k.s, k.t}, {1, 1, 0, 1});
    ir::UreProgram p = k.Out.lower();
    REQUIRE(p.schedule.tiles.size() == 1);
    REQUIRE(p.schedule.tiles[0].outer == "co");
    REQUIRE(p.schedule.tiles[0].factor == 8);
    REQUIRE(p.schedule.reorder == std::vector<std::string>{"ci", "q", "co"});
    REQUIRE(p.schedule.gpu_blocks == std::vector<std::string>{"co"});
    REQUIRE(p.schedule.gpu_threads == std::vector<std::string>{"ci"});
    REQUIRE(p.schedule.stagings.size() == 1);
    REQUIRE(p.schedule.stagings[0].source == "w");
    REQUIRE(*p.schedule.stagings[0].memory == MemoryType::Shared);
    REQUIRE(*p.schedule.stagings[0].compute_at_loop == "co");
    REQUIRE(p.schedule.transform->source_loops == std::vector<std::string>{"ci", "q"});
}

TEST_CASE("a spec parameter that does not fit int is an error, not a truncation", "[language][errors]") {
    // (int)4294967301 is 5: the examples must reject it rather than build Q = 5.
    struct Case {
        const char *spec;
        std::vector<const char *> names;
    };
    const std::vector<Case> cases = {{"conv1d_sbm", {"C", "Q", "B"}},      {"conv1d_fbs_stride2", {"C", "Q", "B"}},
                                     {"fir_stride2", {"C", "K", "B"}},     {"matmul", {"I", "J", "K", "N"}},
                                     {"matvec", {"I", "J", "N"}}};
    for (const Case &c : cases) {
        for (const char *name : c.names) {
            for (int64_t value : {int64_t(4294967301), int64_t(-2147483649), int64_t(2147483648)}) {
                INFO(c.spec << " --param " << name << "=" << value);
                Params p;
                p.set(name, value);
                REQUIRE_THROWS_WITH(build_spec(c.spec, p), Contains(std::string("parameter ") + name) &&
                                                               Contains(std::to_string(value)) &&
                                                               Contains("[-2147483648, 2147483647]"));
            }
        }
    }
}

TEST_CASE("Params::get_int checks the range of int", "[language]") {
    Params p;
    p.set("Q", 4294967301);
    p.set("C", -7);
    p.set("M", 2147483647);
    REQUIRE_THROWS_AS(p.get_int("Q", 5), CompileError);
    REQUIRE_THROWS_WITH(p.get_int("Q", 5), Contains("parameter Q = 4294967301 does not fit in int") &&
                                               Contains("[-2147483648, 2147483647]"));
    CHECK(p.get_int("C", 16) == -7);
    CHECK(p.get_int("M", 0) == 2147483647);
    CHECK(p.get_int("unset", 16) == 16);
    CHECK(p.unused().empty());
}
