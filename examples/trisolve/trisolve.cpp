// Lower-triangular solve L x = b by forward substitution, on the triangle
// j <= i (not its bounding box): x_i = (b_i - sum_{j<i} L(j, i) x_j) / L(i, i).
// Row i is PE i (space s = i), column j reaches it at step t = i + j: x_j
// moves down the rows from PE to PE, each row's partial sum S stays in its PE
// and the diagonal point divides. Loop n runs independent systems (a batch).
#include "pulse/pulse.h"

using namespace pulse;

namespace {

Spec trisolve(const Params &params, Type type) {
    const int N = params.get_int("N", 32, 1, 256);      // unknowns (PEs)
    const int B = params.get_int("B", 3, 1, 1 << 24);   // systems in the batch
    Var j("j"), i("i"), n("n"), s("s"), t("t");
    Input L(type, 3, "L"), b(type, 2, "b");
    Func X(type, {j, i, n}, Place::Device, "X"), S(type, {j, i, n}, Place::Device, "S"), Out(Place::Device, "Out");
    // S(j - 1, i): the row's sum before column j, b(i) before the first.
    Expr before = select(j == 0, b(i, n), S(j - 1, i, n));
    X(j, i, n) = select(j == i, before / L(j, i, n), X(j, i - 1, n));
    S(j, i, n) = select(j < i, before - L(j, i, n) * X(j, i, n));
    Out(i, n) = select(j == i, X(j, i, n));
    X.merge_ures(S, Out).set_bounds(i, 0, N, j, 0, i + 1, n, 0, B);
    X.gpu_blocks(n);
    // CACHE=1: each value of L loaded at the step that uses it (through L1),
    // not held in a register from the top of the instance: L is read once.
    if (params.get_int("CACHE", 0, 0, 1)) L.in(X).store_in(MemoryType::Global);
    X.space_time_transform({j, i}, {s, t}, {0, 1, /**/ 1, 1});
    return Spec{Out, {L, b}};
}

}  // namespace

PULSE_REGISTER_SPEC("trisolve", "lower-triangular solve on the triangle j <= i (s = i, t = i + j), fp32",
                    [](const Params &p) { return trisolve(p, Float(32)); });
PULSE_REGISTER_SPEC("trisolve_f64", "lower-triangular solve on the triangle j <= i (s = i, t = i + j), fp64",
                    [](const Params &p) { return trisolve(p, Float(64)); });
