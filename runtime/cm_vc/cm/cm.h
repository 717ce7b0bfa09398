// The subset of Intel C for Metal (CM) that Pulse's CM backend emits
// (compiler/codegen/CodeGenCM.h), written for stock clang (spir64 target) so
// that the kernels compile to LLVM IR in the form Intel's CM compiler
// produces: CM's vectors are clang extended vectors, regions are element
// reads and writes of regions (llvm.genx.rdregion / wrregion), and memory
// operations are calls of the genx intrinsics (llvm.genx.*). That IR goes through
// GenXSPIRVWriterAdaptor and llvm-spirv to SPIR-V, and IGC's vector-compute
// (VC) backend compiles it to Gen ISA (tools/vc/, docs/backends.md).
//
// This header takes the place of runtime/cm_emu/cm/cm.h (the CPU emulation)
// with `-I runtime/cm_vc`: the same kernel text builds against either. The
// emulation checks numerics; this one shows what the GPU compiler makes of
// the text (registers, spills, instructions). Everything here is inlined:
// the only calls left in the IR are genx intrinsics and placeholders that
// tools/vc/PulseGenX.cpp turns into intrinsics: the scattered reads and
// writes (`pulse.vc.gather.*`, `pulse.vc.scatter.*`: their predicate is a
// vector of i1, which clang 14 cannot spell) and the regions
// (`pulse.vc.region.*`: their types vary with every size).
//
// Rules of the emulation kept here: region shapes are checked at compile
// time (static_assert); the right-hand side of an assignment is read whole
// before the destination is written; comparisons give vector<ushort, N>
// masks of 0 and 1. Run-time offsets are not checked (the emulation does).
#ifndef PULSE_CM_VC_CM_H
#define PULSE_CM_VC_CM_H

#include <stdint.h>

// A kernel: tools/vc/PulseGenX.cpp gives functions carrying this annotation
// the CMGenxMain attribute and their !genx.kernels metadata.
#define _GENX_MAIN_ __attribute__((annotate("pulse_genx_main")))
#define _GENX_ __attribute__((always_inline))
#define PULSE_VC_INLINE inline __attribute__((always_inline))

typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned char uchar;

template<typename T, int N> class vector;
template<typename T, int N, int P> class vector_ref;
template<typename T, int R, int C> class matrix;

