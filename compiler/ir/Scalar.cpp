#include "ir/Scalar.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "pulse/Error.h"

namespace pulse {

using Halide::Type;

namespace {

/// Truncates towards zero into int64, saturating; NaN is 0.
int64_t truncate_to_int64(double v) {
    if (std::isnan(v)) return 0;
    if (v >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
    if (v < -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
    return (int64_t)v;  // in range: truncates towards zero
}

/// Truncates towards zero into uint64: a negative value wraps like its int64
/// truncation (as C on the usual targets does for an in-range int64), a value
/// of 2^64 or more saturates; NaN is 0.
uint64_t truncate_to_uint64(double v) {
    if (std::isnan(v)) return 0;
    if (v < 0) return (uint64_t)truncate_to_int64(v);
    if (v >= 18446744073709551616.0) return std::numeric_limits<uint64_t>::max();
    return (uint64_t)v;
}

/// An operand of signed integer type of `width` bits, as its exact value.
int64_t signed_operand(const Scalar &v, int width) { return wrap_signed(v.as_uint(), width); }
/// An operand of unsigned integer type of `width` bits, as its exact value.
uint64_t unsigned_operand(const Scalar &v, int width) { return v.as_uint() & width_mask(width); }


}  // namespace

ScalarShape scalar_shape(Type t) {
    if (t.is_bool()) return ScalarShape::Bool;
    if (t.is_int()) return ScalarShape::Signed;
    if (t.is_uint()) return ScalarShape::Unsigned;
    return t.bits() == 32 ? ScalarShape::Float32 : ScalarShape::Float64;
}

Scalar Scalar::zero(Type t) {
    switch (scalar_shape(t)) {
    case ScalarShape::Bool:
    case ScalarShape::Unsigned: return of_uint(0);
    case ScalarShape::Signed: return of_int(0);
    case ScalarShape::Float32: return of_float(0.0f);
    case ScalarShape::Float64: return of_double(0.0);
    }
    return Scalar();
}

int64_t Scalar::as_int() const {
    switch (kind_) {
    case Kind::Int: return bits_.i;
    case Kind::UInt: return (int64_t)bits_.u;
    case Kind::Float32: return truncate_to_int64(bits_.f);
    case Kind::Float64: return truncate_to_int64(bits_.d);
    }
    return 0;
}

uint64_t Scalar::as_uint() const {
    switch (kind_) {
    case Kind::Int: return (uint64_t)bits_.i;
    case Kind::UInt: return bits_.u;
    case Kind::Float32: return truncate_to_uint64(bits_.f);
    case Kind::Float64: return truncate_to_uint64(bits_.d);
    }
    return 0;
}

float Scalar::as_float() const {
    switch (kind_) {
    case Kind::Int: return (float)bits_.i;
    case Kind::UInt: return (float)bits_.u;
    case Kind::Float32: return bits_.f;
    case Kind::Float64: return (float)bits_.d;
    }
    return 0;
}

double Scalar::as_double() const {
    switch (kind_) {
    case Kind::Int: return (double)bits_.i;
    case Kind::UInt: return (double)bits_.u;
    case Kind::Float32: return bits_.f;
    case Kind::Float64: return bits_.d;
    }
    return 0;
}

bool Scalar::same(const Scalar &a, const Scalar &b) {
    if (a.is_integer() && b.is_integer()) return a.as_uint() == b.as_uint();
    const double x = a.as_double(), y = b.as_double();
    return x == y || (std::isnan(x) && std::isnan(y));
}

bool Scalar::is_true() const {
    switch (kind_) {
    case Kind::Int: return bits_.i != 0;
    case Kind::UInt: return bits_.u != 0;
    case Kind::Float32: return bits_.f != 0;
    case Kind::Float64: return bits_.d != 0;
    }
    return false;
}

std::string scalar_text(const Scalar &v, Type t) {
    std::ostringstream s;
    switch (scalar_shape(t)) {
    case ScalarShape::Bool: s << (v.is_true() ? "true" : "false"); break;
    case ScalarShape::Signed: s << wrap_signed(v.as_uint(), t.bits()); break;
    case ScalarShape::Unsigned: s << (v.as_uint() & width_mask(t.bits())); break;
    case ScalarShape::Float32: s.precision(9); s << v.as_float(); break;
    case ScalarShape::Float64: s.precision(17); s << v.as_double(); break;
    }
    return s.str();
}

bool is_supported_type(Type t) {
    if (t.lanes() != 1) return false;
    if (t.is_bool()) return true;
    if (t.is_int_or_uint()) return t.bits() == 8 || t.bits() == 16 || t.bits() == 32 || t.bits() == 64;
    return t.is_float() && !t.is_bfloat() && (t.bits() == 32 || t.bits() == 64);
}

void require_supported_type(Type t, const std::string &where) {
    if (!is_supported_type(t)) {
        std::ostringstream s;
        s << t;
        compile_error(where, " has type ", s.str(),
                      ", which Pulse does not evaluate; use bool, (u)int8/16/32/64, float32 or float64");
    }
}

Scalar Scalar::normalize(Scalar v, Type t) {
    switch (scalar_shape(t)) {
    case ScalarShape::Bool: return of_bool(v.is_true());
    case ScalarShape::Signed: return of_int(wrap_signed(v.is_integer() ? v.as_uint() : (uint64_t)v.as_int(), t.bits()));
    case ScalarShape::Unsigned: return of_uint(v.as_uint() & width_mask(t.bits()));
    case ScalarShape::Float32: return of_float(v.as_float());
    case ScalarShape::Float64: return of_double(v.as_double());
    }
    return v;
}

Scalar Scalar::cast(Scalar v, Type from, Type to) {
    const ScalarShape f = scalar_shape(from), t = scalar_shape(to);
    if (f == ScalarShape::Float32 || f == ScalarShape::Float64) {
        // Read the float at its own precision, then convert once.
        const double x = f == ScalarShape::Float32 ? (double)v.as_float() : v.as_double();
        switch (t) {
        case ScalarShape::Bool: return of_bool(x != 0 || std::isnan(x));
        case ScalarShape::Signed: return of_int(wrap_signed((uint64_t)truncate_to_int64(x), to.bits()));
        case ScalarShape::Unsigned: return of_uint(truncate_to_uint64(x) & width_mask(to.bits()));
        case ScalarShape::Float32: return of_float(f == ScalarShape::Float32 ? v.as_float() : (float)x);
        case ScalarShape::Float64: return of_double(x);
        }
    }
    // An integer or bool source: its exact value first.
    const bool is_signed = f == ScalarShape::Signed;
    const int64_t si = is_signed ? signed_operand(v, from.bits()) : 0;
    const uint64_t ui = is_signed ? (uint64_t)si : f == ScalarShape::Bool ? (v.is_true() ? 1 : 0) : unsigned_operand(v, from.bits());
    switch (t) {
    case ScalarShape::Bool: return of_bool(ui != 0);
    case ScalarShape::Signed: return of_int(wrap_signed(ui, to.bits()));
    case ScalarShape::Unsigned: return of_uint(ui & width_mask(to.bits()));
    case ScalarShape::Float32: return of_float(is_signed ? (float)si : (float)ui);
    case ScalarShape::Float64: return of_double(is_signed ? (double)si : (double)ui);
    }
    return v;
}

}  // namespace pulse
