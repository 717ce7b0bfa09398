// The propagation analyses and rewrites the explorer builds its variants with
// (analysis/FindPropagations.h, lower/PropagationRewrites.h): input carriers
// and reductions are recognized (and other UREs are not), and every rewrite
// computes what the program computed, on the reference interpreter.
#include "TestUtil.h"

#include "analysis/FindPropagations.h"
#include "lower/PropagationRewrites.h"

using namespace pulse;

namespace {

const std::vector<std::string> source_loops{"c", "q"};
constexpr int C = 7, Q = 4, Q_MIN = 1;  // q in [1, 4]: mirroring q is q -> 5 - q, not q -> 3 - q

/// A 1-D convolution in int32 (exact sums in any order), SBM's UREs:
///   X(c, q) = x(c + q)                                     input read in place
///   W(c, q) = select(c == 0, w(q), W(c - 1, q))            input on a copy chain along c
///   Z(c, q) = select(q == 1, 0, Z(c, q - 1)) + X * W       reduction along q
///   Out(c)  = select(q == 4, Z(c, q))
ir::UreProgram convolution() {
    Var c("c"), q("q");
    Input x(Int(32), 1, "x"), w(Int(32), 1, "w");
    Func X(Int(32), {c, q}, Place::Device, "X"), W(Int(32), {c, q}, Place::Device, "W"),
        Z(Int(32), {c, q}, Place::Device, "Z"), Out(Place::Device, "Out");
    X(c, q) = x(c + q);
    W(c, q) = select(c == 0, w(q), W(c - 1, q));
    Z(c, q) = select(q == Q_MIN, 0, Z(c, q - 1)) + X(c, q) * W(c, q);
    Out(c) = select(q == Q_MIN + Q - 1, Z(c, q));
    X.merge_ures(W, Z, Out).set_bounds(c, 0, C, q, Q_MIN, Q);
    return Out.lower();
}

/// Every element of every output of `a` equals `b`'s, on random inputs.
void require_same_results(const ir::UreProgram &a, const ir::UreProgram &b, uint32_t seed) {
    INFO("seed " << seed);
    const Buffers inputs = random_inputs(a, seed);
    const Buffers want = ir::realize(a, inputs), got = ir::realize(b, inputs);
    REQUIRE(want.size() == got.size());
    for (const auto &[name, buffer] : want) {
        INFO("output " << name);
        REQUIRE(got.count(name) == 1);
        const Halide::Buffer<> &other = got.at(name);
        REQUIRE(other.dimensions() == buffer.dimensions());
        for (int d = 0; d < buffer.dimensions(); d++) {
            REQUIRE(other.dim(d).min() == buffer.dim(d).min());
            REQUIRE(other.dim(d).extent() == buffer.dim(d).extent());
        }
        int64_t differ = 0, elements = 0;
        buffer.for_each_element([&](const int *pos) {
            const std::vector<int> at(pos, pos + buffer.dimensions());
            elements++;
            differ += test::at(buffer, at) != test::at(other, at);
        });
        CHECK(elements > 0);
        CHECK(differ == 0);
    }
}

const ir::Dependence *self_dependence(const ir::UreProgram &p, const std::string &ure) {
    for (const ir::Dependence &d : p.dependences) {
        if (d.producer == ure && d.consumer == ure) return &d;
    }
    return nullptr;
}

/// The one read of an input in `ure`'s definition.
const ir::InputAccess *input_access(const ir::UreProgram &p, const std::string &ure) {
    const ir::InputAccess *found = nullptr;
    for (const ir::InputAccess &a : p.input_accesses) {
        if (a.consumer != ure) continue;
        if (found) return nullptr;
        found = &a;
    }
    return found;
}

/// `dist` over the loops in source_loops order.
std::vector<int64_t> on_loops(const ir::UreProgram &p, std::vector<int64_t> dist) {
    std::vector<int64_t> d(p.loops.size(), 0);
    for (size_t i = 0; i < source_loops.size(); i++) d[p.loop_index(source_loops[i])] = dist[i];
    return d;
}

}  // namespace

TEST_CASE("find_carrier recognizes inputs read in place and on copy chains, with the directions that keep their index",
          "[propagation]") {
    const ir::UreProgram p = convolution();
    // x(c + q) is the same element along (-1, 1) and (1, -1); no other
    // primitive direction with entries in [-2, 2] keeps c + q.
    std::optional<Carrier> x = find_carrier(p, source_loops, p.ure("X"));
    REQUIRE(x.has_value());
    CHECK(x->ure == "X");
    CHECK(ir::input_callee(x->read) == "x");
    CHECK(x->directions == std::vector<std::vector<int64_t>>{{-1, 1}, {1, -1}});
    // The copy chain's read is its boundary read w(q); it keeps along c only.
    std::optional<Carrier> w = find_carrier(p, source_loops, p.ure("W"));
    REQUIRE(w.has_value());
    CHECK(ir::to_source(w->read) == "w(q)");
    CHECK(w->directions == std::vector<std::vector<int64_t>>{{-1, 0}, {1, 0}});
    // A sum and an output carry no input.
    CHECK_FALSE(find_carrier(p, source_loops, p.ure("Z")).has_value());
    CHECK_FALSE(find_carrier(p, source_loops, p.ure("Out")).has_value());
}

