// 2-D stencils with constant coefficients, one sweep:
//   Out(x, y) = sum over the stencil's points (dx, dy) of coef(dx, dy) * u(x + dx, y + dy)
// over the interior of u (the ring of width R, the stencil's radius, is not
// written: Out is u's interior, Out(i, j) = the stencil at u(i + R, j + R)).
//
// The design is SSAM's (the conv2d_ssam spec): per window row the partial sum
// moves one lane per window column (space s = c + q), the window rows run
// inside a step (time t = p + K*q), RT output rows per warp share a register
// window, the image width and height are run-time sizes. The coefficients are
// constants of the spec: once the time loop is unrolled each step's
// coefficient is a constant, and the points outside the stencil's shape (the
// corners of a star) cost nothing.
//
// Specs: stencil2d_5pt (star, radius 1), stencil2d_9pt (3x3 box),
// stencil2d_25pt (5x5 box), stencil2d_star2 (star, radius 2: 9 points).
// Parameters: F64=1 for fp64 (default fp32), PE (array width, default 32),
// RT (rows per warp, 8), S (row blocks a warp walks, 1), R and B (the
// generation-time sizes the reference and the tests use).
#include <cmath>

#include "pulse/pulse.h"

using namespace pulse;

namespace {

struct Point {
    int dx, dy;
    double coefficient;
};

Spec stencil2d(const Params &params, int radius, const std::vector<Point> &points) {
    const Type T = params.get_int("F64", 0) ? Float(64) : Float(32);
    const int K = 2 * radius + 1;
    const int PE = params.get_int("PE", 32);
    const int C = PE - K + 1;                 // output columns per warp
    const int RT = params.get_int("RT", 8);
    const int S = params.get_int("S", 1);
    const int R = params.get_int("R", 2 * RT);
    const int B = params.get_int("B", 2);
    Var c("c"), p("p"), q("q"), r("r"), b("b"), ro("ro"), ri("ri"), rog("rog"), ros("ros"), s("s"), t("t");
    Input u(T, 2, "u");
    std::vector<Var> loops{c, p, q, r, b};
    Func X(T, loops, Place::Device, "X"), W(T, loops, Place::Device, "W"), Z(T, loops, Place::Device, "Z"),
        Out(Place::Device, "Out");
    // The coefficient of window point (q, p) = (dx + radius, dy + radius); zero off the shape.
    Expr coefficient = cast(T, Expr(0.0));
    for (const Point &pt : points) {
        coefficient = select(q == pt.dx + radius && p == pt.dy + radius, cast(T, Expr(pt.coefficient)), coefficient);
    }
    X(c, p, q, r, b) = u(b * C + c + q, r + p);
    W(c, p, q, r, b) = coefficient;
    Z(c, p, q, r, b) = select(p == 0 && q == 0, cast(T, Expr(0.0)),
                              select(p == 0, Z(c, p + K - 1, q - 1, r, b), Z(c, p - 1, q, r, b))) +
                       X(c, p, q, r, b) * W(c, p, q, r, b);
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
    return Spec{Out, {u}};
}

/// A star of `radius`: the centre and `radius` points along each axis, each
/// ring's coefficient halving.
std::vector<Point> star(int radius) {
    std::vector<Point> points{{0, 0, 0.5}};
    for (int k = 1; k <= radius; k++) {
        double c = 0.125 / (1 << (k - 1));
        points.push_back({k, 0, c});
        points.push_back({-k, 0, c});
        points.push_back({0, k, c});
        points.push_back({0, -k, c});
    }
    return points;
}

/// A (2 radius + 1)^2 box with distinct coefficients (a smoothing kernel).
std::vector<Point> box(int radius) {
    std::vector<Point> points;
    for (int dy = -radius; dy <= radius; dy++) {
        for (int dx = -radius; dx <= radius; dx++) {
            points.push_back({dx, dy, 1.0 / ((2 * radius + 1) * (2 * radius + 1)) * (1.0 + 0.125 * (dx - dy))});
        }
    }
    return points;
}

Spec stencil2d_5pt(const Params &params) { return stencil2d(params, 1, star(1)); }
Spec stencil2d_9pt(const Params &params) { return stencil2d(params, 1, box(1)); }
Spec stencil2d_25pt(const Params &params) { return stencil2d(params, 2, box(2)); }
Spec stencil2d_star2(const Params &params) { return stencil2d(params, 2, star(2)); }

}  // namespace

PULSE_REGISTER_SPEC("stencil2d_5pt", "2-D 5-point star stencil, one sweep (SSAM's design)", stencil2d_5pt);
PULSE_REGISTER_SPEC("stencil2d_9pt", "2-D 3x3 box stencil, one sweep", stencil2d_9pt);
PULSE_REGISTER_SPEC("stencil2d_25pt", "2-D 5x5 box stencil, one sweep", stencil2d_25pt);
PULSE_REGISTER_SPEC("stencil2d_star2", "2-D star stencil of radius 2 (9 points), one sweep", stencil2d_star2);
