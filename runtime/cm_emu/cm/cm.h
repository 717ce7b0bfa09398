// A CPU emulation of the subset of Intel C for Metal (CM) that Pulse's CM
// backend emits (compiler/codegen/CodeGenCM.h), so that generated kernels compile with
// a host C++17 compiler and run, thread by thread, on the CPU.
//
// Generated kernels say `#include <cm/cm.h>`; with `-I runtime/cm_emu` on the
// command line this header takes the place of the CM compiler's.
//
// What is emulated (names and semantics follow the CM language specification):
//   vector<T, N>, vector_ref<T, N>    lanes; a vector_ref is a region of another
//                                     object and assigning to it writes through
//   matrix<T, R, C>, matrix_ref       row-major; row(i), select<R, RS, C, CS>(i, j)
//   v.select<S, ST>(i)                region of S elements, stride ST, from element i
//   v.replicate<REP[, VS], W[, HS]>(i) REP blocks of W elements
//   v.merge(x, mask), v.merge(x, y, mask)
//   v.iselect(index)                  the elements at the lanes `index` names
//   arithmetic, bitwise and comparison operators (comparisons give
//   vector<ushort, N> masks of 0 and 1), v.any(), v.all()
//   SurfaceIndex, read/write: oword block forms (byte offset) and the dword
//   scattered forms (element offsets)
//   cm_group_id, cm_local_id, cm_local_size, cm_group_count
//
// Faithfulness rules:
//   * Anything not listed does not exist here, so a kernel that uses it fails to
//     compile instead of behaving differently.
//   * Region shapes are template arguments, checked with static_assert as the
//     CM compiler does; offsets are run-time values and are checked at run time
//     (an out-of-range region aborts with a message).
//   * The right-hand side of an assignment is evaluated completely before the
//     destination region is written (CM's value semantics), so overlapping
//     region copies such as `h.select<3,1>(1) = h.select<3,1>(0)` are exact.
//   * Surfaces are bounds checked like buffer surfaces on the GPU: an element
//     outside the surface reads as 0 and a write to it is dropped.
//   * A vector that is declared without a value holds garbage on the GPU; here
//     it holds a poison pattern (NaN for floating point) so that a read before
//     a write shows up in results.
#ifndef PULSE_CM_EMU_CM_H
#define PULSE_CM_EMU_CM_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

// Kernel and function qualifiers of CM: nothing to do on the CPU.
#define _GENX_MAIN_
#define _GENX_

typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned char uchar;

namespace cm_emu {

/// Stops the program with a message: the emulated kernel did something that is
/// undefined on the GPU (an out-of-range region, a misaligned block read).
[[noreturn]] inline void fail(const char *what, long a = 0, long b = 0) {
    std::fprintf(stderr, "cm emulation: %s (%ld, %ld)\n", what, a, b);
    std::abort();
}

/// The value of an element that was never written.
template<typename T>
T poison() {
    if constexpr (std::is_floating_point<T>::value) {
        return std::numeric_limits<T>::quiet_NaN();
    } else {
        return (T)0x5A5A5A5A;
    }
}

}  // namespace cm_emu

template<typename T, int N> class vector;
template<typename T, int N> class vector_ref;
template<typename T, int R, int C> class matrix;
template<typename T, int R, int C> class matrix_ref;

