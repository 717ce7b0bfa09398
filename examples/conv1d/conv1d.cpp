// 1-D convolution Z(n) = sum_q x(n + q) * w(q) in the seven systolic designs of
// Jo et al. (SBM, BSM, FSM, BFS, FFS, FBS and FBS with stride 2).
//
// Loops (innermost first): c, the output within one array; q, the filter tap;
// b, which array (a batch of arrays covers a long signal). Out is that signal,
// flat: array b writes outputs b*C .. b*C + C - 1 (Out(b * C + c)), so its
// length B*C is the run-time size of a generated kernel. The space-time
// transform maps (c, q) onto a linear array; b is mapped to GPU blocks, so
// every b runs its own array.
#include "pulse/pulse.h"

using namespace pulse;

namespace {

enum class Design { SBM, BSM, FSM, BFS, FFS, FBS, FBS2 };

Spec conv1d(Design design, const Params &params) {
    const int C = params.get_int("C", 16, 1, 4096);  // outputs per array (PEs for c-space designs)
    const int Q = params.get_int("Q", 5, 1, 1024);   // filter taps
    const int B = params.get_int("B", 4, 1, 1 << 30);   // arrays
    const int stride = design == Design::FBS2 ? 2 : 1;
    Var c("c"), q("q"), b("b"), s("s"), t("t");
    Input x(Float(32), 1, "x"), w(Float(32), 1, "w");
    Func X(Float(32), {c, q, b}, Place::Device, "X"), W(Float(32), {c, q, b}, Place::Device, "W"),
        Z(Float(32), {c, q, b}, Place::Device, "Z"), Out(Place::Device, "Out");
    // The input index read at (c, q, b); with stride 1 written as the README's
    // tour writes SBM, so the two give the same kernel text.
    Expr n = stride == 1 ? b * C + c + q : b * (C * stride) + c * stride + q;
    switch (design) {
    case Design::SBM:
    case Design::BSM:
        X(c, q, b) = x(n);
        W(c, q, b) = select(c == 0, w(q), W(c - 1, q, b));
        Z(c, q, b) = select(q == 0, 0.0f, Z(c, q - 1, b)) + X(c, q, b) * W(c, q, b);
        Out(b * C + c) = select(q == Q - 1, Z(c, q, b));
        break;
    case Design::FSM:
        X(c, q, b) = select(c == 0 || q == Q - 1, x(n), X(c - 1, q + 1, b));
        W(c, q, b) = select(c == 0, w(q), W(c - 1, q, b));
        Z(c, q, b) = select(q == Q - 1, 0.0f, Z(c, q + 1, b)) + X(c, q, b) * W(c, q, b);
        Out(b * C + c) = select(q == 0, Z(c, q, b));
        break;
    case Design::BFS:
    case Design::FFS:
        X(c, q, b) = select(c == 0 || q == Q - 1, x(n), X(c - 1, q + 1, b));
        W(c, q, b) = select(c == 0, w(q), W(c - 1, q, b));
        Z(c, q, b) = select(q == 0, 0.0f, Z(c, q - 1, b)) + X(c, q, b) * W(c, q, b);
        Out(b * C + c) = select(q == Q - 1, Z(c, q, b));
        break;
    case Design::FBS:
    case Design::FBS2:
        X(c, q, b) = select(q < stride || c == C - 1, x(n), X(c + 1, q - stride, b));
        W(c, q, b) = w(q);
        Z(c, q, b) = select(q == 0, 0.0f, Z(c, q - 1, b)) + X(c, q, b) * W(c, q, b);
        Out(b * C + c) = select(q == Q - 1, Z(c, q, b));
        break;
    }
    X.merge_ures(W, Z, Out).set_bounds(c, 0, C, q, 0, Q, b, 0, B);
    // Arrays per warp: T unrolled side by side (tile), S walked in sequence
    // (split); more work per warp amortizes its setup.
    const int T = params.get_int("T", 1, 1, 64), S = params.get_int("S", 1, 1, 1024);
    Var bo("bo"), bi("bi"), bg("bg"), bs("bs");
    Var outer = b;
    if (T > 1) {
        X.tile(b, bo, bi, T);
        outer = bo;
    }
    if (S > 1) {
        X.split(outer, bg, bs, S);
        outer = bg;
    }
    X.gpu_blocks(outer);
    // Matrix rows: space (s) first, time (t) last; columns follow the source loops (c, q).
    switch (design) {
    case Design::SBM: X.space_time_transform({c, q}, {s, t}, {1, 1, /**/ 0, 1}); break;
    case Design::BSM: X.space_time_transform({c, q}, {s, t}, {0, 1, /**/ 1, 1}); break;
    case Design::FSM: X.space_time_transform({c, q}, {s, t}, {0, 1, /**/ 1, -1}); break;
    case Design::BFS: X.space_time_transform({c, q}, {s, t}, {1, 0, /**/ 1, 1}); break;
    case Design::FFS: X.space_time_transform({c, q}, {s, t}, {1, 0, /**/ 2, 1}); break;
    case Design::FBS:
    case Design::FBS2: X.space_time_transform({c, q}, {s, t}, {1, 0, /**/ 0, 1}); break;
    }
    return Spec{Out, {x, w}};
}

}  // namespace

PULSE_REGISTER_SPEC("conv1d_sbm", "1-D convolution, SBM: inputs stay, weights broadcast, sums migrate (s = c + q, t = q)",
                    [](const Params &p) { return conv1d(Design::SBM, p); });
PULSE_REGISTER_SPEC("conv1d_bsm", "1-D convolution, BSM: inputs broadcast, weights stay, sums migrate (s = q, t = c + q)",
                    [](const Params &p) { return conv1d(Design::BSM, p); });
PULSE_REGISTER_SPEC("conv1d_fsm", "1-D convolution, FSM: inputs forwarded, weights stay, sums migrate (s = q, t = c - q)",
                    [](const Params &p) { return conv1d(Design::FSM, p); });
PULSE_REGISTER_SPEC("conv1d_bfs", "1-D convolution, BFS: inputs broadcast, weights forwarded, sums stay (s = c, t = c + q)",
                    [](const Params &p) { return conv1d(Design::BFS, p); });
PULSE_REGISTER_SPEC("conv1d_ffs", "1-D convolution, FFS: inputs and weights forwarded, sums stay (s = c, t = 2c + q)",
                    [](const Params &p) { return conv1d(Design::FFS, p); });
PULSE_REGISTER_SPEC("conv1d_fbs", "1-D convolution, FBS: inputs forwarded, weights broadcast, sums stay (s = c, t = q)",
                    [](const Params &p) { return conv1d(Design::FBS, p); });
PULSE_REGISTER_SPEC("conv1d_fbs_stride2", "1-D convolution with stride 2, FBS (s = c, t = q)",
                    [](const Params &p) { return conv1d(Design::FBS2, p); });
