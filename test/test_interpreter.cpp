// The reference interpreter's edge cases: reads of undefined values, reads
// outside the domain, outputs written twice or never, the reference order.
#include "TestUtil.h"

#include "ir/ReferenceOrder.h"

using namespace pulse;
using Catch::Matchers::Contains;

namespace {
Buffers inputs_for(const Func &out, uint32_t seed = 1) { return random_inputs(out.lower(), seed); }
}  // namespace

TEST_CASE("reading a value a select left undefined is an error naming the URE and the point", "[interpreter]") {
    Var c("c"), q("q");
    Input x(Float(32), 1, "x");
    Func A(Float(32), {c, q}, "A"), B(Float(32), {c, q}, "B"), Out(Place::Host, "Out");
    A(c, q) = select(q == 0, x(c));                           // undefined for q > 0
    B(c, q) = select(q == 0, 0.0f, A(c, q - 1));              // reads A(c, 0) at q = 1: fine; A(c, 1) at q = 2: undefined
    Out(c) = select(q == 2, B(c, q));
    A.merge_ures(B, Out).set_bounds(c, 0, 4, q, 0, 3);
    REQUIRE_THROWS_WITH(Out.realize(inputs_for(Out)),
                        Contains("B at (q=2, c=0) reads A(c, q - 1) = A(q=1, c=0), which its select left undefined"));
}

TEST_CASE("reading outside the domain is an error naming the point", "[interpreter]") {
    Var c("c"), q("q");
    Input x(Float(32), 1, "x");
    Func A(Float(32), {c, q}, "A"), Out(Place::Host, "Out");
    A(c, q) = x(c) + A(c - 1, q);  // no guard at c = 0
    Out(c) = select(q == 0, A(c, q));
    A.merge_ures(Out).set_bounds(c, 0, 4, q, 0, 2);
    REQUIRE_THROWS_WITH(Out.realize(inputs_for(Out)),
                        Contains("A at (q=0, c=0) reads A(c - 1, q) = A(q=0, c=-1), which is outside the domain") &&
                            Contains("guard the call with a select"));
}

TEST_CASE("an output element written twice or never is an error", "[interpreter]") {
    Var c("c"), q("q");
    Input x(Float(32), 1, "x");
    SECTION("twice") {
        Func A(Float(32), {c, q}, "A"), Out(Place::Host, "Out");
        A(c, q) = x(c + q);
        Out(c) = select(q >= 1, A(c, q));
        A.merge_ures(Out).set_bounds(c, 0, 4, q, 0, 3);
        REQUIRE_THROWS_WITH(Out.realize(inputs_for(Out)), Contains("output Out(0) is written twice: at (q=1, c=0) and at (q=2, c=0)"));
    }
    SECTION("never") {
        Func A(Float(32), {c, q}, "A"), Out(Place::Host, "Out");
        A(c, q) = x(c + q);
        Out(c) = select(q == 0 && c < 3, A(c, q));
        A.merge_ures(Out).set_bounds(c, 0, 4, q, 0, 3);
        REQUIRE_THROWS_WITH(Out.realize(inputs_for(Out)), Contains("output Out(3) is never written"));
    }
}

TEST_CASE("an input buffer that is too small is an error", "[interpreter]") {
    Var c("c"), q("q");
    Input x(Float(32), 1, "x");
    Func A(Float(32), {c, q}, "A"), Out(Place::Host, "Out");
    A(c, q) = x(c + q);
    Out(c) = select(q == 0, A(c, q));
    A.merge_ures(Out).set_bounds(c, 0, 4, q, 0, 3);
    Buffers in;
    in["x"] = Halide::Buffer<float>(4);
    REQUIRE_THROWS_WITH(Out.realize(in), Contains("reads input x at index 4 in dimension 0, outside its buffer [0, 3]"));
    in.clear();
    REQUIRE_THROWS_WITH(Out.realize(in), Contains("no buffer given for input x"));
    in["x"] = Halide::Buffer<int>(10);
    REQUIRE_THROWS_WITH(Out.realize(in), Contains("the buffer for input x is int32 1-D, but the spec reads float32 1-D"));
}