namespace cm_vc {

// The few type traits the header needs (no C++ standard library on spir64).
template<bool B, typename T = void> struct enable_if {};
template<typename T> struct enable_if<true, T> { typedef T type; };
template<typename A, typename B> struct is_same { static constexpr bool value = false; };
template<typename A> struct is_same<A, A> { static constexpr bool value = true; };
template<typename T> struct decay_t { typedef T type; };
template<typename T> struct decay_t<const T> { typedef typename decay_t<T>::type type; };
template<typename T> struct decay_t<T &> { typedef typename decay_t<T>::type type; };
template<typename T> struct decay_t<T &&> { typedef typename decay_t<T>::type type; };
template<typename T> using decay = typename decay_t<T>::type;
template<typename T> constexpr bool is_scalar = __is_arithmetic(decay<T>);
template<typename T> constexpr bool is_float = __is_floating_point(T);

/// N lanes of T as a clang extended vector (an LLVM <N x T>).
template<typename T, int N> struct lanes_t { typedef T type __attribute__((ext_vector_type(N))); };
template<typename T, int N> using lanes = typename lanes_t<T, N>::type;

/// What the operators need to know of an operand.
template<typename V> struct traits { static constexpr bool is_vector = false; static constexpr bool is_object = false; };
template<typename T, int N> struct traits<::vector<T, N>> {
    static constexpr bool is_vector = true, is_object = true;
    using element = T;
    static constexpr int size = N;
};
template<typename T, int N, int P> struct traits<::vector_ref<T, N, P>> {
    static constexpr bool is_vector = true, is_object = true;
    using element = T;
    static constexpr int size = N;
};
template<typename T, int R, int C> struct traits<::matrix<T, R, C>> {
    static constexpr bool is_vector = false, is_object = true;
    using element = T;
    static constexpr int size = R * C;
};
template<typename V> constexpr bool is_vector = traits<decay<V>>::is_vector;
template<typename V> constexpr bool is_object = traits<decay<V>>::is_object;

/// The lanes of an object converted to element type T, or a scalar
/// broadcast to N lanes of T.
template<typename T, int N, typename V>
PULSE_VC_INLINE lanes<T, N> lanes_of(const V &v) {
    if constexpr (is_object<V>) {
        static_assert(traits<decay<V>>::size == N, "CM: objects of different sizes");
        using S = typename traits<decay<V>>::element;
        if constexpr (is_same<S, T>::value) {
            return v.value();
        } else {
            return __builtin_convertvector(v.value(), lanes<T, N>);
        }
    } else {
        static_assert(is_scalar<V>, "CM: unsupported operand");
        return (lanes<T, N>)(T)v;
    }
}

/// The type of element i of an operand (a scalar's own type).
template<typename V, bool = is_object<V>> struct element_t { typedef decay<V> type; };
template<typename V> struct element_t<V, true> { typedef typename traits<decay<V>>::element type; };
template<typename V> using element = typename element_t<V>::type;

/// A comparison's lanes (0 or -1 in the width of its operands) as a mask of
/// 0 and 1.
template<int N, typename C>
PULSE_VC_INLINE lanes<ushort, N> mask_of(C c) {
    return __builtin_convertvector(c, lanes<ushort, N>) & (ushort)1;
}

template<typename M, int N>
PULSE_VC_INLINE lanes<ushort, N> merge_mask(const M &mask) {
    if constexpr (is_object<M>) {
        return lanes_of<ushort, N>(mask);
    } else {
        lanes<ushort, N> r;
        for (int i = 0; i < N; i++) r[i] = (ushort)(((unsigned long long)mask >> i) & 1);
        return r;
    }
}

/// The signed integer type of B bytes.
template<int B> struct int_of_size {};
template<> struct int_of_size<1> { typedef signed char type; };
template<> struct int_of_size<2> { typedef short type; };
template<> struct int_of_size<4> { typedef int type; };
template<> struct int_of_size<8> { typedef long long type; };

/// mask[i] ? a[i] : b[i] (a vector condition must have elements of the
/// values' size).
template<typename T, int N>
PULSE_VC_INLINE lanes<T, N> select_lanes(lanes<ushort, N> mask, lanes<T, N> a, lanes<T, N> b) {
    using I = typename int_of_size<sizeof(T)>::type;
    return __builtin_convertvector(mask, lanes<I, N>) != (I)0 ? a : b;
}

// A region of a vector (N elements `stride` apart from element `offset` of
// P): placeholders that tools/vc/PulseGenX.cpp turns into the genx region
// intrinsics, as CM's compiler emits a select. LLVM's optimizer cannot see
// through those, so a region copy stays one register move: as element moves
// it would fold a lane shift of every step into moves from older values and
// keep them all live (spilling the systolic array's registers). The sizes are
// constants once inlined; the pointers are those of the vectors.
extern "C" void region_read(void *destination, const void *parent, int offset, int stride, int n, int p, int element_bytes,
                            int is_float) __asm__("pulse.vc.region.read");
extern "C" void region_write(void *parent, const void *source, int offset, int stride, int n, int p, int element_bytes,
                             int is_float) __asm__("pulse.vc.region.write");

/// One element of a vector, as the target of an assignment: `v(i) = x`.
template<typename T, int N, typename Owner>
class element_ref {
public:
    PULSE_VC_INLINE element_ref(Owner &owner, int i) : owner(owner), i(i) {}
    PULSE_VC_INLINE operator T() const { return owner.value()[i]; }
    PULSE_VC_INLINE element_ref &operator=(T x) {
        lanes<T, N> v = owner.value();
        v[i] = x;
        owner.set_value(v);
        return *this;
    }
    PULSE_VC_INLINE element_ref &operator=(const element_ref &o) { return *this = (T)o; }

private:
    Owner &owner;
    int i;
};

}  // namespace cm_vc

