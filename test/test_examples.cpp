// Each example's reference realize equals a direct loop implementation on
// random inputs, at several sizes (odd ones included).
#include "TestUtil.h"

#include "analysis/RequiredInputs.h"
#include "codegen/CodeGenReference.h"
#include "exec/KernelExecutor.h"
#include "exec/Simulator.h"
#include "lower/LowerToKernel.h"
#include "lower/Pipeline.h"

using namespace pulse;
using pulse::test::at;
using pulse::test::close;
using pulse::test::params;

namespace {

struct Realized {
    Buffers inputs, outputs;
};

Realized realize_spec(const std::string &name, const Params &p, uint32_t seed) {
    ir::UreProgram program = build_spec(name, p).output.lower();
    Realized r;
    r.inputs = random_inputs(program, seed);
    r.outputs = ir::realize(program, r.inputs);
    return r;
}

/// Out(n) = sum_q x(stride*n + q) w(q) for n in [0, B*C): one flat signal.
void check_conv1d(const std::string &design, int C, int Q, int B, int stride) {
    Realized r = realize_spec("conv1d_" + design, params({{"C", C}, {"Q", Q}, {"B", B}}), (uint32_t)(C * 31 + Q));
    const Halide::Buffer<> &x = r.inputs.at("x"), &w = r.inputs.at("w"), &out = r.outputs.at("Out");
    REQUIRE(out.dimensions() == 1);
    REQUIRE(out.dim(0).min() == 0);
    REQUIRE(out.dim(0).extent() == B * C);
    for (int n = 0; n < B * C; n++) {
        float sum = 0;
        for (int q = 0; q < Q; q++) sum += (float)at(x, {stride * n + q}) * (float)at(w, {q});
        INFO(design << " C=" << C << " Q=" << Q << " at n=" << n);
        REQUIRE(close(at(out, {n}), sum));
    }
}

}  // namespace

TEST_CASE("conv1d: all seven designs equal the direct loop", "[examples]") {
    for (const char *design : {"sbm", "bsm", "fsm", "bfs", "ffs", "fbs", "fbs_stride2"}) {
        int stride = std::string(design) == "fbs_stride2" ? 2 : 1;
        for (auto [C, Q, B] : std::vector<std::tuple<int, int, int>>{{16, 5, 4}, {7, 3, 3}, {13, 17, 2}, {1, 1, 1}, {31, 4, 5}}) {
            check_conv1d(design, C, Q, B, stride);
        }
    }
}

TEST_CASE("conv2d SBM equals the direct loop", "[examples]") {
    for (auto [C, P, Q, R, B] :
         std::vector<std::tuple<int, int, int, int, int>>{{12, 3, 3, 4, 2}, {7, 2, 5, 3, 3}, {5, 4, 1, 2, 1}, {9, 1, 3, 5, 2}}) {
        Realized r = realize_spec("conv2d_sbm", params({{"C", C}, {"P", P}, {"Q", Q}, {"R", R}, {"B", B}}), 7);
        const Halide::Buffer<> &x = r.inputs.at("x"), &w = r.inputs.at("w"), &out = r.outputs.at("Out");
        for (int b = 0; b < B; b++)
            for (int row = 0; row < R; row++)
                for (int c = 0; c < C; c++) {
                    float sum = 0;
                    // The URE order: filter rows outer, columns inner.
                    for (int p = 0; p < P; p++)
                        for (int q = 0; q < Q; q++) sum += (float)at(x, {b * C + c + q, row + p}) * (float)at(w, {q, p});
                    INFO("C=" << C << " P=" << P << " Q=" << Q << " at c=" << c << " r=" << row << " b=" << b);
                    REQUIRE(close(at(out, {c, row, b}), sum));
                }
    }
}

TEST_CASE("matmul equals the direct loop", "[examples]") {
    for (auto [I, J, K, N] : std::vector<std::tuple<int, int, int, int>>{{8, 6, 5, 2}, {3, 7, 9, 1}, {13, 2, 1, 3}}) {
        Realized r = realize_spec("matmul", params({{"I", I}, {"J", J}, {"K", K}, {"N", N}}), 11);
        const Halide::Buffer<> &a = r.inputs.at("a"), &bm = r.inputs.at("bm"), &out = r.outputs.at("Out");
        for (int n = 0; n < N; n++)
            for (int i = 0; i < I; i++)
                for (int j = 0; j < J; j++) {
                    float sum = 0;
                    for (int k = 0; k < K; k++) sum += (float)at(a, {k, i, n}) * (float)at(bm, {j, k, n});
                    REQUIRE(close(at(out, {j, i, n}), sum));
                }
    }
}

