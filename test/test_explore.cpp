// The design-space explorer (--explore): it finds the paper's 1-D convolution
// designs, every design it calls valid computes the spec's result, the
// symmetries it removes are real, and the validator's verdicts are data.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "Explore.h"
#include "TestUtil.h"
#include "exec/Simulator.h"
#include "lower/LowerToSystolic.h"
#include "lower/Pipeline.h"

using namespace pulse;

namespace {

ExploreOptions options_in(int64_t lo, int64_t hi) {
    ExploreOptions o;
    o.entry_min = lo;
    o.entry_max = hi;
    return o;
}

const ExploredDesign *find(const Exploration &e, const std::function<bool(const DesignMetrics &)> &match) {
    for (const ExploredDesign &d : e.designs) {
        if (d.valid() && match(*d.metrics)) return &d;
    }
    return nullptr;
}

DesignMetrics metrics_of(const ir::UreProgram &p) { return analyze_design(compile_to_systolic(p)); }

/// The figures of every valid design an exploration reports, one line each.
std::set<std::string> valid_figures(const Exploration &e) {
    std::set<std::string> out;
    for (const ExploredDesign &d : e.designs) {
        if (!d.valid()) continue;
        const DesignMetrics &m = *d.metrics;
        std::ostringstream key;
        key << m.design_class << " " << m.pe_count << " " << m.steps << " " << m.outputs << " " << m.registers_per_pe << " "
            << m.exchanges_per_step << " " << m.loads_per_output;
        out.insert(key.str());
    }
    return out;
}

/// A dynamic-programming table that is no reduction: H(i, j) = max(H(i - 1, j),
/// H(i, j - 1)) + a(i) * b(j), the last row and column read out. Reversing i
/// or j makes another program (its recurrences would read the future), so no
/// design is the mirror of another.
ir::UreProgram dp_table(int I, int J) {
    Var i("i"), j("j"), s("s"), t("t");
    Input a(Int(32), 1, "a"), b(Int(32), 1, "b");
    Func H(Int(32), {i, j}, Place::Device, "H"), Out(Place::Device, "Out");
    Expr up = select(i == 0, 0, H(i - 1, j)), left = select(j == 0, 0, H(i, j - 1));
    H(i, j) = max(up, left) + a(i) * b(j);
    Out(j) = select(i == I - 1, H(i, j));
    H.merge_ures(Out).set_bounds(i, 0, I, j, 0, J);
    H.space_time_transform({i, j}, {s, t}, {1, 0, /**/ 1, 1});
    return Out.lower();
}

}  // namespace

TEST_CASE("exploring conv1d finds the six hand-written designs with the paper's Table 4 figures", "[explore]") {
    const ir::UreProgram base = build_spec("conv1d_sbm").output.lower();
    Explorer explorer(base, options_in(-2, 2));
    Exploration e = explorer.run(nullptr);
    REQUIRE(e.unchecked == 0);
    REQUIRE((int64_t)e.designs.size() == e.candidates);
    // Table 4 at C = 16, Q = 5: outturn (outputs per step) and utilization.
    struct Paper {
        const char *spec, *design_class;
        double outturn, utilization;
    };
    const Paper paper[] = {{"conv1d_sbm", "SBM", 3.2, 0.80}, {"conv1d_bsm", "BSM", 0.8, 0.80}, {"conv1d_fsm", "FSM", 0.8, 0.80},
                           {"conv1d_bfs", "BFS", 0.8, 0.25}, {"conv1d_ffs", "FFS", 16.0 / 35, 80.0 / 560},
                           {"conv1d_fbs", "FBS", 3.2, 1.00}};
    for (const Paper &want : paper) {
        INFO(want.spec);
        // The hand-written spec has the paper's figures ...
        const DesignMetrics hand = metrics_of(build_spec(want.spec).output.lower());
        CHECK(hand.design_class == want.design_class);
        CHECK(test::close(hand.outturn, want.outturn, 1e-9));
        CHECK(test::close(hand.utilization, want.utilization, 1e-9));
        // ... and the explorer found a valid design equivalent to it.
        const ExploredDesign *found = find(e, [&](const DesignMetrics &m) {
            return m.design_class == hand.design_class && m.pe_count == hand.pe_count && m.steps == hand.steps &&
                   m.outputs == hand.outputs && test::close(m.utilization, hand.utilization, 1e-12);
        });
        REQUIRE(found != nullptr);
        INFO("design " << found->id << " [" << found->matrix_text() << "] " << found->propagation_text());
        CHECK(test::close(found->metrics->outturn, want.outturn, 1e-9));
    }
    // FBS is the only design with 100% utilization at 3.2 outputs per step: it is ranked on the front.
    const ExploredDesign *fbs = find(e, [](const DesignMetrics &m) { return m.design_class == "FBS" && m.utilization == 1.0; });
    REQUIRE(fbs != nullptr);
    CHECK(fbs->pareto);
    // The propagation generated for FBS forwards the input along the anti-diagonal, as the paper writes it.
    bool forwarded = false;
    for (const Propagation &p : fbs->propagation) {
        if (p.ure == "X") forwarded = p.kind == Propagation::Kind::Forwarded && p.direction[0] == -p.direction[1];
    }
    CHECK(forwarded);
}