/// The operations shared by vector and vector_ref. `Derived` provides
/// `lanes<T, N> value() const` and `void set_value(lanes<T, N>)`.
template<typename T, int N, typename Derived>
class vector_ops {
    static_assert(N > 0, "CM: a vector has at least one element");
    static_assert(__is_arithmetic(T), "CM: vector elements are arithmetic types");

    PULSE_VC_INLINE Derived &self() { return static_cast<Derived &>(*this); }
    PULSE_VC_INLINE const Derived &self() const { return static_cast<const Derived &>(*this); }

public:
    PULSE_VC_INLINE cm_vc::element_ref<T, N, Derived> operator()(int i) { return cm_vc::element_ref<T, N, Derived>(self(), i); }
    PULSE_VC_INLINE T operator()(int i) const { return self().value()[i]; }
    PULSE_VC_INLINE cm_vc::element_ref<T, N, Derived> operator[](int i) { return cm_vc::element_ref<T, N, Derived>(self(), i); }
    PULSE_VC_INLINE T operator[](int i) const { return self().value()[i]; }
    static constexpr int n_elems() { return N; }

    /// The region of S elements with stride ST that starts at element `offset`.
    template<int S, int ST>
    PULSE_VC_INLINE auto select(int offset = 0) {
        static_assert(S > 0 && ST > 0, "CM: select<size, stride> needs a positive size and stride");
        static_assert((S - 1) * ST < N, "CM: select<size, stride> region is larger than the vector");
        return self().template region<S>(offset, ST);
    }

    /// Indirect select: element i of the result is element index[i].
    template<typename I>
    PULSE_VC_INLINE vector<T, cm_vc::traits<cm_vc::decay<I>>::size> iselect(const I &index) const {
        static_assert(cm_vc::is_vector<I>, "CM: iselect takes a vector of indices");
        constexpr int M = cm_vc::traits<cm_vc::decay<I>>::size;
        const cm_vc::lanes<T, N> v = self().value();
        const cm_vc::lanes<int, M> k = cm_vc::lanes_of<int, M>(index);
        cm_vc::lanes<T, M> r;
        for (int i = 0; i < M; i++) r[i] = v[k[i]];
        return vector<T, M>(r);
    }

    /// this[i] = mask[i] ? x[i] : this[i]
    template<typename X, typename M>
    PULSE_VC_INLINE void merge(const X &x, const M &mask) {
        const cm_vc::lanes<T, N> a = cm_vc::lanes_of<T, N>(x);
        const cm_vc::lanes<ushort, N> m = cm_vc::merge_mask<M, N>(mask);
        self().set_value(cm_vc::select_lanes<T, N>(m, a, self().value()));
    }
    /// this[i] = mask[i] ? x[i] : y[i]
    template<typename X, typename Y, typename M>
    PULSE_VC_INLINE void merge(const X &x, const Y &y, const M &mask) {
        const cm_vc::lanes<T, N> a = cm_vc::lanes_of<T, N>(x), b = cm_vc::lanes_of<T, N>(y);
        const cm_vc::lanes<ushort, N> m = cm_vc::merge_mask<M, N>(mask);
        self().set_value(cm_vc::select_lanes<T, N>(m, a, b));
    }

    PULSE_VC_INLINE ushort any() const {
        const cm_vc::lanes<T, N> v = self().value();
        ushort r = 0;
        for (int i = 0; i < N; i++) r |= v[i] != 0;
        return r;
    }
    PULSE_VC_INLINE ushort all() const {
        const cm_vc::lanes<T, N> v = self().value();
        ushort r = 1;
        for (int i = 0; i < N; i++) r &= v[i] != 0;
        return r;
    }
};

