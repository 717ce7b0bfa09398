// Errors raised by Pulse. Every message names what is wrong (the Func, the
// call, the dependence, the point) and, where there is one, the fix.
#ifndef PULSE_ERROR_H
#define PULSE_ERROR_H

#include <sstream>
#include <stdexcept>
#include <string>

namespace pulse {

/// Why Pulse refuses a spec, a transform or a design, as data: callers (the
/// explorer, the fuzzers, tests) sort refusals by it, never by the message.
enum class Refusal {
    Misuse,               ///< the language or a schedule primitive used wrongly; the message says how
    NotWellDefined,       ///< a read of an undefined value, an output written twice (check_well_defined)
    NoSequentialOrder,    ///< no order of the loops computes the UREs (compute_reference_order)
    ReadBeforeDefinition, ///< a same-point read of a URE defined after the reader (analyze_dependences)
    InvalidTransform,     ///< the validator's verdict (validate_transform; TransformVerdict has the witness)
    SameStepCycle,        ///< same-step reads form a cycle through other variables (lower_to_systolic)
    SameStepChain,        ///< a same-step chain the GPU mapping cannot run (lower_to_kernel)
    SeveralSameStepChains,///< a variable with several same-step copy chains (lower_to_kernel)
    TooManyPes,           ///< more PEs than a warp or a block runs (lower_to_kernel)
    TooManySteps,         ///< more steps than the kernel unrolls or a rolled block holds (lower_to_kernel)
    TapBeyondWarp,        ///< a value moves further than a warp's lanes (lower_to_kernel)
    OutputNotPerInstance, ///< a loop outside the array that no output is indexed by, as it must be (lower_to_kernel)
    ResourceLimit,        ///< shared memory, registers or the constant bank of the target exceeded
    UnsupportedByTarget,  ///< the target has no form for the kernel (check_cm_support)
    ReductionNotLowered,  ///< a reduction output the GPU mapping has no form for (lower_to_kernel)
};
/// The refusal's name in summaries: "same-step chain", "too many PEs", ...
inline const char *to_string(Refusal refusal);

/// A spec or schedule that Pulse cannot compile: misuse of the language,
/// an invalid space-time transform, a design that does not fit the target.
/// `refusal` says which; `subject` names the Func or recurrence it is about
/// where there is one.
class CompileError : public std::runtime_error {
public:
    explicit CompileError(const std::string &message, Refusal refusal = Refusal::Misuse, std::string subject = "")
        : std::runtime_error(message), refusal(refusal), subject(std::move(subject)) {}
    Refusal refusal;
    std::string subject;
};

/// A failure while evaluating a spec on concrete data (reference interpreter,
/// systolic simulator): a read of an undefined value, a read outside the domain.
class EvaluationError : public std::runtime_error {
public:
    explicit EvaluationError(const std::string &message) : std::runtime_error(message) {}
};

/// A broken invariant inside Pulse: a bug in the compiler, never in the
/// user's spec. Raised by internal_error and internal_assert; the generator
/// reports it as such (status 3), apart from the user's errors.
class InternalError : public std::logic_error {
public:
    explicit InternalError(const std::string &message) : std::logic_error(message) {}
};

namespace detail {
/// Concatenates its arguments with operator<< into one string.
template<typename... Args>
std::string str(const Args &...args) {
    std::ostringstream out;
    (out << ... << args);
    return out.str();
}
}  // namespace detail

/// Throws a CompileError whose message is the concatenation of the arguments.
template<typename... Args>
[[noreturn]] void compile_error(const Args &...args) {
    throw CompileError(detail::str(args...));
}

/// Throws a CompileError of kind `refusal` about `subject` (may be empty)
/// whose message is the concatenation of the other arguments.
template<typename... Args>
[[noreturn]] void refuse(Refusal refusal, const std::string &subject, const Args &...args) {
    throw CompileError(detail::str(args...), refusal, subject);
}

/// Throws an EvaluationError whose message is the concatenation of the arguments.
template<typename... Args>
[[noreturn]] void evaluation_error(const Args &...args) {
    throw EvaluationError(detail::str(args...));
}

/// Throws an InternalError whose message is the concatenation of the arguments.
template<typename... Args>
[[noreturn]] void internal_error(const Args &...args) {
    throw InternalError(detail::str(args...));
}

/// internal_error unless `condition` holds.
template<typename... Args>
void internal_assert(bool condition, const Args &...args) {
    if (!condition) internal_error(args...);
}

inline const char *to_string(Refusal refusal) {
    switch (refusal) {
    case Refusal::Misuse: return "misuse";
    case Refusal::NotWellDefined: return "not well defined";
    case Refusal::NoSequentialOrder: return "no sequential order";
    case Refusal::ReadBeforeDefinition: return "read before its definition";
    case Refusal::InvalidTransform: return "invalid transform";
    case Refusal::SameStepCycle: return "same-step cycle";
    case Refusal::SameStepChain: return "same-step chain";
    case Refusal::SeveralSameStepChains: return "several same-step chains";
    case Refusal::TooManyPes: return "too many PEs";
    case Refusal::TooManySteps: return "too many steps";
    case Refusal::TapBeyondWarp: return "tap beyond a warp";
    case Refusal::OutputNotPerInstance: return "output not per instance";
    case Refusal::ResourceLimit: return "resource limit";
    case Refusal::UnsupportedByTarget: return "unsupported by the target";
    case Refusal::ReductionNotLowered: return "reduction not lowered";
    }
    return "?";
}

}  // namespace pulse

#endif