namespace cm_emu {

/// What the operators below need to know of an operand: is it a CM vector (or
/// region of one), its element type and its number of elements.
template<typename V> struct traits { static constexpr bool is_vector = false; static constexpr bool is_object = false; };
template<typename T, int N> struct traits<::vector<T, N>> {
    static constexpr bool is_vector = true, is_object = true;
    using element = T;
    static constexpr int size = N;
};
template<typename T, int N> struct traits<::vector_ref<T, N>> {
    static constexpr bool is_vector = true, is_object = true;
    using element = T;
    static constexpr int size = N;
};
// Matrices take part in assignments only (no arithmetic is emulated on them).
template<typename T, int R, int C> struct traits<::matrix<T, R, C>> {
    static constexpr bool is_vector = false, is_object = true;
    using element = T;
    static constexpr int size = R * C;
};
template<typename T, int R, int C> struct traits<::matrix_ref<T, R, C>> {
    static constexpr bool is_vector = false, is_object = true;
    using element = T;
    static constexpr int size = R * C;
};

template<typename V> using decay = typename std::remove_cv<typename std::remove_reference<V>::type>::type;
template<typename V> constexpr bool is_vector = traits<decay<V>>::is_vector;
template<typename V> constexpr bool is_object = traits<decay<V>>::is_object;
template<typename S> constexpr bool is_scalar = std::is_arithmetic<decay<S>>::value;

/// Element i of a vector-like operand, or the operand itself if it is a scalar.
template<typename V>
auto element(const V &v, int i) {
    if constexpr (is_object<V>) {
        return v.get(i);
    } else {
        return v;
    }
}

/// One element converted to T as the hardware's mov does: a float to an
/// integer truncates towards zero, saturates at T's range and takes NaN to
/// 0 (C leaves that undefined); other conversions are C's.
template<typename T, typename S>
T convert(S v) {
    if constexpr (std::is_floating_point<S>::value && std::is_integral<T>::value && !std::is_same<T, bool>::value) {
        const int top = std::is_signed<T>::value ? (int)sizeof(T) * 8 - 1 : (int)sizeof(T) * 8;
        const S limit = top == 64 ? (S)18446744073709551616.0 : (S)((uint64_t)1 << top);
        if (v != v) return (T)0;
        if (v >= limit) return std::numeric_limits<T>::max();
        if (std::is_signed<T>::value ? v < -limit : v <= (S)-1) return std::numeric_limits<T>::min();
        return (T)v;
    } else {
        return (T)v;
    }
}

/// Copies `src` (an object of N elements or a scalar) into the N elements
/// addressed by `at(i)`, reading all of the source first.
template<typename T, int N, typename Src, typename At>
void assign(const Src &src, At at) {
    if constexpr (is_object<Src>) {
        static_assert(traits<decay<Src>>::size == N, "CM: assignment between objects of different sizes");
        T tmp[N];
        for (int i = 0; i < N; i++) tmp[i] = convert<T>(src.get(i));
        for (int i = 0; i < N; i++) at(i) = tmp[i];
    } else {
        static_assert(is_scalar<Src>, "CM: unsupported right-hand side of an assignment");
        for (int i = 0; i < N; i++) at(i) = convert<T>(src);
    }
}

template<typename M>
bool mask_bit(const M &mask, int i) {
    if constexpr (is_object<M>) {
        static_assert(std::is_integral<typename traits<decay<M>>::element>::value, "CM: a merge mask has integer elements");
        return mask.get(i) != 0;
    } else {
        static_assert(std::is_integral<decay<M>>::value, "CM: a scalar merge mask is an integer bit mask");
        return ((unsigned long long)mask >> i) & 1;
    }
}

inline void check_region(int offset, int size, int stride, int n) {
    if (offset < 0 || offset + (size - 1) * stride >= n) fail("region out of range: offset, last element", offset, offset + (size - 1) * stride);
}

}  // namespace cm_emu

/// The operations shared by vector and vector_ref. `Derived` provides
/// `T &at(int i)` and `T get(int i) const`.
template<typename T, int N, typename Derived>
class vector_ops {
    static_assert(N > 0, "CM: a vector has at least one element");
    static_assert(std::is_arithmetic<T>::value, "CM: vector elements are arithmetic types");

    Derived &self() { return static_cast<Derived &>(*this); }
    const Derived &self() const { return static_cast<const Derived &>(*this); }

public:
    T &operator()(int i) { check(i); return self().at(i); }
    T operator()(int i) const { check(i); return self().get(i); }
    T &operator[](int i) { check(i); return self().at(i); }
    T operator[](int i) const { check(i); return self().get(i); }
    static constexpr int n_elems() { return N; }

    /// The region of S elements with stride ST that starts at element `offset`.
    template<int S, int ST>
    vector_ref<T, S> select(int offset = 0) {
        static_assert(S > 0 && ST > 0, "CM: select<size, stride> needs a positive size and stride");
        static_assert((S - 1) * ST < N, "CM: select<size, stride> region is larger than the vector");
        cm_emu::check_region(offset, S, ST, N);
        return vector_ref<T, S>(&self().at(offset), self().stride() * ST);
    }

