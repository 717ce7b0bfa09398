// Errors raised by Pulse. Every message names what is wrong (the Func, the
// call, the dependence, the point) and, where there is one, the fix.
#ifndef PULSE_ERROR_H
#define PULSE_ERROR_H

#include <sstream>
#include <stdexcept>
#include <string>

namespace pulse {

/// A spec or schedule that Pulse cannot compile: misuse of the language,
/// an invalid space-time transform, a design that does not fit the target.
class CompileError : public std::runtime_error {
public:
    explicit CompileError(const std::string &message) : std::runtime_error(message) {}
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

}  // namespace pulse

#endif
