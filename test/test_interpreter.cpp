// The reference interpreter's edge cases: reads of undefined values, reads
// outside the domain, outputs written twice or never, the reference order.
#include "TestUtil.h"

#include "ReferenceOrder.h"

using namespace pulse;
using Catch::Matchers::Contains;

namespace {
Buffers inputs_for(const Func &out, uint32_t seed = 1) { return random_inputs(out.lower(), seed); }
}  // namespace

TEST_CASE("reading a value a select left undefined is an error naming the URE and the point", "[interpreter]") {
    Var c("c"), q("q");
    Input x(Float(32), 1, "x");
    Func A(Float(32), {c, q}, "A"), B(Float(32), {c, q}, "B"), Out(Place::Host, "Out");
    A(c, q) = select(q == 0, x(c));                           // undefined for q > 0
    B(c, q) = select(q == 0, 0.0f, A(c, q - 1));              // reads A(c, 0) at q = 1: fine; A(c, 1) at q = 2: undefined
    Out(c) = select(q == 2, B(c, q));
    A.merge_ures(B, Out).set_bounds(c, 0, 4, q, 0, 3);
    REQUIRE_THROWS_WITH(Out.realize(inputs_for(Out)),
                        Contains("B at (q=2, c=0) reads A(c, q - 1) = A(q=1, c=0), which its select left undefined"));
}

TEST_CASE("reading outside the domain is an error naming the point", "[interpreter]") {
    Var c("c"), q("q");
    Input x(Float(32), 1, "x");
    Func A(Float(32), {c, q}, "A"), Out(Place::Host, "Out");
    A(c, q) = x(c) + A(c - 1, q);  // no guard at c = 0
    Out(c) = select(q == 0, A(c, q));
    A.merge_ures(Out).set_bounds(c, 0, 4, q, 0, 2);
    REQUIRE_THROWS_WITH(Out.realize(inputs_for(Out)),
                        Contains("A at (q=0, c=0) reads A(c - 1, q) = A(q=0, c=-1), which is outside the domain") &&
                            Contains("guard the call with a select"));
}

TEST_CASE("an output element written twice or never is an error", "[interpreter]") {
    Var c("c"), q("q");
    Input x(Float(32), 1, "x");
    SECTION("twice") {
        Func A(Float(32), {c, q}, "A"), Out(Place::Host, "Out");
        A(c, q) = x(c + q);
        Out(c) = select(q >= 1, A(c, q));
        A.merge_ures(Out).set_bounds(c, 0, 4, q, 0, 3);
        REQUIRE_THROWS_WITH(Out.realize(inputs_for(Out)), Contains("output Out(0) is written twice: at (q=1, c=0) and at (q=2, c=0)"));
    }
    SECTION("never") {
        Func A(Float(32), {c, q}, "A"), Out(Place::Host, "Out");
        A(c, q) = x(c + q);
        Out(c) = select(q == 0 && c < 3, A(c, q));
        A.merge_ures(Out).set_bounds(c, 0, 4, q, 0, 3);
        REQUIRE_THROWS_WITH(Out.realize(inputs_for(Out)), Contains("output Out(3) is never written"));
    }
}

TEST_CASE("an input buffer that is too small is an error", "[interpreter]") {
    Var c("c"), q("q");
    Input x(Float(32), 1, "x");
    Func A(Float(32), {c, q}, "A"), Out(Place::Host, "Out");
    A(c, q) = x(c + q);
    Out(c) = select(q == 0, A(c, q));
    A.merge_ures(Out).set_bounds(c, 0, 4, q, 0, 3);
    Buffers in;
    in["x"] = Halide::Buffer<float>(4);
    REQUIRE_THROWS_WITH(Out.realize(in), Contains("reads input x at index 4 in dimension 0, outside its buffer [0, 3]"));
    in.clear();
    REQUIRE_THROWS_WITH(Out.realize(in), Contains("no buffer given for input x"));
    in["x"] = Halide::Buffer<int>(10);
    REQUIRE_THROWS_WITH(Out.realize(in), Contains("the buffer for input x is int32 1-D, but the spec reads float32 1-D"));
}

TEST_CASE("the reference order runs a loop downwards when its dependences need it", "[interpreter]") {
    ir::UreProgram fsm = build_spec("conv1d_fsm", test::params({{"C", 5}, {"Q", 3}, {"B", 1}})).output.lower();
    REQUIRE(reference_order_text(fsm) == "for b up, for q down, for c up");
    ir::UreProgram bfs = build_spec("conv1d_bfs", test::params({{"C", 5}, {"Q", 3}, {"B", 1}})).output.lower();
    // X(c - 1, q + 1) and Z(c, q - 1) need opposite q directions: c goes outside q.
    REQUIRE(reference_order_text(bfs) == "for b up, for c up, for q up");
}

TEST_CASE("UREs that no sequential order computes are rejected", "[interpreter]") {
    Var c("c"), q("q");
    Input x(Float(32), 1, "x");
    Func A(Float(32), {c, q}, "A"), B(Float(32), {c, q}, "B"), Out(Place::Host, "Out");
    A(c, q) = select(c == 0 || q == 0, x(c), B(c - 1, q + 1));
    B(c, q) = select(c == 0 || q == 3, x(q), A(c + 1, q - 1));
    Out(c) = select(q == 0, A(c, q) + B(c, q));
    A.merge_ures(B, Out).set_bounds(c, 0, 4, q, 0, 4);
    REQUIRE_THROWS_WITH(Out.lower(), Contains("no sequential order computes the UREs of A"));
}

TEST_CASE("integer UREs wrap like int32 and divide like Halide", "[interpreter]") {
    Var c("c"), q("q");
    Input x(Int(32), 1, "x");
    Func A(Int(32), {c, q}, "A"), Out(Place::Host, "Out");
    A(c, q) = select(q == 0, x(c), A(c, q - 1) * 1000 + (x(c) - 7) / 4 + (x(c) - 7) % 4);
    Out(c) = select(q == 3, A(c, q));
    A.merge_ures(Out).set_bounds(c, 0, 4, q, 0, 4);
    Halide::Buffer<int> in(4);
    for (int i = 0; i < 4; i++) in(i) = 1 + 3 * i;
    Buffers out = Out.realize({{"x", in}});
    for (int i = 0; i < 4; i++) {
        int32_t v = in(i);
        int32_t num = in(i) - 7;
        int32_t div = num >= 0 ? num / 4 : -((-num + 3) / 4), mod = num - 4 * div;
        for (int k = 0; k < 3; k++) v = (int32_t)((uint32_t)v * 1000u + (uint32_t)(div + mod));
        REQUIRE(test::at(out.at("Out"), {i}) == v);
    }
}
