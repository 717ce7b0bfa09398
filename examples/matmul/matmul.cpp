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