    /// REP blocks of W elements; block r starts at offset + r * VS, and its
    /// elements are HS apart.
    template<int REP, int VS, int W, int HS>
    vector<T, REP * W> replicate(int offset = 0) const {
        static_assert(REP > 0 && W > 0 && VS >= 0 && HS >= 0, "CM: replicate needs positive REP and W");
        vector<T, REP * W> r;
        for (int b = 0; b < REP; b++) {
            for (int e = 0; e < W; e++) {
                int i = offset + b * VS + e * HS;
                if (i < 0 || i >= N) cm_emu::fail("replicate reads outside the vector: element", i, N);
                r(b * W + e) = self().get(i);
            }
        }
        return r;
    }
    template<int REP, int VS, int W>
    vector<T, REP * W> replicate(int offset = 0) const { return replicate<REP, VS, W, 1>(offset); }
    template<int REP, int W>
    vector<T, REP * W> replicate(int offset = 0) const { return replicate<REP, 0, W, 1>(offset); }
    template<int REP>
    vector<T, REP * N> replicate() const { return replicate<REP, 0, N, 1>(0); }

    /// Indirect select (CM's iselect): element i of the result is element
    /// index[i] of this vector; every index must name an element.
    template<typename I>
    vector<T, cm_emu::traits<cm_emu::decay<I>>::size> iselect(const I &index) const {
        static_assert(cm_emu::is_vector<I>, "CM: iselect takes a vector of indices");
        static_assert(std::is_integral<typename cm_emu::traits<cm_emu::decay<I>>::element>::value, "CM: iselect indices are integers");
        constexpr int M = cm_emu::traits<cm_emu::decay<I>>::size;
        vector<T, M> r;
        for (int i = 0; i < M; i++) {
            long k = (long)index.get(i);
            if (k < 0 || k >= N) cm_emu::fail("iselect reads outside the vector: element", k, N);
            r(i) = self().get((int)k);
        }
        return r;
    }

    /// this[i] = mask[i] ? x[i] : this[i]
    template<typename X, typename M>
    void merge(const X &x, const M &mask) {
        check_operand<X>();
        T tmp[N];
        for (int i = 0; i < N; i++) tmp[i] = cm_emu::mask_bit(mask, i) ? (T)cm_emu::element(x, i) : self().get(i);
        for (int i = 0; i < N; i++) self().at(i) = tmp[i];
    }
    /// this[i] = mask[i] ? x[i] : y[i]
    template<typename X, typename Y, typename M>
    void merge(const X &x, const Y &y, const M &mask) {
        check_operand<X>();
        check_operand<Y>();
        T tmp[N];
        for (int i = 0; i < N; i++) tmp[i] = cm_emu::mask_bit(mask, i) ? (T)cm_emu::element(x, i) : (T)cm_emu::element(y, i);
        for (int i = 0; i < N; i++) self().at(i) = tmp[i];
    }

    /// 1 if any (all) element is non-zero.
    ushort any() const {
        for (int i = 0; i < N; i++)
            if (self().get(i) != 0) return 1;
        return 0;
    }
    ushort all() const {
        for (int i = 0; i < N; i++)
            if (self().get(i) == 0) return 0;
        return 1;
    }

#define PULSE_CM_COMPOUND(op)                                                         \
    template<typename X>                                                              \
    Derived &operator op##=(const X &x) {                                             \
        check_operand<X>();                                                           \
        T tmp[N];                                                                     \
        for (int i = 0; i < N; i++) tmp[i] = (T)(self().get(i) op cm_emu::element(x, i)); \
        for (int i = 0; i < N; i++) self().at(i) = tmp[i];                            \
        return self();                                                                \
    }
    PULSE_CM_COMPOUND(+)
    PULSE_CM_COMPOUND(-)
    PULSE_CM_COMPOUND(*)
    PULSE_CM_COMPOUND(/)
    PULSE_CM_COMPOUND(%)
    PULSE_CM_COMPOUND(&)
    PULSE_CM_COMPOUND(|)
    PULSE_CM_COMPOUND(^)
