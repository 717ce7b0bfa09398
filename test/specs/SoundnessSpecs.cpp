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


/// Three moves across the warps of a block in one step, two of them leaving
/// by the same warp edge: the shared-memory stores of a step are three ifs,
/// `lane < 2`, `30 <= lane`, `lane < 2`, which Halide 14's simplifier chained
/// into one if-else, dropping the third store (the reader then read a slot
/// no thread had written).
Spec warps_exchange_three_moves(const Params &) {
    Var i("i"), j("j"), s("s"), t("t");
    Func A(Float(32), {i, j}, Place::Device, "A"), B(Float(32), {i, j}, Place::Device, "B"), Out(Place::Device, "Out");
    A(i, j) = (select(i <= 14, A(i + 1, j), 2.5f) - select(j >= 1, B(i, j - 1), 1.0f)) + select(i <= 14, B(i + 1, j), 1.0f);
    B(i, j) = select(i <= 14, B(i + 1, j), 0.5f);
    Out(i) = select(j == 1, B(i, j));
    A.merge_ures(B, Out).set_bounds(i, 0, 16, j, 0, 2);
    A.space_time_transform({i, j}, {s, t}, {2, 2, /**/ -2, 1});
    A.gpu_threads(s);
    return Spec{Out, {}};
}
PULSE_REGISTER_SPEC("warps_exchange_three_moves", "three moves across the warps of a block in one step, two by one edge (gpu_threads)",
                    warps_exchange_three_moves);

/// A broadcast whose root names the PE only in sums where it cancels: under
/// this transform x(i - 2j, 2j - i) reads x((s*2) + ((s*-2) - t), ...) at
/// PE s, which Halide's simplifier leaves as written; in a rolled time loop
/// the chain was taken from its source lane instead of computed in place,
/// and an array wider than a warp (J > 32, THREADS=1) would have been refused.
Spec broadcast_cancelled_pe(const Params &params) {
    const int I = params.get_int("I", 2, 1, 64), J = params.get_int("J", 1, 1, 128);
    Var i("i"), j("j"), s("s"), t("t");
    Input x(Int(32), 2, "x");
    Func A(Int(32), {i, j}, Place::Device, "A"), Out(Place::Device, "Out");
    A(i, j) = select(i >= 2 && j >= 1, A(i - 2, j - 1), x(i - 2 * j, 2 * j - i));
    Out(i, j) = A(i, j);
    A.merge_ures(Out).set_bounds(i, 0, I, j, 0, J);
    A.space_time_transform({i, j}, {s, t}, {0, -1, /**/ -1, 2});
    if (params.get_int("THREADS", 0, 0, 1)) A.gpu_threads(s);
    return Spec{Out, {x}};
}
PULSE_REGISTER_SPEC("broadcast_cancelled_pe", "a broadcast whose root names the PE in sums that cancel (s = -j, t = 2j - i)",
                    broadcast_cancelled_pe);

/// uint32 4 - 5 converted to int32, once the time loop's first step is
/// peeled (or unrolled) and the select's constant reaches the conversion:
/// Halide folds it to an overflow error, the language wraps it (-1).
Spec wrapping_constant_cast(const Params &) {
    Var i("i"), s("s"), t("t");
    Input y(UInt(32), 1, "y");
    Func A(UInt(32), {i}, Place::Device, "A"), B(Int(32), {i}, Place::Device, "B"), Out(Place::Device, "Out");
    A(i) = cast(UInt(32), 4) - select(i <= 1, cast<uint32_t>(B(i + 1)), cast(UInt(32), 5));
    B(i) = (cast<int32_t>(y(0)) + cast<int32_t>(A(i))) % 10007;
    Out(i) = B(i);
    A.merge_ures(B, Out).set_bounds(i, 0, 3);
    A.space_time_transform({i}, {s, t}, {0, /**/ -1});
    return Spec{Out, {y}};
}
PULSE_REGISTER_SPEC("wrapping_constant_cast", "uint32 4 - 5 converted to int32 (wraps to -1, never an overflow error)",
                    wrapping_constant_cast);

/// An output not indexed by a loop outside the array (i, whose extent the
/// outputs give at run time), written at one of its values only: cropping Out
/// below i = 2 left Out2 unwritten in silence. Refused with the fix.
Spec output_at_one_instance(const Params &) {
    Var i("i"), j("j"), s("s"), t("t");
    Input x(Int(32), 1, "x");
    Func A(Int(32), {i, j}, Place::Device, "A"), Out(Place::Device, "Out"), Out2(Place::Device, "Out2");
    A(i, j) = x(j + 1) * (i + 1);
    Out(i) = select(j == 1, A(i, j));
    Out2(j) = select(i == 2, A(i, j));
    A.merge_ures(Out, Out2).set_bounds(i, 0, 3, j, -1, 3);
    A.space_time_transform({j}, {s, t}, {1, /**/ -2});
    return Spec{Out, {x}};
}
PULSE_REGISTER_SPEC("output_at_one_instance", "an output written at one instance of a loop outside the array (refused)",
                    output_at_one_instance);

