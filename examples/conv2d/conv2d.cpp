// 2-D convolution Out(c, r) = sum_{p < P} sum_{q < Q} x(c + q, r + p) * w(q, p),
// design SBM (paper Sec. 5): inputs stay, weights are broadcast, partial sums
// migrate. Loops (innermost first): c, output column within an array; p, filter
// row; q, filter column; r, output row; b, block of C columns.
//
// Space s = c + q, time t = Q*p + q. The partial sum moves by d = (0, 0, 1)
// within a filter row and by d = (0, 1, 1 - Q) from the end of one filter row
// to the start of the next: a jump of Q - 1 lanes backwards.
#include "pulse/pulse.h"

#include "../common/ssam2d.h"

using namespace pulse;

namespace {

Spec conv2d_sbm(const Params &params) {
    const int C = params.get_int("C", 12, 1, 4096);  // output columns per array
    const int P = params.get_int("P", 3, 1, 1024);   // filter rows
    const int Q = params.get_int("Q", 3, 1, 1024);   // filter columns
    const int R = params.get_int("R", 4, 1, 1 << 20);   // output rows
    const int B = params.get_int("B", 2, 1, 1 << 20);   // column blocks
    Var c("c"), p("p"), q("q"), r("r"), b("b"), s("s"), t("t");
    Input x(Float(32), 2, "x"), w(Float(32), 2, "w");
    std::vector<Var> loops{c, p, q, r, b};
    Func X(Float(32), loops, Place::Device, "X"), W(Float(32), loops, Place::Device, "W"),
        Z(Float(32), loops, Place::Device, "Z"), Out(Place::Device, "Out");
    X(c, p, q, r, b) = x(b * C + c + q, r + p);
    W(c, p, q, r, b) = select(c == 0, w(q, p), W(c - 1, p, q, r, b));
    Z(c, p, q, r, b) = select(p == 0 && q == 0, 0.0f,
                              select(q == 0, Z(c, p - 1, q + Q - 1, r, b), Z(c, p, q - 1, r, b))) +
                       X(c, p, q, r, b) * W(c, p, q, r, b);
    Out(c, r, b) = select(p == P - 1 && q == Q - 1, Z(c, p, q, r, b));
    X.merge_ures(W, Z, Out).set_bounds(c, 0, C, p, 0, P, q, 0, Q, r, 0, R, b, 0, B);
    X.gpu_blocks(b, r);
    X.space_time_transform({c, p, q}, {s, t}, {1, 0, 1, /**/ 0, Q, 1});
    return Spec{Out, {x, w}};
}

}  // namespace

PULSE_REGISTER_SPEC("conv2d_sbm", "2-D convolution, SBM (s = c + q, t = Q*p + q)", conv2d_sbm);

namespace {

// 2-D convolution Out(x, y) = sum_{p < K} sum_{q < K} x(x + q, y + p) * w(q, p) in SSAM's
// design (examples/common/ssam2d.h): the filter w is broadcast along the array
// (in place on every lane; the kernel passes move it to constant memory).
Spec conv2d_ssam(const Params &params) {
    const int K = params.get_int("K", 3, 1, 64);  // filter size (K x K)
    Input x(Float(32), 2, "x"), w(Float(32), 2, "w");
    return pulse_examples::ssam2d(params, Float(32), K, x, {x, w}, [&](const pulse_examples::Ssam2dLoops &l, Func &W) {
        return select(l.c == 0, w(l.q, l.p), W(l.c - 1, l.p, l.q, l.r, l.b));
    });
}

}  // namespace

PULSE_REGISTER_SPEC("conv2d_ssam", "2-D convolution, SSAM's design (s = c + q, t = p + K*q, rows per thread)", conv2d_ssam);

namespace {

// 2-D convolution, output-stationary: every PE owns one output column and
// keeps its partial sums (s = c, t = K*p + q), the filter is broadcast and
// the image is read in place, so no PE idles on a halo column. Rows are
// tiled by RT as in SSAM's design; PE outputs columns per warp (PE > 32 runs
// several PEs per lane, whose reads of neighbouring columns coincide).
Spec conv2d_os(const Params &params) {
    const int K = params.get_int("K", 3, 1, 64);
    const int PE = params.get_int("PE", 64, 1, 4096);  // output columns per warp
    const int RT = params.get_int("RT", 4, 1, 64);     // output rows per warp (unrolled)
    const int R = params.get_int("R", 2 * RT, 1, 1 << 20);
    const int B = params.get_int("B", 2, 1, 1 << 20);
    Input x(Float(32), 2, "x"), w(Float(32), 2, "w");
    Var c("c"), p("p"), q("q"), r("r"), b("b"), ro("ro"), ri("ri"), s("s"), t("t");
    std::vector<Var> loops{c, p, q, r, b};
    Func X(Float(32), loops, Place::Device, "X"), W(Float(32), loops, Place::Device, "W"),
        Z(Float(32), loops, Place::Device, "Z"), Out(Place::Device, "Out");
    X(c, p, q, r, b) = x(b * PE + c + q, r + p);
    W(c, p, q, r, b) = w(q, p);
    Z(c, p, q, r, b) = select(p == 0 && q == 0, 0.0f,
                              select(q == 0, Z(c, p - 1, q + K - 1, r, b), Z(c, p, q - 1, r, b))) +
                       X(c, p, q, r, b) * W(c, p, q, r, b);
    Out(b * PE + c, r) = select(p == K - 1 && q == K - 1, Z(c, p, q, r, b));
    X.merge_ures(W, Z, Out).set_bounds(c, 0, PE, p, 0, K, q, 0, K, r, 0, R, b, 0, B);
    X.tile(r, ro, ri, RT);
    X.gpu_blocks(b, ro);
    X.space_time_transform({c, p, q}, {s, t}, {1, 0, 0, /**/ 0, K, 1});
    return Spec{Out, {x, w}};
}

}  // namespace

