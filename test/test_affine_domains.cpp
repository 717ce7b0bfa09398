// Affine domains: a loop nest whose domain is its box less what `where`
// conditions (or a bound that depends on another loop) exclude. The
// triangular solve runs on its triangle on every evaluator and equals forward
// substitution, LU and Cholesky on theirs equal CPU factorisations; the report
// counts the triangle (tetrahedra); the validator and the
// well-definedness check judge the exact domain; misuses are named.
#include <algorithm>
#include <cmath>
#include <random>

#include "analysis/Report.h"
#include "analysis/Validate.h"
#include "exec/KernelExecutor.h"
#include "exec/Simulator.h"
#include "lower/LowerToKernel.h"
#include "lower/Pipeline.h"
#include "TestUtil.h"

using namespace pulse;
using Catch::Matchers::Contains;
using pulse::test::params;

namespace {

/// A well-conditioned system for `trisolve` (N unknowns, B systems): L's
/// entries below the diagonal in [-1, 1], its diagonal in [N, 2N] (so the
/// solution stays of the order of b), b in [-1, 1]; above the diagonal
/// poison, which the triangle never reads.
Buffers triangular_system(Halide::Type type, int N, int B, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    Halide::Buffer<> L(type, {N, N, B}, "L"), b(type, {N, B}, "b");
    for (int n = 0; n < B; n++) {
        for (int i = 0; i < N; i++) {
            store_element(b, {i, n}, Scalar::cast(Scalar::of_double(unit(rng)), Halide::Float(64), type));
            for (int j = 0; j < N; j++) {
                double v = j < i ? unit(rng) : j == i ? N * (1.5 + 0.5 * unit(rng)) : std::nan("");
                store_element(L, {j, i, n}, Scalar::cast(Scalar::of_double(v), Halide::Float(64), type));
            }
        }
    }
    return {{"L", L}, {"b", b}};
}

/// Forward substitution in double: x(i, n).
std::vector<double> forward_substitution(const Buffers &in, int N, int B) {
    std::vector<double> x((size_t)N * B);
    for (int n = 0; n < B; n++) {
        for (int i = 0; i < N; i++) {
            double sum = test::at(in.at("b"), {i, n});
            for (int j = 0; j < i; j++) sum -= test::at(in.at("L"), {j, i, n}) * x[(size_t)n * N + j];
            x[(size_t)n * N + i] = sum / test::at(in.at("L"), {i, i, n});
        }
    }
    return x;
}

kir::Kernel kernel_of(const ir::UreProgram &program, const std::string &name = "trisolve",
                      const std::vector<std::string> &inputs = {"L", "b"}) {
    kir::Kernel kernel = lower_to_kernel(compile_to_systolic(program), name, inputs);
    optimize_kernel(kernel);
    return kernel;
}

/// The simulator and the kernel executor (output poisoned first) agree with
/// the reference's `expected` bit for bit.
void check_simulator_and_executor(const ir::UreProgram &program, const Buffers &inputs, const Buffers &expected,
                                  const std::string &name, const std::vector<std::string> &input_names) {
    CHECK(compare_outputs(expected, simulate(compile_to_systolic(program), inputs), 0) == "");
    Buffers run = inputs;
    Halide::Buffer<> out = expected.at("Out").copy();
    poison(out);
    run["Out"] = out;
    execute_kernel(kernel_of(program, name, input_names), run);
    CHECK(compare_outputs(expected, Buffers{{"Out", run.at("Out")}}, 0) == "");
}

/// A diagonally dominant matrix for `lu` (N x N, B of them), so that LU
/// without pivoting is stable: entries in [-1, 1], the diagonal in [N, 2N].
Buffers dominant_matrices(Halide::Type type, int N, int B, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    Halide::Buffer<> a(type, {N, N, B}, "a");
    for (int n = 0; n < B; n++) {
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < N; j++) {
                const double v = j == i ? N * (1.5 + 0.5 * unit(rng)) : unit(rng);
                store_element(a, {j, i, n}, Scalar::cast(Scalar::of_double(v), Halide::Float(64), type));
            }
        }
    }
    return {{"a", a}};
}

/// Doolittle's LU in double, packed: U on and above the diagonal, L below;
/// element (i, j) of matrix n at [(n * N + i) * N + j].
std::vector<double> doolittle(const Halide::Buffer<> &a, int N, int B) {
    std::vector<double> lu((size_t)N * N * B);
    for (int n = 0; n < B; n++) {
        auto at = [&](int i, int j) -> double & { return lu[((size_t)n * N + i) * N + j]; };
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < N; j++) at(i, j) = test::at(a, {j, i, n});
        }
        for (int k = 0; k < N; k++) {
            for (int i = k + 1; i < N; i++) {
                at(i, k) /= at(k, k);
                for (int j = k + 1; j < N; j++) at(i, j) -= at(i, k) * at(k, j);
            }
        }
    }
    return lu;
}

