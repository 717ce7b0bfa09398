// The space-time transform validator: every example design is accepted at
// several sizes, and each legality condition rejects with its message.
#include <chrono>

#include "analysis/IslModel.h"
#include "TestUtil.h"
#include "analysis/Validate.h"

using namespace pulse;
using Catch::Contains;
using pulse::test::params;

namespace {

ir::UreProgram lower_spec(const std::string &name, const Params &p = Params()) {
    return build_spec(name, p).output.lower();
}

/// The timing the validator returned for the dependence written `call_text` in `consumer`.
const DependenceTiming &timing_of(const std::vector<DependenceTiming> &timings, const std::string &consumer,
                                  const std::string &call_text) {
    for (const auto &t : timings) {
        if (t.dependence->consumer == consumer && t.dependence->call_text == call_text) return t;
    }
    FAIL("no dependence " << consumer << " <- " << call_text);
    throw std::logic_error("unreachable");
}

/// Validates and returns the time it took, in milliseconds.
double validate_ms(const ir::UreProgram &program, std::vector<DependenceTiming> *timings = nullptr) {
    auto start = std::chrono::steady_clock::now();
    auto result = validate_transform(program);
    auto stop = std::chrono::steady_clock::now();
    if (timings) *timings = result;
    return std::chrono::duration<double, std::milli>(stop - start).count();
}

}  // namespace

TEST_CASE("every example design validates at several sizes, quickly", "[validator]") {
    struct Case {
        std::string spec;
        std::vector<Params> sizes;
    };
    std::vector<Case> cases;
    for (const char *design : {"sbm", "bsm", "fsm", "bfs", "ffs", "fbs", "fbs_stride2"}) {
        cases.push_back({std::string("conv1d_") + design,
                         {Params(), params({{"C", 7}, {"Q", 3}, {"B", 3}}), params({{"C", 13}, {"Q", 17}, {"B", 2}}),
                          params({{"C", 1}, {"Q", 1}, {"B", 1}}), params({{"C", 31}, {"Q", 4}, {"B", 5}})}});
    }
    cases.push_back({"conv2d_sbm",
                     {Params(), params({{"C", 7}, {"P", 2}, {"Q", 5}, {"R", 3}, {"B", 3}}),
                      params({{"C", 5}, {"P", 4}, {"Q", 1}, {"R", 2}, {"B", 1}}),
                      params({{"C", 9}, {"P", 1}, {"Q", 3}, {"R", 5}, {"B", 2}})}});
    cases.push_back({"matmul",
                     {Params(), params({{"I", 3}, {"J", 7}, {"K", 9}, {"N", 1}}),
                      params({{"I", 13}, {"J", 2}, {"K", 1}, {"N", 3}})}});
    cases.push_back({"matvec", {Params(), params({{"I", 5}, {"J", 11}, {"N", 2}}), params({{"I", 1}, {"J", 3}, {"N", 1}})}});
    cases.push_back({"fir_stride2", {Params(), params({{"C", 9}, {"K", 5}, {"B", 2}}), params({{"C", 3}, {"K", 1}, {"B", 1}})}});
    for (const Case &c : cases) {
        for (const Params &p : c.sizes) {
            ir::UreProgram program = lower_spec(c.spec, p);
            INFO(c.spec << " with bounds of " << program.domain_size() << " points");
            std::vector<DependenceTiming> timings;
            double ms = 0;
            REQUIRE_NOTHROW(ms = validate_ms(program, &timings));
            REQUIRE(timings.size() == program.dependences.size());
            CHECK(ms < 100);
        }
    }
}