#undef PULSE_CM_COMPOUND

private:
    static void check(int i) {
        if (i < 0 || i >= N) cm_emu::fail("element index out of range", i, N);
    }
    template<typename X>
    static void check_operand() {
        if constexpr (cm_emu::is_object<X>) {
            static_assert(cm_emu::traits<cm_emu::decay<X>>::size == N, "CM: operands of different sizes");
        } else {
            static_assert(cm_emu::is_scalar<X>, "CM: unsupported operand");
        }
    }
};

/// N lanes of T, held in registers on the GPU.
template<typename T, int N>
class vector : public vector_ops<T, N, vector<T, N>> {
public:
    vector() {
        for (int i = 0; i < N; i++) data[i] = cm_emu::poison<T>();
    }
    /// Every element set to `s`.
    template<typename S, typename = typename std::enable_if<cm_emu::is_scalar<S>>::type>
    vector(S s) {
        for (int i = 0; i < N; i++) data[i] = cm_emu::convert<T>(s);
    }
    /// Element-wise conversion from any object of N elements.
    template<typename V, typename = typename std::enable_if<cm_emu::is_object<V>>::type, typename = void>
    vector(const V &v) {
        cm_emu::assign<T, N>(v, [&](int i) -> T & { return data[i]; });
    }
    /// From an initializer array, as `vector<int, 8> v(init);`.
    template<typename S>
    explicit vector(const S (&init)[N]) {
        for (int i = 0; i < N; i++) data[i] = (T)init[i];
    }
    vector(const vector &o) = default;

    vector &operator=(const vector &o) = default;
    template<typename V>
    vector &operator=(const V &v) {
        cm_emu::assign<T, N>(v, [&](int i) -> T & { return data[i]; });
        return *this;
    }

    T &at(int i) { return data[i]; }
    T get(int i) const { return data[i]; }
    static constexpr int stride() { return 1; }

private:
    T data[N];
};

/// A region of another object: N elements `stride` apart. Assigning to it
/// writes the elements of the object it refers to.
template<typename T, int N>
class vector_ref : public vector_ops<T, N, vector_ref<T, N>> {
public:
    vector_ref(T *base, int stride) : base(base), step(stride) {}
    vector_ref(const vector_ref &o) = default;
    /// `vector_ref<T, N> r = v;` refers to all of vector v.
    vector_ref(vector<T, N> &v) : base(&v.at(0)), step(1) {}

    vector_ref &operator=(const vector_ref &o) {
        cm_emu::assign<T, N>(o, [&](int i) -> T & { return at(i); });
        return *this;
    }
    template<typename V>
    vector_ref &operator=(const V &v) {
        cm_emu::assign<T, N>(v, [&](int i) -> T & { return at(i); });
        return *this;
    }

    T &at(int i) { return base[i * step]; }
    T get(int i) const { return base[i * step]; }
    int stride() const { return step; }

private:
    T *base;
    int step;
};

/// R rows of C elements, row major.
template<typename T, int R, int C>
class matrix_ref {
public:
    matrix_ref(T *base, int row_stride, int col_stride) : base(base), rs(row_stride), cs(col_stride) {}
    matrix_ref(const matrix_ref &o) = default;

    matrix_ref &operator=(const matrix_ref &o) {
        cm_emu::assign<T, R * C>(o, [&](int i) -> T & { return at(i); });
        return *this;
    }
    template<typename V>
    matrix_ref &operator=(const V &v) {
        cm_emu::assign<T, R * C>(v, [&](int i) -> T & { return at(i); });
        return *this;
    }
    T &operator()(int r, int c) {
        check(r, c);
        return base[r * rs + c * cs];
    }
    T operator()(int r, int c) const {
        check(r, c);
        return base[r * rs + c * cs];
    }
    vector_ref<T, C> row(int r) {
        check(r, 0);
        return vector_ref<T, C>(base + r * rs, cs);
    }
    template<int RS, int RST, int CS, int CST>
    matrix_ref<T, RS, CS> select(int r = 0, int c = 0) {
        static_assert(RS > 0 && CS > 0 && RST > 0 && CST > 0, "CM: select needs positive sizes and strides");
        static_assert((RS - 1) * RST < R && (CS - 1) * CST < C, "CM: select region is larger than the matrix");
        cm_emu::check_region(r, RS, RST, R);
        cm_emu::check_region(c, CS, CST, C);
        return matrix_ref<T, RS, CS>(base + r * rs + c * cs, rs * RST, cs * CST);
    }

