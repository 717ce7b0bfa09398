// SSAM's design for a 2-D window sum Out(x, y) = sum_{p, q < K} in(x + q, y + p) * weight(q, p),
// shared by the 2-D convolution and the stencils: per window row it is SBM
// (space s = c + q, time q: the partial sum moves one lane per window column),
// the window rows run inside a step (time t = p + K*q), and the output rows are
// a per-thread loop tiled by RT, whose unrolled iterations share the input rows
// they read (a register window of RT + K - 1 rows per lane). With S > 1 each
// warp walks S row blocks down its column strip (split), the rows consecutive
// blocks share kept in registers. Out is a row-major image whose width and
// height are run-time sizes.
//
// Parameters: PE (array width: PE - K + 1 output columns per warp; more than
// 32 runs several PEs per lane, or with THREADS=1 one PE per thread over
// the warps of a block), CACHE (the image's cache: registers, L1 or shared
// memory), WCACHE (the same for the filter), RT, S, and R, B (the generation-time sizes the
// reference and the tests use).
#ifndef PULSE_EXAMPLES_SSAM2D_H
#define PULSE_EXAMPLES_SSAM2D_H

#include <functional>

#include "pulse/pulse.h"

namespace pulse_examples {

/// The loop variables of the design, for the weight's definition.
struct Ssam2dLoops {
    pulse::Var c, p, q, r, b;
};

/// The spec; `weight` defines W(c, p, q, r, b) (it may read W itself, e.g. a
/// broadcast chain from c == 0). `on_shape`, if given, says which window
/// points (q, p) the sum takes: the others add nothing (not even a product
/// with a zero weight, which is NaN for a NaN input), and cost nothing.
inline pulse::Spec ssam2d(const pulse::Params &params, pulse::Type type, int K, const pulse::Input &in,
                          std::vector<pulse::Input> inputs,
                          const std::function<pulse::Expr(const Ssam2dLoops &, pulse::Func &)> &weight,
                          const std::function<pulse::Expr(const Ssam2dLoops &)> &on_shape = {}) {
    using namespace pulse;
    const int PE = params.get_int("PE", 32, K, 4096);
    const int C = PE - K + 1;                   // output columns per warp
    const int RT = params.get_int("RT", 8, 1, 64);     // output rows per block of a warp (unrolled)
    const int S = params.get_int("S", 1, 1, 1024);       // row blocks per warp, in sequence
    const int R = params.get_int("R", 2 * RT, 1, 1 << 20);  // output rows (generation-time default; a run-time size)
    const int B = params.get_int("B", 2, 1, 1 << 20);       // column blocks (likewise)
    Var c("c"), p("p"), q("q"), r("r"), b("b"), ro("ro"), ri("ri"), rog("rog"), ros("ros"), s("s"), t("t");
    std::vector<Var> loops{c, p, q, r, b};
    Func X(type, loops, Place::Device, "X"), W(type, loops, Place::Device, "W"), Z(type, loops, Place::Device, "Z"),
        Out(Place::Device, "Out");
    X(c, p, q, r, b) = in(b * C + c + q, r + p);
    W(c, p, q, r, b) = weight(Ssam2dLoops{c, p, q, r, b}, W);
    Expr before = select(p == 0 && q == 0, cast(type, Expr(0.0)), select(p == 0, Z(c, p + K - 1, q - 1, r, b), Z(c, p - 1, q, r, b)));
    Expr sum = before + X(c, p, q, r, b) * W(c, p, q, r, b);
    Z(c, p, q, r, b) = on_shape ? select(on_shape(Ssam2dLoops{c, p, q, r, b}), sum, before) : sum;
    Out(b * C + c, r) = select(p == K - 1 && q == K - 1, Z(c, p, q, r, b));
    X.merge_ures(W, Z, Out).set_bounds(c, 0, C, p, 0, K, q, 0, K, r, 0, R, b, 0, B);
    X.tile(r, ro, ri, RT);
    if (S > 1) {
        X.split(ro, rog, ros, S);
        X.gpu_blocks(b, rog);
    } else {
        X.gpu_blocks(b, ro);
    }
    X.space_time_transform({c, p, q}, {s, t}, {1, 0, 1, /**/ 0, 1, K});
    // THREADS=1: the PEs are the threads of a block (one per thread, over
    // ceil(PE / 32) warps, moves across warps through shared memory) instead
    // of several PEs per lane of one warp.
    if (params.get_int("THREADS", 0, 0, 1)) X.gpu_threads(s);
    // CACHE: where the image's values stay between their load and their uses
    // (0 registers, the default; 1 L1, loaded where used; 2 shared memory,
    // the box an array instance reads staged there).
    const int cache = params.get_int("CACHE", 0, 0, 2);
    if (cache) in.in(X).store_in(cache == 1 ? MemoryType::Global : MemoryType::Shared);
    // WCACHE: likewise for the other inputs (the filter): 0 registers or the
    // constant bank, the default; 1 L1; 2 shared memory, as SSAM keeps it.
    const int weight_cache = params.get_int("WCACHE", 0, 0, 2);
    for (const Input &other : inputs) {
        if (weight_cache && other.name() != in.name()) other.in(X).store_in(weight_cache == 1 ? MemoryType::Global : MemoryType::Shared);
    }
    return Spec{Out, std::move(inputs)};
}

}  // namespace pulse_examples

#endif
