// The systolic stage: reverse map, lowering to taps, the lock-step simulator
// (checked against the reference interpreter), compare_outputs and the report.
// Programs are lowered with lower_to_systolic directly: these tests exercise
// the lowering, not the validator.
#include "TestUtil.h"

#include <sstream>

#include "lower/LowerToSystolic.h"
#include "analysis/Report.h"
#include "analysis/ReverseTransform.h"
#include "exec/Simulator.h"

using namespace pulse;
using Catch::Matchers::Contains;

namespace {

ir::UreProgram program_of(const std::string &spec, const Params &params = Params()) {
    return build_spec(spec, params).output.lower();
}

/// Simulates `program` and returns the mismatch against the reference ("" if equal).
std::string simulate_against_reference(const ir::UreProgram &program, uint32_t seed = 3) {
    sys::SystolicProgram systolic = lower_to_systolic(program);
    Buffers inputs = random_input_buffers(program, seed);
    return compare_outputs(ir::realize(program, inputs), simulate(systolic, inputs));
}

/// Value of an Expr over (s, t) at a point; requires it to fold to a constant.
int64_t evaluate_at(const Halide::Expr &e, int64_t s, int64_t t) {
    std::map<std::string, Halide::Expr> values{{"s", Halide::Expr((int)s)}, {"t", Halide::Expr((int)t)}};
    Halide::Expr v = Halide::Internal::simplify(Halide::Internal::substitute(values, e));
    const int64_t *k = Halide::Internal::as_const_int(v);
    if (!k) {
        if (Halide::Internal::is_const_one(v)) return 1;
        if (Halide::Internal::is_const_zero(v)) return 0;
        FAIL("expression does not fold to a constant: " << v);
    }
    return *k;
}

}  // namespace

TEST_CASE("every conv1d design simulates equal to the reference at several sizes", "[systolic][simulate]") {
    for (const char *design : {"sbm", "bsm", "fsm", "bfs", "ffs", "fbs", "fbs_stride2"}) {
        for (auto [C, Q, B] : {std::tuple{16, 5, 2}, std::tuple{7, 3, 3}, std::tuple{13, 6, 1}, std::tuple{5, 1, 2}}) {
            if (std::string(design) == "fbs_stride2" && Q < 2) continue;
            INFO("conv1d_" << design << " C=" << C << " Q=" << Q << " B=" << B);
            ir::UreProgram program = program_of(std::string("conv1d_") + design, test::params({{"C", C}, {"Q", Q}, {"B", B}}));
            CHECK(simulate_against_reference(program) == "");
        }
    }
}

TEST_CASE("conv2d, matmul, matvec and fir simulate equal to the reference", "[systolic][simulate]") {
    struct Case {
        const char *spec;
        Params params;
    };
    std::vector<Case> cases{
        {"conv2d_sbm", Params()},
        {"conv2d_sbm", test::params({{"C", 5}, {"P", 2}, {"Q", 4}, {"R", 3}, {"B", 1}})},
        {"conv2d_sbm", test::params({{"C", 9}, {"P", 4}, {"Q", 2}, {"R", 2}, {"B", 3}})},
        {"matmul", Params()},
        {"matmul", test::params({{"I", 5}, {"J", 3}, {"K", 7}, {"N", 1}})},
        {"matmul", test::params({{"I", 3}, {"J", 4}, {"K", 2}, {"N", 3}})},
        {"matvec", Params()},
        {"matvec", test::params({{"I", 7}, {"J", 4}, {"N", 2}})},
        {"fir_stride2", Params()},
        {"fir_stride2", test::params({{"C", 11}, {"K", 3}, {"B", 2}})},
    };
    for (const Case &c : cases) {
        ir::UreProgram program = program_of(c.spec, c.params);
        INFO(c.spec << " with " << program.domain_size() << " points");
        CHECK(simulate_against_reference(program) == "");
    }
}

TEST_CASE("CheckTime: only active lanes evaluate, with the same results", "[systolic][simulate]") {
    for (const char *spec : {"conv1d_sbm", "conv1d_fsm", "conv1d_bfs", "matmul", "conv2d_sbm"}) {
        ir::UreProgram program = program_of(spec);
        program.schedule.transform->check_time = true;
        INFO(spec);
        CHECK(lower_to_systolic(program).check_time);
        CHECK(simulate_against_reference(program) == "");
    }
}

