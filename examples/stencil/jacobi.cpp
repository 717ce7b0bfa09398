// Iterative 2-D Jacobi (the 5-point star) with temporal blocking: each launch
// runs T time steps on chip, in overlapped tiles.
//
//   U(t, gx, gy) = 0.25 * (U(t-1) at the four neighbours)   on the grid's interior,
//   U(t, gx, gy) = U(t-1, gx, gy)                           on its boundary ring and beyond
//
// on a grid of n(0) x n(1) cells (n: a two-element input, the grid's size,
// read by every lane: it goes to constant memory). u is the grid with a pad
// of T cells around it that the tiles at its edges read (held, like the
// ring). One launch maps u to Out = U after T steps on the cells of Out's
// extents; a host loop runs a launch per T steps, the output of one the input
// of the next (benchmarks/jacobi_bench.cu).
//
// The design: a tile of PE x TH cells is one array instance; its columns are
// the PEs (lanes), and the time loop sweeps the tile's rows once per time step
// (time = y + TH * t), so U(t-1) at the cell's row is TH steps back in the
// PE's registers, its neighbours one row earlier and later, and the left and
// right neighbours a shuffle away. After T steps only the tile's interior,
// T cells from each side, is exact: that is what the tile writes, and the
// tiles overlap by 2T columns and rows. The valid cone shrinks by one cell
// per step on each side: outside it U is undefined, and the validator checks
// that no defined value reads an undefined one, so a tile that writes too
// much (a halo too small) is rejected with the read that breaks.
//
// Parameters: WAVE=1 (the steps as a wavefront down tall tiles, in the spec below: with T 6,
// PE 64, TH 64, rolled and prefetched, the fastest 2-D mapping, docs/benchmarks.md),
// T (steps per launch, default 4), PE (tile width, 32), TH (tile
// height, 24: the fastest in fp32 and fp64 at PE 32, docs/benchmarks.md), THREADS=1 (a tile wider than 32 over the warps of a block),
// F64=1 for fp64, BOX=1 for the 9-point box instead of the star, BX, BY (tiles
// across and down at the generation-time sizes the reference and tests use),
// GRID=1 for the device-wide variant (jacobi2d_grid above; SYNC=0 drops its
// gpu_grid_sync, which the validator then refuses).
#include <algorithm>

#include "pulse/pulse.h"

using namespace pulse;

