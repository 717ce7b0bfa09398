#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
typedef char int8_t;
typedef uchar uint8_t;
typedef short int16_t;
typedef ushort uint16_t;
typedef int int32_t;
typedef uint uint32_t;
typedef long int64_t;
typedef ulong uint64_t;
#define sqrtf sqrt
#define expf exp
#define floorf floor

#define PULSE_CL_WRAPPING(T, W)                                                                          \
    static inline T pulse_add_##T(T a, T b) { return (T)((W)a + (W)b); }                                 \
    static inline T pulse_sub_##T(T a, T b) { return (T)((W)a - (W)b); }                                 \
    static inline T pulse_mul_##T(T a, T b) { return (T)((W)a * (W)b); }                                 \
    static inline T pulse_min_##T(T a, T b) { return a < b ? a : b; }                                    \
    static inline T pulse_max_##T(T a, T b) { return a > b ? a : b; }                                    \
    static inline T pulse_sat_add_##T(T a, T b) { return add_sat(a, b); }                                \
    static inline T pulse_sat_sub_##T(T a, T b) { return sub_sat(a, b); }
#define PULSE_CL_SIGNED(T, U, W)                                                                         \
    PULSE_CL_WRAPPING(T, W)                                                                              \
    static inline T pulse_div_##T(T a, T b) {                                                            \
        if (b == 0) return (T)0;                                                                         \
        if (b == (T)-1) return pulse_sub_##T((T)0, a);                                                   \
        T q = (T)(a / b), r = (T)(a % b);                                                                \
        if (r < 0) q = b > 0 ? (T)(q - 1) : (T)(q + 1);                                                  \
        return q;                                                                                        \
    }                                                                                                    \
    static inline T pulse_mod_##T(T a, T b) {                                                            \
        if (b == 0 || b == (T)-1) return (T)0;                                                           \
        T r = (T)(a % b);                                                                                \
        if (r < 0) r = b > 0 ? (T)(r + b) : (T)(r - b);                                                  \
        return r;                                                                                        \
    }                                                                                                    \
    static inline U pulse_iabs_##U##_##T(T x) { return x < 0 ? (U)((U)0 - (U)x) : (U)x; }
#define PULSE_CL_UNSIGNED(T, W)                                                                          \
    PULSE_CL_WRAPPING(T, W)                                                                              \
    static inline T pulse_div_##T(T a, T b) { return b == 0 ? (T)0 : (T)(a / b); }                       \
    static inline T pulse_mod_##T(T a, T b) { return b == 0 ? (T)0 : (T)(a % b); }
PULSE_CL_SIGNED(int8_t, uint8_t, uint32_t)
PULSE_CL_SIGNED(int16_t, uint16_t, uint32_t)
PULSE_CL_SIGNED(int32_t, uint32_t, uint32_t)
PULSE_CL_SIGNED(int64_t, uint64_t, uint64_t)
PULSE_CL_UNSIGNED(uint8_t, uint32_t)
PULSE_CL_UNSIGNED(uint16_t, uint32_t)
PULSE_CL_UNSIGNED(uint32_t, uint32_t)
PULSE_CL_UNSIGNED(uint64_t, uint64_t)

#define PULSE_CL_TO_INT(T, F, SIGNED)                                                                    \
    static inline T pulse_float_to_int_##T##_##F(F x) {                                                  \
        const int width = (int)sizeof(T) * 8, top = SIGNED ? width - 1 : width;                          \
        const F limit = top == 64 ? (F)18446744073709551616.0 : (F)((uint64_t)1 << (top & 63));          \
        if (x != x) return (T)0;                                                                         \
        if (x >= limit) return SIGNED ? (T)(((uint64_t)1 << ((width - 1) & 63)) - 1) : (T) ~(uint64_t)0; \
        if (SIGNED ? x < -limit : x <= (F)-1) return SIGNED ? (T)(-limit) : (T)0;                        \
        return (T)x;                                                                                     \
    }
#define PULSE_CL_FLOAT(F)                                                                                \
    static inline F pulse_floor_##F(F x) {                                                               \
        if (!(x > (F)-4503599627370496.0 && x < (F)4503599627370496.0) || x == 0) return x;              \
        F t = (F)(int64_t)x;                                                                             \
        return t > x ? t - (F)1 : t;                                                                     \
    }                                                                                                    \
    static inline F pulse_fmod_##F(F a, F b) {                                                           \
        F q = pulse_floor_##F(a / b);                                                                    \
        F p = b * q;                                                                                     \
        return a - p;                                                                                    \
    }                                                                                                    \
    static inline F pulse_fmin_##F(F a, F b) {                                                           \
        if (a != a) return b;                                                                            \
        if (b != b) return a;                                                                            \
        if (a < b) return a;                                                                             \
        if (b < a) return b;                                                                             \
        return (F)1 / a < (F)0 ? a : b;                                                                  \
    }                                                                                                    \
    static inline F pulse_fmax_##F(F a, F b) {                                                           \
        if (a != a) return b;                                                                            \
        if (b != b) return a;                                                                            \
        if (a > b) return a;                                                                             \
        if (b > a) return b;                                                                             \
        return (F)1 / a < (F)0 ? b : a;                                                                  \
    }                                                                                                    \
    static inline F pulse_fabs_##F(F x) { return x < 0 ? -x : x == 0 ? (F)0 : x; }                      \
    PULSE_CL_TO_INT(int8_t, F, 1)                                                                        \
    PULSE_CL_TO_INT(int16_t, F, 1)                                                                       \
    PULSE_CL_TO_INT(int32_t, F, 1)                                                                       \
    PULSE_CL_TO_INT(int64_t, F, 1)                                                                       \
    PULSE_CL_TO_INT(uint8_t, F, 0)                                                                       \
    PULSE_CL_TO_INT(uint16_t, F, 0)                                                                      \
    PULSE_CL_TO_INT(uint32_t, F, 0)                                                                      \
    PULSE_CL_TO_INT(uint64_t, F, 0)
PULSE_CL_FLOAT(float)
#ifdef cl_khr_fp64
PULSE_CL_FLOAT(double)
#endif

// The nearest lane lane - k*dp (k >= 0) whose bit is set in `sources`, or -1.
static inline int pulse_chain_source(uint sources, int lane, int dp) {
    for (int k = lane; k >= 0 && k < 32; k -= dp) {
        if (sources & (1u << k)) return k;
    }
    return -1;
}
