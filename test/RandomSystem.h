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

/// A space-time transform of a system.
struct Transform {
    std::vector<int> source;                   ///< loop indices, innermost first
    std::vector<std::vector<int64_t>> matrix;  ///< space rows, then the time row
};

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
    /// rounding down), 'm' (min), 'M' (max), 'a' and 's' (saturating + and -, integers), or 0 for nothing.
    char modifier = 0;
    int64_t operand = 2;
    /// InputRead: the value read indexes the system's table, and the term is
    /// the table's element there: `tab(x(i + 1))` (System::table_extent).
    bool via_table = false;
};

/// A condition on one loop: `i < value`, `i > value`, `i == value` or
/// `i % 2 == value` (kind '<', '>', '=', '%').
struct Condition {
    int loop = -1;  ///< -1: none
    char kind = '<';
    int64_t value = 0;
    bool present() const { return loop >= 0; }
};

/// `name(x) = [select(defined_from,] t0 op t1 op ... [)]`, or a copy
/// `select(guard, V(x - d), root)` when `copy`: terms[0] is the read, the
/// others the root, an expression like a definition's (its reads of other
/// recurrences at the same point make a root computed in the same step).
/// With `root_split`, the root is `select(nested, root1, root2)`
/// (select(g1, V(x - d), select(g2, a, b))), or with `nested_outside`
/// `select(nested, select(guard, V(x - d), root1), root2)`.
struct Recurrence {
    Halide::Type type = Halide::Int(32);
    std::vector<Term> terms;
    /// ops[n - 1] joins terms[n] to the term before it in the same
    /// expression: '+', '-', '*'; unused before the first term of a root.
    std::vector<char> ops;
    bool copy = false;
    size_t root_split = 0;        ///< copy: > 0, root1 is terms [1, root_split), root2 [root_split, end)
    Condition nested;             ///< copy with root_split: where root1 is taken
    bool nested_outside = false;  ///< copy with root_split: the chain's select inside the nested one
    Condition copy_only;          ///< copy: it copies only where this holds too (a conjunct of its guard)
    int partial_loop = -1;     ///< >= 0: defined only where that loop >= partial_from (select without a false value)
    int64_t partial_from = 0;
};

/// `Out(kept loops) = select(dropped loop == at && ..., R(x))`.
struct Output {
    int recurrence = 0;
    std::vector<bool> kept;   ///< per loop
    std::vector<int64_t> at;  ///< per dropped loop: the value it is written at
    bool at_or_above = false; ///< `>=` instead of `==` on the first dropped loop (written several times)
    /// A reduction output (an ir::ReduceOp; -1: a plain output): `Out(kept)
    /// = 3; Out(kept) = op(Out(kept), select(dropped <= at, ...))`, folding
    /// every point up to `at` on the dropped loops.
    int reduce = -1;
};

/// A condition of an affine domain (F.where): `sum coefficient[l] * loop l <= bound`.
struct Constraint {
    std::vector<int64_t> coefficient;  ///< per loop, innermost first
    int64_t bound = 0;
    bool uses(size_t loop) const { return coefficient[loop] != 0; }
};

struct System {
    Halide::Type type = Halide::Int(32);  ///< the type of every recurrence and input unless mixed (Recurrence::type, input_types)
    std::vector<int64_t> mins, extents;  ///< per loop, innermost first
    std::vector<int> input_dims;
    std::vector<Halide::Type> input_types;  ///< per input
    std::vector<Recurrence> recurrences;
    std::vector<Output> outputs;
    /// Percent of the input elements the checks replace by extreme values
    /// (plant_extremes): NaN, +-inf, -0.0, huge floats; the ends of an
    /// integer type's range. 0: none.
    int extremes = 0;
    /// A table input `tab` of the system's type and this extent (1-D), read
    /// at the values of input reads (Term::via_table); 0: none.
    int64_t table_extent = 0;
    /// Drawn with the shapes of ShapeClass; some of its transforms are then
    /// drawn to make one of its chains a same-step chain.
    bool shaped = false;
    /// Shaped: per loop, a time row its dependences were drawn for (copy
    /// chains of themselves mostly no steps, the others at least one), which
    /// some of its transforms take.
    std::vector<int64_t> planned_time;
    /// The domain's conditions beyond the box (A.where(...)); empty: the box.
    /// Drawn so that the domain keeps every element each output writes and
    /// leaves out some point of the box; every recurrence read is then
    /// guarded to be taken only where its point lies in the domain.
    std::vector<Constraint> constraints;
    /// A data bound (a ragged batch), or -1: `A.where(loop < len(...))`, an
    /// Int(32) input `len` read at the loops `ragged_by` (outside the array).
    /// Set by the fuzzer on a copy of a system, for one of its transforms
    /// (ragged_loop_for).
    int ragged_loop = -1;
    std::vector<int> ragged_by;
    size_t loops() const { return extents.size(); }
};