TEST_CASE("find_carrier rejects a chain that copies another URE", "[propagation]") {
    Var c("c"), q("q");
    Input x(Int(32), 1, "x");
    Func A(Int(32), {c, q}, "A"), B(Int(32), {c, q}, "B"), Out(Place::Host, "Out");
    A(c, q) = x(c + q);
    B(c, q) = select(c == 0, x(q), A(c - 1, q));  // the false branch reads A, not B
    Out(c) = select(q == 0, B(c, q));
    A.merge_ures(B, Out).set_bounds(c, 0, 4, q, 0, 3);
    const ir::UreProgram p = Out.lower();
    CHECK(find_carrier(p, source_loops, p.ure("A")).has_value());
    CHECK_FALSE(find_carrier(p, source_loops, p.ure("B")).has_value());
}

TEST_CASE("find_reduction recognizes an accumulation along one loop read at its end", "[propagation]") {
    const ir::UreProgram p = convolution();
    std::optional<Reduction> z = find_reduction(p, source_loops, p.ure("Z"));
    REQUIRE(z.has_value());
    CHECK(z->ure == "Z");
    CHECK(z->loop == p.loop_index("q"));
    CHECK(z->distance == on_loops(p, {0, 1}));
    // A carrier (even one on a chain: its self read is a copy, not a sum) and an output are not.
    CHECK_FALSE(find_reduction(p, source_loops, p.ure("X")).has_value());
    CHECK_FALSE(find_reduction(p, source_loops, p.ure("W")).has_value());
    CHECK_FALSE(find_reduction(p, source_loops, p.ure("Out")).has_value());
    // Along a loop outside the source loops: not one to reverse.
    CHECK_FALSE(find_reduction(p, {"c"}, p.ure("Z")).has_value());
}

TEST_CASE("find_reduction rejects sums along a diagonal, read by a URE other than an output, or started or ended by another loop",
          "[propagation]") {
    Var c("c"), q("q");
    Input x(Int(32), 1, "x");
    SECTION("along a diagonal") {
        Func Z(Int(32), {c, q}, "Z"), Out(Place::Host, "Out");
        Z(c, q) = select(q == 0 || c == 0, 0, Z(c - 1, q - 1)) + x(c + q);
        Out(c) = select(q == 2, Z(c, q));
        Z.merge_ures(Out).set_bounds(c, 0, 4, q, 0, 3);
        const ir::UreProgram p = Out.lower();
        CHECK_FALSE(find_reduction(p, source_loops, p.ure("Z")).has_value());
    }
    SECTION("its partial sums read by another URE") {
        Func Z(Int(32), {c, q}, "Z"), Y(Int(32), {c, q}, "Y"), Out(Place::Host, "Out");
        Z(c, q) = select(q == 0, 0, Z(c, q - 1)) + x(c + q);
        Y(c, q) = Z(c, q) * 2;
        Out(c) = select(q == 2, Y(c, q));
        Z.merge_ures(Y, Out).set_bounds(c, 0, 4, q, 0, 3);
        const ir::UreProgram p = Out.lower();
        CHECK_FALSE(find_reduction(p, source_loops, p.ure("Z")).has_value());
    }
    SECTION("its start depends on another loop") {
        Func Z(Int(32), {c, q}, "Z"), Out(Place::Host, "Out");
        Z(c, q) = select(q == 0 || q == c + 5, 0, Z(c, q - 1)) + x(c + q);
        Out(c) = select(q == 2, Z(c, q));
        Z.merge_ures(Out).set_bounds(c, 0, 4, q, 0, 3);
        const ir::UreProgram p = Out.lower();
        CHECK_FALSE(find_reduction(p, source_loops, p.ure("Z")).has_value());
    }
    SECTION("its end depends on another loop") {
        Func Z(Int(32), {c, q}, "Z"), Out(Place::Host, "Out");
        Z(c, q) = select(q == 0, 0, Z(c, q - 1)) + x(c + q);
        Out(c) = select(q == 2 && c >= 0, Z(c, q));
        Z.merge_ures(Out).set_bounds(c, 0, 4, q, 0, 3);
        const ir::UreProgram p = Out.lower();
        CHECK_FALSE(find_reduction(p, source_loops, p.ure("Z")).has_value());
    }
}