TEST_CASE("the reference order runs a loop downwards when its dependences need it", "[interpreter]") {
    ir::UreProgram fsm = build_spec("conv1d_fsm", test::params({{"C", 5}, {"Q", 3}, {"B", 1}})).output.lower();
    REQUIRE(reference_order_text(fsm) == "for b up, for q down, for c up");
    ir::UreProgram bfs = build_spec("conv1d_bfs", test::params({{"C", 5}, {"Q", 3}, {"B", 1}})).output.lower();
    // X(c - 1, q + 1) and Z(c, q - 1) need opposite q directions: c goes outside q.
    REQUIRE(reference_order_text(bfs) == "for b up, for c up, for q up");
}

TEST_CASE("UREs that no sequential order computes are rejected", "[interpreter]") {
    Var c("c"), q("q");
    Input x(Float(32), 1, "x");
    Func A(Float(32), {c, q}, "A"), B(Float(32), {c, q}, "B"), Out(Place::Host, "Out");
    A(c, q) = select(c == 0 || q == 0, x(c), B(c - 1, q + 1));
    B(c, q) = select(c == 0 || q == 3, x(q), A(c + 1, q - 1));
    Out(c) = select(q == 0, A(c, q) + B(c, q));
    A.merge_ures(B, Out).set_bounds(c, 0, 4, q, 0, 4);
    REQUIRE_THROWS_WITH(Out.lower(), Contains("no sequential order computes the UREs of A"));
}

TEST_CASE("integer UREs wrap like int32 and divide like Halide", "[interpreter]") {
    Var c("c"), q("q");
    Input x(Int(32), 1, "x");
    Func A(Int(32), {c, q}, "A"), Out(Place::Host, "Out");
    A(c, q) = select(q == 0, x(c), A(c, q - 1) * 1000 + (x(c) - 7) / 4 + (x(c) - 7) % 4);
    Out(c) = select(q == 3, A(c, q));
    A.merge_ures(Out).set_bounds(c, 0, 4, q, 0, 4);
    Halide::Buffer<int> in(4);
    for (int i = 0; i < 4; i++) in(i) = 1 + 3 * i;
    Buffers out = Out.realize({{"x", in}});
    for (int i = 0; i < 4; i++) {
        int32_t v = in(i);
        int32_t num = in(i) - 7;
        int32_t div = num >= 0 ? num / 4 : -((-num + 3) / 4), mod = num - 4 * div;
        for (int k = 0; k < 3; k++) v = (int32_t)((uint32_t)v * 1000u + (uint32_t)(div + mod));
        REQUIRE(test::at(out.at("Out"), {i}) == v);
    }
}

// The interpreter computes exactly what Halide and C compute, for every type:
// integers wrap at their width, int64 and uint64 are exact, signed division
// is Euclidean, float32 is computed in float.
namespace {

/// A rolling hash by Horner's rule, one per c: H(c, q) = H(c, q - 1) * K + x(c + q),
/// starting from x(c); returns Out(c) = H(c, Q - 1).
Halide::Buffer<> horner(Type type, int64_t K, const Halide::Buffer<> &in, int C, int Q) {
    Var c("c"), q("q");
    Input x(type, 1, "x");
    Func H(type, {c, q}, "H"), Out(Place::Host, "Out");
    H(c, q) = select(q == 0, x(c), H(c, q - 1) * cast(type, Expr(K)) + x(c + q));
    Out(c) = select(q == Q - 1, H(c, q));
    H.merge_ures(Out).set_bounds(c, 0, C, q, 0, Q);
    return Out.realize({{"x", in}}).at("Out");
}

/// The same hash as a C loop in T; +, * wrap modulo 2^bits as C's unsigned
/// arithmetic does (done in uint64_t, then converted to T).
template<typename T>
T horner_in_c(const Halide::Buffer<T> &x, int c, int Q, int64_t K) {
    T h = x(c);
    for (int q = 1; q < Q; q++) h = (T)((uint64_t)h * (uint64_t)(T)K + (uint64_t)x(c + q));
    return h;
}

template<typename T>
void check_horner(int64_t K, int Q) {
    const Type type = Halide::type_of<T>();
    INFO("type " << type << ", K = " << K << ", Q = " << Q);
    const int C = 5;
    Halide::Buffer<T> x(C + Q - 1);
    for (int i = 0; i < x.width(); i++) x(i) = (T)(uint64_t)(0x9E3779B97F4A7C15ull * (uint64_t)(i + 1) >> 7);
    Halide::Buffer<T> out(horner(type, K, x, C, Q));
    for (int c = 0; c < C; c++) {
        INFO("c = " << c);
        CHECK(out(c) == horner_in_c(x, c, Q, K));
    }
}

}  // namespace

