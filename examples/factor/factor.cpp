// Factorisations on their exact domains (tetrahedra of (k, j, i), not boxes),
// as linear arrays: row i of the matrix is PE i (space s = i), and elimination
// step k of column j reaches it at step t = N*k + j + i (two projections, as
// in matmul). Loop n runs independent matrices (a batch). The input and the
// factors are stored as a(j, i, n): column j of row i of matrix n.
//
// lu: Doolittle LU without pivoting, packed in one square output: U on and
//   above the diagonal, L (unit diagonal, not stored) below it. At step k the
//   pivot row's value U moves down the rows, each row's multiplier L moves
//   along its columns, and each entry A stays in its PE (N values per PE).
// cholesky: A = L L^T of a symmetric positive definite matrix (only the lower
//   triangle of a is read), L on and below the diagonal of the output and
//   zeros above it, as numpy.linalg.cholesky returns it. The domain is the
//   lower tetrahedron k <= j <= i plus one point (k = i, j > i) per element
//   above the diagonal, which writes its zero: `where(j <= i || k == i)`, a
//   union of two polyhedra. Row i's multiplier M moves along the row, row j's
//   multiplier P moves down the rows from the diagonal, and the pivot's square
//   root R down column k.
#include "pulse/pulse.h"

using namespace pulse;

namespace {

Spec lu(const Params &params, Type type) {
    const int N = params.get_int("N", 8, 1, 128);       // rows (PEs)
    const int B = params.get_int("B", 3, 1, 1 << 24);   // matrices in the batch
    Var j("j"), i("i"), k("k"), n("n"), s("s"), t("t");
    Input a(type, 3, "a");
    Func U(type, {j, i, k, n}, Place::Device, "U"), L(type, {j, i, k, n}, Place::Device, "L"),
        A(type, {j, i, k, n}, Place::Device, "A"), Out(Place::Device, "Out");
    // Entry (i, j) before elimination step k.
    Expr before = select(k == 0, a(j, i, n), A(j, i, k - 1, n));
    U(j, i, k, n) = select(i == k, before, U(j, i - 1, k, n));
    L(j, i, k, n) = select(j == k, before / U(j, i, k, n), L(j - 1, i, k, n));
    A(j, i, k, n) = select(i > k && j > k, before - L(j, i, k, n) * U(j, i, k, n));
    // U(i, j) is final at step k = i, L(i, j) at step k = j.
    Out(j, i, n) = select((j >= i && k == i) || (j < i && k == j), select(j >= i, U(j, i, k, n), L(j, i, k, n)));
    U.merge_ures(L, A, Out).set_bounds(k, 0, N, i, k, N - k, j, k, N - k, n, 0, B);
    U.gpu_blocks(n);
    // CACHE=1 (the default): each value of a loaded at the step that uses it
    // (through L1), not held in a register from the top of the instance: a is
    // read once, and its N values per PE would take registers the row needs
    // (1.6-2.1x faster on an H200, docs/benchmarks.md). CACHE=0 hoists them.
    if (params.get_int("CACHE", 1, 0, 1)) a.in(U).store_in(MemoryType::Global);
    // The reverse map given, so that each PE finds its (j, k) with one division
    // (isl's own inverse of this projection is correct but longer).
    U.space_time_transform({j, i, k}, {s, t}, {0, 1, 0, /**/ 1, 1, N}, {(t - s) % N, s, (t - s) / N});
    return Spec{Out, {a}};
}

Spec cholesky(const Params &params, Type type) {
    const int N = params.get_int("N", 8, 1, 128);       // rows (PEs)
    const int B = params.get_int("B", 3, 1, 1 << 24);   // matrices in the batch
    Var j("j"), i("i"), k("k"), n("n"), s("s"), t("t");
    Input a(type, 3, "a");
    Func R(type, {j, i, k, n}, Place::Device, "R"), M(type, {j, i, k, n}, Place::Device, "M"),
        P(type, {j, i, k, n}, Place::Device, "P"), A(type, {j, i, k, n}, Place::Device, "A"), Out(Place::Device, "Out");
    Expr lower = j <= i;
    Expr before = select(k == 0, a(j, i, n), A(j, i, k - 1, n));
    // The pivot L(k, k) = sqrt(a(k, k)), moving down column k.
    R(j, i, k, n) = select(j == k, select(i == k, sqrt(before), R(j, i - 1, k, n)));
    // Row i's multiplier L(i, k), moving along the row.
    M(j, i, k, n) = select(lower, select(j == k, select(i == k, R(j, i, k, n), before / R(j, i, k, n)), M(j - 1, i, k, n)));
    // Row j's multiplier L(j, k), moving down the rows from the diagonal.
    P(j, i, k, n) = select(lower, select(i == j, M(j, i, k, n), P(j, i - 1, k, n)));
    A(j, i, k, n) = select(lower && j > k, before - M(j, i, k, n) * P(j, i, k, n));
    // L(i, j) is final at step k = j; the points (k = i, j > i) write the zeros above.
    Out(j, i, n) = select(lower, select(k == j, M(j, i, k, n)), select(k == i, cast(type, 0)));
    R.merge_ures(M, P, A, Out).set_bounds(k, 0, N, i, k, N - k, j, k, N - k, n, 0, B).where(lower || k == i);
    R.gpu_blocks(n);
    // CACHE=1 (the default) as in lu: 5x faster at N = 16 on an H200.
    if (params.get_int("CACHE", 1, 0, 1)) a.in(R).store_in(MemoryType::Global);
    R.space_time_transform({j, i, k}, {s, t}, {0, 1, 0, /**/ 1, 1, N}, {(t - s) % N, s, (t - s) / N});
    return Spec{Out, {a}};
}

}  // namespace

PULSE_REGISTER_SPEC("lu", "LU without pivoting on the tetrahedron k <= i, j (s = i, t = N*k + j + i), fp32",
                    [](const Params &p) { return lu(p, Float(32)); });
PULSE_REGISTER_SPEC("lu_f64", "LU without pivoting on the tetrahedron k <= i, j (s = i, t = N*k + j + i), fp64",
                    [](const Params &p) { return lu(p, Float(64)); });
PULSE_REGISTER_SPEC("cholesky", "Cholesky on k <= j <= i, zeros above the diagonal (s = i, t = N*k + j + i), fp32",
                    [](const Params &p) { return cholesky(p, Float(32)); });
PULSE_REGISTER_SPEC("cholesky_f64", "Cholesky on k <= j <= i, zeros above the diagonal (s = i, t = N*k + j + i), fp64",
                    [](const Params &p) { return cholesky(p, Float(64)); });