/// A small nest on the triangle j <= i to break one piece at a time.
struct Triangle {
    Var j{"j"}, i{"i"}, s{"s"}, t{"t"};
    Input a{Float(32), 1, "a"};
    Func Z{Float(32), {j, i}, Place::Device, "Z"}, Out{Place::Device, "Out"};
};

}  // namespace

TEST_CASE("trisolve runs on its triangle on every evaluator and equals forward substitution", "[affine]") {
    for (const char *spec : {"trisolve", "trisolve_f64"}) {
        const bool f64 = std::string(spec) == "trisolve_f64";
        for (int N : {1, 2, 7, 33, 70}) {
            const int B = N == 70 ? 1 : 3;
            INFO(spec << " N=" << N << " B=" << B);
            ir::UreProgram program = build_spec(spec, params({{"N", N}, {"B", B}})).output.lower();
            Buffers inputs = triangular_system(f64 ? Halide::Float(64) : Halide::Float(32), N, B, 17 + N);
            Buffers expected = ir::realize(program, inputs);
            std::vector<double> x = forward_substitution(inputs, N, B);
            for (int n = 0; n < B; n++) {
                for (int i = 0; i < N; i++) {
                    INFO("x(" << i << ", " << n << ")");
                    CHECK(test::close(test::at(expected.at("Out"), {i, n}), x[(size_t)n * N + i], f64 ? 1e-12 : 1e-5));
                }
            }
            check_simulator_and_executor(program, inputs, expected, spec, {"L", "b"});
        }
    }
}

TEST_CASE("lu runs on its tetrahedron on every evaluator and equals Doolittle's LU", "[affine]") {
    for (const char *spec : {"lu", "lu_f64"}) {
        const bool f64 = std::string(spec) == "lu_f64";
        for (int N : {1, 2, 7, 33}) {
            const int B = N == 33 ? 1 : 3;
            INFO(spec << " N=" << N << " B=" << B);
            ir::UreProgram program = build_spec(spec, params({{"N", N}, {"B", B}})).output.lower();
            Buffers inputs = dominant_matrices(f64 ? Halide::Float(64) : Halide::Float(32), N, B, 29 + N);
            Buffers expected = ir::realize(program, inputs);
            std::vector<double> lu = doolittle(inputs.at("a"), N, B);
            for (int n = 0; n < B; n++) {
                for (int i = 0; i < N; i++) {
                    for (int j = 0; j < N; j++) {
                        INFO("LU(" << i << ", " << j << ") of matrix " << n);
                        CHECK(test::close(test::at(expected.at("Out"), {j, i, n}), lu[((size_t)n * N + i) * N + j], f64 ? 1e-12 : 1e-5));
                    }
                }
            }
            check_simulator_and_executor(program, inputs, expected, spec, {"a"});
        }
    }
}

/// A symmetric, diagonally dominant (so positive definite) matrix for `cholesky`.
Buffers spd_matrices(Halide::Type type, int N, int B, uint32_t seed) {
    Buffers in = dominant_matrices(Halide::Float(64), N, B, seed);
    Halide::Buffer<> a(type, {N, N, B}, "a");
    for (int n = 0; n < B; n++) {
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < N; j++) {
                const double v = test::at(in.at("a"), {std::min(i, j), std::max(i, j), n});
                store_element(a, {j, i, n}, Scalar::cast(Scalar::of_double(v), Halide::Float(64), type));
            }
        }
    }
    return {{"a", a}};
}

