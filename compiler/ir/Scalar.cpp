#include "ir/Scalar.h"

#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include "pulse/Error.h"
#include "pulse/ScalarSemantics.h"

namespace pulse {

using Halide::Type;

namespace {

/// An operand of signed integer type of `width` bits, as its exact value.
int64_t signed_operand(const Scalar &v, int width) { return wrap_signed(v.as_uint(), width); }
/// An operand of unsigned integer type of `width` bits, as its exact value.
uint64_t unsigned_operand(const Scalar &v, int width) { return v.as_uint() & width_mask(width); }


/// A float (read at its own precision) as type `to`: pulse_float_to_int for
/// integers, != 0 for bool (NaN is true), one rounding for float32.
template<typename F>
Scalar float_to(F x, Type to) {
    switch (scalar_shape(to)) {
    case ScalarShape::Bool: return Scalar::of_bool(x != 0);
    case ScalarShape::Float32: return Scalar::of_float((float)x);
    case ScalarShape::Float64: return Scalar::of_double((double)x);
    case ScalarShape::Signed:
        switch (to.bits()) {
        case 8: return Scalar::of_int(pulse_float_to_int<int8_t>(x));
        case 16: return Scalar::of_int(pulse_float_to_int<int16_t>(x));
        case 32: return Scalar::of_int(pulse_float_to_int<int32_t>(x));
        default: return Scalar::of_int(pulse_float_to_int<int64_t>(x));
        }
    case ScalarShape::Unsigned:
        switch (to.bits()) {
        case 8: return Scalar::of_uint(pulse_float_to_int<uint8_t>(x));
        case 16: return Scalar::of_uint(pulse_float_to_int<uint16_t>(x));
        case 32: return Scalar::of_uint(pulse_float_to_int<uint32_t>(x));
        default: return Scalar::of_uint(pulse_float_to_int<uint64_t>(x));
        }
    }
    return Scalar();
}

/// A Scalar as C type T and back (T's value exactly).
template<typename T>
T get(const Scalar &v) {
    if constexpr (std::is_same_v<T, bool>) return v.is_true();
    else if constexpr (std::is_same_v<T, float>) return v.as_float();
    else if constexpr (std::is_same_v<T, double>) return v.as_double();
    else if constexpr (std::is_signed_v<T>) return (T)wrap_signed(v.as_uint(), sizeof(T) * 8);
    else return (T)(v.as_uint() & width_mask(sizeof(T) * 8));
}
template<typename T>
Scalar put(T v) {
    if constexpr (std::is_same_v<T, bool>) return Scalar::of_bool(v);
    else if constexpr (std::is_same_v<T, float>) return Scalar::of_float(v);
    else if constexpr (std::is_same_v<T, double>) return Scalar::of_double(v);
    else if constexpr (std::is_signed_v<T>) return Scalar::of_int(v);
    else return Scalar::of_uint(v);
}

template<typename T, BinaryOp op>
Scalar apply(const Scalar &sa, const Scalar &sb) {
    const T a = get<T>(sa), b = get<T>(sb);
    if constexpr (std::is_floating_point_v<T>) {
        if constexpr (op == BinaryOp::Add) return put<T>(a + b);
        if constexpr (op == BinaryOp::Sub) return put<T>(a - b);
        if constexpr (op == BinaryOp::Mul) return put<T>(a * b);
        if constexpr (op == BinaryOp::Div) return put<T>(a / b);
        if constexpr (op == BinaryOp::Mod) return put<T>(pulse_fmod<T>(a, b));
        if constexpr (op == BinaryOp::Min) return put<T>(pulse_fmin<T>(a, b));
        if constexpr (op == BinaryOp::Max) return put<T>(pulse_fmax<T>(a, b));
    } else if constexpr (std::is_same_v<T, bool>) {
        if constexpr (op == BinaryOp::Min) return put<T>(a && b);
        if constexpr (op == BinaryOp::Max) return put<T>(a || b);
    } else {
        if constexpr (op == BinaryOp::Add) return put<T>(pulse_add<T>(a, b));
        if constexpr (op == BinaryOp::Sub) return put<T>(pulse_sub<T>(a, b));
        if constexpr (op == BinaryOp::Mul) return put<T>(pulse_mul<T>(a, b));
        if constexpr (op == BinaryOp::Div) return put<T>(pulse_div<T>(a, b));
        if constexpr (op == BinaryOp::Mod) return put<T>(pulse_mod<T>(a, b));
        if constexpr (op == BinaryOp::Min) return put<T>(a < b ? a : b);
        if constexpr (op == BinaryOp::Max) return put<T>(a > b ? a : b);
        if constexpr (op == BinaryOp::SaturatingAdd) return put<T>(pulse_sat_add<T>(a, b));
        if constexpr (op == BinaryOp::SaturatingSub) return put<T>(pulse_sat_sub<T>(a, b));
    }
    return Scalar();
}

template<typename T>
BinaryFn binary_fn_of(BinaryOp op) {
    switch (op) {
    case BinaryOp::Add: return apply<T, BinaryOp::Add>;
    case BinaryOp::Sub: return apply<T, BinaryOp::Sub>;
    case BinaryOp::Mul: return apply<T, BinaryOp::Mul>;
    case BinaryOp::Div: return apply<T, BinaryOp::Div>;
    case BinaryOp::Mod: return apply<T, BinaryOp::Mod>;
    case BinaryOp::Min: return apply<T, BinaryOp::Min>;
    case BinaryOp::Max: return apply<T, BinaryOp::Max>;
    case BinaryOp::SaturatingAdd: return apply<T, BinaryOp::SaturatingAdd>;
    case BinaryOp::SaturatingSub: return apply<T, BinaryOp::SaturatingSub>;
    }
    return nullptr;
}

/// Calls f(T()) with T the C type of `t`.
template<typename F>
auto with_c_type(Type t, F f) {
    switch (scalar_shape(t)) {
    case ScalarShape::Bool: return f(bool());
    case ScalarShape::Float32: return f(float());
    case ScalarShape::Float64: return f(double());
    case ScalarShape::Signed:
        switch (t.bits()) {
        case 8: return f(int8_t());
        case 16: return f(int16_t());
        case 32: return f(int32_t());
        default: return f(int64_t());
        }
    case ScalarShape::Unsigned:
        switch (t.bits()) {
        case 8: return f(uint8_t());
        case 16: return f(uint16_t());
        case 32: return f(uint32_t());
        default: return f(uint64_t());
        }
    }
    return f(int64_t());
}

template<typename F, F (*fn)(F)>
Scalar unary(const Scalar &v) {
    return put<F>(fn(get<F>(v)));
}

template<typename T>
Scalar abs_of(const Scalar &v) {
    if constexpr (std::is_floating_point_v<T>) return put<T>(pulse_fabs<T>(get<T>(v)));
    else if constexpr (std::is_same_v<T, bool>) return v;
    else return put<std::make_unsigned_t<T>>(pulse_iabs<std::make_unsigned_t<T>, T>(get<T>(v)));
}

float sqrt32(float x) { return std::sqrt(x); }
double sqrt64(double x) { return std::sqrt(x); }
float exp32(float x) { return std::exp(x); }
double exp64(double x) { return std::exp(x); }
float log32(float x) { return std::log(x); }
double log64(double x) { return std::log(x); }
float sin32(float x) { return std::sin(x); }
double sin64(double x) { return std::sin(x); }
float cos32(float x) { return std::cos(x); }
double cos64(double x) { return std::cos(x); }
float floor32(float x) { return pulse_floor<float>(x); }
double floor64(double x) { return pulse_floor<double>(x); }
float ceil32(float x) { return -pulse_floor<float>(-x); }
double ceil64(double x) { return -pulse_floor<double>(-x); }

}  // namespace

BinaryFn binary_fn(BinaryOp op, Type t) {
    if (t.is_bool() && op != BinaryOp::Min && op != BinaryOp::Max) {
        compile_error("arithmetic on bool values is not part of the language (only min and max, which are && and ||)");
    }
    if (!t.is_int() && !t.is_uint() && (op == BinaryOp::SaturatingAdd || op == BinaryOp::SaturatingSub)) {
        compile_error("saturating_add and saturating_sub take integers, not ", t, ": a float's + and - already saturate to infinity");
    }
    return with_c_type(t, [&](auto tag) { return binary_fn_of<decltype(tag)>(op); });
}

bool saturating_op(const Halide::Internal::Call *op, BinaryOp *result) {
    if (op->is_intrinsic(Halide::Internal::Call::saturating_add)) return *result = BinaryOp::SaturatingAdd, true;
    if (op->is_intrinsic(Halide::Internal::Call::saturating_sub)) return *result = BinaryOp::SaturatingSub, true;
    return false;
}

UnaryFn abs_fn(Type operand) {
    return with_c_type(operand, [&](auto tag) -> UnaryFn { return abs_of<decltype(tag)>; });
}

UnaryFn math_fn(const std::string &name, Type t) {
    static const std::map<std::string, std::pair<UnaryFn, UnaryFn>> functions = {
        {"sqrt", {unary<float, sqrt32>, unary<double, sqrt64>}},    {"exp", {unary<float, exp32>, unary<double, exp64>}},
        {"log", {unary<float, log32>, unary<double, log64>}},       {"sin", {unary<float, sin32>, unary<double, sin64>}},
        {"cos", {unary<float, cos32>, unary<double, cos64>}},       {"floor", {unary<float, floor32>, unary<double, floor64>}},
        {"ceil", {unary<float, ceil32>, unary<double, ceil64>}}};
    if (!t.is_float() || name.size() < 5) return nullptr;
    const std::string suffix = name.substr(name.size() - 4);
    if (suffix != (t.bits() == 32 ? "_f32" : "_f64")) return nullptr;
    auto it = functions.find(name.substr(0, name.size() - 4));
    if (it == functions.end()) return nullptr;
    return t.bits() == 32 ? it->second.first : it->second.second;
}

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
    case Kind::Float32: return pulse_float_to_int<int64_t>(bits_.f);
    case Kind::Float64: return pulse_float_to_int<int64_t>(bits_.d);
    }
    return 0;
}

uint64_t Scalar::as_uint() const {
    switch (kind_) {
    case Kind::Int: return (uint64_t)bits_.i;
    case Kind::UInt: return bits_.u;
    case Kind::Float32: return pulse_float_to_int<uint64_t>(bits_.f);
    case Kind::Float64: return pulse_float_to_int<uint64_t>(bits_.d);
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
    // A float held for an integer type converts as a cast does.
    if (v.kind() == Kind::Float32 && !t.is_float()) return float_to(v.as_float(), t);
    if (v.kind() == Kind::Float64 && !t.is_float()) return float_to(v.as_double(), t);
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
    if (f == ScalarShape::Float32) return float_to(v.as_float(), to);
    if (f == ScalarShape::Float64) return float_to(v.as_double(), to);
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