/// N lanes of T, held in registers.
template<typename T, int N>
class vector : public vector_ops<T, N, vector<T, N>> {
public:
    PULSE_VC_INLINE vector() {}
    template<typename S, typename = typename cm_vc::enable_if<cm_vc::is_scalar<S>>::type>
    PULSE_VC_INLINE vector(S s) : v(cm_vc::lanes_of<T, N>(s)) {}
    template<typename V, typename = typename cm_vc::enable_if<cm_vc::is_object<V>>::type, typename = void>
    PULSE_VC_INLINE vector(const V &o) : v(cm_vc::lanes_of<T, N>(o)) {}
    template<typename S>
    PULSE_VC_INLINE explicit vector(const S (&init)[N]) {
        for (int i = 0; i < N; i++) v[i] = (T)init[i];
    }
    PULSE_VC_INLINE explicit vector(cm_vc::lanes<T, N> lanes) : v(lanes) {}
    vector(const vector &o) = default;

    vector &operator=(const vector &o) = default;
    template<typename V>
    PULSE_VC_INLINE vector &operator=(const V &o) {
        v = cm_vc::lanes_of<T, N>(o);
        return *this;
    }

    PULSE_VC_INLINE cm_vc::lanes<T, N> value() const { return v; }
    PULSE_VC_INLINE void set_value(cm_vc::lanes<T, N> x) { v = x; }
    template<int S>
    PULSE_VC_INLINE vector_ref<T, S, N> region(int offset, int stride) { return vector_ref<T, S, N>(v, offset, stride); }

private:
    cm_vc::lanes<T, N> v;
};

/// A region of another object, whose P lanes it reads and writes whole (so
/// that the parent stays one register value: no memory in the IR): N
/// elements `stride` apart from element `offset`.
template<typename T, int N, int P>
class vector_ref : public vector_ops<T, N, vector_ref<T, N, P>> {
public:
    PULSE_VC_INLINE vector_ref(cm_vc::lanes<T, P> &parent, int offset, int stride) : parent(parent), offset(offset), step(stride) {}
    vector_ref(const vector_ref &o) = default;

    PULSE_VC_INLINE vector_ref &operator=(const vector_ref &o) {
        set_value(o.value());
        return *this;
    }
    template<typename V>
    PULSE_VC_INLINE vector_ref &operator=(const V &o) {
        set_value(cm_vc::lanes_of<T, N>(o));
        return *this;
    }

    PULSE_VC_INLINE cm_vc::lanes<T, N> value() const {
        cm_vc::lanes<T, N> r;
        cm_vc::region_read(&r, &parent, offset, step, N, P, (int)sizeof(T), __is_floating_point(T));
        return r;
    }
    PULSE_VC_INLINE void set_value(cm_vc::lanes<T, N> x) {
        cm_vc::region_write(&parent, &x, offset, step, N, P, (int)sizeof(T), __is_floating_point(T));
    }
    template<int S>
    PULSE_VC_INLINE vector_ref<T, S, P> region(int first, int stride) {
        return vector_ref<T, S, P>(parent, offset + first * step, step * stride);
    }

private:
    cm_vc::lanes<T, P> &parent;
    int offset, step;
};

/// R rows of C elements, row major, one register value of R * C lanes.
template<typename T, int R, int C>
class matrix {
    static_assert(R > 0 && C > 0, "CM: a matrix has at least one row and column");

public:
    PULSE_VC_INLINE matrix() {}
    template<typename S, typename = typename cm_vc::enable_if<cm_vc::is_scalar<S>>::type>
    PULSE_VC_INLINE matrix(S s) : v(cm_vc::lanes_of<T, R * C>(s)) {}
    matrix(const matrix &o) = default;
    matrix &operator=(const matrix &o) = default;
    template<typename V>
    PULSE_VC_INLINE matrix &operator=(const V &o) {
        v = cm_vc::lanes_of<T, R * C>(o);
        return *this;
    }

    PULSE_VC_INLINE vector_ref<T, C, R * C> row(int r) { return vector_ref<T, C, R * C>(v, r * C, 1); }
    PULSE_VC_INLINE cm_vc::lanes<T, R * C> value() const { return v; }

private:
    cm_vc::lanes<T, R * C> v;
};


