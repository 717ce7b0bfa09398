// Random URE systems for the differential fuzzer: a small description drawn
// from a seed, built through the language (Func, Var, select) as a user
// writes a spec, printed as that spec's C++ text, and made smaller by the
// shrinker.
#ifndef PULSE_TEST_RANDOM_SYSTEM_H
#define PULSE_TEST_RANDOM_SYSTEM_H

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ir/UreProgram.h"
#include "pulse/pulse.h"

namespace pulse::test {

/// One operand of a definition.
struct Term {
    enum Kind { Constant, InputRead, RecurrenceRead } kind = Constant;
    int64_t value = 1;  ///< Constant: the constant; RecurrenceRead: the value where the guard fails
    int target = 0;     ///< InputRead: the input; RecurrenceRead: the recurrence
    /// InputRead: per input dimension, a coefficient per loop then a constant.
    std::vector<std::vector<int64_t>> index;
    std::vector<int64_t> distance;  ///< RecurrenceRead: d, per loop, innermost first
    bool guarded = true;            ///< read only where x - d is in the domain and the producer defined there
    bool negated_guard = false;     ///< print the guard as select(outside, fallback, read)
    /// Applied to the operand with `operand`: '/', '%' (Halide's division,
    /// rounding down), 'm' (min), 'M' (max), or 0 for nothing.
    char modifier = 0;
    int64_t operand = 2;
};

/// `name(x) = [select(defined_from,] t0 op t1 op ... [)]`, or a copy
/// `select(guard, V(x - d), base)` when `copy` (terms: the read, then the base).
struct Recurrence {
    std::vector<Term> terms;
    std::vector<char> ops;  ///< between terms: '+', '-', '*'
    bool copy = false;
    int partial_loop = -1;     ///< >= 0: defined only where that loop >= partial_from (select without a false value)
    int64_t partial_from = 0;
};

/// `Out(kept loops) = select(dropped loop == at && ..., R(x))`.
struct Output {
    int recurrence = 0;
    std::vector<bool> kept;   ///< per loop
    std::vector<int64_t> at;  ///< per dropped loop: the value it is written at
    bool at_or_above = false; ///< `>=` instead of `==` on the first dropped loop (written several times)
};

struct System {
    Halide::Type type = Halide::Int(32);
    std::vector<int64_t> mins, extents;  ///< per loop, innermost first
    std::vector<int> input_dims;
    std::vector<Recurrence> recurrences;
    std::vector<Output> outputs;
    size_t loops() const { return extents.size(); }
};

/// A space-time transform of a system.
struct Transform {
    std::vector<int> source;                   ///< loop indices, innermost first
    std::vector<std::vector<int64_t>> matrix;  ///< space rows, then the time row
};

/// A system drawn from `rng`: 1 to 3 loops, 1 to 4 recurrences, int or float.
/// Most are well defined; some carry a defect (no base case, a read where a
/// select leaves a value undefined, an output written twice or never, or
/// dependences no sequential order computes).
System draw_system(std::mt19937 &rng);

/// A transform of `system` drawn from `rng` with `space_rows` space rows
/// (entries in [-2, 2]); sometimes a loop is left out of the source loops.
Transform draw_transform(std::mt19937 &rng, const System &system, int space_rows);

/// The spec built through the language and lowered (Func::lower, which may
/// throw CompileError), with the transform applied.
ir::UreProgram build_system(const System &system, const Transform &transform);

/// Puts `transform` in place of the transform of `program` (built from the
/// same system), without building it again.
void apply_transform(ir::UreProgram &program, const Transform &transform);

/// The spec as Pulse C++ a developer can paste into a spec builder: the
/// definitions, the bounds, the transform and the Spec it returns.
std::string system_cpp(const System &system, const Transform &transform);

/// Smaller variants of a failing case, most aggressive first: fewer outputs,
/// recurrences, terms and loops, smaller bounds and matrix entries. Each is
/// still a well-formed description.
std::vector<std::pair<System, Transform>> shrink_candidates(const System &system, const Transform &transform);

}  // namespace pulse::test

#endif
