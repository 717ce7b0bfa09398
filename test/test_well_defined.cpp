// Ill-defined specs are refused before any code is made from them (every
// backend goes through compile_to_systolic): a recurrence with no base case,
// a read of a value a select leaves undefined, an output written twice, an
// output element never written.
#include "lower/Pipeline.h"
#include "TestUtil.h"

using namespace pulse;
using Catch::Matchers::Contains;

namespace {

/// A 1-D convolution whose parts the cases below break one at a time.
enum class Break { Nothing, NoBaseCase, ReadsUndefined, WrittenTwice, NeverWritten };

ir::UreProgram conv1d(Break what) {
    const int C = 6, Q = 3;
    Var c("c"), q("q"), s("s"), t("t");
    Input x(Float(32), 1, "x"), w(Float(32), 1, "w");
    Func X(Float(32), {c, q}, Place::Device, "X"), W(Float(32), {c, q}, Place::Device, "W"),
        Z(Float(32), {c, q}, Place::Device, "Z"), Out(Place::Device, "Out");
    X(c, q) = x(c + q);
    // W is undefined at c == 0 when broken: Z reads it there.
    W(c, q) = what == Break::ReadsUndefined ? select(c > 0, w(q)) : Expr(select(c == 0, w(q), W(c - 1, q)));
    Z(c, q) = (what == Break::NoBaseCase ? Z(c, q - 1) : select(q == 0, 0.0f, Z(c, q - 1))) + X(c, q) * W(c, q);
    if (what == Break::WrittenTwice) Out(c) = select(q >= Q - 2, Z(c, q));          // q = Q - 2 and Q - 1
    else if (what == Break::NeverWritten) Out(c) = select(q == Q - 1 && c != 2, Z(c, q));  // Out(2) never
    else Out(c) = select(q == Q - 1, Z(c, q));
    X.merge_ures(W, Z, Out).set_bounds(c, 0, C, q, 0, Q);
    X.space_time_transform({c, q}, {s, t}, {1, 1, /**/ 0, 1});
    return Out.lower();
}

}  // namespace

TEST_CASE("a well-defined spec passes the check", "[well_defined]") {
    REQUIRE_NOTHROW(compile_to_systolic(conv1d(Break::Nothing)));
}

TEST_CASE("a recurrence with no base case is refused, naming the read outside the domain", "[well_defined]") {
    REQUIRE_THROWS_WITH(compile_to_systolic(conv1d(Break::NoBaseCase)),
                        Contains("is not well defined: Z reads Z(c, q - 1) at (c = ") && Contains("q = 0)") &&
                            Contains("outside the domain (is there a base case?)"));
}

TEST_CASE("a read where a select leaves the value undefined is refused", "[well_defined]") {
    REQUIRE_THROWS_WITH(compile_to_systolic(conv1d(Break::ReadsUndefined)),
                        Contains("Z reads W(c, q) at (c = 0") && Contains("where W is undefined"));
}

TEST_CASE("an output written twice is refused with the two points", "[well_defined]") {
    REQUIRE_THROWS_WITH(compile_to_systolic(conv1d(Break::WrittenTwice)),
                        Contains("output Out is written twice, at (c = ") && Contains("q = 1)") && Contains("q = 2)"));
}

TEST_CASE("an output element never written is refused", "[well_defined]") {
    REQUIRE_THROWS_WITH(compile_to_systolic(conv1d(Break::NeverWritten)),
                        Contains("element Out(2) of its box is never written"));
}

TEST_CASE("an output's box spans the bounds its select states on the array's loops", "[well_defined]") {
    // Out written for c < C - 1 only: its box is [0, C - 2], not an element short.
    const int C = 6, Q = 3;
    Var c("c"), q("q"), s("s"), t("t");
    Input x(Float(32), 1, "x");
    Func Z(Float(32), {c, q}, Place::Device, "Z"), Out(Place::Device, "Out");
    Z(c, q) = select(q == 0, 0.0f, Z(c, q - 1)) + x(c + q);
    Out(c) = select(q == Q - 1 && c < C - 1, Z(c, q));
    Z.merge_ures(Out).set_bounds(c, 0, C, q, 0, Q);
    Z.space_time_transform({c, q}, {s, t}, {1, 1, /**/ 0, 1});
    ir::UreProgram program = Out.lower();
    REQUIRE_NOTHROW(compile_to_systolic(program));
    std::vector<ir::Loop> loops = program.output_loops(program.ure("Out"));
    CHECK(loops[program.loop_index("c")].min == 0);
    CHECK(loops[program.loop_index("c")].extent == C - 1);
    CHECK(loops[program.loop_index("q")].min == Q - 1);
    CHECK(loops[program.loop_index("q")].extent == 1);
}

TEST_CASE("a temporal tiling whose halo is too small is refused with the read that breaks", "[well_defined]") {
    // jacobi2d writes each tile's cells T from its sides; one more (OVERREACH)
    // reads U outside the cone of cells still exact after T steps.
    REQUIRE_NOTHROW(compile_to_systolic(build_spec("jacobi2d", test::params({{"T", 3}, {"PE", 16}, {"TH", 12}})).output.lower()));
    REQUIRE_THROWS_WITH(
        compile_to_systolic(build_spec("jacobi2d", test::params({{"T", 3}, {"PE", 16}, {"TH", 12}, {"OVERREACH", 1}})).output.lower()),
        Contains("Out reads U(x, y, t, bx, by) at (x = ") && Contains("t = 3") && Contains("where U is undefined"));
    // jacobi3d: the same in 3-D, the tile's planes a wavefront in the time loop.
    const Params tile3 = test::params({{"T", 2}, {"PE", 12}, {"TH", 7}, {"TZ", 8}});
    REQUIRE_NOTHROW(compile_to_systolic(build_spec("jacobi3d", tile3).output.lower()));
    Params over = tile3;
    over.set("OVERREACH", 1);
    REQUIRE_THROWS_WITH(compile_to_systolic(build_spec("jacobi3d", over).output.lower()),
                        Contains("Out reads U(x, y, z, t, bx, by, bz) at (x = ") && Contains("t = 2") &&
                            Contains("where U is undefined"));
}