TEST_CASE("dependence timings of the 1-D convolution designs", "[validator]") {
    SECTION("SBM: weights broadcast (copy, dt = 0), sums migrate") {
        ir::UreProgram program = lower_spec("conv1d_sbm");
        auto timings = validate_transform(program);
        const auto &w = timing_of(timings, "W", "W(c - 1, q, b)");
        CHECK(w.taken);
        CHECK(w.dp == 1);
        CHECK(w.dt == 0);
        const auto &z = timing_of(timings, "Z", "Z(c, q - 1, b)");
        CHECK(z.dp == 1);
        CHECK(z.dt == 1);
    }
    SECTION("FSM: negative time entries") {
        ir::UreProgram program = lower_spec("conv1d_fsm");
        auto timings = validate_transform(program);
        const auto &x = timing_of(timings, "X", "X(c - 1, q + 1, b)");
        CHECK(x.dp == -1);
        CHECK(x.dt == 2);
        const auto &z = timing_of(timings, "Z", "Z(c, q + 1, b)");
        CHECK(z.dp == -1);
        CHECK(z.dt == 1);
    }
    SECTION("a dependence whose branch never reads a domain point is not taken") {
        // With one tap, Z(c, q - 1) (under q != 0) is never read; with one
        // output per array, W(c - 1, q) (under c != 0) neither.
        ir::UreProgram tiny = lower_spec("conv1d_sbm", params({{"C", 1}, {"Q", 1}}));
        auto timings = validate_transform(tiny);
        CHECK_FALSE(timing_of(timings, "Z", "Z(c, q - 1, b)").taken);
        CHECK_FALSE(timing_of(timings, "W", "W(c - 1, q, b)").taken);
        // An untaken dependence is not checked: a time row that would break it is accepted.
        ir::UreProgram program = lower_spec("conv1d_sbm", params({{"C", 5}, {"Q", 1}}));
        program.schedule.transform->matrix = {{1, 0}, {1, -1}};
        auto broken = validate_transform(program);
        CHECK_FALSE(timing_of(broken, "Z", "Z(c, q - 1, b)").taken);
        CHECK(timing_of(broken, "Z", "Z(c, q - 1, b)").dt == -1);
    }
}

TEST_CASE("processor availability: colliding points are named", "[validator]") {
    SECTION("conv1d with space c and time c") {
        ir::UreProgram program = lower_spec("conv1d_sbm");
        program.schedule.transform->matrix = {{1, 0}, {1, 0}};
        REQUIRE_THROWS_WITH(validate_transform(program), Contains("processor availability") &&
                                                             Contains("points (c = 0, q = 0) and (c = 0, q = 1)") &&
                                                             Contains("on PE s = 0 at step t = 0") &&
                                                             Contains("c in [0, 16), q in [0, 5), b in [0, 4)") &&
                                                             Contains("space row (1, 0), time row (1, 0)"));
    }
    SECTION("a singular square matrix with negative entries") {
        ir::UreProgram program = lower_spec("conv1d_bsm", params({{"C", 6}, {"Q", 3}}));
        program.schedule.transform->matrix = {{1, -1}, {-2, 2}};
        REQUIRE_THROWS_WITH(validate_transform(program),
                            Contains("processor availability") && Contains("difference (1, 1)"));
    }
    SECTION("two projections: injective only while the time row outruns the inner loop") {
        // matmul maps (k, j, i) to s = i, t = K j + k + i: j's coefficient must exceed k's span.
        ir::UreProgram program = lower_spec("matmul", params({{"K", 5}}));
        REQUIRE_NOTHROW(validate_transform(program));
        program.schedule.transform->matrix = {{0, 0, 1}, {1, 4, 1}};
        REQUIRE_THROWS_WITH(validate_transform(program),
                            Contains("processor availability") &&
                                Contains("points (k = 0, j = 1, i = 0) and (k = 4, j = 0, i = 0)") &&
                                Contains("on PE s = 0 at step t = 4") && Contains("k in [0, 5), j in [0, 6)"));
        // The same matrix is injective when k has only four values.
        ir::UreProgram small = lower_spec("matmul", params({{"K", 4}}));
        small.schedule.transform->matrix = {{0, 0, 1}, {1, 4, 1}};
        REQUIRE_NOTHROW(validate_transform(small));
    }
}

TEST_CASE("two space rows: the classic 2-D matmul array validates, a colliding one is refused with its points", "[validator]") {
    // (k, j, i) -> PE (i, j), step i + j + k: Kung and Leiserson's mesh.
    ir::UreProgram program = lower_spec("matmul", params({{"I", 5}, {"J", 4}, {"K", 3}}));
    program.schedule.transform->destination_loops = {"s", "u", "t"};
    program.schedule.transform->matrix = {{0, 0, 1}, {0, 1, 0}, {1, 1, 1}};
    REQUIRE_NOTHROW(validate_transform(program));
    // Both space rows i: (k, j) and (k', j') with k + j = k' + j' meet on one PE.
    program.schedule.transform->matrix = {{0, 0, 1}, {0, 0, 1}, {1, 1, 1}};
    REQUIRE_THROWS_WITH(validate_transform(program), Contains("processor availability") &&
                                                         Contains("points (k = 0, j = 1, i = 0) and (k = 1, j = 0, i = 0)") &&
                                                         Contains("s = 0") && Contains("u = 0") && Contains("t = 1"));
}

