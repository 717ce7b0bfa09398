// Analysis: the UREs whose propagation can be rewritten (lower/PropagationRewrites.h):
// input carriers and single-loop reductions.
//
// An input carrier holds an input element: read in place, `U(x) = in(f(x))`,
// or passed along a copy chain, `U(x) = select(c, in(f(x)), U(x - d))`. It
// can be read in place instead, or forwarded along any direction `d` that
// keeps its index (`f(x - d) = f(x)`).
//
// A reduction accumulates along one loop k, `U(x) = select(c, init, U(x - d)) + body`
// with `d = ±e_k`, and its outputs read it where it ends, `Out = select(o, U(x))`,
// with c and o about loop k only. It can be accumulated the other way along k.
//
// The design-space explorer (tools/Explore.h, docs/exploration.md) tries
// every such propagation of a spec's UREs.
#ifndef PULSE_FIND_PROPAGATIONS_H
#define PULSE_FIND_PROPAGATIONS_H

#include <optional>
#include <string>
#include <vector>

#include "ir/UreProgram.h"

namespace pulse {

/// Largest entry of a forwarding direction find_carrier tries: enough for unit
/// moves and for strided reads (x(2c + q) travels along (-1, 2)).
constexpr int64_t max_carrier_direction_entry = 2;

/// An input carrier: `U(x) = in(f(x))`, or a copy chain `U(x) = select(c, in(f(x)), U(x - d))`.
struct Carrier {
    std::string ure;
    Halide::Expr read;                            ///< in(f(x))
    /// Over the source loops, f(x - d) = f(x): every direction with entries in
    /// [-max_carrier_direction_entry, max_carrier_direction_entry] and no
    /// common factor (2d is d with every other point idle), in lexicographic order.
    std::vector<std::vector<int64_t>> directions;
};

/// A reduction: `U(x) = select(c, init, U(x - d)) + body` with d = ±e_k, and
/// outputs `select(o, U(x))`; c and o mention only loop k.
struct Reduction {
    std::string ure;
    int loop = -1;                  ///< k, index into program.loops
    std::vector<int64_t> distance;  ///< d over the nest's loops
};

/// `u` as an input carrier, or nothing. `u` must span the nest (a recurrence
/// with one argument per loop); `source_loops` (a transform's source loops,
/// innermost first) are the loops its directions move along.
std::optional<Carrier> find_carrier(const ir::UreProgram &program, const std::vector<std::string> &source_loops, const ir::Ure &u);

/// `u` as a reduction along one of `source_loops`, or nothing: `u` spans the
/// nest, its only dependence on itself is the accumulation (one nonzero
/// entry, ±1, on a source loop), every other reader is an output reading it
/// at distance 0, and the conditions of its select and of every output's
/// select mention no loop but k. `program.dependences` must be those of its UREs.
std::optional<Reduction> find_reduction(const ir::UreProgram &program, const std::vector<std::string> &source_loops,
                                        const ir::Ure &u);

}  // namespace pulse

#endif