TEST_CASE("a uint32 rolling hash wraps exactly as in C", "[interpreter][semantics]") {
    // h = h * 16777619 + x: the product reaches 2^56, beyond what a double holds.
    const int C = 3, Q = 6;
    Halide::Buffer<uint32_t> x(C + Q - 1);
    const uint32_t data[] = {0xDEADBEEFu, 123456789u, 4000000000u, 7u, 0x80000001u, 65537u, 3000000000u, 42u};
    for (int i = 0; i < x.width(); i++) x(i) = data[i];
    Halide::Buffer<uint32_t> out(horner(UInt(32), 16777619, x, C, Q));
    for (int c = 0; c < C; c++) {
        uint32_t h = x(c);
        for (int q = 1; q < Q; q++) h = h * 16777619u + x(c + q);
        INFO("c = " << c);
        CHECK(out(c) == h);
    }
}

TEST_CASE("an int64 Horner recurrence beyond 2^53 keeps its low digits", "[interpreter][semantics]") {
    // Decimal-like digits in base 1000003: 7 * 1000003^3 + ... is about 7e18.
    const int C = 2, Q = 4;
    Halide::Buffer<int64_t> x(C + Q - 1);
    const int64_t digits[] = {7, 3, 9, 5, 1};
    for (int i = 0; i < x.width(); i++) x(i) = digits[i];
    Halide::Buffer<int64_t> out(horner(Int(64), 1000003, x, C, Q));
    for (int c = 0; c < C; c++) {
        int64_t h = x(c);
        for (int q = 1; q < Q; q++) h = h * 1000003 + x(c + q);  // no overflow: below 2^63
        INFO("c = " << c);
        CHECK(h > (int64_t(1) << 53));
        CHECK(out(c) == h);
    }
    // One more step overflows int64 (7 * 1000003^4 is about 7e24): Halide
    // wraps it modulo 2^64.
    Halide::Buffer<int64_t> wrapped(horner(Int(64), 1000003, x, 1, 5));
    CHECK(wrapped(0) == horner_in_c(x, 0, 5, 1000003));
    CHECK(wrapped(0) == (int64_t)8793043068796519145ull);
}

TEST_CASE("every integer type wraps like C", "[interpreter][semantics]") {
    const int64_t K = 0x9E3779B1;  // wraps to a negative multiplier in the signed 32-bit type
    check_horner<int8_t>(K, 6);
    check_horner<int16_t>(K, 6);
    check_horner<int32_t>(K, 6);
    check_horner<int64_t>(K, 6);
    check_horner<uint8_t>(K, 6);
    check_horner<uint16_t>(K, 6);
    check_horner<uint32_t>(K, 6);
    check_horner<uint64_t>((int64_t)1099511628211, 6);  // FNV-1's 64-bit prime
}

