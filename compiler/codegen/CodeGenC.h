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
};

/// Prints `e` as a C expression. Integer `/` and `%` become
/// pulse_floordiv/pulse_floormod (Halide rounds towards negative infinity);
/// a select becomes `?:`; `undefined` becomes a zero of its type.
std::string print_c_expr(const Halide::Expr &e, const CPrinterHooks &hooks);

/// The C type of a Halide type: float, double, int32_t, ...
std::string c_type(Halide::Type type);

/// Definitions of the helpers print_c_expr uses, for host and device code.
/// `qualifier` prefixes each (e.g. "static inline" or "__host__ __device__ inline").
std::string c_helper_functions(const std::string &qualifier);

}  // namespace pulse

#endif
