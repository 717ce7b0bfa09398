// Pulse: uniform recurrence equations plus a space-time transform, compiled to
// software systolic arrays on GPUs.
//
// A spec is a C++ program: it declares UREs with Func, merges them into one
// loop nest, bounds it, and gives a spatial mapping (tile, reorder, GPU mapping,
// memory placement, space-time transform). Expressions are Halide Exprs.
// See docs/language.md for every primitive with an example.
#ifndef PULSE_PULSE_H
#define PULSE_PULSE_H

#include <Halide.h>

#include <climits>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pulse/Error.h"
#include "pulse/Types.h"

namespace pulse {

// Expressions, types and variables are Halide's.
using Halide::Bool;
using Halide::cast;
using Halide::Expr;
using Halide::Float;
using Halide::Int;
using Halide::Type;
using Halide::UInt;
using Halide::Var;
using Halide::select;
using Halide::min;
using Halide::max;
using Halide::abs;

namespace ir {
struct UreProgram;
}

/// `select(condition, value)`: `value` where `condition` holds, undefined
/// elsewhere. Reading an undefined value is an error the compiler reports.
Expr select(Expr condition, Expr value);

/// Saturating integer + and -: the exact sum or difference clamped to the
/// operands' type (int16: 30000 + 10000 = 32767), Halide's saturating_add and
/// saturating_sub (operands of two types meet in one, as Halide's +). Integers
/// only: a float is refused when the spec is lowered (its + and - already
/// saturate to infinity). Every evaluator and backend computes the same bits
/// (packed int16 on CUDA: __vaddss2, __vsubss2).
using Halide::Internal::saturating_add;
using Halide::Internal::saturating_sub;

/// Flags for space_time_transform.
enum class SpaceTimeTransform {
    /// Guard each PE step with "this (PE, time) has a preimage in the domain".
    CheckTime
};

class Func;
class Stage;

namespace internal {
struct FuncContents;
struct UreGroup;
struct StagingRecord;
}  // namespace internal

/// An external input array, read at affine indices: `x(c + q)`.
class Input {
public:
    Input(Type type, int dimensions, const std::string &name);
    /// A table: an input of fixed extents (`Input blosum(Int(16), {24, 24},
    /// "blosum")`), read at any integer indices, values of other inputs
    /// included (`blosum(query(i), subject(j, b))`). Each index is clamped to
    /// [0, extent): a read outside the table reads its edge.
    Input(Type type, const std::vector<int> &extents, const std::string &name);
    /// The same, so that a braced list is a table's extents: `{9}` is a 1-D
    /// table of 9, not 9 dimensions.
    Input(Type type, std::initializer_list<int> extents, const std::string &name)
        : Input(type, std::vector<int>(extents), name) {}

    Expr operator()(const std::vector<Expr> &index) const;
    template<typename... Args>
    Expr operator()(const Expr &first, const Args &...rest) const {
        return (*this)(std::vector<Expr>{first, Expr(rest)...});
    }

    /// The read of this input inside `consumer`, to be staged with compute_at/store_in.
    Stage in(const Func &consumer) const;

