// A spec for the tests of output layouts: two outputs written at affine
// indices whose boxes do not start at 0 and whose coefficients are negative
// (a signal written back to front, starting at 3, and a 2-D grid shifted to
// (2, -1)). Its layout follows the index, not the loops the index uses; with a
// negative coefficient of the instance loop b, the reversed signal's minimum
// moves with the run-time instance count.
#include "pulse/pulse.h"

using namespace pulse;

namespace {

Spec affine_outputs(const Params &params) {
    const int C = params.get_int("C", 6), Q = params.get_int("Q", 3), B = params.get_int("B", 3);
    Var c("c"), q("q"), b("b"), s("s"), t("t");
    Input x(Float(32), 1, "x"), w(Float(32), 1, "w");
    Func X(Float(32), {c, q, b}, Place::Device, "X"), W(Float(32), {c, q, b}, Place::Device, "W"),
        Z(Float(32), {c, q, b}, Place::Device, "Z"), Rev(Place::Device, "Rev"), Grid(Place::Device, "Grid");
    X(c, q, b) = x(b * C + c + q);
    W(c, q, b) = select(c == 0, w(q), W(c - 1, q, b));
    Z(c, q, b) = select(q == 0, 0.0f, Z(c, q - 1, b)) + X(c, q, b) * W(c, q, b);
    Rev((B - 1 - b) * C + (C - 1 - c) + 3) = select(q == Q - 1, Z(c, q, b));
    Grid(c + 2, b - 1) = select(q == Q - 1, 2.0f * Z(c, q, b));
    X.merge_ures(W, Z, Rev, Grid).set_bounds(c, 0, C, q, 0, Q, b, 0, B);
    X.gpu_blocks(b);
    X.space_time_transform({c, q}, {s, t}, {1, 1, /**/ 0, 1});
    return Spec{Rev, {x, w}};
}

}  // namespace

PULSE_REGISTER_SPEC("test_affine_outputs", "1-D convolution (SBM) into two outputs at affine indices with non-zero minima",
                    affine_outputs);
