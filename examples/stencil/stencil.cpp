// 2-D stencils with constant coefficients, one sweep:
//   Out(x, y) = sum over the stencil's points (dx, dy) of coef(dx, dy) * u(x + dx, y + dy)
// over the interior of u (the ring of width R, the stencil's radius, is not
// written: Out is u's interior, Out(i, j) = the stencil at u(i + R, j + R)).
//
// The design is SSAM's (examples/common/ssam2d.h, as conv2d_ssam). The coefficients are
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

#include "../common/ssam2d.h"

using namespace pulse;

namespace {

struct Point {
    int dx, dy;
    double coefficient;
};

Spec stencil2d(const Params &params, int radius, const std::vector<Point> &points) {
    const Type T = params.get_int("F64", 0, 0, 1) ? Float(64) : Float(32);
    Input u(T, 2, "u");
    return pulse_examples::ssam2d(params, T, 2 * radius + 1, u, {u}, [&](const pulse_examples::Ssam2dLoops &l, Func &) {
        // The coefficient of window point (q, p) = (dx + radius, dy + radius); zero off the shape.
        Expr coefficient = cast(T, Expr(0.0));
        for (const Point &pt : points) {
            coefficient = select(l.q == pt.dx + radius && l.p == pt.dy + radius, cast(T, Expr(pt.coefficient)), coefficient);
        }
        return coefficient;
    });
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
