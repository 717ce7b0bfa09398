// Vectors of two lanes: two int16 in one 32-bit register (pulse_i16x2, lane 0 in the low half),
// a mask of two lanes (pulse_m16x2: 0xffff in a lane where true), any other type as two values
// (pulse_x2). Each lane's arithmetic is the scalar semantics' (pulse_add, pulse_max, ...): on
// the device the packed lanes use the SIMD video and DPX instructions, which wrap as they do.
#define PULSE_VFN [[maybe_unused]] static __host__ __device__ __forceinline__
#define PULSE_VSPECIAL [[maybe_unused]] __host__ __device__ __forceinline__
struct pulse_i16x2 { uint32_t bits; };
struct pulse_m16x2 { uint32_t bits; };
template <typename T> struct pulse_x2 { T lane[2]; };
template <typename V> struct pulse_velem;
template <> struct pulse_velem<pulse_i16x2> { typedef int16_t type; };
template <> struct pulse_velem<pulse_m16x2> { typedef bool type; };
template <typename T> struct pulse_velem<pulse_x2<T> > { typedef T type; };

PULSE_VFN int16_t pulse_vlane(pulse_i16x2 v, int k) { return (int16_t)(uint16_t)(v.bits >> (16 * k)); }
PULSE_VFN bool pulse_vlane(pulse_m16x2 v, int k) { return ((v.bits >> (16 * k)) & 1u) != 0; }
template <typename T> PULSE_VFN T pulse_vlane(pulse_x2<T> v, int k) { return v.lane[k]; }

template <typename V> PULSE_VFN V pulse_vpack(typename pulse_velem<V>::type a, typename pulse_velem<V>::type b);
template <> PULSE_VSPECIAL pulse_i16x2 pulse_vpack<pulse_i16x2>(int16_t a, int16_t b) {
    pulse_i16x2 r = {(uint32_t)(uint16_t)a | ((uint32_t)(uint16_t)b << 16)};
    return r;
}
template <> PULSE_VSPECIAL pulse_m16x2 pulse_vpack<pulse_m16x2>(bool a, bool b) {
    pulse_m16x2 r = {(a ? 0xffffu : 0u) | (b ? 0xffff0000u : 0u)};
    return r;
}
template <typename V> PULSE_VFN V pulse_vpack(typename pulse_velem<V>::type a, typename pulse_velem<V>::type b) {
    V r = {{a, b}};
    return r;
}
template <typename V> PULSE_VFN V pulse_vbroadcast(typename pulse_velem<V>::type a) { return pulse_vpack<V>(a, a); }
template <typename V> PULSE_VFN V pulse_vramp(typename pulse_velem<V>::type base, typename pulse_velem<V>::type stride) {
    return pulse_vpack<V>(base, pulse_add<typename pulse_velem<V>::type>(base, stride));
}
template <typename To, typename From> PULSE_VFN To pulse_vcast(From v) {
    typedef typename pulse_velem<To>::type T;
    return pulse_vpack<To>((T)pulse_vlane(v, 0), (T)pulse_vlane(v, 1));
}

#define PULSE_VLANEWISE(NAME, FN, RESULT)                                                             \
    template <typename V> PULSE_VFN RESULT NAME(V a, V b) {                                           \
        typedef typename pulse_velem<V>::type T;                                                      \
        return pulse_vpack<RESULT>(FN(pulse_vlane(a, 0), pulse_vlane(b, 0)), FN(pulse_vlane(a, 1), pulse_vlane(b, 1))); \
    }
#define PULSE_VCOMPARE(NAME, OP)                                                                      \
    template <typename V> PULSE_VFN pulse_m16x2 NAME(V a, V b) {                                      \
        return pulse_vpack<pulse_m16x2>(pulse_vlane(a, 0) OP pulse_vlane(b, 0), pulse_vlane(a, 1) OP pulse_vlane(b, 1)); \
    }