TEST_CASE("cholesky runs on its domain on every evaluator and equals a CPU Cholesky, zeros above", "[affine]") {
    for (const char *spec : {"cholesky", "cholesky_f64"}) {
        const bool f64 = std::string(spec) == "cholesky_f64";
        for (int N : {1, 2, 7, 33}) {
            const int B = N == 33 ? 1 : 3;
            INFO(spec << " N=" << N << " B=" << B);
            ir::UreProgram program = build_spec(spec, params({{"N", N}, {"B", B}})).output.lower();
            Buffers inputs = spd_matrices(f64 ? Halide::Float(64) : Halide::Float(32), N, B, 41 + N);
            Buffers expected = ir::realize(program, inputs);
            for (int n = 0; n < B; n++) {
                // Cholesky-Banachiewicz in double: L(i, j) for j <= i.
                std::vector<double> L((size_t)N * N, 0.0);
                for (int i = 0; i < N; i++) {
                    for (int j = 0; j <= i; j++) {
                        double sum = test::at(inputs.at("a"), {j, i, n});
                        for (int m = 0; m < j; m++) sum -= L[(size_t)i * N + m] * L[(size_t)j * N + m];
                        L[(size_t)i * N + j] = i == j ? std::sqrt(sum) : sum / L[(size_t)j * N + j];
                    }
                }
                for (int i = 0; i < N; i++) {
                    for (int j = 0; j < N; j++) {
                        INFO("L(" << i << ", " << j << ") of matrix " << n);
                        const double got = test::at(expected.at("Out"), {j, i, n});
                        if (j > i) CHECK(got == 0.0);
                        else CHECK(test::close(got, L[(size_t)i * N + j], f64 ? 1e-12 : 1e-5));
                    }
                }
            }
            check_simulator_and_executor(program, inputs, expected, spec, {"a"});
        }
    }
}

TEST_CASE("cholesky's report counts its lower tetrahedron and the zeros' points", "[affine]") {
    for (int N : {1, 6, 32}) {
        INFO("N=" << N);
        DesignMetrics m = analyze_design(compile_to_systolic(build_spec("cholesky", params({{"N", N}})).output.lower()));
        int64_t points = (int64_t)N * (N - 1) / 2;  // one per zero above the diagonal
        for (int k = 0; k < N; k++) points += (int64_t)(N - k) * (N - k + 1) / 2;
        CHECK(m.domain_points == points);
        CHECK(m.pe_count == N);
    }
}

TEST_CASE("lu, cholesky and trisolve with their input read at its step (CACHE=1) equal the hoisted kernels", "[affine]") {
    // The same lanes load the same elements, at the step that uses them.
    for (const char *spec : {"lu_f64", "cholesky_f64", "trisolve_f64"}) {
        const bool lu = std::string(spec) != "trisolve_f64";
        for (int N : {7, 33}) {
            INFO(spec << " N=" << N);
            ir::UreProgram hoisted = build_spec(spec, params({{"N", N}, {"B", 2}, {"CACHE", 0}})).output.lower();
            ir::UreProgram at_step = build_spec(spec, params({{"N", N}, {"B", 2}, {"CACHE", 1}})).output.lower();
            Buffers inputs = lu ? spd_matrices(Halide::Float(64), N, 2, 3 + N) : triangular_system(Halide::Float(64), N, 2, 3 + N);
            const std::vector<std::string> names = lu ? std::vector<std::string>{"a"} : std::vector<std::string>{"L", "b"};
            Buffers expected = ir::realize(hoisted, inputs);
            kir::Kernel kernel = kernel_of(at_step, spec, names);
            const std::string first = names[0];
            REQUIRE(kernel.buffer(first).cache == kir::InputCache::L1);
            REQUIRE(kernel_of(hoisted, spec, names).buffer(first).cache == kir::InputCache::Registers);
            Buffers run = inputs;
            Halide::Buffer<> out = expected.at("Out").copy();
            poison(out);
            run["Out"] = out;
            execute_kernel(kernel, run);
            CHECK(compare_outputs(expected, Buffers{{"Out", run.at("Out")}}, 0) == "");
        }
    }
}

TEST_CASE("lu's report counts the tetrahedron, and its bounds that cancel give the tight box", "[affine]") {
    for (int N : {1, 6, 32}) {
        INFO("N=" << N);
        ir::UreProgram p = build_spec("lu", params({{"N", N}})).output.lower();
        // i in [k, N): k + (N - k) - 1 is N - 1 at every k, not 2N - 2.
        CHECK(p.loop("i").min == 0);
        CHECK(p.loop("i").extent == N);
        CHECK(p.loop("j").extent == N);
        DesignMetrics m = analyze_design(compile_to_systolic(p));
        int64_t points = 0;
        for (int k = 0; k < N; k++) points += (int64_t)(N - k) * (N - k);
        CHECK(m.domain_points == points);
        CHECK(m.pe_count == N);
        CHECK(m.steps == (int64_t)N * (N - 1) + 2 * (N - 1) + 1);
    }
}

