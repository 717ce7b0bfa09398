// Compiles a URE's Halide expression once into a tree of closures, so the
// interpreter and the simulator evaluate millions of points without walking
// Halide IR per point.
#ifndef PULSE_EXPR_COMPILER_H
#define PULSE_EXPR_COMPILER_H

#include <functional>

#include "ir/UreProgram.h"
#include "ir/Scalar.h"

namespace pulse {

/// What a compiled expression sees when it runs.
struct EvalState {
    const int64_t *coords = nullptr;  ///< values of the variables, by slot
    int64_t point_index = 0;          ///< linear index of the current point (for the evaluator's storage)
    bool undefined = false;           ///< set when an undefined select branch was taken
};

/// A compiled expression. Its result is exact for its Halide type: integers
/// wrap around at their width (unsigned and signed alike, as Halide defines
/// it), int64 and uint64 are exact, signed division and modulo are Euclidean
/// (Halide's: the remainder is never negative; x / 0 = x % 0 = 0), float32
/// arithmetic is done in float, float64 in double.
using Closure = std::function<Scalar(EvalState &)>;

struct ExprCompilerHooks {
    /// Slot of a variable in EvalState::coords; throws if unknown.
    std::function<int(const std::string &)> variable_slot;
    /// A recurrence call `V(args)`; `args` evaluate the call's arguments.
    std::function<Closure(const Halide::Internal::Call *, std::vector<Closure> args)> recurrence_call;
    /// A read of an input; `index` evaluates its indices.
    std::function<Closure(const Halide::Internal::Call *, std::vector<Closure> index)> input_call;
};

/// Compiles `e`. Throws CompileError for an operation Pulse does not evaluate.
Closure compile_expr(const Halide::Expr &e, const ExprCompilerHooks &hooks);

/// Rounds `v` to what a value of type `t` holds (float32 rounding, integer
/// wrap-around), in double: exact only where double holds the result (kept
/// for callers that compute in double; Scalar::normalize is exact).
double round_to_type(double v, Halide::Type t);

}  // namespace pulse

#endif