TEST_CASE("matvec equals the direct loop", "[examples]") {
    for (auto [I, J, N] : std::vector<std::tuple<int, int, int>>{{16, 9, 3}, {5, 1, 2}, {11, 23, 1}}) {
        Realized r = realize_spec("matvec", params({{"I", I}, {"J", J}, {"N", N}}), 5);
        const Halide::Buffer<> &a = r.inputs.at("a"), &v = r.inputs.at("v"), &out = r.outputs.at("Out");
        for (int n = 0; n < N; n++)
            for (int i = 0; i < I; i++) {
                float sum = 0;
                for (int j = 0; j < J; j++) sum += (float)at(a, {j, n * I + i}) * (float)at(v, {j});
                REQUIRE(close(at(out, {i, n}), sum));
            }
    }
}

TEST_CASE("FIR with stride 2 equals the direct loop", "[examples]") {
    for (auto [C, K, B] : std::vector<std::tuple<int, int, int>>{{16, 7, 3}, {5, 2, 4}, {9, 11, 1}}) {
        Realized r = realize_spec("fir_stride2", params({{"C", C}, {"K", K}, {"B", B}}), 3);
        const Halide::Buffer<> &x = r.inputs.at("x"), &h = r.inputs.at("h"), &out = r.outputs.at("Out");
        for (int b = 0; b < B; b++)
            for (int c = 0; c < C; c++) {
                float sum = 0;
                for (int k = 0; k < K; k++) sum += (float)at(x, {2 * (b * C + c) + k}) * (float)at(h, {k});
                REQUIRE(close(at(out, {c, b}), sum));
            }
    }
}

TEST_CASE("input regions are inferred from the accesses over the domain", "[examples]") {
    ir::UreProgram p = build_spec("conv1d_sbm", params({{"C", 10}, {"Q", 4}, {"B", 3}})).output.lower();
    auto regions = infer_input_regions(p);
    REQUIRE(regions.at("x")[0].min == 0);
    REQUIRE(regions.at("x")[0].max == 3 * 10 - 1 + 3);  // last output n = 29 reads up to 29 + Q - 1
    REQUIRE(regions.at("w")[0].extent() == 4);
}

namespace {

/// The textbook LCS over (j, i) in [0, M] x [0, N], batched over `n` (a loop
/// outside the array, extent B), with reads under selects of every kind: the
/// data-dependent arm reads a(i - 1) and b(j - 1) only where i, j >= 1; c(n - 1)
/// only at n >= 1 and e(n) only at n < 2 (n's extent is a run-time size, so
/// only its first iterations may be excluded); g(i - 1) under a condition that
/// is not affine (it excludes nothing).
ir::UreProgram guarded_lcs(int N, int M, int B) {
    Var i("i"), j("j"), n("n"), s("s"), t("t");
    Input a(Int(32), 2, "a"), b(Int(32), 2, "b"), c(Int(32), 1, "c"), e(Int(32), 1, "e"), g(Int(32), 1, "g");
    Func L(Int(32), {j, i, n}, Place::Device, "L"), Out(Place::Device, "Out");
    Expr extra = select(n >= 1, c(n - 1), 0) + select(n < 2, e(n), 0) + select(a(0, n) > 0, g(i - 1), 0);
    L(j, i, n) = select(i == 0 || j == 0, extra,
                        select(a(i - 1, n) == b(j - 1, n), L(j - 1, i - 1, n) + 1, max(L(j, i - 1, n), L(j - 1, i, n))));
    Out(j, i, n) = L(j, i, n);
    L.merge_ures(Out).set_bounds(j, 0, M + 1, i, 0, N + 1, n, 0, B);
    L.space_time_transform({j, i}, {s, t}, {0, 1, /**/ 1, 1});
    return Out.lower();
}

}  // namespace

