// The scalar semantics of Pulse's language, in one place: every operation
// whose result C, C++, CUDA or CM leave undefined, implementation-defined or
// different between targets, written once so that every evaluator computes
// the same bits. The compiler's CPU evaluators (the reference interpreter,
// the systolic simulator, the kernel executor) call these functions, and
// every generated program (CUDA, CM, the C++ reference) carries this file's
// text and calls them too. docs/language.md ("Scalar semantics") states the
// rules; the functions are their definition.
//
// Plain C operators are used where they already agree on every target:
// comparisons (IEEE: every comparison with NaN is false but !=), float32 and
// float64 +, -, *, / (IEEE, rounded to nearest in the operands' type),
// integer-to-integer casts (keep the low bits), integer-to-float and
// float64-to-float32 casts (round to nearest, overflow to infinity).
//
// The file is C++ that g++, clang, nvcc (host and device) and CM compilers
// accept: no standard library beyond <stdint.h>, no bit casts.
#ifndef PULSE_SCALAR_SEMANTICS_H
#define PULSE_SCALAR_SEMANTICS_H

#include <stdint.h>

#ifndef PULSE_SCALAR_FN
#if defined(__CUDACC__)
#define PULSE_SCALAR_FN static __host__ __device__ __forceinline__
#else
#define PULSE_SCALAR_FN static inline
#endif
#endif

/// Whether integer type T is signed.
template <typename T>
PULSE_SCALAR_FN bool pulse_is_signed() { return (T)-1 < (T)0; }

/// The unsigned type integer arithmetic on T runs in: at least 32 bits, so
/// that C's promotion to int never overflows (uint16 * uint16 would).
template <typename T> struct pulse_wide { typedef uint32_t type; };
template <> struct pulse_wide<int64_t> { typedef uint64_t type; };
template <> struct pulse_wide<uint64_t> { typedef uint64_t type; };

/// Integer +, - and * wrap modulo 2^width (two's complement for signed
/// types): computed in unsigned arithmetic, whose overflow C defines, and
/// brought back to T, which keeps the low bits.
template <typename T>
PULSE_SCALAR_FN T pulse_add(T a, T b) { return (T)((typename pulse_wide<T>::type)a + (typename pulse_wide<T>::type)b); }
template <typename T>
PULSE_SCALAR_FN T pulse_sub(T a, T b) { return (T)((typename pulse_wide<T>::type)a - (typename pulse_wide<T>::type)b); }
template <typename T>
PULSE_SCALAR_FN T pulse_mul(T a, T b) { return (T)((typename pulse_wide<T>::type)a * (typename pulse_wide<T>::type)b); }

/// Integer division, Halide's: Euclidean for signed types (the remainder is
/// never negative: rounds down for a positive divisor, up for a negative
/// one), truncating for unsigned ones; x / 0 = 0; MIN / -1 wraps to MIN.
template <typename T>
PULSE_SCALAR_FN T pulse_div(T a, T b) {
    if (b == 0) return (T)0;
    if (pulse_is_signed<T>()) {
        if (b == (T)-1) return pulse_sub<T>((T)0, a);
        T q = (T)(a / b), r = (T)(a % b);
        if ((int64_t)r < 0) q = (int64_t)b > 0 ? (T)(q - 1) : (T)(q + 1);  // (signed T: compared in int64, no warning where T is unsigned)
        return q;
    }
    return (T)(a / b);
}

/// Integer modulo, Halide's: the remainder of pulse_div, in [0, |b|) for
/// signed types; x % 0 = 0.
template <typename T>
PULSE_SCALAR_FN T pulse_mod(T a, T b) {
    if (b == 0) return (T)0;
    if (pulse_is_signed<T>()) {
        if (b == (T)-1) return (T)0;
        T r = (T)(a % b);
        if ((int64_t)r < 0) r = (int64_t)b > 0 ? (T)(r + b) : (T)(r - b);
        return r;
    }
    return (T)(a % b);
}