PULSE_VLANEWISE(pulse_vadd, pulse_add<T>, V)
PULSE_VLANEWISE(pulse_vsub, pulse_sub<T>, V)
PULSE_VLANEWISE(pulse_vmul, pulse_mul<T>, V)
PULSE_VLANEWISE(pulse_vdiv, pulse_div<T>, V)
PULSE_VLANEWISE(pulse_vmod, pulse_mod<T>, V)
PULSE_VLANEWISE(pulse_vmin, pulse_min<T>, V)
PULSE_VLANEWISE(pulse_vmax, pulse_max<T>, V)
PULSE_VLANEWISE(pulse_vsat_add, pulse_sat_add<T>, V)
PULSE_VLANEWISE(pulse_vsat_sub, pulse_sat_sub<T>, V)
PULSE_VCOMPARE(pulse_veq, ==)
PULSE_VCOMPARE(pulse_vne, !=)
PULSE_VCOMPARE(pulse_vlt, <)
PULSE_VCOMPARE(pulse_vle, <=)
template <typename V> PULSE_VFN V pulse_vselect(pulse_m16x2 c, V a, V b) {
    return pulse_vpack<V>(pulse_vlane(c, 0) ? pulse_vlane(a, 0) : pulse_vlane(b, 0), pulse_vlane(c, 1) ? pulse_vlane(a, 1) : pulse_vlane(b, 1));
}
template <typename V> PULSE_VFN V pulse_vaddmax(V a, V b, V c) { return pulse_vmax(pulse_vadd(a, b), c); }
template <typename V> PULSE_VFN V pulse_vmax3(V a, V b, V c) { return pulse_vmax(pulse_vmax(a, b), c); }
template <typename V> PULSE_VFN V pulse_vmax3_relu(V a, V b, V c) {
    return pulse_vmax(pulse_vmax3(a, b, c), pulse_vbroadcast<V>((typename pulse_velem<V>::type)0));
}

PULSE_VFN pulse_m16x2 pulse_vand(pulse_m16x2 a, pulse_m16x2 b) { pulse_m16x2 r = {a.bits & b.bits}; return r; }
PULSE_VFN pulse_m16x2 pulse_vor(pulse_m16x2 a, pulse_m16x2 b) { pulse_m16x2 r = {a.bits | b.bits}; return r; }
PULSE_VFN pulse_m16x2 pulse_vnot(pulse_m16x2 a) { pulse_m16x2 r = {~a.bits}; return r; }
template <> PULSE_VSPECIAL pulse_i16x2 pulse_vselect<pulse_i16x2>(pulse_m16x2 c, pulse_i16x2 a, pulse_i16x2 b) {
    pulse_i16x2 r = {(a.bits & c.bits) | (b.bits & ~c.bits)};
    return r;
}
#ifdef __CUDA_ARCH__
#define PULSE_VDEVICE(PACKED, LANEWISE) PACKED
#else
#define PULSE_VDEVICE(PACKED, LANEWISE) LANEWISE
#endif
#define PULSE_VPACKED(NAME, INTRINSIC, LANE_FN)                                                       \
    template <> PULSE_VSPECIAL pulse_i16x2 NAME<pulse_i16x2>(pulse_i16x2 a, pulse_i16x2 b) { \
        pulse_i16x2 r = {PULSE_VDEVICE(INTRINSIC(a.bits, b.bits),                                     \
                                       pulse_vpack<pulse_i16x2>(LANE_FN(pulse_vlane(a, 0), pulse_vlane(b, 0)), \
                                                                LANE_FN(pulse_vlane(a, 1), pulse_vlane(b, 1))).bits)}; \
        return r;                                                                                     \
    }
#define PULSE_VPACKED_COMPARE(NAME, INTRINSIC, OP)                                                    \
    template <> PULSE_VSPECIAL pulse_m16x2 NAME<pulse_i16x2>(pulse_i16x2 a, pulse_i16x2 b) { \
        pulse_m16x2 r = {PULSE_VDEVICE(INTRINSIC(a.bits, b.bits),                                     \
                                       pulse_vpack<pulse_m16x2>(pulse_vlane(a, 0) OP pulse_vlane(b, 0),  \
                                                                pulse_vlane(a, 1) OP pulse_vlane(b, 1)).bits)}; \
        return r;                                                                                     \
    }
#define PULSE_VPACKED3(NAME, INTRINSIC, GENERIC)                                                      \
    template <> PULSE_VSPECIAL pulse_i16x2 NAME<pulse_i16x2>(pulse_i16x2 a, pulse_i16x2 b, pulse_i16x2 c) { \
        pulse_i16x2 r = {PULSE_VDEVICE(INTRINSIC(a.bits, b.bits, c.bits), (GENERIC).bits)};          \
        return r;                                                                                     \
    }
