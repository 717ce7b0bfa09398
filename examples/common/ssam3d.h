// SSAM's design (examples/common/ssam2d.h) for a 3-D window sum
//   Out(x, y, z) = sum_{q, p, n < K} in(x + q, y + p, z + n) * weight(q, p, n),
// used by the 3-D stencils: lanes along x, and per window column q the
// partial sum sits on one lane while it sums the K x K (p, n) window
// (dy, dz) of that column, then moves one lane (space s = c + q, time
// t = p + K*n + K*K*q: the (dy, dz) window runs inside the time loop, one
// step per point). The output rows (y) are a per-thread loop tiled by RT,
// whose unrolled iterations share the input rows they read (a register window
// of RT + K - 1 rows per plane and lane). The output planes (z) are a grid loop
// (S = 1) or, with S > 1, a per-thread loop (split): each warp walks S planes
// down z, and the K - 1 planes consecutive iterations share stay in registers
// (slide_windows), so a warp loads RT + K - 1 new rows per plane. Out is a
// row-major 3-D array whose width, height and depth are run-time sizes.
//
// Parameters: PE (array width: PE - K + 1 output columns per warp; more than
// 32 runs several PEs per lane, or with THREADS=1 one PE per thread over
// the warps of a block), CACHE (the image's cache: registers, L1 or shared
// memory), RT, S, and R, D, B (the generation-time sizes
// the reference and the tests use: rows, planes, column blocks).
#ifndef PULSE_EXAMPLES_SSAM3D_H
#define PULSE_EXAMPLES_SSAM3D_H

#include <functional>

#include "pulse/pulse.h"

namespace pulse_examples {

/// The loop variables of the design, for the weight's definition: c (output
/// column in the warp), p (window row, dy), n (window plane, dz), q (window
/// column, dx), r (output row), d (output plane), b (column block).
struct Ssam3dLoops {
    pulse::Var c, p, n, q, r, d, b;
};

/// Default mapping parameters of the spec (docs/benchmarks.md, "3-D stencils").
struct Ssam3dDefaults {
    int PE = 32, RT = 8, S = 1;
};

/// The spec; `weight` defines W(c, p, n, q, r, d, b) (it may read W itself).
/// `on_shape`, if given, says which window points (q, p, n) the sum takes:
/// the others add nothing (not even a product with a zero weight, which is
/// NaN for a NaN input), and cost nothing.
inline pulse::Spec ssam3d(const pulse::Params &params, pulse::Type type, int K, const pulse::Input &in,
                          std::vector<pulse::Input> inputs,
                          const std::function<pulse::Expr(const Ssam3dLoops &, pulse::Func &)> &weight,
                          const Ssam3dDefaults &defaults = {},
                          const std::function<pulse::Expr(const Ssam3dLoops &)> &on_shape = {}) {
    using namespace pulse;
    const int PE = params.get_int("PE", defaults.PE, K, 4096);
    const int C = PE - K + 1;                                     // output columns per warp
    const int RT = params.get_int("RT", defaults.RT, 1, 64);      // output rows per plane of a warp (unrolled)
    const int S = params.get_int("S", defaults.S, 1, 1 << 20);    // output planes per warp, in sequence
    const int R = params.get_int("R", 2 * RT, 1, 1 << 20);        // output rows (generation-time default; a run-time size)
    const int D = params.get_int("D", S > 1 ? 2 * S : 3, 1, 1 << 20);  // output planes (likewise)
    const int B = params.get_int("B", 2, 1, 1 << 20);             // column blocks (likewise)
    Var c("c"), p("p"), n("n"), q("q"), r("r"), d("d"), b("b"), ro("ro"), ri("ri"), dg("dg"), ds("ds"), s("s"), t("t");
    std::vector<Var> loops{c, p, n, q, r, d, b};
    Func X(type, loops, Place::Device, "X"), W(type, loops, Place::Device, "W"), Z(type, loops, Place::Device, "Z"),
        Out(Place::Device, "Out");
    X(c, p, n, q, r, d, b) = in(b * C + c + q, r + p, d + n);
    W(c, p, n, q, r, d, b) = weight(Ssam3dLoops{c, p, n, q, r, d, b}, W);
    // The partial sum: over p, then n (both in the lane), then one lane on per q.
    Expr first_of_column = p == 0 && n == 0;
    Expr before = select(first_of_column && q == 0, cast(type, Expr(0.0)),
                         select(first_of_column, Z(c, p + K - 1, n + K - 1, q - 1, r, d, b),
                                select(p == 0, Z(c, p + K - 1, n - 1, q, r, d, b), Z(c, p - 1, n, q, r, d, b))));
    Expr sum = before + X(c, p, n, q, r, d, b) * W(c, p, n, q, r, d, b);
    Z(c, p, n, q, r, d, b) = on_shape ? select(on_shape(Ssam3dLoops{c, p, n, q, r, d, b}), sum, before) : sum;
    Out(b * C + c, r, d) = select(p == K - 1 && n == K - 1 && q == K - 1, Z(c, p, n, q, r, d, b));
    X.merge_ures(W, Z, Out).set_bounds(c, 0, C, p, 0, K, n, 0, K, q, 0, K, r, 0, R, d, 0, D, b, 0, B);
    X.tile(r, ro, ri, RT);
    if (S > 1) {
        X.split(d, dg, ds, S);
        X.gpu_blocks(b, ro, dg);
    } else {
        X.gpu_blocks(b, ro, d);
    }
    X.space_time_transform({c, p, n, q}, {s, t}, {1, 0, 0, 1, /**/ 0, 1, K, K * K});
    // THREADS=1: the PEs are the threads of a block (one per thread, over
    // ceil(PE / 32) warps, moves across warps through shared memory) instead
    // of several PEs per lane of one warp.
    if (params.get_int("THREADS", 0, 0, 1)) X.gpu_threads(s);
    // CACHE: where the image's values stay between their load and their uses
    // (0 registers, the default; 1 L1, loaded where used; 2 shared memory,
    // the box an array instance reads staged there).
    const int cache = params.get_int("CACHE", 0, 0, 2);
    if (cache) in.in(X).store_in(cache == 1 ? MemoryType::Global : MemoryType::Shared);
    return Spec{Out, std::move(inputs)};
}

}  // namespace pulse_examples

#endif