PULSE_REGISTER_SPEC("conv2d_os", "2-D convolution, output-stationary (s = c, t = K*p + q, rows per thread)", conv2d_os);

namespace {

// 2-D convolution Out(x, y) = sum_{p < K} sum_{q < K} x(x + q, y + p) * w(q, p) on
// a 2-D output-stationary array: PE (c, r) of a C x R tile keeps output
// (c, r) and accumulates its K*K products in steps t = K*p + q. Along a
// filter row the image moves one PE left per step (X(c, q) = X(c + 1, q - 1):
// a shuffle along the lanes), entering at the tile's right edge and at q = 0;
// the filter is broadcast (one value per step). Space rows s1 = c (lanes)
// and s2 = r (each lane's register slots); tiles (co, ro) are independent arrays.
// INPLACE=1: every PE reads its image value in place instead (nothing moves
// between PEs), the form a tile of outputs per thread takes (WARPS=1 with
// --pes-per-thread=N: N rows of a thread's warp, C / 32 columns of its lane);
// SHARED=1 stages the box of the image a tile reads in shared memory, shared
// by the tile's threads (each image value read by up to K*K outputs).
// ORDER=1 runs the filter's rows inside a filter column instead (t = p + K*q):
// a rolled time loop's block of K steps is a filter column, over which the
// rows of a thread's tile share the image values they read (r + p).
Spec conv2d_2d(const Params &params) {
    const int K = params.get_int("K", 3, 1, 64);          // filter size (K x K)
    const int C = params.get_int("C", 6, 1, 1024);        // output columns per tile (lanes; past 32, several per lane)
    const int R = params.get_int("R", 3, 1, 1024);        // output rows per tile (slots; warps with WARPS=1, or warps x --pes-per-thread)
    const int CO = params.get_int("CO", 2, 1, 1 << 16);   // tiles across
    const int RO = params.get_int("RO", 2, 1, 1 << 16);   // tiles down (run time)
    const int WARPS = params.get_int("WARPS", 0, 0, 1);
    const int INPLACE = params.get_int("INPLACE", 0, 0, 1);
    const int SHARED = params.get_int("SHARED", 0, 0, 1);
    const int ORDER = params.get_int("ORDER", 0, 0, 1);
    Input x(Float(32), 2, "x"), w(Float(32), 2, "w");
    Var q("q"), p("p"), c("c"), r("r"), co("co"), ro("ro"), s1("s1"), s2("s2"), t("t");
    std::vector<Var> loops{q, p, c, r, co, ro};
    Func X(Float(32), loops, Place::Device, "X"), Z(Float(32), loops, Place::Device, "Z"), Out(Place::Device, "Out");
    const Expr column = co * C + c, row = ro * R + r;
    if (INPLACE) X(q, p, c, r, co, ro) = x(column + q, row + p);
    else X(q, p, c, r, co, ro) = select(q == 0 || c == C - 1, x(column + q, row + p), X(q - 1, p, c + 1, r, co, ro));
    const Expr before = ORDER ? select(p == 0, Z(q - 1, p + K - 1, c, r, co, ro), Z(q, p - 1, c, r, co, ro))
                              : select(q == 0, Z(q + K - 1, p - 1, c, r, co, ro), Z(q - 1, p, c, r, co, ro));
    Z(q, p, c, r, co, ro) = select(q == 0 && p == 0, 0.0f, before) + X(q, p, c, r, co, ro) * w(q, p);
    Out(column, row) = select(q == K - 1 && p == K - 1, Z(q, p, c, r, co, ro));
    X.merge_ures(Z, Out).set_bounds(q, 0, K, p, 0, K, c, 0, C, r, 0, R, co, 0, CO, ro, 0, RO);
    X.gpu_blocks(co, ro);
    X.space_time_transform({q, p, c, r}, {s1, s2, t}, {0, 0, 1, 0, /**/ 0, 0, 0, 1, /**/ ORDER ? K : 1, ORDER ? 1 : K, 0, 0});
    if (WARPS) X.gpu_threads(s1, s2);
    if (SHARED) x.in(X).store_in(MemoryType::Shared);
    return Spec{Out, {x, w}};
}

}  // namespace

PULSE_REGISTER_SPEC("conv2d_2d", "2-D convolution on a 2-D output-stationary array (s1 = c lanes, s2 = r slots, t = K*p + q or p + K*q)",
                    conv2d_2d);