TEST_CASE("the report counts the triangle, not its box", "[affine]") {
    for (int N : {1, 7, 32, 101}) {
        INFO("N=" << N);
        DesignMetrics m = analyze_design(compile_to_systolic(build_spec("trisolve", params({{"N", N}})).output.lower()));
        CHECK(m.domain_points == (int64_t)N * (N + 1) / 2);
        CHECK(m.pe_count == N);
        CHECK(m.steps == 2 * N - 1);
        CHECK(m.utilization == Approx((double)N * (N + 1) / 2 / (double)(N * (2 * N - 1))));
    }
}

TEST_CASE("a dependent bound is the box of its range and two constraints", "[affine]") {
    ir::UreProgram p = build_spec("trisolve", params({{"N", 9}})).output.lower();
    const ir::Loop &j = p.loop("j");
    CHECK(j.min == 0);
    CHECK(j.extent == 9);
    REQUIRE(p.constraints.size() == 2);
    CHECK(ir::to_source(p.domain_condition()) == "(0 <= j) && (j < (i + 1))");
}

TEST_CASE("the validator judges the exact domain: collisions outside it do not count", "[affine][validator]") {
    // matmul's (k, j, i) -> (i, K j + k + i) with K = 4 and five values of k
    // sends (k = 4, j = 0) and (k = 0, j = 1) to one PE and step.
    ir::UreProgram program = build_spec("matmul", params({{"K", 5}})).output.lower();
    program.schedule.transform->matrix = {{0, 0, 1}, {1, 4, 1}};
    REQUIRE_THROWS_WITH(validate_transform(program), Contains("processor availability"));
    Halide::Expr k = Halide::Internal::Variable::make(Halide::Int(32), "k");
    Halide::Expr jv = Halide::Internal::Variable::make(Halide::Int(32), "j");
    SECTION("a domain without k = 4 is injective") {
        program.constraints.push_back(k <= 3);
        CHECK_NOTHROW(validate_transform(program));
    }
    SECTION("a domain that keeps both points is refused, naming them and the condition") {
        program.constraints.push_back(k < 5 - jv);
        REQUIRE_THROWS_WITH(validate_transform(program), Contains("processor availability") &&
                                                             Contains("points (k = 0, j = 1, i = 0) and (k = 4, j = 0, i = 0)") &&
                                                             Contains("where k < (5 - j)"));
    }
}

TEST_CASE("a read that leaves the triangle is refused before code exists, and by the interpreter", "[affine][errors]") {
    Triangle g;
    // Z(j, i - 1) at j == i reads (i, i - 1): in the box, outside the triangle.
    g.Z(g.j, g.i) = select(g.i == 0, g.a(g.j), g.Z(g.j, g.i - 1) + g.a(g.j));
    g.Out(g.i) = select(g.j == g.i, g.Z(g.j, g.i));
    g.Z.merge_ures(g.Out).set_bounds(g.i, 0, 6, g.j, 0, g.i + 1);
    g.Z.space_time_transform({g.j, g.i}, {g.s, g.t}, {0, 1, 1, 1});
    ir::UreProgram p = g.Out.lower();
    REQUIRE_THROWS_WITH(compile_to_systolic(p), Contains("not well defined") && Contains("Z(j, i - 1)"));
    REQUIRE_THROWS_WITH(ir::realize(p, random_input_buffers(p, 1)),
                        Contains("outside the domain (its where conditions exclude it)"));
}

TEST_CASE("misused domain conditions are named with the fix", "[affine][errors]") {
    Triangle g;
    Var b("b");
    Func W(Float(32), {g.j, g.i, b}, Place::Device, "W"), Out(Place::Device, "Out");
    W(g.j, g.i, b) = g.a(g.j);
    Out(g.j, g.i, b) = W(g.j, g.i, b);
    W.merge_ures(Out);
    REQUIRE_THROWS_WITH(W.where(g.j + 1), Contains("W.where(j + 1): the condition must be a boolean expression"));
    Var other("other");
    REQUIRE_THROWS_WITH(W.where(other < 3), Contains("'other' is not a loop of W(j, i, b)"));
    REQUIRE_THROWS_WITH(W.set_bounds(g.j, 0, g.j + 1), Contains("'j' is the bounded loop itself"));
    SECTION("not affine") {
        W.set_bounds(g.j, 0, 4, g.i, 0, 4, b, 0, 2).where(g.i * g.j <= 3);
        REQUIRE_THROWS_WITH(Out.lower(), Contains("W.where((i*j) <= 3): the condition is not affine"));
    }
    SECTION("a loop outside the array") {
        W.set_bounds(g.j, 0, 4, g.i, 0, 4, b, 0, 2).where(g.j <= b);
        W.space_time_transform({g.j, g.i}, {g.s, g.t}, {0, 1, 1, 1});
        REQUIRE_THROWS_WITH(Out.lower(), Contains("uses loop 'b', which is outside the array"));
    }
    SECTION("an empty domain") {
        W.set_bounds(g.j, 0, 4, g.i, 0, 4, b, 0, 2).where(g.j > g.i + 5);
        REQUIRE_THROWS_WITH(Out.lower(), Contains("the domain is empty"));
    }
    SECTION("bounds that depend on each other") {
        W.set_bounds(g.j, 0, g.i + 1, g.i, 0, g.j + 1, b, 0, 2);
        REQUIRE_THROWS_WITH(Out.lower(), Contains("the bounds of loops j, i depend on each other"));
    }
}