namespace {

// GRID=1: the device-wide variant (deep temporal blocking with the grid
// resident on chip). The tiles do not overlap: tile (bx, by) holds the PE x
// TH cells at (bx PE + x, by TH + y), one per thread of a block (s = x + PE
// y, at most 1024), in shared memory for all T steps of the launch (time =
// t). A cell on a tile's edge reads its neighbours in the adjacent tiles
// from the step before: U(x + PE - 1, y, t - 1, bx - 1, by) for the left
// one, a dependence along the gpu_blocks loop bx, which gpu_grid_sync
// allows: every block waits at a grid-wide barrier after each step, and
// the edge values move through global memory. The launch needs every block
// on the GPU at once (a cooperative launch), so the grid must fit: 8192
// cells per SM at 1024 threads per block, two blocks per SM.
Spec jacobi2d_grid(const Params &params, Type type) {
    const int steps = params.get_int("T", 16, 1, 1 << 16);
    const int PE = params.get_int("PE", 32, 1, 1024), TH = params.get_int("TH", 32, 1, 1024);
    const int BX = params.get_int("BX", 2, 1, 1 << 20), BY = params.get_int("BY", 2, 1, 1 << 20);
    Input u(type, 2, "u"), n(Int(32), 1, "n");
    Var x("x"), y("y"), t("t"), bx("bx"), by("by"), s("s"), time("time");
    Func U(type, {x, y, t, bx, by}, Place::Device, "U"), Out(Place::Device, "Out");
    Expr gx = bx * PE + x, gy = by * TH + y;
    // U(t - 1) at the cell (dx, dy) away: in this tile, or in the one beside,
    // above or below it (ox, oy tiles away).
    auto at = [&](int dx, int dy) -> Expr {
        auto in_tile = [&](int ox, int oy) -> Expr { return U(x + dx - ox * PE, y + dy - oy * TH, t - 1, bx + ox, by + oy); };
        auto column = [&](int ox) -> Expr {
            if (dy == 0) return in_tile(ox, 0);
            Expr inside = dy < 0 ? y + dy >= 0 : y + dy < TH;
            return select(inside, in_tile(ox, 0), in_tile(ox, dy));
        };
        if (dx == 0) return column(0);
        Expr inside = dx < 0 ? x + dx >= 0 : x + dx < PE;
        return select(inside, column(0), column(dx));
    };
    Expr star = cast(type, Expr(0.25)) * (((at(-1, 0) + at(1, 0)) + at(0, -1)) + at(0, 1));
    if (params.get_int("BOX", 0, 0, 1)) {
        Expr sum;
        for (int dy = -1; dy <= 1; dy++) {
            for (int dx = -1; dx <= 1; dx++) sum = sum.defined() ? sum + at(dx, dy) : at(dx, dy);
        }
        star = cast(type, Expr(1.0 / 9.0)) * sum;
    }
    Expr interior = gx >= 1 && gx < n(0) - 1 && gy >= 1 && gy < n(1) - 1;
    U(x, y, t, bx, by) = select(t == 0, u(gx, gy), select(interior, star, at(0, 0)));
    Out(gx, gy) = select(t == steps, U(x, y, t, bx, by));
    U.merge_ures(Out).set_bounds(x, 0, PE, y, 0, TH, t, 0, steps + 1, bx, 0, BX, by, 0, BY);
    U.gpu_blocks(bx, by);
    if (params.get_int("SYNC", 1, 0, 1)) U.gpu_grid_sync();
    U.space_time_transform({x, y, t}, {s, time}, {1, PE, 0, /**/ 0, 0, 1});
    U.gpu_threads(s);
    U.store_in(MemoryType::Shared);
    return Spec{Out, {u, n}};
}

Spec jacobi2d(const Params &params) {
    const Type type = params.get_int("F64", 0, 0, 1) ? Float(64) : Float(32);
    if (params.get_int("GRID", 0, 0, 1)) return jacobi2d_grid(params, type);
    const int steps = params.get_int("T", 4, 1, 32);
    // A tile must keep at least one cell after shedding T from each side.
    const int PE = params.get_int("PE", std::max(32, 2 * steps + 2), 2 * steps + 1, 256);
    const int TH = params.get_int("TH", std::max(24, 2 * steps + 2), 2 * steps + 1, 1 << 16);
    const int BX = params.get_int("BX", 2, 1, 1 << 20), BY = params.get_int("BY", 2, 1, 1 << 20);
    // A wider output than the tile's exact interior, for the validator's test (0: none).
    const int overreach = params.get_int("OVERREACH", 0, 0, 8);
    const int CW = PE - 2 * steps, CH = TH - 2 * steps;  // the cells a tile writes
    Input u(type, 2, "u"), n(Int(32), 1, "n");
    Var x("x"), y("y"), t("t"), bx("bx"), by("by"), s("s"), time("time");
    std::vector<Var> loops{x, y, t, bx, by};
    Func U(type, loops, Place::Device, "U"), Out(Place::Device, "Out");
    Expr gx = bx * CW + x - steps, gy = by * CH + y - steps;  // the tile cell's place in the grid
    // The cells still exact after t steps.
    Expr cone = x >= t && x < PE - t && y >= t && y < TH - t;
    Expr previous = U(x, y, t - 1, bx, by);
    Expr star = cast(type, Expr(0.25)) * (((U(x - 1, y, t - 1, bx, by) + U(x + 1, y, t - 1, bx, by)) + U(x, y - 1, t - 1, bx, by)) +
                                          U(x, y + 1, t - 1, bx, by));
    if (params.get_int("BOX", 0, 0, 1)) {
        // BOX=1: the 9-point box, the mean of the 3 x 3 cells around (rows in
        // order, each left to right: benchmarks/jacobi_bench.cu sums the same way).
        Expr sum;
        for (int dy = -1; dy <= 1; dy++) {
            for (int dx = -1; dx <= 1; dx++) {
                Expr cell = U(x + dx, y + dy, t - 1, bx, by);
                sum = sum.defined() ? sum + cell : cell;
            }
        }
        star = cast(type, Expr(1.0 / 9.0)) * sum;
    }
    Expr interior = gx >= 1 && gx < n(0) - 1 && gy >= 1 && gy < n(1) - 1;
    U(x, y, t, bx, by) = select(t == 0, u(gx, gy), select(cone, select(interior, star, previous)));
    const int lo = steps - overreach;
    Out(bx * CW + x - steps, by * CH + y - steps) =
        select(t == steps && x >= lo && x < PE - lo && y >= lo && y < TH - lo, U(x, y, t, bx, by));
    U.merge_ures(Out).set_bounds(x, 0, PE, y, 0, TH, t, 0, steps + 1, bx, 0, BX, by, 0, BY);
    U.gpu_blocks(bx, by);
    if (params.get_int("WAVE", 0, 0, 1)) {
        // The steps as a wavefront down the tile's rows: row y of step t runs
        // at time (T+1) y + (T+2) t, one row after row y+1 of step t-1, so
        // the T+1 steps stream down the tile together and each PE keeps
        // only 2T+3 values (not a whole tile): TH is bounded by nothing but
        // the grid, and the only halo left is the columns'.
        U.space_time_transform({x, y, t}, {s, time}, {1, 0, 0, /**/ 0, steps + 1, steps + 2});
    } else {
        U.space_time_transform({x, y, t}, {s, time}, {1, 0, 0, /**/ 0, 1, TH});
    }
    // THREADS=1: a tile wider than a warp is one PE per thread over the warps of
    // a block (its columns' left and right neighbours across warps through
    // shared memory) instead of several PEs per lane.
    if (params.get_int("THREADS", 0, 0, 1)) U.gpu_threads(s);
    return Spec{Out, {u, n}};
}

// Iterative 3-D Jacobi (the 7-point star), T steps per launch in overlapped
// tiles of PE x TH x TZ cells (x over the lanes, y and z through the time
// loop):
//
//   U(t, gx, gy, gz) = 0.25 * U(t-1) + 0.125 * (U(t-1) at the six neighbours)   on the interior,
//   U(t, gx, gy, gz) = U(t-1, gx, gy, gz)                                        on the boundary shell
//
// The time loop is a wavefront over the tile's planes: plane z of step t runs
// at time y + TH (T+1) (z + t) + TH t, so the T + 1 steps of a column of
// planes are in flight at once, each one plane behind the step before (the
// plane above it, z + 1 of step t - 1, is ready first), and each step keeps
// only about three planes of TH rows per PE in registers instead of the whole
// tile. Parameters and the overlap as in jacobi2d, with TZ (tile planes,
// default 32) and BZ; n is the grid's size (three elements) and u's pad T
// cells on every side. PLANE=1 maps the tile's PE x TH plane onto the
// threads of a block instead, U held in shared memory (below). BOX=1: the
// 27-point box (the mean of the 3 x 3 x 3 cells around) instead of the star.
Spec jacobi3d(const Params &params) {
    const Type type = params.get_int("F64", 0, 0, 1) ? Float(64) : Float(32);
    const int steps = params.get_int("T", 2, 1, 16);
    const int PE = params.get_int("PE", std::max(32, 2 * steps + 2), 2 * steps + 1, 256);
    const int TH = params.get_int("TH", std::max(8, 2 * steps + 2), 2 * steps + 1, 1024);
    const int TZ = params.get_int("TZ", std::max(64, 2 * steps + 2), 2 * steps + 1, 1024);
    const int BX = params.get_int("BX", 2, 1, 1 << 20), BY = params.get_int("BY", 2, 1, 1 << 20),
              BZ = params.get_int("BZ", 2, 1, 1 << 20);
    const int overreach = params.get_int("OVERREACH", 0, 0, 8);
    const int CW = PE - 2 * steps, CH = TH - 2 * steps, CD = TZ - 2 * steps;  // the cells a tile writes
    Input u(type, 3, "u"), n(Int(32), 1, "n");
    Var x("x"), y("y"), z("z"), t("t"), bx("bx"), by("by"), bz("bz"), s("s"), time("time");
    Func U(type, {x, y, z, t, bx, by, bz}, Place::Device, "U"), Out(Place::Device, "Out");
    Expr gx = bx * CW + x - steps, gy = by * CH + y - steps, gz = bz * CD + z - steps;
    Expr cone = x >= t && x < PE - t && y >= t && y < TH - t && z >= t && z < TZ - t;
    auto previous = [&](int dx, int dy, int dz) { return U(x + dx, y + dy, z + dz, t - 1, bx, by, bz); };
    Expr neighbours = ((((previous(-1, 0, 0) + previous(1, 0, 0)) + previous(0, -1, 0)) + previous(0, 1, 0)) + previous(0, 0, -1)) +
                      previous(0, 0, 1);
    Expr star = cast(type, Expr(0.25)) * previous(0, 0, 0) + cast(type, Expr(0.125)) * neighbours;
    if (params.get_int("BOX", 0, 0, 1)) {
        // BOX=1: the 27-point box, the mean of the 3 x 3 x 3 cells around
        // (planes in order, each row in order, each left to right:
        // benchmarks/jacobi_bench.cu sums the same way).
        Expr sum;
        for (int dz = -1; dz <= 1; dz++) {
            for (int dy = -1; dy <= 1; dy++) {
                for (int dx = -1; dx <= 1; dx++) sum = sum.defined() ? sum + previous(dx, dy, dz) : previous(dx, dy, dz);
            }
        }
        star = cast(type, Expr(1.0 / 27.0)) * sum;
    }
    Expr interior = gx >= 1 && gx < n(0) - 1 && gy >= 1 && gy < n(1) - 1 && gz >= 1 && gz < n(2) - 1;
    U(x, y, z, t, bx, by, bz) = select(t == 0, u(gx, gy, gz), select(cone, select(interior, star, previous(0, 0, 0))));
    const int lo = steps - overreach;
    Out(gx, gy, gz) = select(t == steps && x >= lo && x < PE - lo && y >= lo && y < TH - lo && z >= lo && z < TZ - lo,
                             U(x, y, z, t, bx, by, bz));
    U.merge_ures(Out).set_bounds(x, 0, PE, y, 0, TH, z, 0, TZ, t, 0, steps + 1, bx, 0, BX, by, 0, BY, bz, 0, BZ);
    U.gpu_blocks(bx, by, bz);
    if (params.get_int("PLANE", 0, 0, 1)) {
        // PLANE=1: the tile's PE x TH plane over the threads of a block, one
        // cell per thread (s = x + PE y), and the planes streamed through
        // time as a wavefront: plane z of step t runs at (T+1) z + (T+2) t,
        // one step after plane z+1 of step t-1, so each thread keeps 2T+3
        // values of its column in registers (2.5-D blocking). Each step's
        // values go through shared memory, where the neighbours in y (PE
        // threads away) and x read them: one barrier per step.
        U.space_time_transform({x, y, z, t}, {s, time}, {1, PE, 0, 0, /**/ 0, 0, steps + 1, steps + 2});
        U.gpu_threads(s);
        U.store_in(MemoryType::Shared);
    } else {
        U.space_time_transform({x, y, z, t}, {s, time}, {1, 0, 0, 0, /**/ 0, 1, TH * (steps + 1), TH * (steps + 2)});
        if (params.get_int("THREADS", 0, 0, 1)) U.gpu_threads(s);
    }
    // The tile's input is loaded where its step is, one plane per wavefront
    // period (CACHE=0 hoists them all into registers at the top: TH x TZ per PE).
    if (params.get_int("CACHE", 1, 0, 1)) u.in(U).store_in(MemoryType::Global);
    return Spec{Out, {u, n}};
}

}  // namespace

PULSE_REGISTER_SPEC("jacobi3d", "3-D Jacobi (7-point star, or the 27-point box), T steps per launch in overlapped tiles, a wavefront over their planes",
                    jacobi3d);
PULSE_REGISTER_SPEC("jacobi2d", "2-D Jacobi (5-point star), T steps per launch in overlapped tiles (temporal blocking)",
                    jacobi2d);