    const std::string &name() const;
    Type type() const;
    int dimensions() const;
    /// A table's extents; empty for an input read at affine indices.
    const std::vector<int> &table_extents() const { return extents; }

private:
    Halide::Internal::Parameter param;
    std::vector<int> extents;
};

/// `F(args)` on either side of a definition.
class FuncRef {
public:
    FuncRef(std::shared_ptr<internal::FuncContents> func, std::vector<Expr> args);
    /// Defines the Func: `F(c, q) = value`.
    void operator=(const Expr &value);
    void operator=(const FuncRef &other) { *this = Expr(other); }
    /// A recurrence call `F(c, q - 1)` used as a value.
    operator Expr() const;

private:
    std::shared_ptr<internal::FuncContents> func;
    std::vector<Expr> args;
};

// Arithmetic on calls (Halide's operators are found only for Exprs).
#define PULSE_FUNCREF_BINARY_OPERATOR(OP)                                                  \
    inline Expr operator OP(const FuncRef &a, const FuncRef &b) { return Expr(a) OP Expr(b); } \
    template<typename T>                                                                   \
    Expr operator OP(const FuncRef &a, const T &b) {                                       \
        return Expr(a) OP b;                                                               \
    }                                                                                      \
    template<typename T>                                                                   \
    Expr operator OP(const T &a, const FuncRef &b) {                                       \
        return a OP Expr(b);                                                               \
    }
PULSE_FUNCREF_BINARY_OPERATOR(+)
PULSE_FUNCREF_BINARY_OPERATOR(-)
PULSE_FUNCREF_BINARY_OPERATOR(*)
PULSE_FUNCREF_BINARY_OPERATOR(/)
PULSE_FUNCREF_BINARY_OPERATOR(%)
PULSE_FUNCREF_BINARY_OPERATOR(==)
PULSE_FUNCREF_BINARY_OPERATOR(!=)
PULSE_FUNCREF_BINARY_OPERATOR(<)
PULSE_FUNCREF_BINARY_OPERATOR(<=)
PULSE_FUNCREF_BINARY_OPERATOR(>)
PULSE_FUNCREF_BINARY_OPERATOR(>=)
#undef PULSE_FUNCREF_BINARY_OPERATOR
inline Expr operator-(const FuncRef &a) { return -Expr(a); }

/// A staged copy of an Input or Func for its use in one consumer
/// (`x.in(X).compute_at(X, c).store_in(MemoryType::Register)`).
class Stage {
public:
    Stage(std::shared_ptr<internal::UreGroup> group, size_t index);
    Stage &compute_at(const Func &func, const Var &loop);
    Stage &store_in(MemoryType memory);

private:
    std::shared_ptr<internal::UreGroup> group;
    size_t index;
};

/// A uniform recurrence equation, or an output stored from the loop nest.
class Func {
public:
    /// A Func whose type and arguments come from its definition (an output, e.g. `Out(c) = ...`).
    explicit Func(Place place, const std::string &name = "");
    Func();
    /// A recurrence Func: return type and arguments (innermost first) must be declared.
    Func(Type type, const std::vector<Var> &args, Place place, const std::string &name = "");
    Func(Type type, const std::vector<Var> &args, const std::string &name = "");

    FuncRef operator()(const std::vector<Expr> &args) const;
    template<typename... Args>
    FuncRef operator()(const Expr &first, const Args &...rest) const {
        return (*this)(std::vector<Expr>{first, Expr(rest)...});
    }

    // ---- spatial mapping (paper Table 1) ----

    /// Makes the given UREs, in this order after this one, the body of this Func's loop nest.
    Func &merge_ures(const std::vector<Func> &others);
    template<typename... Fs>
    Func &merge_ures(const Func &first, const Fs &...rest) {
        return merge_ures(std::vector<Func>{first, rest...});
    }

    /// `set_bounds(c, 0, C, q, 0, Q)`: loop `c` runs over [0, C), ...: (var, min, extent) triples.
    Func &set_bounds(const Var &var, int64_t min, int64_t extent);
    /// A bound that depends on other loops: `set_bounds(j, 0, i + 1)` runs `j`
    /// over [0, i] (a triangle). The min and extent are affine in the other
    /// loops; the loop's box is their range, and the domain keeps only the
    /// points inside (as `where(j >= min && j < min + extent)` would).
    Func &set_bounds(const Var &var, const Expr &min, const Expr &extent);
    template<typename Min, typename Extent, typename... Rest>
    Func &set_bounds(const Var &var, const Min &min, const Extent &extent, const Var &var2, const Rest &...rest) {
        set_bounds(var, min, extent);
        return set_bounds(var2, rest...);
    }
    /// Restricts the loop nest's domain to the points of its box where the
    /// affine `condition` on the array's loops holds (Halide's RDom::where):
    /// `X.where(j <= i)` keeps a triangle. Every check, evaluator and
    /// backend works on the exact domain; may be given several times (all hold).
    /// A condition may instead bound one loop of the array from above by an
    /// integer read from the inputs at the loops outside it: `where(j <
    /// lengths(b))`, a ragged batch (instance b runs j over [min, lengths(b)),
    /// within its bounds). The loop must only advance time and be read at its
    /// own or lower values, and the outputs must be reductions over the
    /// instances; the validator proves the transform on the box, and each
    /// instance's kernel runs its own steps only.
    Func &where(const Expr &condition);

