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
    REQUIRE_THROWS_WITH(k.X.vectorize(nope, 2), Contains("vectorize: unknown loop variable 'nope'"));
    REQUIRE_THROWS_WITH(k.X.vectorize(k.q, 4), Contains("X.vectorize(q, 4): two instances are packed to a warp (lanes = 2), not 4"));
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
    REQUIRE_THROWS_WITH(k.X.space_time_transform({k.c, k.q}, {k.t}, {1, 1}), Contains("one or two space loops, then the time loop"));
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

TEST_CASE("every example parameter has a range, and a value outside it is an error, not a truncation", "[language][errors]") {
    // (int)99999999999 is 1215752191: the examples must refuse it rather than build that.
    for (const char *spec : {"conv1d_sbm", "conv1d_fbs_stride2", "conv2d_sbm", "conv2d_ssam", "fir_stride2", "matmul", "matvec",
                             "stencil2d_5pt"}) {
        Params defaults;
        build_spec(spec, defaults);
        REQUIRE_FALSE(defaults.declarations().empty());
        for (const Params::Declaration &d : defaults.declarations()) {
            CHECK(d.min <= d.default_value);
            CHECK(d.default_value <= d.max);
            for (int64_t value : {d.max + 1, d.min - 1, int64_t(99999999999)}) {
                if (value >= d.min && value <= d.max) continue;  // 99999999999 inside a range: nothing to refuse
                INFO(spec << " --param " << d.name << "=" << value);
                Params p;
                p.set(d.name, value);
                REQUIRE_THROWS_WITH(build_spec(spec, p),
                                    Contains("--param " + d.name + "=" + std::to_string(value) + ": out of range; " + d.name +
                                             " must be in [" + std::to_string(d.min) + ", " + std::to_string(d.max) + "]"));
            }
        }
    }
}

TEST_CASE("Params checks ranges and records what the spec read", "[language]") {
    Params p;
    p.set("Q", 4294967301);
    p.set("C", -7);
    p.set("M", 2147483647);
    p.set("N", 99999999999);
    REQUIRE_THROWS_AS(p.get_int("Q", 5), CompileError);
    REQUIRE_THROWS_WITH(p.get_int("Q", 5), Contains("--param Q=4294967301: out of range; Q must be in [-2147483648, 2147483647] (default 5)"));
    REQUIRE_THROWS_WITH(p.get_int("N", 16, 1, 4096), Contains("--param N=99999999999: out of range; N must be in [1, 4096] (default 16)"));
    CHECK(p.get_int("C", 16) == -7);
    REQUIRE_THROWS_WITH(p.get_int("C", 16, 0, 8), Contains("C must be in [0, 8]"));
    CHECK(p.get_int("M", 0) == 2147483647);
    CHECK(p.get("unset", 16, 1, 100) == 16);
    REQUIRE_THROWS_WITH(p.get("bad_default", 0, 1, 100), Contains("the spec's default 0 lies outside its range [1, 100]"));
    CHECK(p.unused().empty());
    REQUIRE(p.declarations().size() == 5);  // bad_default is refused, not recorded
    CHECK(p.declarations()[0].name == "Q");
    CHECK(p.declarations()[4].name == "unset");
    CHECK(p.declarations()[4].default_value == 16);
    CHECK(p.declarations()[4].max == 100);
    CHECK_THAT(p.describe(), Contains("N = 16 in [1, 4096], C = 16 in [-2147483648, 2147483647]"));
}

namespace {
// A lambda whose body has a comma outside any parentheses: the macro's
// builder argument is variadic, so this needs no extra parentheses.
PULSE_REGISTER_SPEC("test_comma_lambda", "a builder lambda with a top-level comma", [](const Params &params) {
    int taps = params.get_int("Q", 4, 1, 8), outputs = params.get_int("C", 8, 1, 64);
    Var c("c"), q("q"), s("s"), t("t");
    Input x(Float(32), 1, "x"), w(Float(32), 1, "w");
    Func X(Float(32), {c, q}, Place::Device, "X"), W(Float(32), {c, q}, Place::Device, "W"),
        Z(Float(32), {c, q}, Place::Device, "Z"), Out(Place::Device, "Out");
    X(c, q) = x(c + q);
    W(c, q) = select(c == 0, w(q), W(c - 1, q));
    Z(c, q) = select(q == 0, 0.0f, Z(c, q - 1)) + X(c, q) * W(c, q);
    Out(c) = select(q == taps - 1, Z(c, q));
    X.merge_ures(W, Z, Out).set_bounds(c, 0, outputs, q, 0, taps);
    X.space_time_transform({c, q}, {s, t}, {1, 1, 0, 1});
    return Spec{Out, {x, w}};
});
}  // namespace

TEST_CASE("PULSE_REGISTER_SPEC takes a lambda with a top-level comma", "[language]") {
    Params p;
    p.set("C", 5);
    ir::UreProgram program = build_spec("test_comma_lambda", p).output.lower();
    REQUIRE(program.loops.size() == 2);
    CHECK(program.loops[0].extent == 5);
    CHECK(program.loops[1].extent == 4);
}

TEST_CASE("an output left out of merge_ures is named, with the fix", "[language][errors]") {
    SECTION("Out forgotten") {
        Conv k;
        k.define();
        k.X.merge_ures(k.W, k.Z).set_bounds(k.c, 0, 8, k.q, 0, 4);
        k.X.space_time_transform({k.c, k.q}, {k.s, k.t}, {1, 1, 0, 1});
        REQUIRE_THROWS_WITH(k.Out.lower(), Contains("output Out is not merged into a loop nest (it reads Z): add it to the "
                                                    "merge_ures call of the nest that computes it") &&
                                               Contains("X.merge_ures(W, Z, Out)"));
    }
    SECTION("merge_ures called on the output") {
        Conv k;
        k.define();
        REQUIRE_THROWS_WITH(k.Out.merge_ures(k.X, k.W, k.Z), Contains("Out is an output, which cannot own a loop nest") &&
                                                                  Contains("X.merge_ures(W, Z, Out)"));
    }
}