namespace cm_vc {

template<typename A, typename B>
constexpr bool binary_ok = (is_vector<A> && (is_vector<B> || is_scalar<B>)) || (is_scalar<A> && is_vector<B>);

template<typename A, typename B>
constexpr int binary_size() {
    if constexpr (is_vector<A>) {
        if constexpr (is_vector<B>) static_assert(traits<decay<A>>::size == traits<decay<B>>::size, "CM: operands of different sizes");
        return traits<decay<A>>::size;
    } else {
        return traits<decay<B>>::size;
    }
}

}  // namespace cm_vc

#define PULSE_CM_BINARY(op)                                                                                   \
    template<typename A, typename B, typename = typename cm_vc::enable_if<cm_vc::binary_ok<A, B>>::type>      \
    PULSE_VC_INLINE auto operator op(const A &a, const B &b) {                                                \
        constexpr int N = cm_vc::binary_size<A, B>();                                                         \
        using R = decltype(cm_vc::element<A>() op cm_vc::element<B>());                                       \
        return vector<R, N>(cm_vc::lanes<R, N>(cm_vc::lanes_of<R, N>(a) op cm_vc::lanes_of<R, N>(b)));       \
    }
PULSE_CM_BINARY(+)
PULSE_CM_BINARY(-)
PULSE_CM_BINARY(*)
PULSE_CM_BINARY(/)
PULSE_CM_BINARY(%)
PULSE_CM_BINARY(&)
PULSE_CM_BINARY(|)
PULSE_CM_BINARY(^)
PULSE_CM_BINARY(<<)
PULSE_CM_BINARY(>>)
#undef PULSE_CM_BINARY

// Comparisons give a mask: vector<ushort, N> of 0 and 1. Both operands are
// brought to their common type first, as C++ compares scalars.
#define PULSE_CM_COMPARE(op)                                                                                  \
    template<typename A, typename B, typename = typename cm_vc::enable_if<cm_vc::binary_ok<A, B>>::type>      \
    PULSE_VC_INLINE vector<ushort, cm_vc::binary_size<A, B>()> operator op(const A &a, const B &b) {         \
        constexpr int N = cm_vc::binary_size<A, B>();                                                         \
        using R = decltype(cm_vc::element<A>() + cm_vc::element<B>());                                        \
        return vector<ushort, N>(cm_vc::mask_of<N>(cm_vc::lanes_of<R, N>(a) op cm_vc::lanes_of<R, N>(b)));   \
    }
PULSE_CM_COMPARE(==)
PULSE_CM_COMPARE(!=)
PULSE_CM_COMPARE(<)
PULSE_CM_COMPARE(<=)
PULSE_CM_COMPARE(>)
PULSE_CM_COMPARE(>=)
#undef PULSE_CM_COMPARE

template<typename A, typename = typename cm_vc::enable_if<cm_vc::is_vector<A>>::type>
PULSE_VC_INLINE auto operator-(const A &a) {
    constexpr int N = cm_vc::traits<cm_vc::decay<A>>::size;
    using R = decltype(-cm_vc::element<A>());
    return vector<R, N>(cm_vc::lanes<R, N>(-cm_vc::lanes_of<R, N>(a)));
}

template<typename A, typename = typename cm_vc::enable_if<cm_vc::is_vector<A>>::type>
PULSE_VC_INLINE auto operator~(const A &a) {
    constexpr int N = cm_vc::traits<cm_vc::decay<A>>::size;
    using R = decltype(~cm_vc::element<A>());
    return vector<R, N>(cm_vc::lanes<R, N>(~cm_vc::lanes_of<R, N>(a)));
}

// ---- surfaces ---------------------------------------------------------------

/// A buffer's binding table index.
typedef uint SurfaceIndex;