TEST_CASE("every design the explorer reports valid computes the spec's result", "[explore]") {
    // Sizes unlike the defaults (odd, C not a multiple of anything).
    const Params params = test::params({{"C", 7}, {"Q", 3}, {"B", 2}});
    for (const char *spec : {"conv1d_sbm", "conv1d_fbs_stride2"}) {
        INFO(spec);
        const ir::UreProgram base = build_spec(spec, params).output.lower();
        Explorer explorer(base, options_in(-1, 2));
        Exploration e = explorer.run(nullptr);
        std::vector<const ExploredDesign *> valid;
        for (const ExploredDesign &d : e.designs) {
            if (d.valid()) valid.push_back(&d);
        }
        REQUIRE(valid.size() >= 10);
        const Buffers inputs = random_input_buffers(base, 11);
        const Buffers expected = ir::realize(base, inputs);
        // A deterministic sample of about 40, spread over the list, the last one included.
        std::vector<size_t> sample;
        for (size_t i = 0; i < valid.size(); i += std::max<size_t>(1, valid.size() / 40)) sample.push_back(i);
        if (sample.back() + 1 != valid.size()) sample.push_back(valid.size() - 1);
        for (size_t i : sample) {
            const ExploredDesign &d = *valid[i];
            INFO("design " << d.id << " [" << d.matrix_text() << "] " << d.propagation_text());
            const Buffers actual = simulate(lower_to_systolic(explorer.program(d.id)), inputs);
            CHECK(compare_outputs(expected, actual, 1e-4) == "");
        }
    }
}

TEST_CASE("the duplicates the explorer leaves out are designs it keeps", "[explore]") {
    // Left out: mirrored arrays and reversed loops. Searching with them kept
    // finds the same designs (the same figures), only more often.
    for (const char *spec : {"conv1d_sbm", "conv1d_fbs_stride2"}) {
        INFO(spec);
        const ir::UreProgram base = build_spec(spec).output.lower();
        ExploreOptions o = options_in(-2, 2);
        Exploration kept = Explorer(base, o).run(nullptr);
        o.keep_duplicates = true;
        Exploration all = Explorer(base, o).run(nullptr);
        CHECK(all.candidates > kept.candidates);
        auto figures = [](const Exploration &e) {
            std::set<std::string> out;
            for (const ExploredDesign &d : e.designs) {
                if (!d.valid()) continue;
                const DesignMetrics &m = *d.metrics;
                std::ostringstream key;
                key << m.design_class << " " << m.pe_count << " " << m.steps << " " << m.outputs << " " << m.registers_per_pe
                    << " " << m.exchanges_per_step << " " << m.loads_per_output;
                out.insert(key.str());
            }
            return out;
        };
        const std::set<std::string> a = figures(kept), b = figures(all);
        CHECK(a.size() >= 10);
        CHECK(a == b);
        int64_t valid_kept = 0, valid_all = 0;
        for (const ExploredDesign &d : kept.designs) valid_kept += d.valid();
        for (const ExploredDesign &d : all.designs) valid_all += d.valid();
        CHECK(valid_all > valid_kept);
    }
}