TEST_CASE("data availability: a computed value needs at least one step", "[validator]") {
    SECTION("SBM with time row (0, -1)") {
        ir::UreProgram program = lower_spec("conv1d_sbm");
        program.schedule.transform->matrix = {{1, 1}, {0, -1}};
        REQUIRE_THROWS_WITH(validate_transform(program),
                            Contains("data availability") && Contains("dependence Z <- Z(c, q - 1, b) of URE Z") &&
                                Contains("dp = P·d = 1 and dt = s·d = -1") &&
                                Contains("read 1 step(s) before it is computed") &&
                                Contains("the time row must give this dependence at least one step: s·d >= 1") &&
                                Contains("c in [0, 16), q in [0, 5), b in [0, 4)"));
    }
    SECTION("conv2d: the jump between filter rows needs Q steps") {
        // d = (0, 1, 1 - Q) over (c, p, q): with t = (Q - 1) p + q it takes 0
        // steps. The space row s = c + C p keeps the map injective.
        ir::UreProgram program = lower_spec("conv2d_sbm", params({{"C", 12}, {"Q", 3}}));
        program.schedule.transform->matrix = {{1, 12, 0}, {0, 2, 1}};
        REQUIRE_THROWS_WITH(validate_transform(program), Contains("data availability") &&
                                                             Contains("Z <- Z(c, p - 1, (q + 3) - 1, r, b)") &&
                                                             Contains("dt = s·d = 0"));
    }
}

TEST_CASE("data availability: a broadcast (dt = 0) is allowed only for a copy chain", "[validator]") {
    SECTION("the weights of SBM are a copy chain: dt = 0 is a broadcast") {
        ir::UreProgram program = lower_spec("conv1d_sbm");
        auto timings = validate_transform(program);
        const auto &w = timing_of(timings, "W", "W(c - 1, q, b)");
        REQUIRE(w.dependence->is_copy);
        CHECK(w.dt == 0);
        CHECK(w.dp == 1);
    }
    SECTION("a partial sum is computed: dt = 0 is rejected") {
        ir::UreProgram program = lower_spec("conv1d_sbm");
        program.schedule.transform->matrix = {{1, 1}, {1, 0}};  // t = c: W takes one step, Z none
        REQUIRE_THROWS_WITH(validate_transform(program),
                            Contains("data availability") && Contains("Z <- Z(c, q - 1, b)") &&
                                Contains("dt = s·d = 0") &&
                                Contains("dt = 0 (a broadcast) is allowed only for a pure copy"));
    }
    SECTION("a copy chain may not go back in time") {
        ir::UreProgram program = lower_spec("conv1d_sbm");
        program.schedule.transform->matrix = {{1, 1}, {-1, 1}};  // W takes -1 step
        REQUIRE_THROWS_WITH(validate_transform(program),
                            Contains("data availability") && Contains("W <- W(c - 1, q, b)") &&
                                Contains("dt = s·d = -1") && Contains("s·d >= 0"));
    }
}

namespace {

/// Z accumulates over b, which is not a source loop: every b is its own array.
ir::UreProgram accumulate_over_b(int C, int Q, int B) {
    Var c("c"), q("q"), b("b"), s("s"), t("t");
    Input x(Float(32), 1, "x");
    Func X(Float(32), {c, q, b}, Place::Device, "X"), Z(Float(32), {c, q, b}, Place::Device, "Z"),
        Out(Place::Device, "Out");
    X(c, q, b) = x(c + q + b);
    Z(c, q, b) = select(b == 0, 0.0f, Z(c, q, b - 1)) + X(c, q, b);
    Out(c, q) = select(b == B - 1, Z(c, q, b));
    X.merge_ures(Z, Out).set_bounds(c, 0, C, q, 0, Q, b, 0, B);
    X.space_time_transform({c, q}, {s, t}, {1, 0, /**/ 0, 1});
    return Out.lower();
}

}  // namespace