TEST_CASE("input regions cover what the selects let a read evaluate, not the whole box", "[examples]") {
    ir::UreProgram p = guarded_lcs(7, 5, 4);
    auto regions = infer_input_regions(p);
    // a(i - 1, n) under !(i == 0 || j == 0): i from 1, so a from 0.
    REQUIRE(regions.at("a")[0].min == 0);
    REQUIRE(regions.at("a")[0].max == 6);
    REQUIRE(regions.at("b")[0].min == 0);
    REQUIRE(regions.at("b")[0].max == 4);
    REQUIRE(regions.at("b")[1].max == 3);
    // c(n - 1) at n >= 1 only; e(n) at n < 2, but n's extent is a run-time
    // size: its last iterations are never excluded.
    REQUIRE(regions.at("c")[0].min == 0);
    REQUIRE(regions.at("c")[0].max == 2);
    REQUIRE(regions.at("e")[0].min == 0);
    REQUIRE(regions.at("e")[0].max == 3);
    // g(i - 1) under a data-dependent condition: every i, so g from -1.
    REQUIRE(regions.at("g")[0].min == -1);
    // The layout functions of every emitted file say the same, at any number of instances.
    const std::string layout = emit_layout_functions(p, "lcs", {"a", "b", "c", "e", "g"}, "static inline");
    for (const LayoutBuffer &buffer : layout_buffers(p, {"a", "b", "c", "e", "g"})) {
        if (buffer.is_output) continue;
        for (size_t d = 0; d < buffer.dims.size(); d++) {
            auto range = buffer.range(p, d, 4);
            REQUIRE(range.first == regions.at(buffer.name)[d].min);
            REQUIRE(range.second == regions.at(buffer.name)[d].max);
        }
    }
    REQUIRE(layout_buffers(p, {"a", "b", "c", "e", "g"})[3].range(p, 0, 40).second == 39);  // e: every instance
    REQUIRE(layout_buffers(p, {"a", "b", "c", "e", "g"})[2].range(p, 0, 40) == std::pair<int64_t, int64_t>{0, 38});
}

TEST_CASE("the guarded LCS runs on inputs exactly as large as its regions, on every evaluator", "[examples]") {
    ir::UreProgram p = guarded_lcs(6, 9, 3);
    Buffers inputs = random_input_buffers(p, 5);
    REQUIRE(inputs.at("a").dim(0).min() == 0);
    REQUIRE(inputs.at("a").dim(0).extent() == 6);
    const Buffers reference = ir::realize(p, inputs);
    sys::SystolicProgram systolic = compile_to_systolic(p);
    REQUIRE(compare_outputs(reference, simulate(systolic, inputs), 0.0) == "");
    kir::Kernel kernel = lower_to_kernel(systolic, "guarded_lcs", {"a", "b", "c", "e", "g"});
    optimize_kernel(kernel);
    REQUIRE(execute_against_reference(kernel, p, 5) == "");
}


namespace {

/// One dimension of `input`'s required range for outputs named by `sizes`
/// (BUFFER.min.D / BUFFER.extent.D to value), as numbers; nullopt where the
/// input is not read at those sizes.
std::optional<std::pair<int64_t, int64_t>> required_at(const std::optional<kir::RequiredRange> &r,
                                                       const std::map<std::string, int64_t> &sizes) {
    REQUIRE(r);
    std::map<std::string, Halide::Expr> values;
    for (const auto &[name, v] : sizes) values[name] = Halide::Internal::make_const(Halide::Int(64), v);
    auto number = [&](const Halide::Expr &e) {
        Halide::Expr x = Halide::Internal::simplify(Halide::Internal::substitute(values, e));
        const int64_t *k = Halide::Internal::as_const_int(x);
        INFO(x);
        REQUIRE(k);
        return *k;
    };
    if (!number(Halide::cast(Halide::Int(64), r->when))) return std::nullopt;
    return std::pair<int64_t, int64_t>{number(r->min), number(r->max)};
}

}  // namespace

TEST_CASE("the inputs an output extent needs: the reads of the points that reach it, not of whole instances", "[examples]") {
    // conv1d_sbm: 16 outputs per instance, Q = 5. 37 outputs need x[0, 40]:
    // the third instance's tail (outputs 37..47) reads past 40, but feeds
    // nothing inside the extent.
    ir::UreProgram conv = build_spec("conv1d_sbm", Params()).output.lower();
    auto conv_ranges = required_input_ranges(conv);
    for (int64_t n : {37, 48, 1}) {
        INFO("Out extent " << n);
        auto x = required_at(conv_ranges.at("x")[0], {{"Out.min.0", 0}, {"Out.extent.0", n}});
        REQUIRE(x);
        CHECK(*x == std::pair<int64_t, int64_t>{0, n + 3});
        CHECK(*required_at(conv_ranges.at("w")[0], {{"Out.min.0", 0}, {"Out.extent.0", n}}) == std::pair<int64_t, int64_t>{0, 4});
    }
    CHECK(!required_at(conv_ranges.at("x")[0], {{"Out.min.0", 0}, {"Out.extent.0", 0}}));  // no outputs, nothing read
    // The overlapped Jacobi tiles (T = 4): the grid with a pad of T on each
    // side, whatever the output size, though the tiles overhang it.
    ir::UreProgram jacobi = build_spec("jacobi2d", Params()).output.lower();
    auto u = required_input_ranges(jacobi).at("u");
    for (int64_t n : {1000, 48, 7}) {
        INFO("Out " << n << " x " << n + 1);
        const std::map<std::string, int64_t> sizes{{"Out.min.0", 0}, {"Out.extent.0", n}, {"Out.min.1", 0}, {"Out.extent.1", n + 1}};
        CHECK(*required_at(u[0], sizes) == std::pair<int64_t, int64_t>{-4, n + 3});
        CHECK(*required_at(u[1], sizes) == std::pair<int64_t, int64_t>{-4, n + 4});
    }
}

