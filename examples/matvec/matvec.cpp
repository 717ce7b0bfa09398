// Matrix-vector product Out(i) = sum_j a(j, i) * v(j) on a linear array of I
// PEs (space s = i, time t = i + j): the vector flows from PE to PE, each sum
// stays in its PE. Loop n runs independent row blocks of a taller matrix.
#include "pulse/pulse.h"

using namespace pulse;

namespace {

Spec matvec(const Params &params) {
    const int I = params.get_int("I", 16, 1, 4096);  // rows per array (PEs)
    const int J = params.get_int("J", 9, 1, 1 << 20);   // columns
    const int N = params.get_int("N", 3, 1, 1 << 20);   // row blocks
    Var j("j"), i("i"), n("n"), s("s"), t("t");
    Input a(Float(32), 2, "a"), v(Float(32), 1, "v");
    Func V(Float(32), {j, i, n}, Place::Device, "V"), Z(Float(32), {j, i, n}, Place::Device, "Z"),
        Out(Place::Device, "Out");
    V(j, i, n) = select(i == 0, v(j), V(j, i - 1, n));
    Z(j, i, n) = select(j == 0, 0.0f, Z(j - 1, i, n)) + a(j, n * I + i) * V(j, i, n);
    Out(i, n) = select(j == J - 1, Z(j, i, n));
    V.merge_ures(Z, Out).set_bounds(j, 0, J, i, 0, I, n, 0, N);
    V.gpu_blocks(n);
    V.space_time_transform({j, i}, {s, t}, {0, 1, /**/ 1, 1});
    return Spec{Out, {a, v}};
}

}  // namespace

PULSE_REGISTER_SPEC("matvec", "matrix-vector product (s = i, t = i + j)", matvec);