namespace {

/// Out(c, q) = f(x(c), y(q)) over c in [0, C), q in [0, Q).
template<typename T>
Halide::Buffer<T> elementwise(Type type, const std::function<Expr(Expr, Expr)> &f, const Halide::Buffer<T> &xs,
                              const Halide::Buffer<T> &ys) {
    Var c("c"), q("q");
    Input x(type, 1, "x"), y(type, 1, "y");
    Func A(type, {c, q}, "A"), Out(Place::Host, "Out");
    A(c, q) = f(x(c), y(q));
    Out(c, q) = A(c, q);
    A.merge_ures(Out).set_bounds(c, 0, xs.width(), q, 0, ys.width());
    return Halide::Buffer<T>(Out.realize({{"x", xs}, {"y", ys}}).at("Out"));
}

}  // namespace

TEST_CASE("signed division and modulo are Euclidean, as in Halide", "[interpreter][semantics]") {
    // Halide's integer division rounds so that the remainder is never
    // negative: 7 / -2 = -3 remainder 1 (not -4, as rounding down gives);
    // x / 0 = x % 0 = 0.
    Halide::Buffer<int32_t> xs(9), ys(9);
    for (int i = 0; i < 9; i++) xs(i) = 4 * i - 17;
    for (int i = 0; i < 9; i++) ys(i) = i - 4;
    Halide::Buffer<int32_t> div = elementwise<int32_t>(Int(32), [](Expr a, Expr b) { return a / b; }, xs, ys);
    Halide::Buffer<int32_t> mod = elementwise<int32_t>(Int(32), [](Expr a, Expr b) { return a % b; }, xs, ys);
    for (int i = 0; i < 9; i++) {
        for (int j = 0; j < 9; j++) {
            INFO(xs(i) << " / " << ys(j));
            CHECK(div(i, j) == Halide::Internal::div_imp<int32_t>(xs(i), ys(j)));
            CHECK(mod(i, j) == Halide::Internal::mod_imp<int32_t>(xs(i), ys(j)));
            if (ys(j) != 0) CHECK(div(i, j) * ys(j) + mod(i, j) == xs(i));
        }
    }
    CHECK(div(6, 2) == -3);  // 7 / -2
    CHECK(mod(6, 2) == 1);
}

TEST_CASE("float32 arithmetic is done in float", "[interpreter][semantics]") {
    SECTION("modulo: a - b * floor(a / b), each step rounded to float") {
        Halide::Buffer<float> xs(12), ys(4);
        for (int i = 0; i < 12; i++) xs(i) = (float)(i + 1) * 1.37f - 20.0f;
        const float bs[] = {0.1f, 0.3f, 1.7f, -0.7f};
        for (int j = 0; j < 4; j++) ys(j) = bs[j];
        Halide::Buffer<float> mod = elementwise<float>(Float(32), [](Expr a, Expr b) { return a % b; }, xs, ys);
        for (int i = 0; i < 12; i++) {
            for (int j = 0; j < 4; j++) {
                volatile float a = xs(i), b = ys(j);
                volatile float quotient = std::floor(a / b);
                volatile float product = b * quotient;
                float expected = a - product;
                INFO(a << " % " << b);
                CHECK(mod(i, j) == expected);
            }
        }
    }
    SECTION("an int64 converts to float32 with one rounding") {
        // 2^53 + 2^29 + 1 rounds up to 2^53 + 2^30; through double it ties to 2^53.
        Halide::Buffer<int64_t> xs(2), ys(1);
        xs(0) = (int64_t(1) << 53) + (int64_t(1) << 29) + 1;
        xs(1) = -xs(0);
        ys(0) = 0;
        Var c("c"), q("q");
        Input x(Int(64), 1, "x"), y(Int(64), 1, "y");
        Func A(Float(32), {c, q}, "A"), Out(Place::Host, "Out");
        A(c, q) = cast(Float(32), x(c) + y(q));
        Out(c, q) = A(c, q);
        A.merge_ures(Out).set_bounds(c, 0, 2, q, 0, 1);
        Halide::Buffer<float> out(Out.realize({{"x", xs}, {"y", ys}}).at("Out"));
        CHECK(out(0, 0) == (float)xs(0));
        CHECK(out(1, 0) == (float)xs(1));
        CHECK(out(0, 0) == 9007200328482816.0f);
    }
}