TEST_CASE("reverse_reduction accumulates the other way along the loop and computes the same outputs", "[propagation]") {
    const ir::UreProgram original = convolution();
    const std::optional<Reduction> z = find_reduction(original, source_loops, original.ure("Z"));
    REQUIRE(z.has_value());
    ir::UreProgram reversed = original;
    reverse_reduction(reversed, *z);
    reanalyze(reversed);
    // Z now reads Z(c, q + 1) and starts at the last q; the reference order runs q down.
    const ir::Dependence *self = self_dependence(reversed, "Z");
    REQUIRE(self != nullptr);
    CHECK(self->distance == on_loops(reversed, {0, -1}));
    CHECK(reversed.reference_direction[reversed.loop_index("q")] == -1);
    // Found again as a reduction, along the other direction.
    const std::optional<Reduction> back = find_reduction(reversed, source_loops, reversed.ure("Z"));
    REQUIRE(back.has_value());
    CHECK(back->distance == on_loops(reversed, {0, -1}));
    for (uint32_t seed : {1u, 2u, 3u}) require_same_results(original, reversed, seed);
    // Reversed twice: the way it was written.
    ir::UreProgram twice = reversed;
    reverse_reduction(twice, *back);
    reanalyze(twice);
    CHECK(self_dependence(twice, "Z")->distance == on_loops(twice, {0, 1}));
    require_same_results(original, twice, 4);
}

TEST_CASE("carriers read in place or forwarded along each direction compute the same outputs", "[propagation]") {
    const ir::UreProgram original = convolution();
    for (const char *name : {"X", "W"}) {
        const std::optional<Carrier> carrier = find_carrier(original, source_loops, original.ure(name));
        REQUIRE(carrier.has_value());
        INFO(name);
        ir::UreProgram in_place = original;
        read_carrier_in_place(in_place, *carrier);
        reanalyze(in_place);
        CHECK(in_place.ure(name).value.same_as(carrier->read));
        CHECK(self_dependence(in_place, name) == nullptr);
        require_same_results(original, in_place, 5);
        for (const std::vector<int64_t> &d : carrier->directions) {
            INFO("direction (" << d[0] << ", " << d[1] << ")");
            ir::UreProgram forwarded = original;
            forward_carrier(forwarded, *carrier, source_loops, d);
            reanalyze(forwarded);
            const ir::Dependence *copy = self_dependence(forwarded, name);
            REQUIRE(copy != nullptr);
            CHECK(copy->distance == on_loops(forwarded, d));
            CHECK(copy->is_copy);
            // The input is loaded exactly where the chain starts: where x - d leaves the domain.
            const ir::InputAccess *load = input_access(forwarded, name);
            REQUIRE(load != nullptr);
            int64_t wrong = 0;
            for (int ci = 0; ci < C; ci++) {
                for (int qi = Q_MIN; qi < Q_MIN + Q; qi++) {
                    const int pc = ci - (int)d[0], pq = qi - (int)d[1];
                    const bool starts = pc < 0 || pc >= C || pq < Q_MIN || pq >= Q_MIN + Q;
                    const Expr at = Halide::Internal::simplify(
                        Halide::Internal::substitute({{"c", Expr(ci)}, {"q", Expr(qi)}}, load->condition));
                    wrong += !(starts ? Halide::Internal::is_const_one(at) : Halide::Internal::is_const_zero(at));
                }
            }
            CHECK(wrong == 0);
            require_same_results(original, forwarded, 6);
        }
    }
}

TEST_CASE("reanalyze refuses rewritten UREs that no sequential order computes", "[propagation]") {
    // B's chain along c needs c to run up; A forwarded along (-1, 0) reads
    // A(c + 1, q) and needs it to run down.
    Var c("c"), q("q");
    Input x(Int(32), 1, "x");
    Func A(Int(32), {c, q}, "A"), B(Int(32), {c, q}, "B"), Out(Place::Host, "Out");
    A(c, q) = x(q);
    B(c, q) = select(c == 0, x(q), B(c - 1, q)) + A(c, q);
    Out(c) = select(q == 0, B(c, q));
    A.merge_ures(B, Out).set_bounds(c, 0, 4, q, 0, 3);
    ir::UreProgram p = Out.lower();
    const std::optional<Carrier> a = find_carrier(p, source_loops, p.ure("A"));
    REQUIRE(a.has_value());
    forward_carrier(p, *a, source_loops, {-1, 0});
    REQUIRE_THROWS_AS(reanalyze(p), CompileError);
}
