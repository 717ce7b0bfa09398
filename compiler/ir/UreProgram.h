// The URE program: the compiler's first IR. It is built from the embedded
// language (frontend/) by build_ure_program and is independent of the frontend's
// handles, so every later pass (dependence analysis, the isl model, the
// space-time transform, the backends) reads only this.
#ifndef PULSE_URE_PROGRAM_H
#define PULSE_URE_PROGRAM_H

#include <Halide.h>

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pulse/Error.h"
#include "pulse/Types.h"

namespace pulse {

namespace ir {

/// One loop of the merged nest. Loops are listed innermost first (Halide order).
struct Loop {
    std::string var;
    int64_t min = 0;
    int64_t extent = 0;
    int64_t max() const { return min + extent - 1; }
};

/// An external input buffer read at affine indices.
struct InputDecl {
    std::string name;
    Halide::Type type;
    int dimensions = 0;
    /// A table (Input(type, {extents}, name)): its extents, each index read
    /// clamped into [0, extent); empty for an input read at affine indices.
    /// A table's reads are not InputAccesses: its region is the whole table.
    std::vector<int64_t> table_extents;
    bool is_table() const { return !table_extents.empty(); }
};

/// The table's extents recorded on an input's parameter (empty: not a table).
std::vector<int64_t> table_extents_of(const Halide::Internal::Parameter &param);

/// The operator of a reduction output. Only operators whose result is the
/// same in every order of the operands (exactly associative and commutative
/// under the scalar semantics) are reductions, so every evaluator and target
/// may combine in its own order and still agree bit for bit: min and max of
/// any type, + and * of integers (wrapping), && and || of bools.
enum class ReduceOp { Add, Mul, Min, Max, And, Or };
const char *to_string(ReduceOp op);
/// `op(a, b)` as an expression (`max(a, b)`, `a + b`, `a && b`, ...).
Halide::Expr reduce_combine(ReduceOp op, const Halide::Expr &a, const Halide::Expr &b);
/// The value `e` with op(e, x) = x for every x of type `type`: 0 for +, 1 for
/// *, the type's largest value for integer min and smallest for max, NaN for
/// float min and max (a NaN operand is ignored), true for &&, false for ||.
Halide::Expr reduce_identity(ReduceOp op, Halide::Type type);
/// Why `op` is not a reduction of `type` ("" if it is): a float sum or
/// product depends on the order of its operands; && and || take bools.
std::string reduce_refusal(ReduceOp op, Halide::Type type);

/// An output defined by an update over the loops it is not indexed by
/// (Halide's update definition): `Best(b) = 0; Best(b) = max(Best(b), H(i, j, b));`.
/// Element e holds op(initial(e), value at every point of the domain that
/// maps to e and where value is defined).
struct Reduction {
    ReduceOp op = ReduceOp::Max;
    /// The pure definition: the element's value before any point, over the
    /// output's arguments only.
    Halide::Expr initial;
};

/// One equation of the merged loop nest, in merge order.
/// A recurrence Func is defined over all loops of the nest; an output Func
/// (like `Out(c)`) over a subset of them, and stores into an output buffer.
struct Ure {
    std::string name;
    Halide::Type type;
    std::vector<std::string> args;  ///< the Func's arguments, innermost first
    Halide::Expr value;             ///< may contain `undefined_value` where a select has no false value
    bool is_output = false;         ///< defined over a subset of the loops; never read by other UREs
    /// For outputs: the element written, one affine index per output
    /// dimension (empty: the arguments themselves, `Out(c, b)`).
    std::vector<Halide::Expr> index;
    /// The element an output writes: `index`, or the arguments as variables.
    std::vector<Halide::Expr> output_index() const;
    /// The left-hand side as written: `Z(c, q)`, `Out(c, b)` or `Out((b*16) + c)`.
    std::string lhs_text() const;
    Place place = Place::Host;
    /// For a reduction output: its operator and initial value; `value` is
    /// the operand each point contributes.
    std::optional<Reduction> reduction;
};

/// A recurrence call `V(x - d)` inside the definition of `U(x)`.
struct Dependence {
    std::string consumer;                ///< U
    std::string producer;                ///< V
    std::vector<int64_t> distance;       ///< d, one entry per loop (innermost first)
    Halide::Expr condition;              ///< where the call is evaluated: conjunction of enclosing select branches (true if none)
    std::string call_text;               ///< the call as written, e.g. "Z(c, q - 1)"
    bool is_copy = false;                ///< U(x) = V(x - d) under this branch: a pure copy (broadcast allowed)
};

/// `loops` with the first and last iterations `excluded` lists per loop
/// taken off (no more than each loop has); loops past `excluded`'s end whole.
std::vector<Loop> less_excluded(const std::vector<Loop> &loops, const std::vector<std::pair<int64_t, int64_t>> &excluded);

/// A read of an input inside the definition of a URE.
struct InputAccess {
    std::string consumer;
    std::string input;
    std::vector<Halide::Expr> index;     ///< affine in the loop variables
    Halide::Expr condition;              ///< where the read is evaluated
    /// Per loop (in `loops` order): how many of its first and of its last
    /// iterations `condition` excludes wherever the other loops are
    /// (bound_input_reads proves it; all zero before, or where it cannot tell).
    /// Only the first iterations of a loop outside the array: its extent is
    /// a run-time size.
    std::vector<std::pair<int64_t, int64_t>> excluded;
    /// `loops` less the excluded iterations: the box the read is evaluated in
    /// (`loops` as the program's, or with an extent changed at run time).
    std::vector<Loop> reach(const std::vector<Loop> &loops) const { return less_excluded(loops, excluded); }
};

/// A bound on a loop read from the inputs: `F.where(j < lengths(b))`, a
/// ragged batch. The loop runs over [min, min(max + 1, upper)) in each array
/// instance, `upper` read at the instance (an integer expression of the loops
/// outside the array, reading inputs). check_domain states where it is lowered:
/// a loop of the array that only advances time, read only at its own or lower
/// values, so that each instance's domain is a prefix of the box along it and
/// what is proved on the box holds on it.
struct DataBound {
    std::string loop;
    Halide::Expr upper;  ///< exclusive: loop < upper
};

/// `F.tile(var, outer, inner, factor)`: var = outer * factor + inner.
struct Tile {
    std::string var, outer, inner;
    int64_t factor = 1;
    /// tile: the inner loop is unrolled; split: it stays a loop.
    bool unroll_inner = true;
};

/// `X.in(G)` followed by compute_at / store_in: a staged copy of X for its use in G.
struct Staging {
    std::string source;                  ///< the Input or Func being staged
    std::string consumer;                ///< the Func whose calls use the staged copy
    std::optional<std::string> compute_at_func, compute_at_loop;
    std::optional<MemoryType> memory;
};

/// `space_time_transform(src, dst, matrix[, reverse][, CheckTime])`.
struct SpaceTimeTransform {
    std::vector<std::string> source_loops;       ///< innermost first
    std::vector<std::string> destination_loops;  ///< innermost first: space loops, then the time loop last
    /// Row r gives destination loop r as a linear combination of the source
    /// loops (columns in source_loops order). Space rows first, time row last.
    std::vector<std::vector<int64_t>> matrix;
    /// Optional user reverse transform: one Expr per source loop, in terms of
    /// the destination loop variables.
    std::vector<Halide::Expr> reverse;
    bool check_time = false;
};

/// Schedule records, in the order they were given.
struct Schedule {
    std::vector<Tile> tiles;
    std::vector<std::string> reorder;            ///< innermost first, as given
    std::vector<std::string> gpu_blocks, gpu_threads;
    /// `gpu_grid_sync()`: the array instances of the gpu_blocks loops run at
    /// once and wait for each other after every step, so a value may move to
    /// a neighbouring instance (a dependence along a gpu_blocks loop) one
    /// step or more after it is computed.
    bool gpu_grid_sync = false;
    /// `vectorize(b, lanes)`: the gpu_blocks loop b's instances run `lanes`
    /// to a warp, packed in the lanes of vectors (pack_instances).
    std::optional<std::pair<std::string, int>> vectorize;
    std::vector<Staging> stagings;
    std::optional<SpaceTimeTransform> transform;
};

/// The merged UREs of one spec, with bounds and schedule.
struct UreProgram {
    std::string name;                    ///< the Func that owns the loop nest (merge_ures receiver)
    std::vector<Loop> loops;             ///< innermost first
    /// The domain's affine constraints beyond the box of `loops`
    /// (`F.where(j <= i)`, or a bound that depends on another loop): the
    /// domain is the points of the box where every one holds. Each is an
    /// affine condition over the transform's source loops; empty: the box.
    std::vector<Halide::Expr> constraints;
    /// Bounds read from the inputs (`where(j < lengths(b))`): each instance's
    /// domain is the points of the affine domain below them. The validator,
    /// the report and the buffers' layouts work on the affine domain; every
    /// evaluator runs each instance on its own.
    std::vector<DataBound> data_bounds;
    std::vector<Ure> ures;               ///< merge order
    std::vector<InputDecl> inputs;
    std::vector<Dependence> dependences;
    std::vector<InputAccess> input_accesses;
    Schedule schedule;
    /// The reference order: loops from outermost to innermost (indices into
    /// `loops`), and each loop's direction (+1 ascending, -1 descending),
    /// chosen so that every value is computed before it is read.
    std::vector<int> reference_nesting;
    std::vector<int> reference_direction;