/// Float modulo, Halide's: a - b * floor(a / b), each step in F. (floor
/// without <math.h>: F is float or double, and |q| below 2^52 truncates
/// exactly through int64.)
template <typename F>
PULSE_SCALAR_FN F pulse_floor(F x) {
    if (!(x > (F)-4503599627370496.0 && x < (F)4503599627370496.0) || x == 0) return x;  // integral (-0 too), infinite or NaN
    F t = (F)(int64_t)x;
    return t > x ? t - (F)1 : t;
}
template <typename F>
PULSE_SCALAR_FN F pulse_fmod(F a, F b) {
    F q = pulse_floor<F>(a / b);
    F p = b * q;
    return a - p;
}

/// min and max of integers (each operand evaluated once).
template <typename T>
PULSE_SCALAR_FN T pulse_min(T a, T b) { return a < b ? a : b; }
template <typename T>
PULSE_SCALAR_FN T pulse_max(T a, T b) { return a > b ? a : b; }

/// Saturating integer + and - (Halide's saturating_add, saturating_sub): the
/// exact result clamped to T's range. The wrapped result tells an overflow:
/// it moved the wrong way from a.
template <typename T>
PULSE_SCALAR_FN T pulse_sat_add(T a, T b) {
    const T r = pulse_add<T>(a, b);
    if (!pulse_is_signed<T>()) return r < a ? (T)~(T)0 : r;
    const T largest = (T)(((typename pulse_wide<T>::type)1 << (sizeof(T) * 8 - 1)) - 1);
    if (b > 0 && r < a) return largest;
    if (b < 0 && r > a) return (T)(-largest - 1);
    return r;
}
template <typename T>
PULSE_SCALAR_FN T pulse_sat_sub(T a, T b) {
    const T r = pulse_sub<T>(a, b);
    if (!pulse_is_signed<T>()) return a < b ? (T)0 : r;
    const T largest = (T)(((typename pulse_wide<T>::type)1 << (sizeof(T) * 8 - 1)) - 1);
    if (b < 0 && r < a) return largest;
    if (b > 0 && r > a) return (T)(-largest - 1);
    return r;
}

/// min and max of floats: a NaN operand is ignored (the other is the result;
/// NaN only if both are), and -0 is below +0. Symmetric, so operand order
/// (which simplifiers change) never changes the bits.
template <typename F>
PULSE_SCALAR_FN F pulse_fmin(F a, F b) {
    if (a != a) return b;
    if (b != b) return a;
    if (a < b) return a;
    if (b < a) return b;
    return (F)1 / a < (F)0 ? a : b;  // equal: a is -0 (1 / -0 is -inf), or b is the minimum (or the same bits)
}
template <typename F>
PULSE_SCALAR_FN F pulse_fmax(F a, F b) {
    if (a != a) return b;
    if (b != b) return a;
    if (a > b) return a;
    if (b > a) return b;
    return (F)1 / a < (F)0 ? b : a;
}

/// |x| of a signed integer as the unsigned type U of its width (Halide's
/// abs): exact, |MIN| = 2^(width-1).
template <typename U, typename T>
PULSE_SCALAR_FN U pulse_iabs(T x) { return x < 0 ? (U)((U)0 - (U)x) : (U)x; }

/// |x| of a float: the sign of a number cleared (-0 becomes +0); a NaN
/// stays a NaN (whose sign and payload the semantics leave open).
template <typename F>
PULSE_SCALAR_FN F pulse_fabs(F x) { return x < 0 ? -x : x == 0 ? (F)0 : x; }

/// A float converted to integer type T: truncated towards zero, saturated
/// at T's range, NaN to 0 (what GPUs' conversion instructions do; C leaves
/// an out-of-range conversion undefined).
template <typename T, typename F>
PULSE_SCALAR_FN T pulse_float_to_int(F x) {
    const int width = (int)sizeof(T) * 8;
    const bool is_signed = pulse_is_signed<T>();
    const int top = is_signed ? width - 1 : width;  // T holds [lo, 2^top)
    const F limit = top == 64 ? (F)18446744073709551616.0 : (F)((uint64_t)1 << top);
    if (x != x) return (T)0;
    if (x >= limit) return is_signed ? (T)(((uint64_t)1 << (width - 1)) - 1) : (T)~(uint64_t)0;
    if (is_signed ? x < -limit : x <= (F)-1) return is_signed ? (T)(-limit) : (T)0;
    return (T)x;
}

#endif
