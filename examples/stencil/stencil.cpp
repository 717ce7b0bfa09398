// 2-D and 3-D stencils with constant coefficients, one sweep:
//   Out(x, y) = sum over the stencil's points (dx, dy) of coef(dx, dy) * u(x + dx, y + dy)
//   Out(x, y, z) = sum over the points (dx, dy, dz) of coef(dx, dy, dz) * u(x + dx, y + dy, z + dz)
// over the interior of u (the ring of width R, the stencil's radius, is not
// written: Out is u's interior, Out(i, j) = the stencil at u(i + R, j + R),
// Out(i, j, k) at u(i + R, j + R, k + R)).
//
// The design is SSAM's (examples/common/ssam2d.h, as conv2d_ssam; in 3-D
// examples/common/ssam3d.h: lanes along x, the partial sum moving one lane
// per dx, the (dy, dz) window inside the time loop, the output rows (y) tiled
// by RT and the output planes (z) a per-thread loop of S planes per warp whose
// shared planes stay in registers). The coefficients are constants of the
// spec: once the time loop is unrolled each step's coefficient is a constant,
// and the points outside the stencil's shape (the corners of a star) cost
// nothing.
//
// Specs: stencil2d_5pt (star, radius 1), stencil2d_9pt (3x3 box),
// stencil2d_25pt (5x5 box), stencil2d_star2 (star, radius 2: 9 points),
// stencil3d_7pt (star, radius 1: 0.25 at the centre, 0.125 at each
// neighbour), stencil3d_27pt (3x3x3 box, distinct coefficients
// (1 + dx/8 - dy/16 + dz/32) / 27).
// Parameters: F64=1 for fp64 (default fp32), PE (array width, default 32),
// RT (rows per warp: 2-D 8; 3-D 8 in fp32, 4 in fp64), S (2-D: row blocks a
// warp walks, 1; 3-D: planes a warp walks, 32; S = 1 makes the planes a grid
// loop), R, D and B (the generation-time sizes the reference and the tests
// use: rows, planes (3-D), column blocks).
#include <cmath>

#include "pulse/pulse.h"

#include "../common/ssam2d.h"
#include "../common/ssam3d.h"

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
    }, [&](const pulse_examples::Ssam2dLoops &l) {
        // The points of the shape: the sum skips the rest of the window.
        Expr on;
        for (const Point &pt : points) {
            Expr here = l.q == pt.dx + radius && l.p == pt.dy + radius;
            on = on.defined() ? (on || here) : here;
        }
        return on;
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

struct Point3 {
    int dx, dy, dz;
    double coefficient;
};

Spec stencil3d(const Params &params, int radius, const std::vector<Point3> &points) {
    const bool f64 = params.get_int("F64", 0, 0, 1);
    const Type T = f64 ? Float(64) : Float(32);
    Input u(T, 3, "u");
    // The default mapping (docs/benchmarks.md, "3-D stencils"): each warp walks
    // 32 planes; 8 rows per plane in fp32, 4 in fp64 (half the registers, so
    // two blocks of 8 warps still fit on an SM).
    pulse_examples::Ssam3dDefaults defaults;
    defaults.PE = 32, defaults.RT = f64 ? 4 : 8, defaults.S = 32;
    return pulse_examples::ssam3d(params, T, 2 * radius + 1, u, {u}, [&](const pulse_examples::Ssam3dLoops &l, Func &) {
        // The coefficient of window point (q, p, n) = (dx, dy, dz) + radius; zero off the shape.
        Expr coefficient = cast(T, Expr(0.0));
        for (const Point3 &pt : points) {
            coefficient = select(l.q == pt.dx + radius && l.p == pt.dy + radius && l.n == pt.dz + radius,
                                 cast(T, Expr(pt.coefficient)), coefficient);
        }
        return coefficient;
    }, defaults, [&](const pulse_examples::Ssam3dLoops &l) {
        // The points of the shape: the sum skips the rest of the window.
        Expr on;
        for (const Point3 &pt : points) {
            Expr here = l.q == pt.dx + radius && l.p == pt.dy + radius && l.n == pt.dz + radius;
            on = on.defined() ? (on || here) : here;
        }
        return on;
    });
}

/// The 7-point star of radius 1: 0.25 at the centre, 0.125 at each of its six neighbours.
std::vector<Point3> star3d() {
    std::vector<Point3> points{{0, 0, 0, 0.25}};
    for (int k : {-1, 1}) {
        points.push_back({k, 0, 0, 0.125});
        points.push_back({0, k, 0, 0.125});
        points.push_back({0, 0, k, 0.125});
    }
    return points;
}

/// The 3 x 3 x 3 box with distinct coefficients: (1 + 0.125 dx - 0.0625 dy + 0.03125 dz) / 27.
std::vector<Point3> box3d() {
    std::vector<Point3> points;
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) points.push_back({dx, dy, dz, (1.0 + 0.125 * dx - 0.0625 * dy + 0.03125 * dz) / 27});
    return points;
}

Spec stencil2d_5pt(const Params &params) { return stencil2d(params, 1, star(1)); }
Spec stencil2d_9pt(const Params &params) { return stencil2d(params, 1, box(1)); }
Spec stencil2d_25pt(const Params &params) { return stencil2d(params, 2, box(2)); }
Spec stencil2d_star2(const Params &params) { return stencil2d(params, 2, star(2)); }
Spec stencil3d_7pt(const Params &params) { return stencil3d(params, 1, star3d()); }
Spec stencil3d_27pt(const Params &params) { return stencil3d(params, 1, box3d()); }

}  // namespace

PULSE_REGISTER_SPEC("stencil2d_5pt", "2-D 5-point star stencil, one sweep (SSAM's design)", stencil2d_5pt);
PULSE_REGISTER_SPEC("stencil2d_9pt", "2-D 3x3 box stencil, one sweep", stencil2d_9pt);
PULSE_REGISTER_SPEC("stencil2d_25pt", "2-D 5x5 box stencil, one sweep", stencil2d_25pt);
PULSE_REGISTER_SPEC("stencil2d_star2", "2-D star stencil of radius 2 (9 points), one sweep", stencil2d_star2);
PULSE_REGISTER_SPEC("stencil3d_7pt", "3-D 7-point star stencil, one sweep (SSAM's design in 3-D)", stencil3d_7pt);
PULSE_REGISTER_SPEC("stencil3d_27pt", "3-D 3x3x3 box stencil, one sweep", stencil3d_27pt);