    const Loop &loop(const std::string &var) const;
    int loop_index(const std::string &var) const;  ///< -1 if not a loop
    const Ure &ure(const std::string &name) const;
    int ure_index(const std::string &name) const;   ///< -1 if not a URE
    const InputDecl &input(const std::string &name) const;
    /// The number of points of the box of `loops` (the domain's points when
    /// there are no constraints; more when there are).
    int64_t domain_size() const;
    /// The conjunction of `constraints` (true for a box).
    Halide::Expr domain_condition() const;
    /// The conjunction of the data bounds, `loop < upper` (true if none): it
    /// reads inputs, so only evaluators use it.
    Halide::Expr data_condition() const;
    std::vector<const Ure *> outputs() const;
    /// The loops over which output `u` is written: the program's loops, each
    /// loop of the array (a source loop of the transform) narrowed by the
    /// bounds its select states on it (`x >= 4 && x < 28` in a conjunction
    /// of the defined condition). The output's box (its buffer layout) is its
    /// index's range over these loops, so an output written on the interior
    /// of overlapped tiles spans that interior only.
    std::vector<Loop> output_loops(const Ure &u) const;
};

/// The placeholder a `select` without a false value yields where its condition is false.
Halide::Expr undefined_value(Halide::Type type);
/// True if `e` is the placeholder made by undefined_value.
bool is_undefined_value(const Halide::Expr &e);
/// Where `e` is defined: false in the branches of its selects that end in the
/// undefined placeholder, true elsewhere (simplified).
Halide::Expr defined_condition(const Halide::Expr &e);

/// Name of the intrinsic used for recurrence calls `V(x - d)`.
inline const char *recurrence_call_prefix() { return "pulse.ure."; }
/// A recurrence call `func(args)` as a Halide Expr.
Halide::Expr make_recurrence_call(Halide::Type type, const std::string &func, const std::vector<Halide::Expr> &args);
/// If `e` is a recurrence call, returns the callee's name; otherwise "".
std::string recurrence_callee(const Halide::Expr &e);
/// If `e` is a call to an Input (an image parameter), returns its name; otherwise "".
std::string input_callee(const Halide::Expr &e);

/// Prints an expression the way a user wrote it: `Z(c, q - 1)`, `x(c + q)`.
std::string to_source(const Halide::Expr &e);

/// Prints the whole program: loops, UREs, dependences, schedule.
void print(std::ostream &out, const UreProgram &program);

}  // namespace ir
}  // namespace pulse

#endif