/// Whether `point` (per loop) is in the system's domain: its box and every constraint.
bool in_domain(const System &system, const std::vector<int64_t> &point);
/// The number of points of the system's domain, and of its box.
int64_t domain_points(const System &system);
int64_t box_points(const System &system);

/// Shapes the drawing makes on purpose (a bit each in shape_classes):
///  a: a copy chain whose root reads another recurrence at the same point;
///  b: a chain through two variables (a chain that copies another chain, or
///     whose root reads one);
///  c: a computed broadcast (a root of constants and inputs at indices the
///     chain's distance does not change);
///  d: a root under a nested select;
///  e: two or more copy chains;
///  f: mixed element types, with casts;
///  g: extreme input values (System::extremes).
enum ShapeClass { ChainComputedRoot, ChainOfChains, ComputedBroadcast, NestedRoot, SeveralChains, MixedTypes, ExtremeInputs,
                  shape_class_count };
const char *shape_class_name(int c);  ///< "a" .. "g"
unsigned shape_classes(const System &system);

/// The classes among a..e whose chain is a same-step chain under
/// `transform` (one space row): the copy of itself moves dp != 0 PEs in dt = 0 steps.
/// For e, two chains are.
unsigned same_step_classes(const System &system, const Transform &transform);

/// The recurrences that are broadcasts under `transform` (one space row, at
/// most two source loops): a same-step copy of themselves whose root reads
/// no recurrence and indexes inputs only along the time row (and loops
/// outside the transform), so it is the same on every PE of a step. The
/// kernel must compute them in place on each PE.
std::vector<int> broadcasts(const System &system, const Transform &transform);

/// Whether the transform's reverse map is affine with integer coefficients
/// (a unimodular square matrix): no floor division hides that a root
/// following the time step is the same on every PE.
bool integer_reverse(const Transform &transform);

/// The name of recurrence r in the built spec ("A", "B", ...).
const char *recurrence_name(size_t r);

/// Replaces `system.extremes` percent of the elements of `inputs` (drawn from
/// `seed`) by extreme values of their type.
void plant_extremes(const System &system, Buffers &inputs, uint32_t seed);

/// A system drawn from `rng`: 1 to 3 loops, 1 to 4 recurrences, int or float.
/// About a third of them (of two or three loops) on an affine domain: one
/// or two constraints (System::constraints), drawn from a generator of their
/// own so that the other draws are as before them.
/// Most are well defined; some carry a defect (no base case, a read where a
/// select leaves a value undefined, an output written twice or never, or
/// dependences no sequential order computes). About 40% are drawn with the
/// shapes of ShapeClass (2 or 3 loops, 3 to 5 recurrences: a computed first
/// one, copy chains, and a last one that reads every other one); the others
/// as before them, from the same draws.
System draw_system(std::mt19937 &rng);

/// A transform of `system` drawn from `rng` with `space_rows` space rows
/// (entries in [-2, 2]); sometimes a loop is left out of the source loops
/// (never one a domain constraint uses: a constraint is on the array's loops).
/// For a shaped system, often a time row that makes one of its copy chains
/// a same-step chain: the planned one, or one orthogonal to a chain.
Transform draw_transform(std::mt19937 &rng, const System &system, int space_rows);

/// True if a term of `system` reads its table (System::table_extent).
bool uses_table(const System &system);
/// Whether a definition applies saturating_add or saturating_sub.
bool uses_saturating(const System &system);

/// `transform` with the loop output 0 keeps (its only one) left out of the
/// array, where the system is not on a domain that constrains it and the
/// array keeps a loop.
void leave_out_kept_loop(const System &system, Transform &transform);

/// A loop of `transform`'s array a data bound could bound (its time
/// coefficient positive, its space ones zero) where every reduction output
/// reduces over the loops outside the array (an output that is not one is
/// written up to the bound), and a loop lies outside the array; -1 if none.
int ragged_loop_for(const System &system, const Transform &transform);

/// Whether a recurrence reads `loop` at a higher value (a distance below 0
/// along it): a data bound on it is refused.
bool reads_above(const System &system, int loop);

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