PULSE_VPACKED(pulse_vadd, __vadd2, pulse_add<int16_t>)
PULSE_VPACKED(pulse_vsub, __vsub2, pulse_sub<int16_t>)
PULSE_VPACKED(pulse_vmin, __vmins2, pulse_min<int16_t>)
PULSE_VPACKED(pulse_vmax, __vmaxs2, pulse_max<int16_t>)
PULSE_VPACKED(pulse_vsat_add, __vaddss2, pulse_sat_add<int16_t>)
PULSE_VPACKED(pulse_vsat_sub, __vsubss2, pulse_sat_sub<int16_t>)
PULSE_VPACKED_COMPARE(pulse_veq, __vcmpeq2, ==)
PULSE_VPACKED_COMPARE(pulse_vne, __vcmpne2, !=)
PULSE_VPACKED_COMPARE(pulse_vlt, __vcmplts2, <)
PULSE_VPACKED_COMPARE(pulse_vle, __vcmples2, <=)
PULSE_VPACKED3(pulse_vaddmax, __viaddmax_s16x2, pulse_vmax(pulse_vadd(a, b), c))
PULSE_VPACKED3(pulse_vmax3, __vimax3_s16x2, pulse_vmax(pulse_vmax(a, b), c))
PULSE_VPACKED3(pulse_vmax3_relu, __vimax3_s16x2_relu, pulse_vmax(pulse_vmax(pulse_vmax(a, b), c), pulse_vbroadcast<pulse_i16x2>(0)))
#undef PULSE_VPACKED
#undef PULSE_VPACKED_COMPARE
#undef PULSE_VPACKED3
#undef PULSE_VDEVICE

[[maybe_unused]] static __device__ __forceinline__ pulse_i16x2 pulse_vshfl_up(pulse_i16x2 v, int d) { pulse_i16x2 r = {__shfl_up_sync(0xffffffffu, v.bits, d)}; return r; }
[[maybe_unused]] static __device__ __forceinline__ pulse_i16x2 pulse_vshfl_down(pulse_i16x2 v, int d) { pulse_i16x2 r = {__shfl_down_sync(0xffffffffu, v.bits, d)}; return r; }
[[maybe_unused]] static __device__ __forceinline__ pulse_i16x2 pulse_vshfl_idx(pulse_i16x2 v, int l) { pulse_i16x2 r = {__shfl_sync(0xffffffffu, v.bits, l)}; return r; }
[[maybe_unused]] static __device__ __forceinline__ pulse_m16x2 pulse_vshfl_up(pulse_m16x2 v, int d) { pulse_m16x2 r = {__shfl_up_sync(0xffffffffu, v.bits, d)}; return r; }
[[maybe_unused]] static __device__ __forceinline__ pulse_m16x2 pulse_vshfl_down(pulse_m16x2 v, int d) { pulse_m16x2 r = {__shfl_down_sync(0xffffffffu, v.bits, d)}; return r; }
[[maybe_unused]] static __device__ __forceinline__ pulse_m16x2 pulse_vshfl_idx(pulse_m16x2 v, int l) { pulse_m16x2 r = {__shfl_sync(0xffffffffu, v.bits, l)}; return r; }
template <typename T> [[maybe_unused]] static __device__ __forceinline__ pulse_x2<T> pulse_vshfl_up(pulse_x2<T> v, int d) {
    return pulse_vpack<pulse_x2<T> >(__shfl_up_sync(0xffffffffu, v.lane[0], d), __shfl_up_sync(0xffffffffu, v.lane[1], d));
}
template <typename T> [[maybe_unused]] static __device__ __forceinline__ pulse_x2<T> pulse_vshfl_down(pulse_x2<T> v, int d) {
    return pulse_vpack<pulse_x2<T> >(__shfl_down_sync(0xffffffffu, v.lane[0], d), __shfl_down_sync(0xffffffffu, v.lane[1], d));
}
template <typename T> [[maybe_unused]] static __device__ __forceinline__ pulse_x2<T> pulse_vshfl_idx(pulse_x2<T> v, int l) {
    return pulse_vpack<pulse_x2<T> >(__shfl_sync(0xffffffffu, v.lane[0], l), __shfl_sync(0xffffffffu, v.lane[1], l));
}
[[maybe_unused]] static __device__ __forceinline__ pulse_m16x2 pulse_vwarp_all(pulse_m16x2 c) {
    return pulse_vpack<pulse_m16x2>(__all_sync(0xffffffffu, pulse_vlane(c, 0)), __all_sync(0xffffffffu, pulse_vlane(c, 1)));
}
#undef PULSE_VLANEWISE
#undef PULSE_VCOMPARE
// max(a, 0) and max(a, b, 0), each operand printed once (the relu form of a
// three-operand maximum, its operand repeated here rather than in the text).
template <typename V> PULSE_VFN V pulse_vmax_relu(V a) { return pulse_vmax3_relu(a, a, a); }
template <typename V> PULSE_VFN V pulse_vmax_relu(V a, V b) { return pulse_vmax3_relu(a, b, b); }
// Each lane's element of `a` at its own index (a gather: a block's table read by packed instances).
template <typename V, typename T, typename I> PULSE_VFN V pulse_vgather(const T *a, pulse_x2<I> i) {
    return pulse_vpack<V>((typename pulse_velem<V>::type)a[i.lane[0]], (typename pulse_velem<V>::type)a[i.lane[1]]);
}