TEST_CASE("a square unimodular transform is inverted exactly", "[systolic][reverse]") {
    ir::UreProgram program = program_of("conv1d_fsm", test::params({{"C", 6}, {"Q", 4}}));  // s = q, t = c - q
    ReverseMap r = compute_reverse_map(program);
    CHECK(r.how == "unimodular inverse");
    REQUIRE(r.source_of.size() == 2);
    for (int64_t c = 0; c < 6; c++) {
        for (int64_t q = 0; q < 4; q++) {
            int64_t s = q, t = c - q;
            CHECK(evaluate_at(r.source_of[0], s, t) == c);
            CHECK(evaluate_at(r.source_of[1], s, t) == q);
            CHECK(evaluate_at(r.has_preimage, s, t) == 1);
        }
    }
    CHECK(evaluate_at(r.has_preimage, 4, 0) == 0);   // q = 4 is outside [0, 3]
    CHECK(evaluate_at(r.has_preimage, 0, -1) == 0);  // c = -1
}

TEST_CASE("matmul's two projections are inverted with isl on the bounded domain", "[systolic][reverse]") {
    const int I = 5, J = 3, K = 4;
    ir::UreProgram program = program_of("matmul", test::params({{"I", I}, {"J", J}, {"K", K}, {"N", 1}}));
    ReverseMap r = compute_reverse_map(program);
    CHECK(r.how == "isl quasi-affine inverse");
    // Every (s, t) of the array's bounding box: a preimage exactly where one exists.
    std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> image;
    for (int64_t k = 0; k < K; k++) {
        for (int64_t j = 0; j < J; j++) {
            for (int64_t i = 0; i < I; i++) image[{i, K * j + k + i}] = {k, j, i};
        }
    }
    int64_t active = 0;
    for (int64_t s = -1; s <= I; s++) {
        for (int64_t t = -2; t <= K * J + I + 1; t++) {
            auto it = image.find({s, t});
            bool expected = it != image.end();
            INFO("s=" << s << " t=" << t);
            REQUIRE(evaluate_at(r.has_preimage, s, t) == (expected ? 1 : 0));
            if (!expected) continue;
            active++;
            for (int d = 0; d < 3; d++) CHECK(evaluate_at(r.source_of[d], s, t) == it->second[d]);
        }
    }
    CHECK(active == I * J * K);
}

TEST_CASE("a user reverse transform is verified", "[systolic][reverse]") {
    ir::UreProgram program = program_of("conv1d_sbm", test::params({{"C", 6}, {"Q", 3}}));  // s = c + q, t = q
    Halide::Var s("s"), t("t");
    SECTION("a correct one is used") {
        program.schedule.transform->reverse = {s - t, t};
        ReverseMap r = compute_reverse_map(program);
        CHECK(r.how == "user reverse transform (verified)");
        CHECK(simulate_against_reference(program) == "");
    }
    SECTION("a wrong one is rejected with a witness point") {
        program.schedule.transform->reverse = {s - t + 1, t};
        REQUIRE_THROWS_AS(compute_reverse_map(program), CompileError);
        REQUIRE_THROWS_WITH(compute_reverse_map(program),
                            Contains("does not invert the space-time transform") &&
                                Contains("at (q=0, c=0) the transform gives (s=0, t=0) but the reverse transform gives c = 1"));
    }
    SECTION("one wrong only at the edge of the domain is caught there") {
        program.schedule.transform->reverse = {Halide::min(s - t, 4), t};
        REQUIRE_THROWS_WITH(compute_reverse_map(program), Contains("c=5") && Contains("gives c = 4"));
    }
}

TEST_CASE("lowering gives taps, histories and dataflow classes", "[systolic][lower]") {
    sys::SystolicProgram p = lower_to_systolic(program_of("conv1d_bfs"));  // s = c, t = c + q
    const sys::Variable &X = p.variable("X"), &W = p.variable("W"), &Z = p.variable("Z");
    CHECK(X.dataflow == sys::Dataflow::Broadcast);  // X(c-1, q+1): dp 1, dt 0
    CHECK(W.dataflow == sys::Dataflow::Forwarded);  // W(c-1, q): dp 1, dt 1
    CHECK(Z.dataflow == sys::Dataflow::Sedimented);
    CHECK(std::count(X.taps.begin(), X.taps.end(), sys::Tap{"X", 1, 0}) == 1);
    CHECK(W.history == 1);
    CHECK(Z.is_partial_sum);
    CHECK_FALSE(W.is_partial_sum);
    // The statement of Z reads its own history at (0, 1).
    bool found = false;
    for (const sys::Statement &s : p.statements) {
        if (s.ure != "Z") continue;
        std::ostringstream out;
        sys::print(out, p);
        CHECK_THAT(out.str(), Contains("Z[s, t-1]"));
        found = true;
    }
    CHECK(found);
    sys::Tap tap;
    CHECK(sys::is_tap(sys::make_tap(Halide::Float(32), {"Z", -2, 3}), &tap));
    CHECK(tap == sys::Tap{"Z", -2, 3});
    CHECK_FALSE(sys::is_tap(Halide::Expr(3)));
}

