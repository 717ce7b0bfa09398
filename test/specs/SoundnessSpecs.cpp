// Specs outside the examples that once compiled to wrong kernels or exposed an
// inexact evaluator: each is a regression case for every evaluator and backend
// (the tests run them; the `soundness_specs` program runs them by hand).
#include "pulse/pulse.h"

using namespace pulse;

namespace {

/// A same-step copy chain whose root is computed in the same step from another
/// recurrence (W's root Y(c, q) + w(q) differs between PEs), read by a sum that
/// migrates: each PE must take the root of the PE at the head of its chain.
Spec chain_computed_root(const Params &params) {
    const int C = params.get_int("C", 8, 1, 32), Q = params.get_int("Q", 4, 1, 32);
    Var c("c"), q("q"), s("s"), t("t");
    Input x(Float(32), 1, "x"), w(Float(32), 1, "w");
    Func Y(Float(32), {c, q}, Place::Device, "Y"), W(Float(32), {c, q}, Place::Device, "W"),
        V(Float(32), {c, q}, Place::Device, "V"), Z(Float(32), {c, q}, Place::Device, "Z"), Out(Place::Device, "Out");
    Y(c, q) = x(c + q) * 2.0f;
    W(c, q) = select(c == 0, Y(c, q) + w(q), W(c - 1, q));
    V(c, q) = W(c, q);
    Z(c, q) = select(q == 0, 0.0f, Z(c, q - 1)) + x(c + q) * V(c, q);
    Out(c) = select(q == Q - 1, Z(c, q));
    Y.merge_ures(W, V, Z, Out).set_bounds(c, 0, C, q, 0, Q);
    Y.space_time_transform({c, q}, {s, t}, {1, 1, /**/ 0, 1});
    return Spec{Out, {x, w}};
}
PULSE_REGISTER_SPEC("chain_computed_root", "a same-step copy chain whose root is computed in the same step (s = c + q, t = q)",
                    chain_computed_root);

/// A guarded same-step copy across lanes (V's copy moves 3 PEs in 0 steps)
/// whose source is a recurrence with a history of two steps.
Spec guarded_lane_copy(const Params &params) {
    const int C = params.get_int("C", 5, 1, 16), Q = params.get_int("Q", 4, 1, 16);
    const int variant = params.get_int("M", 0, 0, 3);
    // Transforms (space row, time row) this system was seen to fail with.
    const std::vector<std::vector<int>> matrices = {{0, -3, 2, 2}, {0, 3, 2, 2}, {1, -3, 2, 2}, {0, -3, 3, 3}};
    const std::vector<int> &m = matrices[variant];
    Var c("c"), q("q"), s("s"), t("t");
    Input x(Float(32), 1, "x");
    Func Y(Float(32), {c, q}, Place::Device, "Y"), Z(Float(32), {c, q}, Place::Device, "Z"),
        V(Float(32), {c, q}, Place::Device, "V"), Out(Place::Device, "Out");
    Y(c, q) = x(c + q);
    Z(c, q) = select(q < 3, 0.0f, Z(c, q - 2)) + Y(c, q);
    V(c, q) = select(c % 2 == 1 && c > 2 && q < Q, V(c - 1, q + 1), Z(c, q));
    Out(c, q) = V(c, q);
    Y.merge_ures(Z, V, Out).set_bounds(c, 2, C, q, 1, Q);
    Y.space_time_transform({c, q}, {s, t}, {m[0], m[1], /**/ m[2], m[3]});
    return Spec{Out, {x}};
}
PULSE_REGISTER_SPEC("guarded_lane_copy", "a guarded same-step copy across lanes (dp = 3, dt = 0); M picks the transform",
                    guarded_lane_copy);

/// Int64 values past 2^53: every evaluator must be exact.
Spec int64_horner(const Params &params) {
    const int C = params.get_int("C", 4, 1, 32), Q = params.get_int("Q", 38, 1, 64);
    Var c("c"), q("q"), s("s"), t("t");
    Input x(Int(64), 1, "x");
    Func Z(Int(64), {c, q}, Place::Device, "Z"), Out(Place::Device, "Out");
    Z(c, q) = select(q == 0, x(c), Z(c, q - 1) * Expr(int64_t(3)) + x(c + q));
    Out(c) = select(q == Q - 1, Z(c, q));
    Z.merge_ures(Out).set_bounds(c, 0, C, q, 0, Q);
    Z.space_time_transform({c, q}, {s, t}, {1, 0, /**/ 0, 1});
    return Spec{Out, {x}};
}
PULSE_REGISTER_SPEC("int64_horner", "int64 Horner steps past 2^53 (s = c, t = q)", int64_horner);

}  // namespace