TEST_CASE("where(j <= i) on the box is the domain the dependent bound gives", "[affine]") {
    ir::UreProgram bounded = build_spec("trisolve", params({{"N", 9}, {"B", 2}})).output.lower();
    ir::UreProgram conditioned = bounded;
    Halide::Expr j = Halide::Internal::Variable::make(Halide::Int(32), "j"), i = Halide::Internal::Variable::make(Halide::Int(32), "i");
    conditioned.constraints = {j <= i};
    Buffers inputs = triangular_system(Halide::Float(32), 9, 2, 5);
    CHECK(compare_outputs(ir::realize(bounded, inputs), ir::realize(conditioned, inputs), 0) == "");
    DesignMetrics a = analyze_design(compile_to_systolic(bounded)), b = analyze_design(compile_to_systolic(conditioned));
    CHECK(a.domain_points == b.domain_points);
    CHECK(a.steps == b.steps);
    CHECK(a.pe_count == b.pe_count);
    // On the whole box the same UREs read X above the diagonal's first row: refused.
    ir::UreProgram box = bounded;
    box.constraints.clear();
    REQUIRE_THROWS_WITH(compile_to_systolic(box), Contains("X is not well defined") && Contains("(j = 1, i = -1, n = 1)"));
}

TEST_CASE("a point outside the domain stores nothing, even where its select holds", "[affine]") {
    // Out's select also holds at (j = i + 1, i), outside the triangle: a
    // kernel that ran the box would overwrite Out(i) with Z one step on.
    Triangle g;
    g.Z(g.j, g.i) = select(g.j == 0, g.a(g.i), g.Z(g.j - 1, g.i) + g.a(g.i));
    g.Out(g.i) = select(g.j == g.i || g.j == g.i + 1, g.Z(g.j, g.i));
    g.Z.merge_ures(g.Out).set_bounds(g.i, 0, 11, g.j, 0, 11).where(g.j <= g.i);
    g.Z.space_time_transform({g.j, g.i}, {g.s, g.t}, {0, 1, 1, 1});
    ir::UreProgram p = g.Out.lower();
    Buffers inputs = random_input_buffers(p, 9);
    Buffers expected = ir::realize(p, inputs);
    for (int i = 0; i < 11; i++) CHECK(test::at(expected.at("Out"), {i}) == Approx((i + 1) * test::at(inputs.at("a"), {i})));
    CHECK(compare_outputs(expected, simulate(compile_to_systolic(p), inputs), 0) == "");
    kir::Kernel kernel = lower_to_kernel(compile_to_systolic(p), "triangle", {"a"});
    optimize_kernel(kernel);
    CHECK(execute_against_reference(kernel, p, 9) == "");
}

TEST_CASE("a same-step read of a PE's own value, never taken on the domain, lowers", "[affine]") {
    // The fuzzer's reproducer: the domain is (i = 2, j = 0..1); the read
    // A(i - 1, j - 1) is never taken there and maps to dp = 0, dt = 0 (the
    // transform is injective on the domain only). The kernel read the value
    // of this very step before computing it.
    Var i("i"), j("j"), s("s"), t("t");
    Func A(Int(32), {i, j}, Place::Device, "A"), Out(Place::Device, "Out");
    A(i, j) = select(i >= 1 && j >= 1 && -2 * i - j <= -7, A(i - 1, j - 1), 5) % 10007;
    Out(j) = select(i == 2, A(i, j));
    A.merge_ures(Out).set_bounds(i, 0, 3, j, 0, 2).where(-2 * i - j <= -4);
    A.space_time_transform({i, j}, {s, t}, {-1, 1, /**/ -2, 2});
    ir::UreProgram p = Out.lower();
    kir::Kernel kernel = lower_to_kernel(compile_to_systolic(p), "k", {});
    optimize_kernel(kernel);
    CHECK(execute_against_reference(kernel, p, 1) == "");
}
