// Printing Halide Exprs as C/C++/CUDA/CM source, shared by the code
// generators (reference C++, CUDA, CM).
#ifndef PULSE_CODEGEN_C_H
#define PULSE_CODEGEN_C_H

#include <functional>
#include <string>

#include "ir/UreProgram.h"

namespace pulse {

struct CPrinterHooks {
    /// The source text of a variable (a loop or destination variable).
    std::function<std::string(const std::string &name)> variable;
    /// The source text of a call that is not a math intrinsic: recurrence
    /// calls, taps, input reads. `args` are the printed arguments.
    std::function<std::string(const Halide::Internal::Call *call, const std::vector<std::string> &args)> call;
    /// Whether an integer expression is index arithmetic (IndexArithmetic.h),
    /// printed with C's +, -, * rather than the language's wrapping ones: it
    /// stays in range in every program the compiler accepts, and C compilers
    /// fold it into addressing only when overflow is theirs to assume away.
    /// Unset: every integer expression wraps.
    std::function<bool(const Halide::Expr &)> is_index;
    /// How a call of a scalar-semantics function is spelled: `fn` at the
    /// element types `types` (e.g. pulse_div at int32) applied to `args`.
    /// Unset: the C++ template call fn<T...>(args) of pulse/ScalarSemantics.h;
    /// a language without templates (OpenCL C) names one function per type.
    std::function<std::string(const std::string &fn, const std::vector<Halide::Type> &types, const std::vector<std::string> &args)>
        scalar_function;
    /// Whether `max(v, 0)` of the named vector value is taken in more than one
    /// place: inside a tree of maxima it is then printed whole
    /// (pulse_vmax_relu(v)), the same call wherever it is, which nvcc computes
    /// once. Unset: never (its zero joins the tree as a relu operand).
    std::function<bool(const std::string &name)> shared_relu;
};


/// Prints `e` as a C expression with the language's scalar semantics
/// (pulse/ScalarSemantics.h, whose text scalar_semantics_source() gives):
/// integer +, -, * wrap (pulse_add, ...), / and % are Halide's (pulse_div,
/// pulse_mod), float min/max ignore NaN (pulse_fmin, pulse_fmax), a float
/// converted to an integer saturates (pulse_float_to_int); a select becomes
/// `?:`; `undefined` becomes a zero of its type. A vector expression calls
/// pulse_vectors.cuh's functions, each lane with the same semantics; a tree
/// of maxima becomes three-operand maxima (pulse_vmax3, pulse_vaddmax: sm_90's
/// DPX instructions on packed int16).
std::string print_c_expr(const Halide::Expr &e, const CPrinterHooks &hooks);

/// The C type of a Halide type: float, double, int32_t, ...; a vector of two
/// lanes is one of runtime/emitted/pulse_vectors.cuh (pulse_i16x2: int16
/// packed in 32 bits; pulse_m16x2: bools; pulse_x2<T>: two values).
std::string c_type(Halide::Type type);

/// The element of an array of vectors of type `t` that a vector access of a
/// register array at `index` (a dense ramp from a multiple of the lanes)
/// reads or writes; a CompileError for any other index.
int64_t vector_register_element(Halide::Type t, const Halide::Expr &index);

/// The text of pulse/ScalarSemantics.h, the functions print_c_expr calls,
/// for every generated program to carry (host, CUDA device and CM code).
std::string scalar_semantics_source();

}  // namespace pulse

#endif