namespace cm_vc {

// The genx intrinsics the reads and writes become. Oword block reads and
// writes address the surface in owords (16 bytes): CM's byte offset is
// divided by 16, as CM's compiler does.

template<typename T, int N> struct block {};
template<typename T, int N> struct scattered {};

// One specialization per element type and size Pulse moves: 32-bit elements
// (check_cm_support), 4 to 32 of them per oword block, 8 or 16 per scattered
// access. The scattered placeholders are pulse.vc.gather / pulse.vc.scatter
// (see the top of this file).
#define PULSE_VC_BLOCK(T, N, NAME)                                                                                 \
    lanes<T, N> oword_ld_v##N##NAME(int modified, uint surface, int owords) __asm__("llvm.genx.oword.ld.v" #N #NAME); \
    void oword_st_v##N##NAME(uint surface, int owords, lanes<T, N> data) __asm__("llvm.genx.oword.st.v" #N #NAME);  \
    template<> struct block<T, N> {                                                                                \
        static PULSE_VC_INLINE lanes<T, N> read(uint s, int owords) { return oword_ld_v##N##NAME(0, s, owords); }  \
        static PULSE_VC_INLINE void write(uint s, int owords, lanes<T, N> v) { oword_st_v##N##NAME(s, owords, v); } \
    };
#define PULSE_VC_SCATTERED(T, N, NAME)                                                                             \
    lanes<T, N> gather_v##N##NAME(uint surface, uint global_offset, lanes<uint, N> offsets) __asm__("pulse.vc.gather.v" #N #NAME); \
    void scatter_v##N##NAME(uint surface, uint global_offset, lanes<uint, N> offsets, lanes<T, N> data)            \
        __asm__("pulse.vc.scatter.v" #N #NAME);                                                                     \
    template<> struct scattered<T, N> {                                                                            \
        static PULSE_VC_INLINE lanes<T, N> read(uint s, uint g, lanes<uint, N> o) { return gather_v##N##NAME(s, g, o); } \
        static PULSE_VC_INLINE void write(uint s, uint g, lanes<uint, N> o, lanes<T, N> v) { scatter_v##N##NAME(s, g, o, v); } \
    };
#define PULSE_VC_TYPE(T, NAME)      \
    PULSE_VC_BLOCK(T, 4, NAME)      \
    PULSE_VC_BLOCK(T, 8, NAME)      \
    PULSE_VC_BLOCK(T, 16, NAME)     \
    PULSE_VC_BLOCK(T, 32, NAME)     \
    PULSE_VC_SCATTERED(T, 8, NAME)  \
    PULSE_VC_SCATTERED(T, 16, NAME)
PULSE_VC_TYPE(float, f32)
PULSE_VC_TYPE(int, i32)
#undef PULSE_VC_TYPE
#undef PULSE_VC_SCATTERED
#undef PULSE_VC_BLOCK

/// uint moves as int (the same LLVM type).
template<int N> struct block<uint, N> {
    static PULSE_VC_INLINE lanes<uint, N> read(uint s, int owords) {
        return __builtin_convertvector(block<int, N>::read(s, owords), lanes<uint, N>);
    }
    static PULSE_VC_INLINE void write(uint s, int owords, lanes<uint, N> v) {
        block<int, N>::write(s, owords, __builtin_convertvector(v, lanes<int, N>));
    }
};
template<int N> struct scattered<uint, N> {
    static PULSE_VC_INLINE lanes<uint, N> read(uint s, uint g, lanes<uint, N> o) {
        return __builtin_convertvector(scattered<int, N>::read(s, g, o), lanes<uint, N>);
    }
    static PULSE_VC_INLINE void write(uint s, uint g, lanes<uint, N> o, lanes<uint, N> v) {
        scattered<int, N>::write(s, g, o, __builtin_convertvector(v, lanes<int, N>));
    }
};

template<typename V>
constexpr void check_block() {
    constexpr int bytes = traits<decay<V>>::size * (int)sizeof(typename traits<decay<V>>::element);
    static_assert(is_vector<V>, "CM: block read/write takes a vector");
    static_assert(bytes == 16 || bytes == 32 || bytes == 64 || bytes == 128,
                  "CM: an oword block read/write moves 1, 2, 4 or 8 owords (16..128 bytes)");
}

template<typename O, typename V>
constexpr void check_scattered() {
    static_assert(is_vector<O> && is_vector<V>, "CM: scattered read/write takes vectors of offsets and data");
    constexpr int n = traits<decay<V>>::size;
    static_assert(traits<decay<O>>::size == n, "CM: scattered read/write: offsets and data differ in size");
    static_assert(n == 8 || n == 16, "CM: scattered read/write moves 8 or 16 elements");
    static_assert(sizeof(typename traits<decay<V>>::element) == 4, "CM: dword scattered read/write needs 4-byte elements");
    static_assert(is_same<typename traits<decay<O>>::element, uint>::value, "CM: scattered offsets are vector<uint, N>");
}

}  // namespace cm_vc

/// Oword block read: the elements at byte offset `offset` (a multiple of 16).
template<typename V>
PULSE_VC_INLINE void read(SurfaceIndex s, int offset, V &&v) {
    cm_vc::check_block<V>();
    using T = typename cm_vc::traits<cm_vc::decay<V>>::element;
    constexpr int N = cm_vc::traits<cm_vc::decay<V>>::size;
    v.set_value(cm_vc::block<T, N>::read(s, offset >> 4));
}

/// Oword block write to byte offset `offset` (a multiple of 16).
template<typename V>
PULSE_VC_INLINE void write(SurfaceIndex s, int offset, const V &v) {
    cm_vc::check_block<V>();
    using T = typename cm_vc::traits<cm_vc::decay<V>>::element;
    constexpr int N = cm_vc::traits<cm_vc::decay<V>>::size;
    cm_vc::block<T, N>::write(s, offset >> 4, v.value());
}

/// Dword scattered read: element i comes from element global_offset +
/// element_offset[i] of the surface (offsets in elements, not bytes).
template<typename O, typename V>
PULSE_VC_INLINE void read(SurfaceIndex s, uint global_offset, const O &element_offset, V &&v) {
    cm_vc::check_scattered<O, V>();
    using T = typename cm_vc::traits<cm_vc::decay<V>>::element;
    constexpr int N = cm_vc::traits<cm_vc::decay<V>>::size;
    v.set_value(cm_vc::scattered<T, N>::read(s, global_offset, element_offset.value()));
}

/// Dword scattered write: element i goes to element global_offset +
/// element_offset[i] of the surface.
template<typename O, typename V>
PULSE_VC_INLINE void write(SurfaceIndex s, uint global_offset, const O &element_offset, const V &v) {
    cm_vc::check_scattered<O, V>();
    using T = typename cm_vc::traits<cm_vc::decay<V>>::element;
    constexpr int N = cm_vc::traits<cm_vc::decay<V>>::size;
    cm_vc::scattered<T, N>::write(s, global_offset, element_offset.value(), v.value());
}

// ---- the thread space ---------------------------------------------------------

namespace cm_vc {
uint group_id_x() __asm__("llvm.genx.group.id.x");
uint group_id_y() __asm__("llvm.genx.group.id.y");
uint group_id_z() __asm__("llvm.genx.group.id.z");
lanes<uint, 3> local_id() __asm__("llvm.genx.local.id.v3i32");
lanes<uint, 3> local_size() __asm__("llvm.genx.local.size.v3i32");
lanes<uint, 3> group_count() __asm__("llvm.genx.group.count.v3i32");
}  // namespace cm_vc

/// The thread group of this thread, per dimension (0, 1, 2).
PULSE_VC_INLINE uint cm_group_id(uint dim) {
    return dim == 0 ? cm_vc::group_id_x() : dim == 1 ? cm_vc::group_id_y() : cm_vc::group_id_z();
}
/// This thread within its group.
PULSE_VC_INLINE uint cm_local_id(uint dim) { return cm_vc::local_id()[dim]; }
/// Threads per group.
PULSE_VC_INLINE uint cm_local_size(uint dim) { return cm_vc::local_size()[dim]; }
/// Groups in the launch.
PULSE_VC_INLINE uint cm_group_count(uint dim) { return cm_vc::group_count()[dim]; }

#endif
