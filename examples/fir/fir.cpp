// Decimating FIR filter with stride 2: y(n) = sum_k h(k) * x(2n + k), on a
// linear array where the coefficients are broadcast and partial sums migrate
// (space s = c + k, time t = k). Output n = b*C + c; loop b runs independent
// arrays along the signal.
#include "pulse/pulse.h"

using namespace pulse;

namespace {

Spec fir_stride2(const Params &params) {
    const int C = params.get_int("C", 16, 1, 4096);  // outputs per array
    const int K = params.get_int("K", 7, 1, 1024);   // taps
    const int B = params.get_int("B", 3, 1, 1 << 30);   // arrays
    Var c("c"), k("k"), b("b"), s("s"), t("t");
    Input x(Float(32), 1, "x"), h(Float(32), 1, "h");
    Func H(Float(32), {c, k, b}, Place::Device, "H"), Y(Float(32), {c, k, b}, Place::Device, "Y"),
        Out(Place::Device, "Out");
    H(c, k, b) = select(c == 0, h(k), H(c - 1, k, b));
    Y(c, k, b) = select(k == 0, 0.0f, Y(c, k - 1, b)) + x(2 * (b * C + c) + k) * H(c, k, b);
    Out(c, b) = select(k == K - 1, Y(c, k, b));
    H.merge_ures(Y, Out).set_bounds(c, 0, C, k, 0, K, b, 0, B);
    H.gpu_blocks(b);
    H.space_time_transform({c, k}, {s, t}, {1, 1, /**/ 0, 1});
    return Spec{Out, {x, h}};
}

}  // namespace

PULSE_REGISTER_SPEC("fir_stride2", "decimating FIR, stride 2 (s = c + k, t = k)", fir_stride2);
