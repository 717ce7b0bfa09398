// Matrix multiply Out(j, i) = sum_k a(k, i) * bm(j, k), with two projections:
// three loops (k, j, i) onto a linear array of I PEs (space s = i, time
// t = K*j + k + i). Each PE keeps row i of a for all j (history K), columns
// of bm flow from PE to PE, and each sum stays in its PE. Arrays of a batch
// (loop n) are independent.
#include "pulse/pulse.h"

using namespace pulse;

namespace {

Spec matmul(const Params &params) {
    const int I = params.get_int("I", 8, 1, 4096);   // rows of the product (PEs)
    const int J = params.get_int("J", 6, 1, 1 << 20);   // columns of the product
    const int K = params.get_int("K", 5, 1, 1 << 20);   // reduction length
    const int N = params.get_int("N", 2, 1, 1 << 20);   // independent products
    Var k("k"), j("j"), i("i"), n("n"), s("s"), t("t");
    Input a(Float(32), 3, "a"), bm(Float(32), 3, "bm");
    std::vector<Var> loops{k, j, i, n};
    Func A(Float(32), loops, Place::Device, "A"), Bf(Float(32), loops, Place::Device, "B"),
        Z(Float(32), loops, Place::Device, "Z"), Out(Place::Device, "Out");
    A(k, j, i, n) = select(j == 0, a(k, i, n), A(k, j - 1, i, n));
    Bf(k, j, i, n) = select(i == 0, bm(j, k, n), Bf(k, j, i - 1, n));
    Z(k, j, i, n) = select(k == 0, 0.0f, Z(k - 1, j, i, n)) + A(k, j, i, n) * Bf(k, j, i, n);
    Out(j, i, n) = select(k == K - 1, Z(k, j, i, n));
    A.merge_ures(Bf, Z, Out).set_bounds(k, 0, K, j, 0, J, i, 0, I, n, 0, N);
    A.gpu_blocks(n);
    A.space_time_transform({k, j, i}, {s, t}, {0, 0, 1, /**/ 1, K, 1});
    return Spec{Out, {a, bm}};
}

}  // namespace

PULSE_REGISTER_SPEC("matmul", "matrix multiply, two projections (s = i, t = K*j + k + i)", matmul);

namespace {

// Matrix multiply C = A B as Kung and Leiserson's 2-D output-stationary mesh:
// PE (j, i) of a J x I tile keeps C(j, i) (column j, row i); a(k, i) enters at
// the tile's left edge and moves right along j, bm(j, k) enters at its top and
// moves down along i, and step t = k + j + i brings the pair for k to every PE
// at once. Space rows s1 = j (the lanes of a warp; J > 32 puts a block of
// ceil(J / 32) columns on each lane, so a moves across lanes only at the
// block's edge) and s2 = i (each lane's register slots: a move down is a
// register move), or, with WARPS=1, s2 on
// the warps of a block (a move down goes through shared memory). The tiles of the M x N
// product (loops jo, io) are independent arrays, one warp each.
//   Out(j, i) = sum_k a(k, i) * bm(j, k): a is M x K (row i, column k), bm is K x N.
Spec matmul_2d(const Params &params) {
    const int J = params.get_int("J", 5, 1, 1024);      // output columns per tile (lanes; past 32, several per lane)
    const int I = params.get_int("I", 3, 1, 1024);      // output rows per tile (slots of a lane: at most 8; warps: 32, or 32 x --pes-per-thread)
    const int WARPS = params.get_int("WARPS", 0, 0, 1); // 1: rows on the warps of a block, not on register slots
    const int K = params.get_int("K", 7, 1, 1 << 16);   // reduction length
    const int JO = params.get_int("JO", 2, 1, 1 << 16);  // tiles across the columns (the rows' tiles come at run time)
    const int IO = params.get_int("IO", 2, 1, 1 << 16);  // tiles down the rows
    const int FP64 = params.get_int("FP64", 0, 0, 1);
    // 1: t = k + i, so a reaches a row's PEs in the same step (a broadcast along
    // the lanes, read in place by each) and bm enters every column at once.
    // 2: t = k, both broadcast: every PE reads its a and bm in place each step
    // (the register-tiled outer product), so nothing moves between PEs.
    const int BROADCAST = params.get_int("BROADCAST", 0, 0, 2);
    // 1: the grid scans the row tiles first, so the warps of a block share
    // their columns of bm (read through L1 once) rather than their rows of a.
    const int ROWS_FIRST = params.get_int("ROWS_FIRST", 0, 0, 1);
    // 1: both operands cached in shared memory, the box an array reads
    // staged there (with --shared-steps=N, a run of N steps at a time: a
    // block's tile of a and bm shared by its warps).
    const int SHARED = params.get_int("SHARED", 0, 0, 1);
    const Type type = FP64 ? Float(64) : Float(32);
    Var k("k"), j("j"), i("i"), jo("jo"), io("io"), s1("s1"), s2("s2"), t("t");
    Input a(type, 2, "a"), bm(type, 2, "bm");
    std::vector<Var> loops{k, j, i, jo, io};
    Func Af(type, loops, Place::Device, "A"), Bf(type, loops, Place::Device, "B"), Z(type, loops, Place::Device, "Z"),
        Out(Place::Device, "Out");
    const Expr row = io * I + i, column = jo * J + j;
    Af(k, j, i, jo, io) = select(j == 0, a(k, row), Af(k, j - 1, i, jo, io));
    Bf(k, j, i, jo, io) = select(i == 0, bm(column, k), Bf(k, j, i - 1, jo, io));
    Z(k, j, i, jo, io) = select(k == 0, cast(type, 0), Z(k - 1, j, i, jo, io)) + Af(k, j, i, jo, io) * Bf(k, j, i, jo, io);
    Out(column, row) = select(k == K - 1, Z(k, j, i, jo, io));
    Af.merge_ures(Bf, Z, Out).set_bounds(k, 0, K, j, 0, J, i, 0, I, jo, 0, JO, io, 0, IO);
    if (ROWS_FIRST) Af.gpu_blocks(io, jo);
    else Af.gpu_blocks(jo, io);
    Af.space_time_transform({k, j, i}, {s1, s2, t}, {0, 1, 0, /**/ 0, 0, 1, /**/ 1, BROADCAST ? 0 : 1, BROADCAST == 2 ? 0 : 1});
    if (WARPS) Af.gpu_threads(s1, s2);
    if (SHARED) {
        a.in(Af).store_in(MemoryType::Shared);
        bm.in(Af).store_in(MemoryType::Shared);
    }
    return Spec{Out, {a, bm}};
}

}  // namespace

PULSE_REGISTER_SPEC("matmul_2d", "matrix multiply on a 2-D output-stationary mesh (s1 = j lanes, s2 = i slots, t = k + j + i)",
                    matmul_2d);