TEST_CASE("the kernel executor refuses an input short of what the outputs need, and runs on exactly that", "[examples]") {
    ir::UreProgram p = build_spec("conv1d_sbm", Params()).output.lower();
    kir::Kernel kernel = lower_to_kernel(compile_to_systolic(p), "conv1d_sbm", {"x", "w"});
    optimize_kernel(kernel);
    const int n = 37;  // not a whole number of instances
    for (int x_extent : {n + 4, n + 3}) {
        INFO("x extent " << x_extent);
        Halide::Buffer<float> x(x_extent), w(5), out(n);
        for (int i = 0; i < x_extent; i++) x(i) = 0.25f * (float)((i * 7) % 11) - 1.0f;
        for (int q = 0; q < 5; q++) w(q) = 0.5f + 0.125f * (float)q;
        out.fill(NAN);
        Buffers buffers{{"x", x}, {"w", w}, {"Out", out}};
        if (x_extent < n + 4) {
            REQUIRE_THROWS_WITH(execute_kernel(kernel, buffers),
                                Catch::Matchers::Contains("input x holds [0, 39] in dimension 0, but the outputs' extents read [0, 40]"));
            continue;
        }
        execute_kernel(kernel, buffers);
        for (int c = 0; c < n; c++) {
            float sum = 0;
            for (int q = 0; q < 5; q++) sum += x(c + q) * w(q);
            INFO("Out[" << c << "]");
            REQUIRE(close(out(c), sum));
        }
    }
}

TEST_CASE("the kernel executor refuses a buffer whose first dimension is not dense, as the host function does", "[examples]") {
    ir::UreProgram p = build_spec("conv1d_sbm", Params()).output.lower();
    kir::Kernel kernel = lower_to_kernel(compile_to_systolic(p), "conv1d_sbm", {"x", "w"});
    optimize_kernel(kernel);
    const int n = 37;
    // Every other element of a buffer twice as long: stride 2 in dimension 0.
    Halide::Buffer<float> storage(2 * (n + 4)), w(5), out(n);
    storage.fill(1.0f), w.fill(1.0f), out.fill(NAN);
    halide_dimension_t every_other(0, n + 4, 2);
    Halide::Buffer<float> x(storage.data(), 1, &every_other);
    Buffers buffers{{"x", x}, {"w", w}, {"Out", out}};
    REQUIRE_THROWS_WITH(execute_kernel(kernel, buffers), Catch::Matchers::Contains("buffer x has stride 2 in dimension 0") &&
                                                             Catch::Matchers::Contains("first dimension is contiguous"));
    // The same values in a dense buffer run.
    Halide::Buffer<float> dense(n + 4);
    dense.fill(1.0f);
    Buffers dense_buffers{{"x", dense}, {"w", w}, {"Out", out}};
    execute_kernel(kernel, dense_buffers);
    for (int c = 0; c < n; c++) REQUIRE(out(c) == 5.0f);
    // Lowered with the stride of dimension 0 (--strided-first-dimension), the
    // kernel takes every other element of the long buffer.
    KernelOptions strided_options;
    strided_options.dense_first_dimension = false;
    kir::Kernel strided = lower_to_kernel(compile_to_systolic(p), "conv1d_sbm", {"x", "w"}, strided_options);
    optimize_kernel(strided);
    for (int i = 0; i < n + 4; i++) x(i) = (float)i;
    out.fill(NAN);
    Buffers strided_buffers{{"x", x}, {"w", w}, {"Out", out}};
    execute_kernel(strided, strided_buffers);
    for (int c = 0; c < n; c++) REQUIRE(out(c) == (float)(5 * c + 10));
}
