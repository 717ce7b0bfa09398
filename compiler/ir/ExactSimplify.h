// Halide's simplifier, held to the language's scalar semantics. Halide's own
// rules treat floats as real numbers: they reassociate (x - (y - z) becomes
// x + (z - y)), fold x * 0 and x - x to 0 (wrong for NaN and infinities),
// turn select(a > b, a, b) into max(a, b) (wrong for NaN), and negate
// comparisons (!(a < b) is not b <= a for NaN); and they assume that int32
// and int64 arithmetic never overflows (min(0, a + 25) becomes
// min(a, -25) + 25, which differs where a + 25 wraps). Every pass simplifies
// with simplify_exact instead, so that no evaluator and no generated program
// computes different bits because a pass rewrote the arithmetic. Index
// arithmetic (IndexArithmetic.h), which never overflows in an accepted
// program, is simplified as Halide does.
#ifndef PULSE_EXACT_SIMPLIFY_H
#define PULSE_EXACT_SIMPLIFY_H

#include <Halide.h>

namespace pulse {

/// Halide's simplify with float arithmetic, float comparisons, conversions
/// from float, and min, max, /, % and comparisons of int32 and int64 values
/// (not index arithmetic) hidden from it as opaque calls for its run (their
/// operands still simplified) and restored after; the rest (index
/// arithmetic, +, - and * of integer values, which wrap exactly as the
/// simplifier's reassociation assumes, selects, boolean logic) is
/// simplified as before.
Halide::Expr simplify_exact(const Halide::Expr &e);
Halide::Internal::Stmt simplify_exact(const Halide::Internal::Stmt &s);

}  // namespace pulse

#endif