    T &at(int i) { return base[(i / C) * rs + (i % C) * cs]; }
    T get(int i) const { return base[(i / C) * rs + (i % C) * cs]; }

private:
    static void check(int r, int c) {
        if (r < 0 || r >= R || c < 0 || c >= C) cm_emu::fail("matrix element out of range", r, c);
    }
    T *base;
    int rs, cs;
};

template<typename T, int R, int C>
class matrix {
    static_assert(R > 0 && C > 0, "CM: a matrix has at least one row and column");

public:
    matrix() {
        for (int i = 0; i < R * C; i++) data[i] = cm_emu::poison<T>();
    }
    template<typename S, typename = typename std::enable_if<cm_emu::is_scalar<S>>::type>
    matrix(S s) {
        for (int i = 0; i < R * C; i++) data[i] = (T)s;
    }
    matrix(const matrix &o) = default;
    matrix &operator=(const matrix &o) = default;
    template<typename V>
    matrix &operator=(const V &v) {
        cm_emu::assign<T, R * C>(v, [&](int i) -> T & { return data[i]; });
        return *this;
    }

    T &operator()(int r, int c) { return ref()(r, c); }
    T operator()(int r, int c) const { return const_cast<matrix *>(this)->ref()(r, c); }
    vector_ref<T, C> row(int r) { return ref().row(r); }
    template<int RS, int RST, int CS, int CST>
    matrix_ref<T, RS, CS> select(int r = 0, int c = 0) {
        return ref().template select<RS, RST, CS, CST>(r, c);
    }

    T &at(int i) { return data[i]; }
    T get(int i) const { return data[i]; }

private:
    matrix_ref<T, R, C> ref() { return matrix_ref<T, R, C>(data, C, 1); }
    T data[R * C];
};

namespace cm_emu {

template<typename A, typename B>
constexpr bool binary_ok = (is_vector<A> && (is_vector<B> || is_scalar<B>)) || (is_scalar<A> && is_vector<B>);

template<typename A, typename B>
constexpr int binary_size() {
    if constexpr (is_vector<A>) {
        return traits<decay<A>>::size;
    } else {
        return traits<decay<B>>::size;
    }
}

template<typename A, typename B>
constexpr void check_sizes() {
    if constexpr (is_vector<A> && is_vector<B>) {
        static_assert(traits<decay<A>>::size == traits<decay<B>>::size, "CM: operands of different sizes");
    }
}

}  // namespace cm_emu