/// Values of loop variables and constants alone look like index arithmetic;
/// on several PEs per lane a PE's guard fixes i, a select on i folds, and
/// Halide folded 1000000001 * 9 (int32) to an overflow error. It wraps.
Spec constant_overflow_per_pe(const Params &) {
    Var i("i"), s("s"), t("t");
    Func A(Int(64), {i}, Place::Device, "A"), B(Int(32), {i}, Place::Device, "B"), Out(Place::Device, "Out");
    A(i) = (cast(Int(64), 1) - cast(Int(64), 7)) % cast(Int(64), 1000000007);
    B(i) = (((select(i >= 1, cast<int32_t>(A(i - 1)), 3) + cast<int32_t>(A(i))) - select(i >= 1, B(i - 1), 3)) * 9) % 10007;
    Out(i) = B(i);
    A.merge_ures(B, Out).set_bounds(i, 0, 33);
    A.space_time_transform({i}, {s, t}, {1, /**/ 1});
    return Spec{Out, {}};
}
PULSE_REGISTER_SPEC("constant_overflow_per_pe", "int32 constants that overflow once a PE's guard fixes i (33 PEs: two per lane)",
                    constant_overflow_per_pe);

/// A same-step copy chain on PEs s = -i, from -N + 1 to 0. The proof that a
/// chain's root is the same along it, made PE by PE, once walked the PEs from
/// 0 instead of from the array's first: it saw no PE that copies and
/// computed the chain in place, so PE -1 (i = 1) took its own x(0, 1), not
/// x(0, 0) from PE 0. The chain moves by a shuffle.
Spec chain_on_negative_pes(const Params &params) {
    const int N = params.get_int("N", 2, 2, 32);
    Var i("i"), s("s"), t("t");
    Input x(Int(32), 2, "x");
    Func A(Int(32), {i}, Place::Device, "A"), Out(Place::Device, "Out");
    A(i) = select(i >= 1, A(i - 1), x(0, i));
    Out(i) = A(i);
    A.merge_ures(Out).set_bounds(i, 0, N);
    A.space_time_transform({i}, {s, t}, {-1, /**/ 0});
    return Spec{Out, {x}};
}
PULSE_REGISTER_SPEC("chain_on_negative_pes", "a same-step copy chain on PEs -N + 1 .. 0 (s = -i, t = 0), its root different on each",
                    chain_on_negative_pes);

/// A table read at an input's value, tab(y(j)), on a transform (s = i - j,
/// t = j) whose inactive PEs' steps name j past y. The table's load needs no
/// bounds test (its index is clamped), but the load of y inside its index does.
Spec table_at_input_value(const Params &params) {
    Var i("i"), j("j"), s("s"), t("t");
    Input y(Int(32), 1, "y"), tab(Int(32), {9}, "tab");
    Func A(Int(32), {i, j}, Place::Device, "A"), Out(Place::Device, "Out");
    A(i, j) = select(i >= 1, A(i - 1, j), tab(y(j)));
    Out(j) = select(i == 2, A(i, j));
    A.merge_ures(Out).set_bounds(i, 0, 3, j, 0, 2);
    A.space_time_transform({i, j}, {s, t}, {1, -1, /**/ 0, 1});
    return Spec{Out, {y, tab}};
}
PULSE_REGISTER_SPEC("table_at_input_value", "a table read at an input's value, tab(y(j)), where inactive PEs name j past y", table_at_input_value);

/// Two instances a warp (vectorize) of a reduction over values of the loops
/// alone: of an odd count, the last pair's instance runs alone, on code whose
/// store the simplifier had folded away (specialize_interior's guarded copy,
/// reached where the interior test, here the output's bounds alone, fails).
/// An instance alone takes its test's branch: the packed code with both lanes
/// set to it where the test holds, the guarded copy where it fails.
Spec packed_pair_cut_short(const Params &) {
    Var i("i"), j("j"), k("k"), s("s"), t("t");
    Func A(Int(32), {i, j, k}, Place::Device, "A"), Out(Place::Device, "Out");
    A(i, j, k) = i + 3 * j + 5 * k + 8;
    Out(k) = 3;
    Out(k) = Out(k) + select(i <= 0 && j <= 3, A(i, j, k));
    A.merge_ures(Out).set_bounds(i, 0, 2, j, 0, 2, k, 0, 3);
    A.space_time_transform({i, j}, {s, t}, {-1, -1, /**/ 0, 1});
    A.gpu_blocks(k).vectorize(k, 2);
    return Spec{Out, {}};
}
PULSE_REGISTER_SPEC("packed_pair_cut_short", "a reduction two instances a warp (vectorize), the last of an odd count alone",
                    packed_pair_cut_short);

}  // namespace
