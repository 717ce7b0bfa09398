// The polyhedral model of a URE program, in isl: the bounded iteration domain,
// one relation per uniform dependence and the space-time map. The validator
// (Validate.h) proves a transform legal on it; other passes may reuse it.
//
// Every set and map here is an isl object owned through isl's C++ bindings
// (isl/cpp.h), so nothing leaks, and every tuple dimension carries the name of
// its loop, so isl's printouts and sample points read like the spec.
// Dimensions follow the order of the loop list they are built from (Pulse
// lists loops innermost first).
#ifndef PULSE_ISL_MODEL_H
#define PULSE_ISL_MODEL_H

#include <isl/cpp.h>

#include <optional>
#include <string>
#include <vector>

#include "ir/UreProgram.h"

namespace pulse {
namespace isl_model {

/// Owns one isl_ctx. isl errors are turned into isl::exception (the C++
/// bindings throw when an operation fails) instead of aborting the process.
class Context {
public:
    Context();
    ~Context();
    Context(const Context &) = delete;
    Context &operator=(const Context &) = delete;
    isl::ctx ctx() const { return isl::ctx(ptr); }

private:
    isl_ctx *ptr;
};

/// The domain of the given loops of `program` (names of loops in
/// program.loops, in the order wanted for the set's dimensions): the box of
/// their bounds, { [l0, l1, ...] : min_i <= l_i <= max_i }, less the points
/// the program's constraints (`where`) exclude; where a constraint uses a
/// loop not named, the projection of the whole domain.
isl::set iteration_domain(const Context &context, const ir::UreProgram &program,
                          const std::vector<std::string> &loops);

/// The box of all of `program`'s loops (in program.loops order) with each loop
/// outside the array (not a source loop of the transform; every loop if there
/// is none) unbounded above: its extent is a run-time size, so what holds on
/// this set holds at every extent.
isl::set runtime_domain(const Context &context, const ir::UreProgram &program);

/// An affine Halide expression in the variables of `domain`'s dimensions, as a
/// piecewise affine function on `domain`'s space. Supports integer constants,
/// loop variables, +, -, * by a constant, / and % by a positive constant
/// (Halide's floor semantics), min, max and integer casts. Returns nullopt for
/// anything else (a non-affine product, an unknown variable, a call, ...).
std::optional<isl::pw_aff> affine_expr(const Halide::Expr &e, const isl::set &domain);

/// The points of `domain` where the boolean expression `condition` holds.
struct ConditionSet {
    isl::set set;
    /// False if `condition` had a part that is not affine: `set` is then the
    /// whole domain, an over-approximation.
    bool exact = true;
};

/// Converts a condition built from affine comparisons (==, !=, <, <=, >, >=),
/// &&, ||, ! and boolean constants. A condition with any non-affine part is
/// over-approximated by the whole domain: an approximation of only that part
/// would not be sound under a negation, and for the validator a larger
/// dependence relation is the safe side (it can only reject more transforms).
ConditionSet condition_set(const Halide::Expr &condition, const isl::set &domain);

/// The relation of one dependence over `domain` (a domain built from all the
/// loops of `program`, in program.loops order):
///   { x -> x - d : x in domain, condition(x), x - d in domain }.
/// `exact` (if given) is set to whether the condition was converted exactly.
isl::map dependence_relation(const ir::UreProgram &program, const ir::Dependence &dependence,
                             const isl::set &domain, bool *exact = nullptr);

/// { x -> x - d } on the space of `domain` (unrestricted).
isl::map shift_map(const isl::set &domain, const std::vector<int64_t> &distance);

/// The space-time map x -> (P x, s x) of `transform` restricted to
/// `source_domain` (a domain built from transform.source_loops, in that order).
/// The range's dimensions carry the names of the destination loops.
isl::map forward_map(const ir::SpaceTimeTransform &transform, const isl::set &source_domain);

/// The pairs of distinct points that a map sends to the same image:
/// { x -> y : x <lex y, F x = F y }. Empty iff `map` is injective on its domain.
isl::map collisions(const isl::map &map);

/// The integer coordinates of a point of a set (no parameters).
std::vector<int64_t> coordinates(const isl::point &point);

/// The lexicographically smallest pair of a non-empty collision relation
/// (a deterministic witness): the first and the second point's coordinates.
std::pair<std::vector<int64_t>, std::vector<int64_t>> first_collision(const isl::map &collisions);

}  // namespace isl_model
}  // namespace pulse

#endif