// Element-wise arithmetic: the result element type follows C++'s usual
// arithmetic conversions, as in CM.
#define PULSE_CM_BINARY(op)                                                                                      \
    template<typename A, typename B, typename = typename std::enable_if<cm_emu::binary_ok<A, B>>::type>          \
    auto operator op(const A &a, const B &b) {                                                                   \
        cm_emu::check_sizes<A, B>();                                                                             \
        constexpr int N = cm_emu::binary_size<A, B>();                                                           \
        using R = decltype(cm_emu::element(a, 0) op cm_emu::element(b, 0));                                      \
        vector<R, N> r;                                                                                          \
        for (int i = 0; i < N; i++) r(i) = cm_emu::element(a, i) op cm_emu::element(b, i);                       \
        return r;                                                                                                \
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

// Comparisons give a mask: vector<ushort, N> of 0 and 1.
#define PULSE_CM_COMPARE(op)                                                                                     \
    template<typename A, typename B, typename = typename std::enable_if<cm_emu::binary_ok<A, B>>::type>          \
    vector<ushort, cm_emu::binary_size<A, B>()> operator op(const A &a, const B &b) {                            \
        cm_emu::check_sizes<A, B>();                                                                             \
        constexpr int N = cm_emu::binary_size<A, B>();                                                           \
        vector<ushort, N> r;                                                                                     \
        for (int i = 0; i < N; i++) r(i) = (cm_emu::element(a, i) op cm_emu::element(b, i)) ? 1 : 0;             \
        return r;                                                                                                \
    }
PULSE_CM_COMPARE(==)
PULSE_CM_COMPARE(!=)
PULSE_CM_COMPARE(<)
PULSE_CM_COMPARE(<=)
PULSE_CM_COMPARE(>)
PULSE_CM_COMPARE(>=)
#undef PULSE_CM_COMPARE

template<typename A, typename = typename std::enable_if<cm_emu::is_vector<A>>::type>
auto operator-(const A &a) {
    constexpr int N = cm_emu::traits<cm_emu::decay<A>>::size;
    using R = decltype(-a.get(0));
    vector<R, N> r;
    for (int i = 0; i < N; i++) r(i) = -a.get(i);
    return r;
}

template<typename A, typename = typename std::enable_if<cm_emu::is_vector<A>>::type>
auto operator~(const A &a) {
    constexpr int N = cm_emu::traits<cm_emu::decay<A>>::size;
    static_assert(std::is_integral<typename cm_emu::traits<cm_emu::decay<A>>::element>::value, "CM: ~ needs integer elements");
    using R = decltype(~a.get(0));
    vector<R, N> r;
    for (int i = 0; i < N; i++) r(i) = ~a.get(i);
    return r;
}

// ---- surfaces -------------------------------------------------------------

/// A buffer bound to a kernel argument. On the CPU it names a host array that
/// was registered with cm_emu::bind_buffer.
class SurfaceIndex {
public:
    SurfaceIndex() = default;
    explicit SurfaceIndex(int slot) : slot(slot) {}
    int index() const { return slot; }

private:
    int slot = -1;
};

namespace cm_emu {

struct Buffer {
    unsigned char *data = nullptr;
    size_t bytes = 0;
};

inline std::vector<Buffer> &buffers() {
    static std::vector<Buffer> table;
    return table;
}

/// Makes `bytes` bytes at `data` a buffer surface and returns its index.
inline SurfaceIndex bind_buffer(void *data, size_t bytes) {
    buffers().push_back(Buffer{static_cast<unsigned char *>(data), bytes});
    return SurfaceIndex((int)buffers().size() - 1);
}

/// Forgets every bound buffer.
inline void unbind_all() { buffers().clear(); }

inline Buffer &buffer(SurfaceIndex s) {
    if (s.index() < 0 || s.index() >= (int)buffers().size()) fail("unbound SurfaceIndex", s.index());
    return buffers()[s.index()];
}

template<typename T>
T load(const Buffer &b, uint64_t byte) {
    T v = 0;
    if (byte + sizeof(T) <= b.bytes) std::memcpy(&v, b.data + byte, sizeof(T));
    return v;
}

template<typename T>
void store(Buffer &b, uint64_t byte, T v) {
    if (byte + sizeof(T) <= b.bytes) std::memcpy(b.data + byte, &v, sizeof(T));
}

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
    static_assert(std::is_same<typename traits<decay<O>>::element, uint>::value, "CM: scattered offsets are vector<uint, N>");
}

inline void check_oword_aligned(int offset) {
    if (offset < 0 || offset % 16 != 0) fail("block read/write offset is not a multiple of 16 bytes", offset);
}

}  // namespace cm_emu

/// Oword block read: the elements at byte offset `offset` (a multiple of 16).
template<typename V>
void read(SurfaceIndex s, int offset, V &&v) {
    cm_emu::check_block<V>();
    cm_emu::check_oword_aligned(offset);
    using T = typename cm_emu::traits<cm_emu::decay<V>>::element;
    const cm_emu::Buffer &b = cm_emu::buffer(s);
    for (int i = 0; i < cm_emu::traits<cm_emu::decay<V>>::size; i++) v(i) = cm_emu::load<T>(b, (uint64_t)offset + i * sizeof(T));
}