TEST_CASE("the report of conv1d_sbm", "[systolic][report]") {
    for (auto [C, Q] : {std::pair{16, 5}, std::pair{7, 3}}) {
        sys::SystolicProgram p = lower_to_systolic(program_of("conv1d_sbm", test::params({{"C", C}, {"Q", Q}})));
        CHECK(p.pe_count == C + Q - 1);
        CHECK(p.steps() == Q);
        CHECK(p.variable("X").dataflow == sys::Dataflow::Stays);
        CHECK(p.variable("W").dataflow == sys::Dataflow::Broadcast);
        CHECK(p.variable("Z").dataflow == sys::Dataflow::Migrates);
        bool x_stationary = false;
        for (const sys::InputRead &r : p.input_reads) {
            if (r.input == "x") x_stationary = r.stationary && !r.broadcast;
        }
        CHECK(x_stationary);
        std::ostringstream text, json;
        print_report(text, p, false);
        print_report(json, p, true);
        INFO(text.str());
        CHECK_THAT(text.str(), Contains("class SBM"));
        CHECK_THAT(text.str(), Contains(std::to_string(C + Q - 1) + " PEs"));
        CHECK_THAT(text.str(), Contains(std::to_string(Q) + " steps"));
        CHECK_THAT(text.str(), Contains("x((b*" + std::to_string(C) + ") + s)  (stationary: loaded once per PE)"));
        CHECK_THAT(text.str(), Contains("w(t)  (broadcast"));
        CHECK_THAT(text.str(), Contains("registers per PE: 4"));
        CHECK_THAT(text.str(), Contains("outputs per step: at most " + std::to_string(C)));
        CHECK_THAT(text.str(), Contains("reverse map (unimodular inverse)"));
        CHECK_THAT(json.str(), Contains("\"class\": \"SBM\""));
        CHECK_THAT(json.str(), Contains("\"pe_count\": " + std::to_string(C + Q - 1)));
        CHECK_THAT(json.str(), Contains("\"steps\": " + std::to_string(Q)));
    }
}

TEST_CASE("the report names the isl inverse and the class of matmul", "[systolic][report]") {
    std::ostringstream text;
    print_report(text, lower_to_systolic(program_of("matmul")), false);
    CHECK_THAT(text.str(), Contains("class SFS"));
    CHECK_THAT(text.str(), Contains("reverse map (isl quasi-affine inverse)"));
    CHECK_THAT(text.str(), Contains("240 points / (8 PEs x 37 steps)"));
}

TEST_CASE("compare_outputs reports the first mismatch, missing and extra outputs", "[systolic][compare]") {
    ir::UreProgram program = program_of("conv1d_sbm", test::params({{"C", 6}, {"Q", 3}, {"B", 2}}));
    Buffers inputs = random_input_buffers(program, 5);
    Buffers expected = ir::realize(program, inputs);
    Buffers actual = simulate(lower_to_systolic(program), inputs);
    REQUIRE(compare_outputs(expected, actual) == "");
    Halide::Buffer<> copy = actual.at("Out").copy();
    double old = load_element(copy, {10});  // b = 1, c = 4: Out(b * C + c)
    store_element(copy, {10}, old + 0.5);
    Buffers wrong{{"Out", copy}};
    CHECK_THAT(compare_outputs(expected, wrong), Contains("output Out(10) is") && Contains("expected"));
    CHECK_THAT(compare_outputs(expected, Buffers{}), Contains("output Out is missing"));
    Buffers extra = actual;
    extra["Extra"] = actual.at("Out");
    CHECK_THAT(compare_outputs(expected, extra), Contains("unexpected output Extra"));
}

TEST_CASE("a tile of a loop of the array is rejected, one outside it is kept for the kernel", "[systolic][lower]") {
    ir::UreProgram program = program_of("conv1d_sbm");
    program.schedule.tiles.push_back(ir::Tile{"b", "bo", "bi", 2});
    REQUIRE_NOTHROW(lower_to_systolic(program));
    program.schedule.tiles.push_back(ir::Tile{"c", "co", "ci", 2});
    REQUIRE_THROWS_WITH(lower_to_systolic(program), Contains("'c' is a source loop of the space-time transform"));
}