TEST_CASE("the explorer drops a reversed design only where it is the same design: a DP table keeps its valid ones", "[explore]") {
    // The range -1 .. 2 is not symmetric: the array (-1, 2) is kept as its mirror (1, -2).
    const ir::UreProgram base = dp_table(7, 5);
    ExploreOptions o = options_in(-1, 2);
    Exploration kept = Explorer(base, o).run(nullptr);
    o.keep_duplicates = true;
    Exploration all = Explorer(base, o).run(nullptr);
    const std::set<std::string> a = valid_figures(kept), b = valid_figures(all);
    CHECK(!b.empty());
    CHECK(a == b);
    // The spec's own design (a wavefront: s = i, t = i + j) is among the kept candidates.
    bool spec_design = false;
    for (const ExploredDesign &d : kept.designs) spec_design |= d.valid() && d.matrix == std::vector<std::vector<int64_t>>{{1, 0}, {1, 1}};
    CHECK(spec_design);
}

TEST_CASE("valid designs the CUDA backend cannot emit are listed, not ranked, and the spec's own design and the best are named", "[explore]") {
    const ir::UreProgram base = build_spec("conv1d_sbm").output.lower();
    const ExploreOptions o = options_in(-2, 2);
    const Explorer explorer(base, o);
    const Exploration e = explorer.run(nullptr);
    // FSM's UREs give designs whose input chain differs along the PEs of an
    // array wider than a warp (SBM's chains are all broadcasts along them).
    const Exploration fsm = Explorer(build_spec("conv1d_fsm").output.lower(), o).run(nullptr);
    int64_t not_emittable = 0;
    for (const ExploredDesign &d : fsm.designs) {
        if (!d.valid() || d.not_emittable.empty()) continue;
        not_emittable++;
        INFO(d.id);
        CHECK(d.rank == 0);
        CHECK(!d.pareto);
        CHECK_THAT(d.not_emittable, Catch::Contains("same-step chain"));
    }
    CHECK(not_emittable > 0);
    // The spec's own design (SBM, 1 1; 0 1, every propagation as written) is a candidate, ranked.
    REQUIRE(e.spec_design >= 0);
    const ExploredDesign &own = e.designs[(size_t)e.spec_design];
    CHECK(own.matrix == base.schedule.transform->matrix);
    CHECK(own.rank >= 1);
    // --design best: the candidate ranked first.
    const int64_t best = explorer.best_design();
    CHECK(e.designs[(size_t)best].rank == 1);
    // With a range that leaves out the spec's matrix, it is still a candidate.
    const ir::UreProgram bsm = build_spec("conv1d_bsm").output.lower();
    const Exploration narrow = Explorer(bsm, options_in(-1, 0)).run(nullptr);
    REQUIRE(narrow.spec_design >= 0);
    CHECK(narrow.designs[(size_t)narrow.spec_design].matrix == bsm.schedule.transform->matrix);
    CHECK(narrow.designs[(size_t)narrow.spec_design].rank >= 1);
}

TEST_CASE("the validator's verdict is data: the failed condition and its witness", "[explore][validator]") {
    ir::UreProgram p = build_spec("conv1d_sbm").output.lower();
    // Time row (0, -1): Z <- Z(c, q - 1) would be read a step before it is computed.
    p.schedule.transform->matrix = {{1, 1}, {0, -1}};
    TransformCheck late = check_transform(p);
    REQUIRE(late.verdict.kind == VerdictKind::DataAvailability);
    REQUIRE(late.verdict.dependence != nullptr);
    CHECK(late.verdict.dependence->producer == "Z");
    CHECK(late.verdict.dt == -1);
    CHECK_THROWS_WITH(validate_transform(p), late.verdict.message);
    // Space row (1, 0), time row (1, 0): (c, q) and (c, q + 1) collide.
    p.schedule.transform->matrix = {{1, 0}, {1, 0}};
    TransformCheck collide = check_transform(p);
    REQUIRE(collide.verdict.kind == VerdictKind::ProcessorAvailability);
    REQUIRE(collide.verdict.first.size() == 2);
    CHECK(collide.verdict.first != collide.verdict.second);
    CHECK(collide.verdict.first[0] == collide.verdict.second[0]);  // same c: same PE and step under this matrix
    // The explorer's checker (one isl model per program, remembered collisions) agrees with the fresh check.
    const ir::UreProgram base = build_spec("conv1d_fsm").output.lower();
    Explorer explorer(base, options_in(-1, 1));
    Exploration e = explorer.run(nullptr);
    int64_t invalid = 0;
    for (const ExploredDesign &d : e.designs) {
        if (d.id % 3) continue;
        TransformCheck fresh = check_transform(explorer.program(d.id));
        INFO("design " << d.id << " [" << d.matrix_text() << "] " << d.propagation_text());
        CHECK(fresh.verdict.kind == d.verdict);
        CHECK(fresh.verdict.message == d.message);
        if (!d.valid()) {
            invalid++;
            CHECK(!d.witness.empty());
        }
    }
    CHECK(invalid > 0);
}