/// Oword block write to byte offset `offset` (a multiple of 16).
template<typename V>
void write(SurfaceIndex s, int offset, const V &v) {
    cm_emu::check_block<V>();
    cm_emu::check_oword_aligned(offset);
    using T = typename cm_emu::traits<cm_emu::decay<V>>::element;
    cm_emu::Buffer &b = cm_emu::buffer(s);
    for (int i = 0; i < cm_emu::traits<cm_emu::decay<V>>::size; i++) cm_emu::store<T>(b, (uint64_t)offset + i * sizeof(T), v.get(i));
}

/// Dword scattered read: element i comes from element global_offset +
/// element_offset[i] of the surface (offsets in elements, not bytes).
template<typename O, typename V>
void read(SurfaceIndex s, uint global_offset, const O &element_offset, V &&v) {
    cm_emu::check_scattered<O, V>();
    using T = typename cm_emu::traits<cm_emu::decay<V>>::element;
    const cm_emu::Buffer &b = cm_emu::buffer(s);
    for (int i = 0; i < cm_emu::traits<cm_emu::decay<V>>::size; i++) {
        v(i) = cm_emu::load<T>(b, ((uint64_t)global_offset + element_offset.get(i)) * sizeof(T));
    }
}

/// Dword scattered write: element i goes to element global_offset +
/// element_offset[i] of the surface.
template<typename O, typename V>
void write(SurfaceIndex s, uint global_offset, const O &element_offset, const V &v) {
    cm_emu::check_scattered<O, V>();
    using T = typename cm_emu::traits<cm_emu::decay<V>>::element;
    cm_emu::Buffer &b = cm_emu::buffer(s);
    for (int i = 0; i < cm_emu::traits<cm_emu::decay<V>>::size; i++) {
        cm_emu::store<T>(b, ((uint64_t)global_offset + element_offset.get(i)) * sizeof(T), v.get(i));
    }
}

// ---- the thread space ------------------------------------------------------

namespace cm_emu {

struct ThreadState {
    uint group_id[3] = {0, 0, 0}, local_id[3] = {0, 0, 0};
    uint group_count[3] = {1, 1, 1}, local_size[3] = {1, 1, 1};
};

inline ThreadState &thread() {
    static ThreadState state;
    return state;
}

inline uint dimension(const uint (&v)[3], uint dim) {
    if (dim > 2) fail("thread space dimension out of range", dim);
    return v[dim];
}

/// Runs `kernel()` once per thread of `groups` groups of `local` threads, one
/// thread after the other (the thread order of a GPU is unspecified; Pulse's
/// kernels do not depend on it).
template<typename F>
void launch(const uint (&groups)[3], const uint (&local)[3], F kernel) {
    ThreadState &t = thread();
    for (int d = 0; d < 3; d++) {
        t.group_count[d] = groups[d];
        t.local_size[d] = local[d];
    }
    for (uint gz = 0; gz < groups[2]; gz++)
        for (uint gy = 0; gy < groups[1]; gy++)
            for (uint gx = 0; gx < groups[0]; gx++)
                for (uint lz = 0; lz < local[2]; lz++)
                    for (uint ly = 0; ly < local[1]; ly++)
                        for (uint lx = 0; lx < local[0]; lx++) {
                            t.group_id[0] = gx, t.group_id[1] = gy, t.group_id[2] = gz;
                            t.local_id[0] = lx, t.local_id[1] = ly, t.local_id[2] = lz;
                            kernel();
                        }
}

}  // namespace cm_emu

/// The thread group of this thread, per dimension (0, 1, 2).
inline uint cm_group_id(uint dim) { return cm_emu::dimension(cm_emu::thread().group_id, dim); }
/// This thread within its group.
inline uint cm_local_id(uint dim) { return cm_emu::dimension(cm_emu::thread().local_id, dim); }
/// Threads per group.
inline uint cm_local_size(uint dim) { return cm_emu::dimension(cm_emu::thread().local_size, dim); }
/// Groups in the launch.
inline uint cm_group_count(uint dim) { return cm_emu::dimension(cm_emu::thread().group_count, dim); }

#endif
