// Exact scalar values of the language's types, for the evaluators (the
// reference interpreter, the systolic simulator) and buffer element I/O.
#ifndef PULSE_SCALAR_H
#define PULSE_SCALAR_H

#include <Halide.h>

#include <cstdint>
#include <string>
#include <type_traits>

namespace pulse {

/// A scalar of any type of the language, held exactly: a signed integer (of
/// any width, wrapped to it) as int64, an unsigned integer or a bool as uint64,
/// a float32 as float, a float64 as double.
///
/// A compiled expression knows the Halide type of each of its operands and
/// reads them with the accessor of that type (as_int, as_uint, as_float,
/// as_double), which converts from whatever kind the operand holds. So a hook
/// may return a plain double (it becomes a float64 Scalar): the value is exact
/// as long as the double holds it exactly (every float32 and every integer of
/// at most 53 bits). The implicit conversion to double serves callers that
/// keep values as doubles; it is exact in the same cases.
class Scalar {
public:
    enum class Kind : uint8_t { Int, UInt, Float32, Float64 };

    Scalar() : kind_(Kind::Int) { bits_.i = 0; }
    /// A float64 (and what a hook that computes in double returns).
    Scalar(double v) : kind_(Kind::Float64) { bits_.d = v; }
    /// An integer never converts implicitly (it would go through double):
    /// use of_int or of_uint.
    template<typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
    Scalar(T) = delete;

    static Scalar of_int(int64_t v) {
        Scalar r;
        r.kind_ = Kind::Int;
        r.bits_.i = v;
        return r;
    }
    static Scalar of_uint(uint64_t v) {
        Scalar r;
        r.kind_ = Kind::UInt;
        r.bits_.u = v;
        return r;
    }
    static Scalar of_float(float v) {
        Scalar r;
        r.kind_ = Kind::Float32;
        r.bits_.f = v;
        return r;
    }
    static Scalar of_double(double v) { return Scalar(v); }
    static Scalar of_bool(bool v) { return of_uint(v ? 1 : 0); }
    /// Zero of type `t`.
    static Scalar zero(Halide::Type t);

    Kind kind() const { return kind_; }
    bool is_integer() const { return kind_ == Kind::Int || kind_ == Kind::UInt; }

    /// As a signed 64-bit integer: integers keep their two's complement bits
    /// (a uint64 above INT64_MAX wraps), floats convert as a cast to int64
    /// does (pulse_float_to_int: truncated, saturated, NaN is 0).
    int64_t as_int() const;
    /// As an unsigned 64-bit integer: integers keep their bits (a negative
    /// int64 wraps modulo 2^64), floats convert as a cast to uint64 does.
    uint64_t as_uint() const;
    /// As a float32: one correctly rounded conversion from what it holds.
    float as_float() const;
    /// As a float64: one correctly rounded conversion from what it holds.
    double as_double() const;
    /// Nonzero (a true bool).
    bool is_true() const;

    operator double() const { return as_double(); }

    /// Whether `a` and `b` are the same value: equal after converting both to
    /// the kind they share (integer kinds compare their 64 bits, a float kind
    /// and another compare as doubles); two NaNs are the same.
    static bool same(const Scalar &a, const Scalar &b);

    /// The value `v` of type `from` as a value of type `to`, as the
    /// language's cast does (docs/language.md, pulse/ScalarSemantics.h):
    /// integers wrap to the narrower width (sign-extending a signed source),
    /// floats truncate towards zero to integers, saturating, NaN to 0, and
    /// are true where nonzero (NaN too), integers round to the nearest float,
    /// bool is 0 or 1.
    static Scalar cast(Scalar v, Halide::Type from, Halide::Type to);
    /// `v` (of any kind) reduced to what a value of type `t` holds: integers
    /// wrap to the width of `t`, float32 rounds once. Throws CompileError for
    /// a type the evaluator does not model (vectors, float16, handles).
    static Scalar normalize(Scalar v, Halide::Type t);

private:
    Kind kind_;
    union {
        int64_t i;
        uint64_t u;
        float f;
        double d;
    } bits_;
};

/// The binary arithmetic of the language (operands and result of one type).
/// SaturatingAdd and SaturatingSub are Halide's saturating_add and
/// saturating_sub, of integers only.
enum class BinaryOp { Add, Sub, Mul, Div, Mod, Min, Max, SaturatingAdd, SaturatingSub };
/// One operation at one type, as pulse/ScalarSemantics.h defines it (the
/// functions generated code calls): integers wrap, division is Euclidean
/// with x / 0 = 0, float min/max ignore NaN. Looked up once per operation
/// site, so evaluators pay no dispatch per value.
using BinaryFn = Scalar (*)(const Scalar &, const Scalar &);
/// The function of `op` at type `t`; throws CompileError where the language
/// has no such operation (arithmetic on bool other than min/max, saturating
/// arithmetic on floats).
BinaryFn binary_fn(BinaryOp op, Halide::Type t);
/// The BinaryOp of a call of Halide's saturating_add or saturating_sub (of
/// scalars or vectors); false for any other call.
bool saturating_op(const Halide::Internal::Call *op, BinaryOp *result);

/// A math function of the language (Halide's sqrt, exp, log, sin, cos,
/// floor, ceil, abs as the calls name them: "sqrt_f32", ...) at float type
/// `t`; nullptr if there is none. float32 calls compute in float.
using UnaryFn = Scalar (*)(const Scalar &);
UnaryFn math_fn(const std::string &name, Halide::Type t);
/// Halide's abs of a value of type `operand` (a signed integer gives the
/// unsigned integer of its width, exactly).
UnaryFn abs_fn(Halide::Type operand);

/// `v` as a value of type `t` in text: integers exactly, floats with the
/// digits that identify them (9 for float32, 17 for float64).
std::string scalar_text(const Scalar &v, Halide::Type t);

/// Whether the evaluator models scalar type `t` exactly (see require_supported_type).
bool is_supported_type(Halide::Type t);
/// Throws CompileError unless the evaluator models scalar type `t` exactly:
/// bool, signed and unsigned integers of 8, 16, 32 and 64 bits, float32, float64.
void require_supported_type(Halide::Type t, const std::string &where);

/// The shape of a scalar type the evaluators distinguish (Scalar and ExprCompiler).
enum class ScalarShape { Bool, Signed, Unsigned, Float32, Float64 };
ScalarShape scalar_shape(Halide::Type t);

/// The low `bits` bits set (all 64 for 64 or more).
inline uint64_t width_mask(int bits) { return bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1; }

/// The low `bits` bits of `u`, sign-extended to 64 bits.
inline int64_t wrap_signed(uint64_t u, int bits) {
    if (bits < 64) {
        const uint64_t mask = width_mask(bits);
        u &= mask;
        if ((u >> (bits - 1)) & 1) u |= ~mask;
    }
    return (int64_t)u;  // two's complement (modular since C++20, and in every compiler Pulse supports)
}

}  // namespace pulse

#endif
