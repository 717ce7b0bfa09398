// vote_uniform_tests (lower/VoteUniformTests.h) alone, on kernels built by
// hand: a test the same on every lane around a lane exchange becomes a warp
// vote (kir::warp_all of the test); a test that differs between lanes, one
// around no exchange, and one inside a serial loop stay as they are. The
// kernel executor runs the vote as a vote (true only if every lane's test
// holds), so the kernels before and after agree only if the wrapped tests are
// the same on every lane.
#include "passes/PassTest.h"

#include "lower/VoteUniformTests.h"

using namespace pulse;
using namespace Halide;
using namespace Halide::Internal;

namespace {

using test::var;

/// Instance b (warp b) shifts x[b*32 + lane] one lane up and stores it to
/// Out at the same place, under `test`; `wrap` puts the statement in a loop.
kir::Kernel shift_kernel(const Expr &test, bool in_loop = false) {
    kir::Kernel k;
    k.name = "vote_test";
    k.buffers = {test::buffer_arg("x", Int(32), 1, false), test::buffer_arg("Out", Int(32), 1, true)};
    k.grid.push_back({"b", 0, (kir::buffer_extent("Out", 0) + 31) / 32});
    k.pe_count = 32;
    Expr i = var("b") * 32 + test::lane();
    Stmt store = test::guarded_store(k, "Out", var("x.up") + var("r"), {i});
    Stmt body = test::lets({{"x.t0", test::guarded_load(k, "x", {i})}, {"x.up", kir::lane_shift(var("x.t0"), 1)}}, store);
    body = IfThenElse::make(test, body);
    if (in_loop) body = test::serial("r", 0, 2, body);
    else body = LetStmt::make("r", make_const(Int(32), 0), body);
    k.body = LetStmt::make("b", cast(Int(32), kir::warp_index()), test::instance(body));
    return k;
}

/// The if statement of a kernel from shift_kernel.
const IfThenElse *the_if(const kir::Kernel &k) {
    class Find : public IRVisitor {
    public:
        const IfThenElse *found = nullptr;
        using IRVisitor::visit;
        void visit(const IfThenElse *op) override {
            if (!found) found = op;
            IRVisitor::visit(op);
        }
    } find;
    k.body.accept(&find);
    REQUIRE(find.found);
    return find.found;
}

Buffers buffers_for(const kir::Kernel &k, uint32_t seed) { return test::make_buffers(k, {{"x", {101}}, {"Out", {101}}}, seed); }

}  // namespace

TEST_CASE("vote_uniform_tests: a uniform test around a lane exchange becomes a warp vote", "[passes]") {
    const Expr test = var("b") < 3;  // instances 0..2 of 4 run
    kir::Kernel k = shift_kernel(test);
    kir::Kernel voted = k;
    vote_uniform_tests(voted);
    REQUIRE_SAME_IR(voted.body, shift_kernel(kir::warp_all(test)).body);
    CHECK(test::same_outputs(k, voted, buffers_for(k, 1)) == "");
}

TEST_CASE("vote_uniform_tests: tests that differ between lanes, guard no exchange or sit in a loop stay", "[passes]") {
    // (A lane exchange under a test that differs between lanes breaks the
    // kernel IR's contract, so that kernel is compared, not run.)
    for (const kir::Kernel &k : {shift_kernel(test::lane() < 17), shift_kernel(var("b") < 3, true)}) {
        kir::Kernel after = k;
        vote_uniform_tests(after);
        REQUIRE_SAME_IR(after.body, k.body);
    }
    kir::Kernel looped = shift_kernel(var("b") < 3, true), looped_after = looped;
    vote_uniform_tests(looped_after);
    CHECK(test::same_outputs(looped, looped_after, buffers_for(looped, 2)) == "");
    // No lane exchange under the test: a plain store.
    kir::Kernel k = shift_kernel(var("b") < 3);
    const Expr i = var("b") * 32 + test::lane();
    k.body = LetStmt::make("b", cast(Int(32), kir::warp_index()),
                           test::instance(IfThenElse::make(var("b") < 3, test::guarded_store(k, "Out", test::guarded_load(k, "x", {i}), {i}))));
    kir::Kernel after = k;
    vote_uniform_tests(after);
    REQUIRE_SAME_IR(after.body, k.body);
}

TEST_CASE("vote_uniform_tests: the executor runs a vote as a vote", "[passes]") {
    // A vote on a test that differs between warps' lanes: the warp whose
    // lanes all pass runs the branch, the others skip it.
    kir::Kernel k = shift_kernel(var("b") < 3);
    kir::Kernel voted = shift_kernel(kir::warp_all(var("b") * 32 + test::lane() < 80));  // instances 0 and 1 only
    CHECK(test::same_outputs(k, voted, buffers_for(k, 3)) != "");
    kir::Kernel two = shift_kernel(var("b") < 2);
    CHECK(test::same_outputs(two, voted, buffers_for(k, 3)) == "");
    CHECK(the_if(voted)->condition.as<Call>()->name == kir::intrinsic::warp_all);
}