TEST_CASE("a dependence may not cross array instances", "[validator]") {
    const int C = 4, Q = 3, B = 2;
    ir::UreProgram program = accumulate_over_b(C, Q, B);
    REQUIRE_THROWS_WITH(validate_transform(program),
                        Contains("dependence Z <- Z(c, q, b - 1) of URE Z crosses array instances") &&
                            Contains("its distance in loop 'b' is 1, which is not a source loop of the transform (c, q)") &&
                            Contains("c in [0, 4), q in [0, 3), b in [0, 2)"));
    // With b in the transform the same dependence is an ordinary one.
    program.schedule.transform->source_loops = {"c", "q", "b"};
    program.schedule.transform->matrix = {{1, 0, 0}, {0, 1, Q}};
    auto timings = validate_transform(program);
    CHECK(timing_of(timings, "Z", "Z(c, q, b - 1)").dt == Q);
    // With one instance the dependence is never taken, but the program still
    // reads across arrays: rejected whatever the bounds.
    ir::UreProgram single = accumulate_over_b(C, Q, 1);
    REQUIRE_THROWS_WITH(validate_transform(single), Contains("crosses array instances"));
}

TEST_CASE("with gpu_grid_sync a value crosses gpu_blocks instances a step or more after it is computed", "[validator]") {
    ir::UreProgram program = accumulate_over_b(4, 3, 2);
    // Each refusal names the way out that is left.
    REQUIRE_THROWS_WITH(validate_transform(program),
                        Contains("map 'b' to the grid with gpu_blocks and synchronise the instances with gpu_grid_sync()"));
    program.schedule.gpu_blocks = {"b"};
    REQUIRE_THROWS_WITH(validate_transform(program), Contains("or synchronise the instances with X.gpu_grid_sync()"));
    // Synchronised, Z(c, q, b - 1) would be read in the step the other
    // instance computes it (b is no source loop: dt = 0).
    program.schedule.gpu_grid_sync = true;
    REQUIRE_THROWS_WITH(validate_transform(program),
                        Contains("dependence Z <- Z(c, q, b - 1) of URE Z crosses array instances along the gpu_blocks loop 'b' (distance 1)") &&
                            Contains("dt = s·d = 0 steps") && Contains("at least one step"));
    // The device-wide Jacobi: every read across tiles is of the step before.
    ir::UreProgram grid = build_spec("jacobi2d", test::params({{"GRID", 1}, {"T", 3}, {"PE", 5}, {"TH", 7}, {"BX", 3}, {"BY", 2}})).output.lower();
    int across = 0;
    for (const DependenceTiming &t : validate_transform(grid)) {
        const std::vector<int64_t> &d = t.dependence->distance;
        if (d[grid.loop_index("bx")] == 0 && d[grid.loop_index("by")] == 0) continue;
        across++;
        CHECK(t.dt == 1);
    }
    CHECK(across == 4);
    ir::UreProgram unsynchronised =
        build_spec("jacobi2d", test::params({{"GRID", 1}, {"SYNC", 0}, {"T", 3}, {"PE", 5}, {"TH", 7}})).output.lower();
    REQUIRE_THROWS_WITH(validate_transform(unsynchronised), Contains("crosses array instances") && Contains("U.gpu_grid_sync()"));
}

TEST_CASE("malformed transforms are reported", "[validator]") {
    ir::UreProgram program = lower_spec("conv1d_sbm");
    SECTION("no transform") {
        program.schedule.transform.reset();
        REQUIRE_THROWS_WITH(validate_transform(program), Contains("has no space-time transform"));
    }
    SECTION("a row of the wrong length") {
        program.schedule.transform->matrix = {{1, 1}, {0, 1, 0}};
        REQUIRE_THROWS_WITH(validate_transform(program), Contains("has 3 entries but there are 2 source loops"));
    }
    SECTION("an unknown source loop") {
        program.schedule.transform->source_loops = {"c", "zz"};
        REQUIRE_THROWS_WITH(validate_transform(program), Contains("source loop 'zz' is not a loop of the nest"));
    }
}