TEST_CASE("the explorer's files, budget and options", "[explore]") {
    const ir::UreProgram base = build_spec("conv1d_sbm").output.lower();
    ExploreOptions o = options_in(-1, 1);
    Exploration e = Explorer(base, o).run(nullptr);
    const std::string dir = (std::filesystem::temp_directory_path() / "pulse_test_explore").string();
    std::filesystem::remove_all(dir);
    write_exploration(e, "conv1d_sbm", o, dir);
    std::ifstream csv(dir + "/designs.csv"), front(dir + "/pareto.csv");
    std::string line;
    int64_t rows = -1, front_rows = -1, marked = 0;
    while (std::getline(csv, line)) rows++;
    while (std::getline(front, line)) front_rows++;
    for (const ExploredDesign &d : e.designs) marked += d.pareto;
    CHECK(rows == (int64_t)e.designs.size());
    CHECK(front_rows == marked);
    CHECK(marked > 0);
    CHECK(std::filesystem::file_size(dir + "/designs.json") > 100);
    // Ranks are 1..valid in predicted order.
    std::vector<const ExploredDesign *> ranked;
    for (const ExploredDesign &d : e.designs) {
        if (d.ranked()) ranked.push_back(&d);
    }
    std::sort(ranked.begin(), ranked.end(), [](auto *a, auto *b) { return a->rank < b->rank; });
    for (size_t i = 0; i < ranked.size(); i++) {
        CHECK(ranked[i]->rank == (int64_t)i + 1);
        if (i) CHECK(ranked[i - 1]->predicted <= ranked[i]->predicted);
    }

    // A budget too short for the whole space stops early and says how much is left.
    o.budget_seconds = 1e-9;
    Exploration cut = Explorer(base, o).run(nullptr);
    CHECK(cut.unchecked > 0);
    CHECK((int64_t)cut.designs.size() + cut.unchecked == cut.candidates);

    // Fixed rows: every candidate keeps the time row given.
    o = options_in(-2, 2);
    o.fixed_rows[1] = {0, 1};
    Explorer fixed(base, o);
    for (int64_t id = 0; id < fixed.candidate_count(); id++) CHECK(fixed.matrix(id)[1] == std::vector<int64_t>{0, 1});

    // Bad options name the fix.
    auto parse = [](std::vector<std::string> args) {
        std::vector<char *> argv{(char *)"spec"};
        for (std::string &a : args) argv.push_back(a.data());
        ExploreOptions parsed;
        for (int i = 1; i < (int)argv.size(); i++) parse_explore_flag(argv[i], i, (int)argv.size(), argv.data(), parsed);
        return parsed;
    };
    CHECK(parse({"--range", "-2:3"}).entry_max == 3);
    CHECK_THROWS_WITH(parse({"--range", "3:-2"}), Catch::Contains("expected MIN:MAX"));
    CHECK_THROWS_WITH(parse({"--fix-row", "1"}), Catch::Contains("expected R=a,b"));
    CHECK_THROWS_WITH(parse({"--cost", "1,2"}), Catch::Contains("STEP,EXCHANGE,LOAD"));
    CHECK_THROWS_WITH(Explorer(base, options_in(-1, 1)).program(1 << 30), Catch::Contains("give the same --range"));
    ExploreOptions wide = options_in(-1, 1);
    wide.fixed_rows[1] = {0, 1, 2};
    CHECK_THROWS_WITH(Explorer(base, wide), Catch::Contains("one entry per source loop"));
}