    /// Splits loop `var` into `outer` and `inner`: var = outer * factor + inner;
    /// the inner loop is unrolled (its iterations share loads: a register window).
    Func &tile(const Var &var, const Var &outer, const Var &inner, int64_t factor);
    /// Like tile, but the inner loop stays a loop: on a GPU, each warp runs its
    /// `factor` iterations in sequence, and inputs re-read by consecutive
    /// iterations stay in registers (a sliding window).
    Func &split(const Var &var, const Var &outer, const Var &inner, int64_t factor);
    /// Orders the loops, innermost first.
    Func &reorder(const std::vector<Var> &loops);
    template<typename... Vs>
    Func &reorder(const Var &first, const Vs &...rest) {
        return reorder(std::vector<Var>{first, rest...});
    }
    /// Thread blocks are scanned by these loops (x, then y, then z).
    Func &gpu_blocks(const Var &x);
    Func &gpu_blocks(const Var &x, const Var &y);
    Func &gpu_blocks(const Var &x, const Var &y, const Var &z);
    /// Threads of a block are scanned by these loops.
    Func &gpu_threads(const Var &x);
    Func &gpu_threads(const Var &x, const Var &y);
    Func &gpu_threads(const Var &x, const Var &y, const Var &z);
    /// The instances of the gpu_blocks loops run at once (a cooperative
    /// launch) and wait for each other at a grid-wide barrier after every
    /// step: a value may then be read by a neighbouring instance (a
    /// dependence along a gpu_blocks loop) one step or more after it is
    /// computed, through global memory.
    Func &gpu_grid_sync();
    /// Runs `lanes` instances of the gpu_blocks loop `x` (its innermost) on
    /// each warp, their values packed in the lanes of vectors: two
    /// instances' 16-bit values in one 32-bit register, computed by one SIMD
    /// or DPX instruction (CUDA; CM refuses the schedule). Where the
    /// instances disagree (a ragged batch), each lane's effects are masked
    /// to its own instance. `lanes` must be 2.
    Func &vectorize(const Var &x, int lanes);

    /// The calls to this Func inside `consumer`, to be staged.
    Stage in(const Func &consumer) const;
    /// Computes this Func at loop `loop` of `consumer`'s nest.
    Func &compute_at(const Func &consumer, const Var &loop);
    /// Stores this Func's values in the given memory.
    Func &store_in(MemoryType memory);

    /// Maps `source` loops (innermost first) to `destination` loops (space loops,
    /// then the time loop) by `matrix`, given row-major with one row per
    /// destination loop: `space_time_transform({c, q}, {s, t}, {1, 1, 0, 1})`.
    Func &space_time_transform(const std::vector<Var> &source, const std::vector<Var> &destination,
                               const std::vector<int> &matrix, const std::vector<Expr> &reverse = {});
    Func &space_time_transform(const std::vector<Var> &source, const std::vector<Var> &destination,
                               const std::vector<int> &matrix, SpaceTimeTransform flag);
    Func &space_time_transform(const std::vector<Var> &source, const std::vector<Var> &destination,
                               const std::vector<int> &matrix, const std::vector<Expr> &reverse,
                               SpaceTimeTransform flag);

    // ---- compilation ----

    /// Runs the merged UREs on the CPU in the reference order and returns every
    /// output Func's buffer, by name.
    Buffers realize(const Buffers &inputs) const;