TEST_CASE("isl model: conditions become sets, non-affine ones are over-approximated", "[validator][isl]") {
    ir::UreProgram program = lower_spec("conv1d_sbm", params({{"C", 4}, {"Q", 3}, {"B", 2}}));
    isl_model::Context context;
    isl::set domain = isl_model::iteration_domain(context, program, {"c", "q"});
    Halide::Var c("c"), q("q");
    auto count = [](const isl::set &set) {
        isl::val n = isl::manage(isl_set_count_val(set.get()));
        return (int64_t)isl_val_get_num_si(n.get());
    };
    CHECK(count(domain) == 12);
    auto affine = isl_model::condition_set(c == 0 || q == 2, domain);
    CHECK(affine.exact);
    CHECK(count(affine.set) == 6);
    auto negated = isl_model::condition_set(!(c < 2) && q != 1 && 2 * c + q / 2 >= 5, domain);
    CHECK(negated.exact);
    CHECK(count(negated.set) == 3);  // (2, 2), (3, 0), (3, 2)
    auto product = isl_model::condition_set(c * q == 2, domain);
    CHECK_FALSE(product.exact);
    CHECK(count(product.set) == 12);
    CHECK_FALSE(isl_model::affine_expr(c * q, domain).has_value());
    CHECK(isl_model::affine_expr(3 * c - q % 2, domain).has_value());
}

namespace {

/// X(c, q) = x(q), Out(c) = X(c, 1) over c in [0, C), q in [0, 2), with C a
/// generation-time parameter: no dependences, so only processor availability
/// decides.
ir::UreProgram wide_spec(const Params &params, const std::vector<int> &matrix) {
    const int64_t C = params.get("C", 16);
    const int Q = 2;
    Var c("c"), q("q"), s("s"), t("t");
    Input x(Float(32), 1, "x");
    Func X(Float(32), {c, q}, Place::Device, "X"), Out(Place::Device, "Out");
    X(c, q) = x(q);
    Out(c) = select(q == Q - 1, X(c, q));
    X.merge_ures(Out).set_bounds(c, 0, C, q, 0, Q);
    X.space_time_transform({c, q}, {s, t}, matrix);
    return Out.lower();
}

}  // namespace

TEST_CASE("bounds beyond 32 bits reach isl exactly", "[validator][isl]") {
    SECTION("C = 3000000000: an all-zero matrix maps every point to one PE step") {
        ir::UreProgram program = wide_spec(params({{"C", 3000000000}}), {0, 0, 0, 0});
        REQUIRE_THROWS_WITH(validate_transform(program),
                            Contains("processor availability") && Contains("c in [0, 3000000000), q in [0, 2)"));
    }
    SECTION("C = 4294967300 (4 modulo 2^32): s = t = c + 5q collides (0, 1) with (5, 0)") {
        ir::UreProgram program = wide_spec(params({{"C", 4294967300}}), {1, 5, 1, 5});
        REQUIRE_THROWS_WITH(validate_transform(program),
                            Contains("processor availability") &&
                                Contains("points (c = 0, q = 1) and (c = 5, q = 0)") &&
                                Contains("on PE s = 5 at step t = 5") && Contains("c in [0, 4294967300)"));
        // With C = 4 the same matrix is injective.
        REQUIRE_NOTHROW(validate_transform(wide_spec(params({{"C", 4}}), {1, 5, 1, 5})));
    }
    SECTION("an injective map on a wide domain is accepted, and isl counts every point") {
        ir::UreProgram program = wide_spec(params({{"C", 4294967300}}), {1, 0, 0, 1});
        REQUIRE_NOTHROW(validate_transform(program));
        isl_model::Context context;
        isl::set domain = isl_model::iteration_domain(context, program, {"c", "q"});
        isl::val n = isl::manage(isl_set_count_val(domain.get()));
        char *text = isl_val_to_str(n.get());
        std::string count = text;
        free(text);
        CHECK(count == "8589934600");
    }
    SECTION("matrix entries beyond 32 bits are not truncated") {
        // s = t = c + (2^32 + 1) q is injective for C = 4; truncated to 32
        // bits it would be c + q, which collides (0, 1) with (1, 0).
        ir::UreProgram program = wide_spec(params({{"C", 4}}), {1, 0, 0, 1});
        program.schedule.transform->matrix = {{1, 4294967297}, {1, 4294967297}};
        REQUIRE_NOTHROW(validate_transform(program));
        program.schedule.transform->matrix = {{1, 1}, {1, 1}};
        REQUIRE_THROWS_WITH(validate_transform(program), Contains("points (c = 0, q = 1) and (c = 1, q = 0)"));
    }
}
