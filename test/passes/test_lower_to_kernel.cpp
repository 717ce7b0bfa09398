// lower_to_kernel alone: a small systolic program (a running sum over q,
// built through the language) lowered to the kernel IR, compared node by node
// with the kernel its documentation promises (LowerToKernel.h): one warp per
// array instance, lane l running PE l, the time loop unrolled into SSA lets,
// a value moving dp PEs a shuffle by dp, stores under the step's activity
// test and the output's bounds. The kernel then runs on the executor against
// the reference interpreter.
#include "passes/PassTest.h"

#include "lower/LowerToKernel.h"
#include "lower/Pipeline.h"
#include "pulse/pulse.h"

using namespace pulse;
using Halide::Expr;
using Halide::Float;
using Halide::Int;
using Halide::Bool;
using namespace Halide::Internal;

namespace {

/// Z(i, q) = sum of x(i + q') over q' <= q; Out(i) = Z(i, 2); i in [0, 5), q in
/// [0, 3), under the transform (s, t) = (i + move * q, q).
ir::UreProgram running_sum(int move) {
    pulse::Var i("i"), q("q"), s("s"), t("t");
    Input x(Float(32), 1, "x");
    pulse::Func Z(Float(32), {i, q}, Place::Device, "Z"), Out(Place::Device, "Out");
    Z(i, q) = pulse::select(q == 0, 0.0f, Z(i, q - 1)) + x(i + q);
    Out(i) = pulse::select(q == 2, Z(i, q));
    Z.merge_ures(Out).set_bounds(i, 0, 5, q, 0, 3);
    Z.space_time_transform({i, q}, {s, t}, {1, move, /**/ 0, 1});
    return Out.lower();
}

Expr f32(const std::string &name) { return test::var(name, Float(32)); }

/// x at `c` and a store of Out at `c`, each under its bounds guard.
Expr load_x(const kir::Kernel &k, const Expr &c) { return test::guarded_load(k, "x", {c}); }
Stmt store_out(const kir::Kernel &k, const Expr &value, const Expr &c) { return test::guarded_store(k, "Out", value, {c}); }

/// PEs first..last (lanes at or past `pes` idle) are active at the last step.
Expr active(int first, int last, int pes) {
    Expr lane = test::lane();
    return ((first <= lane) && (lane <= last)) && (lane < pes);
}

std::string run_against_reference(const kir::Kernel &kernel, const ir::UreProgram &program) {
    return execute_against_reference(kernel, program, 5);
}

}  // namespace

TEST_CASE("lower_to_kernel maps PEs to lanes and unrolls the time loop into lets", "[passes][lower_to_kernel]") {
    // s = i: every PE keeps its own sum; nothing moves between lanes.
    const ir::UreProgram program = running_sum(0);
    const kir::Kernel kernel = lower_to_kernel(compile_to_systolic(program), "sum", {"x"});
    CHECK(kernel.pe_count == 5);
    CHECK(kernel.pes_per_lane == 1);
    CHECK(kernel.warps_per_array == 1);
    CHECK(kernel.grid.empty());  // no loop outside the array: one instance, one warp
    REQUIRE(kernel.buffers.size() == 2);
    CHECK((kernel.buffers[0].name == "x" && !kernel.buffers[0].is_output));
    CHECK((kernel.buffers[1].name == "Out" && kernel.buffers[1].is_output));
    const Expr lane = test::lane();
    // Step t reads x(i + t) on PE i = lane; the sum stays in its lane's let.
    const Stmt expected = test::instance(
        LetStmt::make("Z.t0", 0.0f + load_x(kernel, lane),
        LetStmt::make("Z.t1", f32("Z.t0") + load_x(kernel, lane + 1),
        LetStmt::make("active.t2", active(0, 4, 5),
        LetStmt::make("Z.t2", f32("Z.t1") + load_x(kernel, lane + 2),
        IfThenElse::make(Variable::make(Bool(), "active.t2"), store_out(kernel, f32("Z.t2"), lane)))))));
    REQUIRE_SAME_IR(kernel.body, expected);
    CHECK(run_against_reference(kernel, program) == "");
}

TEST_CASE("lower_to_kernel moves a value one PE per step by a shuffle", "[passes][lower_to_kernel]") {
    // s = i + q: the sum migrates one PE per step (dp = 1, dt = 1), so PE p at
    // step t adds x(p) to what PE p - 1 held at step t - 1; 7 PEs, the output
    // of PE p is Out(p - 2), stored by PEs 2..6 at the last step.
    const ir::UreProgram program = running_sum(1);
    const kir::Kernel kernel = lower_to_kernel(compile_to_systolic(program), "sum", {"x"});
    CHECK(kernel.pe_count == 7);
    const Expr lane = test::lane();
    const Expr up = make_const(Int(32), 1);
    const Stmt expected = test::instance(
        LetStmt::make("Z.t0", 0.0f + load_x(kernel, lane),
        LetStmt::make("Z.t0.up1", kir::shuffle(kir::intrinsic::shfl_up, f32("Z.t0"), up),
        LetStmt::make("Z.t1", f32("Z.t0.up1") + load_x(kernel, lane),
        LetStmt::make("active.t2", active(2, 6, 7),
        LetStmt::make("Z.t1.up1", kir::shuffle(kir::intrinsic::shfl_up, f32("Z.t1"), up),
        LetStmt::make("Z.t2", f32("Z.t1.up1") + load_x(kernel, lane),
        IfThenElse::make(Variable::make(Bool(), "active.t2"), store_out(kernel, f32("Z.t2"), lane + -2)))))))));
    REQUIRE_SAME_IR(kernel.body, expected);
    CHECK(run_against_reference(kernel, program) == "");
}

TEST_CASE("lower_to_kernel refuses an array wider than a warp can run", "[passes][lower_to_kernel]") {
    // 300 PEs: more than 8 per lane of one warp, and no gpu_threads to spread them.
    pulse::Var i("i"), s("s"), t("t");
    Input x(Float(32), 1, "x");
    pulse::Func Out(Float(32), {i}, Place::Device, "Out");
    Out(i) = x(i) * 2.0f;
    Out.set_bounds(i, 0, 300);
    Out.space_time_transform({i}, {s, t}, {1, /**/ 0});
    REQUIRE_THROWS_WITH(lower_to_kernel(compile_to_systolic(Out.lower()), "wide", {"x"}),
                        Catch::Contains("a warp runs at most 256 (8 per lane)"));
}