    /// The compiler's IR for this Func's loop nest (all checks of the language applied).
    ir::UreProgram lower() const;

    const std::string &name() const;
    bool defined() const;
    std::shared_ptr<internal::FuncContents> contents() const { return func; }

private:
    std::shared_ptr<internal::FuncContents> func;
    std::shared_ptr<internal::UreGroup> group() const;
    Func &split_loop(const char *what, const Var &var, const Var &outer, const Var &inner, int64_t factor, bool unroll_inner);
};

// ---- generators ----

/// Integer parameters of a spec, set on the command line with `--param NAME=VALUE`.
/// A spec reads each with a default and the range it accepts,
/// `params.get_int("C", 16, 1, 4096)`; `--params` lists them so, and a value
/// outside its range is an error naming the range (never a truncation).
class Params {
public:
    /// A parameter as the spec read it: its default and its range.
    struct Declaration {
        std::string name;
        int64_t default_value, min, max;
    };

    /// The value of parameter `name` in [min, max], or `default_value` if it
    /// was not set. Throws CompileError naming the parameter, its value and the
    /// range if the value lies outside.
    int64_t get(const std::string &name, int64_t default_value, int64_t min = INT64_MIN, int64_t max = INT64_MAX) const;
    /// get() for sizes a spec keeps in int: the range is at most int's.
    int get_int(const std::string &name, int default_value, int min = INT_MIN, int max = INT_MAX) const;
    void set(const std::string &name, int64_t value) { values[name] = value; }
    /// Names that were set but never read by the spec (reported as errors).
    std::vector<std::string> unused() const;
    /// The parameters the spec read, in the order it first read them.
    const std::vector<Declaration> &declarations() const { return declared; }
    /// "C = 16 in [1, 4096], Q = 5 in [1, 64]": the declarations, for messages.
    std::string describe() const;

private:
    std::map<std::string, int64_t> values;
    mutable std::vector<Declaration> declared;
};

/// What a spec builder returns: the output Func, the inputs in argument order.
struct Spec {
    Func output;
    std::vector<Input> inputs;
};

using SpecBuilder = std::function<Spec(const Params &)>;

/// Registers a spec under `name` (usually through PULSE_REGISTER_SPEC).
bool register_spec(const std::string &name, const std::string &description, SpecBuilder builder);
/// Builds a registered spec (by its name or a unique suffix, see --help).
Spec build_spec(const std::string &name, const Params &params = Params());
/// The description a spec was registered with.
std::string spec_description(const std::string &name);
/// The names of all registered specs.
std::vector<std::string> registered_specs();
/// The registered name `name` refers to: itself; else the one name ending in
/// "_" + name (`sbm` for conv1d_sbm); else the one name with a part, after
/// the start or a "_", that begins with `name` (`sb`, `conv1d_s`). Throws
/// CompileError naming the candidates if there is none or several.
std::string resolve_spec_name(const std::string &name);

/// Random input buffers for a spec, sized from the accesses over its bounded domain.
Buffers random_inputs(const ir::UreProgram &program, uint32_t seed);
/// The same for a built spec (its output's merged UREs): no compiler header needed.
Buffers random_inputs(const Spec &spec, uint32_t seed);

}  // namespace pulse

#define PULSE_CONCAT_IMPL(a, b) a##b
#define PULSE_CONCAT(a, b) PULSE_CONCAT_IMPL(a, b)
/// Registers a spec builder: PULSE_REGISTER_SPEC("conv1d_sbm", "1-D convolution, SBM", builder).
/// The builder is the rest of the arguments, so a lambda whose body holds a
/// comma (`int a = 1, b = 2;`) needs no parentheses around it.
#define PULSE_REGISTER_SPEC(NAME, DESCRIPTION, ...) \
    static const bool PULSE_CONCAT(pulse_spec_registered_, __LINE__) = ::pulse::register_spec(NAME, DESCRIPTION, __VA_ARGS__)

#endif
