// Reduction outputs: an output given a pure definition and one update
// (`Best(b) = 0; Best(b) = max(Best(b), H(i, j, b));`) holds its operator's
// fold of the value over every point of the domain that maps to its element.
// Each operator and type equals a fold written here, on every evaluator; the
// alignment specs (examples/align) equal plain CPU aligners on random
// sequences of odd lengths; what is not a reduction, or not lowered, is
// refused with the fix.
#include <cmath>
#include <filesystem>
#include <random>
#include <unistd.h>

#include "codegen/CodeGenCudaKernel.h"
#include "exec/KernelExecutor.h"
#include "exec/Simulator.h"
#include "lower/LowerToKernel.h"
#include "lower/Pipeline.h"
#include "CmBuild.h"
#include "CroppedRun.h"
#include "Emit.h"
#include "TestUtil.h"
#include "align/blosum62.h"

using namespace pulse;
using Catch::Matchers::Contains;
using pulse::test::params;

namespace {

/// R(b) = initial; R(b) = op(R(b), select((i + 2 j) % 3 != 0, V(i, j, b)))
/// over i in [0, I) (the PEs), j in [0, J) (t = i + j), b in [0, B); V reads x.
/// `schedule` 1 tiles b by 2 (two instances unrolled in a warp, the last tile
/// cut short), 2 splits it by 2 (a warp's per-thread loop over two), 3 splits
/// it by 2 and runs the array over the warps of a block (gpu_threads).
ir::UreProgram reduce_program(Halide::Type type, ir::ReduceOp op, int I, int J, int B, const Expr &initial, int schedule = 0) {
    Var i("i"), j("j"), b("b"), s("s"), t("t"), bo("bo"), bi("bi");
    Input x(type, 3, "x");
    Func V(type, {i, j, b}, Place::Device, "V"), R(Place::Device, "R");
    V(i, j, b) = x(i, j, b);
    R(b) = initial;
    R(b) = ir::reduce_combine(op, R(b), select((i + 2 * j) % 3 != 0, V(i, j, b)));
    V.merge_ures(R).set_bounds(i, 0, I, j, 0, J, b, 0, B);
    V.space_time_transform({i, j}, {s, t}, {1, 0, /**/ 1, 1});
    if (schedule == 1) V.tile(b, bo, bi, 2).gpu_blocks(bo);
    if (schedule == 2 || schedule == 3) V.split(b, bo, bi, 2).gpu_blocks(bo);
    if (schedule == 3) V.gpu_threads(s);
    return R.lower();
}

/// Random bits of `type`, with the edge values of floats among them.
Halide::Buffer<> random_values(Halide::Type type, int I, int J, int B, uint32_t seed) {
    std::mt19937_64 rng(seed);
    Halide::Buffer<> x(type, {I, J, B}, "x");
    const double specials[] = {NAN, -0.0, 0.0, INFINITY, -INFINITY, 1.5, -2.25};
    for (int b = 0; b < B; b++)
        for (int j = 0; j < J; j++)
            for (int i = 0; i < I; i++) {
                const uint64_t bits = rng();
                Scalar v = type.is_float() ? Scalar::of_double(bits % 4 == 0 ? specials[bits / 4 % 7] : (double)(int64_t)(bits % 2001) / 8 - 125)
                                           : Scalar::of_uint(type.is_bool() ? bits % 2 : bits);
                store_element(x, {i, j, b}, Scalar::cast(v, type.is_float() ? Halide::Float(64) : Halide::UInt(64), type));
            }
    return x;
}

/// op(a, b) written out for the test, in the type's own arithmetic.
double fold_float(ir::ReduceOp op, double a, double b) {
    if (std::isnan(a)) return b;
    if (std::isnan(b)) return a;
    if (a == b) return (op == ir::ReduceOp::Min) == (bool)std::signbit(a) ? a : b;  // min(-0, +0) = -0, max = +0
    return op == ir::ReduceOp::Min ? std::min(a, b) : std::max(a, b);
}

uint64_t fold_integer(ir::ReduceOp op, Halide::Type type, uint64_t a, uint64_t b) {
    const int bits = type.bits();
    const uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
    auto as_signed = [&](uint64_t v) { return bits == 64 ? (int64_t)v : (int64_t)(v << (64 - bits)) >> (64 - bits); };
    bool less = type.is_int() ? as_signed(a) < as_signed(b) : (a & mask) < (b & mask);
    switch (op) {
    case ir::ReduceOp::Add: return (a + b) & mask;
    case ir::ReduceOp::Mul: return (a * b) & mask;
    case ir::ReduceOp::Min: return less ? a : b;
    case ir::ReduceOp::Max: return less ? b : a;
    case ir::ReduceOp::And: return a & b;  // bools: 0 or 1
    case ir::ReduceOp::Or: return a | b;
    }
    return 0;
}

/// R as the test folds it.
Halide::Buffer<> folded(Halide::Type type, ir::ReduceOp op, const Halide::Buffer<> &x, const Scalar &initial) {
    const int I = x.dim(0).extent(), J = x.dim(1).extent(), B = x.dim(2).extent();
    Halide::Buffer<> r(type, {B}, "R");
    for (int b = 0; b < B; b++) {
        double f = initial.as_double();
        uint64_t u = initial.as_uint();
        for (int j = 0; j < J; j++)
            for (int i = 0; i < I; i++) {
                if ((i + 2 * j) % 3 == 0) continue;
                const Scalar v = load_element(x, {i, j, b});
                if (type.is_float()) f = fold_float(op, f, v.as_double());
                else u = fold_integer(op, type, u, v.as_uint());
            }
        store_element(r, {b}, type.is_float() ? Scalar::cast(Scalar::of_double(f), Halide::Float(64), type)
                                              : Scalar::cast(Scalar::of_uint(u), Halide::UInt(64), type));
    }
    return r;
}

/// The interpreter, the simulator and the kernel executor (time loop
/// unrolled and rolled; at the spec's sizes and at run-time sizes one
/// smaller, the outputs poisoned and their storage watched) agree with
/// `expected` bit for bit. `pes_per_thread`: KernelOptions::pes_per_thread;
/// `unrolled_steps`: the most steps the "unrolled" kernel unrolls.
void check_every_evaluator(const ir::UreProgram &program, const Buffers &inputs, const Buffers &expected, const std::vector<std::string> &order,
                           int64_t pes_per_thread = 0, int64_t unrolled_steps = KernelOptions().max_unrolled_steps) {
    CHECK(compare_outputs(expected, ir::realize(program, inputs), 0) == "");
    const sys::SystolicProgram systolic = compile_to_systolic(program);
    CHECK(compare_outputs(expected, simulate(systolic, inputs), 0) == "");
    for (bool rolled : {false, true}) {
        INFO((rolled ? "time loop rolled" : "time loop unrolled"));
        KernelOptions options;
        options.max_unrolled_steps = rolled ? 0 : unrolled_steps;
        options.pes_per_thread = pes_per_thread;
        kir::Kernel kernel = lower_to_kernel(systolic, program.name, order, options);
        optimize_kernel(kernel);
        CHECK(test::run_cropped_against_reference(kernel, inputs, expected, 0) == "");
        CHECK(test::run_cropped_against_reference(kernel, inputs, expected, 1) == "");
    }
}

std::filesystem::path scratch(const std::string &what) {
    std::filesystem::path dir = std::filesystem::temp_directory_path() / ("pulse_test_reductions_" + std::to_string(::getpid())) / what;
    std::filesystem::create_directories(dir);
    return dir;
}

}  // namespace

TEST_CASE("reduction outputs: every operator of every type equals a fold, on every evaluator", "[reductions]") {
    struct Case {
        Halide::Type type;
        ir::ReduceOp op;
        double initial;
    };
    using ir::ReduceOp;
    const Case cases[] = {
        {Halide::Int(32), ReduceOp::Max, 0},         {Halide::Int(32), ReduceOp::Min, 7},
        {Halide::Int(8), ReduceOp::Add, -3},         {Halide::UInt(16), ReduceOp::Mul, 1},
        {Halide::Int(64), ReduceOp::Add, 5},         {Halide::UInt(8), ReduceOp::Max, 3},
        {Halide::UInt(32), ReduceOp::Mul, 3},        {Halide::Int(16), ReduceOp::Max, -30000},
        {Halide::UInt(64), ReduceOp::Min, 1e18},     {Halide::Bool(), ReduceOp::Or, 0},
        {Halide::Bool(), ReduceOp::And, 1},          {Halide::Float(32), ReduceOp::Min, 1000},
        {Halide::Float(32), ReduceOp::Max, NAN},     {Halide::Float(64), ReduceOp::Max, -0.0},
        {Halide::Float(64), ReduceOp::Min, INFINITY}};
    // 5 PEs (one per lane), 37 (two on a lane, the last lane's pair cut short), 70;
    // the instances one per warp, two unrolled in a warp, or two in turn.
    int turn = 0;
    for (const int I : {5, 37, 70}) {
        for (const Case &c : cases) {
            const int schedule = turn++ % 3;
            INFO(c.type << " " << ir::to_string(c.op) << " from " << c.initial << ", " << I << " PEs, schedule " << schedule);
            const Scalar initial = Scalar::cast(c.type.is_float() ? Scalar::of_double(c.initial) : Scalar::of_int((int64_t)c.initial),
                                                c.type.is_float() ? Halide::Float(64) : Halide::Int(64), c.type);
            const Expr init = c.type.is_float() ? Halide::Internal::make_const(c.type, c.initial)
                              : c.type.is_bool()  ? Halide::Internal::make_bool(c.initial != 0)
                                                  : Halide::Internal::make_const(c.type, (int64_t)c.initial);
            const ir::UreProgram program = reduce_program(c.type, c.op, I, 7, 3, init, schedule);
            const Halide::Buffer<> x = random_values(c.type, I, 7, 3, 97 + I);
            const Buffers inputs{{"x", x}};
            check_every_evaluator(program, inputs, {{"R", folded(c.type, c.op, x, initial)}}, {"x"});
        }
    }
}

namespace {

/// R(b) = op(initial, V(i, j, b) where (i + 2 j) % 3 != 0) with V computed
/// from the loops alone (no input: the instance's interior test is the
/// output's bounds only), two instances a warp (gpu_blocks, vectorize).
ir::UreProgram packed_reduce_program(Halide::Type type, ir::ReduceOp op, int I, int J, int B, const Expr &initial) {
    Var i("i"), j("j"), b("b"), s("s"), t("t");
    Func V(type, {i, j, b}, Place::Device, "V"), R(Place::Device, "R");
    V(i, j, b) = cast(type, i * 5 + j * 3 + b * 7 + 1);
    R(b) = initial;
    R(b) = ir::reduce_combine(op, R(b), select((i + 2 * j) % 3 != 0, V(i, j, b)));
    V.merge_ures(R).set_bounds(i, 0, I, j, 0, J, b, 0, B);
    V.space_time_transform({i, j}, {s, t}, {1, 0, /**/ 1, 1});
    V.gpu_blocks(b).vectorize(b, 2);
    return R.lower();
}

}  // namespace

TEST_CASE("reduction outputs, two instances a warp: an instance whose pair is cut short at the grid's end still stores its total",
          "[reductions][vectors]") {
    // The last warp of an odd count of instances (and of a run one smaller)
    // runs its instance alone: the whole instance, not only the copy
    // specialize_interior guards, whose store the simplifier folded away
    // knowing the interior test (here only the output's bounds) fails.
    using ir::ReduceOp;
    const std::pair<Halide::Type, ReduceOp> cases[] = {{Halide::Int(32), ReduceOp::Max}, {Halide::Int(16), ReduceOp::Add},
                                                       {Halide::UInt(8), ReduceOp::Min}};
    for (const auto &[type, op] : cases) {
        for (const int B : {1, 3, 4}) {
            INFO(type << " " << ir::to_string(op) << ", " << B << " instances");
            const ir::UreProgram program = packed_reduce_program(type, op, 5, 7, B, Halide::Internal::make_const(type, 2));
            const Buffers expected = ir::realize(program, {});
            check_every_evaluator(program, {}, expected, {});
        }
    }
}

namespace {

/// M(b) = max or min over the points of V; T(b) = T(b) || or && a
/// comparison of V with `c` (V read from x at points where (i + 2 j) % 3 != 0).
ir::UreProgram threshold_program(ir::ReduceOp extremum, ir::ReduceOp logic, bool c_left, bool strict, int c, int I, int J, int B) {
    Var i("i"), j("j"), b("b"), s("s"), t("t");
    Input x(Halide::Int(16), 3, "x");
    Func V(Halide::Int(16), {i, j, b}, Place::Device, "V"), M(Place::Device, "M"), T(Place::Device, "T");
    V(i, j, b) = x(i, j, b);
    M(b) = Halide::Internal::make_const(Halide::Int(16), 0);
    M(b) = ir::reduce_combine(extremum, M(b), select((i + 2 * j) % 3 != 0, V(i, j, b)));
    const Expr value = V(i, j, b), bound = Halide::Internal::make_const(Halide::Int(16), c);
    const Expr test = c_left ? (strict ? bound < value : bound <= value) : (strict ? value < bound : value <= bound);
    T(b) = Halide::Internal::make_bool(logic == ir::ReduceOp::And);
    T(b) = ir::reduce_combine(logic, T(b), select((i + 2 * j) % 3 != 0, test));
    V.merge_ures(M, T).set_bounds(i, 0, I, j, 0, J, b, 0, B);
    V.space_time_transform({i, j}, {s, t}, {1, 0, /**/ 1, 1});
    V.gpu_blocks(b);
    return M.lower();
}

}  // namespace

TEST_CASE("reduction outputs: a test of each value against a constant is made once, of the extremum of the same values", "[reductions]") {
    using ir::ReduceOp;
    struct Case {
        ReduceOp extremum, logic;
        bool c_left, strict;
        int c;
        bool derived;  // computed from M's total (no accumulator of its own)
    };
    const Case cases[] = {
        {ReduceOp::Max, ReduceOp::Or, true, true, 40, true},     // c < x: max
        {ReduceOp::Min, ReduceOp::Or, false, true, -40, true},   // x < c: min
        {ReduceOp::Min, ReduceOp::And, true, false, -40, true},  // every c <= x: min
        {ReduceOp::Max, ReduceOp::And, false, true, 40, true},   // every x < c: max
        {ReduceOp::Min, ReduceOp::Or, true, true, 40, false},    // c < x by min: not decided by it
        // c <= x at the identity (-32768) holds: no point would give true, so not decided.
        {ReduceOp::Max, ReduceOp::Or, true, false, -32768, false}};
    const int I = 37, J = 5, B = 4;
    // Values in [-40, 40], so that each instance decides the test its own way:
    // b = 1 has 41 at a point taken, b = 2 has -41 there; b = 3 has 41 and -41
    // only at points not taken ((i + 2 j) % 3 == 0); b = 0 has 40 and -40 taken
    // (the strict tests' edge).
    std::mt19937 rng(5);
    Halide::Buffer<> x(Halide::Int(16), {I, J, B}, "x");
    for (int b = 0; b < B; b++)
        for (int j = 0; j < J; j++)
            for (int i = 0; i < I; i++) store_element(x, {i, j, b}, Scalar::of_int((int)(rng() % 81) - 40));
    store_element(x, {1, 0, 0}, Scalar::of_int(40)), store_element(x, {2, 0, 0}, Scalar::of_int(-40));
    store_element(x, {4, 2, 1}, Scalar::of_int(41)), store_element(x, {4, 3, 2}, Scalar::of_int(-41));
    store_element(x, {0, 0, 3}, Scalar::of_int(41)), store_element(x, {1, 1, 3}, Scalar::of_int(-41));
    for (const Case &c : cases) {
        INFO(ir::to_string(c.logic) << " of " << (c.c_left ? "c " : "x ") << (c.strict ? "<" : "<=") << (c.c_left ? " x" : " c") << ", c = " << c.c
                                    << ", beside " << ir::to_string(c.extremum));
        const ir::UreProgram program = threshold_program(c.extremum, c.logic, c.c_left, c.strict, c.c, I, J, B);
        Halide::Buffer<> m(Halide::Int(16), {B}, "M"), t(Halide::Bool(), {B}, "T");
        for (int b = 0; b < B; b++) {
            int extreme = 0;
            bool any = c.logic == ReduceOp::And;
            for (int j = 0; j < J; j++)
                for (int i = 0; i < I; i++) {
                    if ((i + 2 * j) % 3 == 0) continue;
                    const int v = load_element(x, {i, j, b}).as_int();
                    extreme = c.extremum == ReduceOp::Max ? std::max(extreme, v) : std::min(extreme, v);
                    const bool holds = c.c_left ? (c.strict ? c.c < v : c.c <= v) : (c.strict ? v < c.c : v <= c.c);
                    any = c.logic == ReduceOp::And ? any && holds : any || holds;
                }
            store_element(m, {b}, Scalar::of_int(extreme));
            store_element(t, {b}, Scalar::of_uint(any));
        }
        check_every_evaluator(program, {{"x", x}}, {{"M", m}, {"T", t}}, {"x"});
        const kir::Kernel kernel = lower_to_kernel(compile_to_systolic(program), "M", {"x"});
        std::ostringstream text;
        kir::print(text, kernel);
        CHECK((text.str().find("T.reduce") == std::string::npos) == c.derived);
        CHECK(text.str().find("M.reduce") != std::string::npos);
    }
}

TEST_CASE("reduction outputs on an array over the warps of a block: each warp's tree, then thread 0 folds the warps' totals", "[reductions]") {
    using ir::ReduceOp;
    // 70 PEs: 3 warps of one PE per thread (the last with 6 in use), or 2
    // PEs per thread (2 warps, 35 threads in use), or 8 (one warp of a
    // block); two instances in turn per block (split), so the second barrier
    // keeps the next instance's totals from overwriting the first's.
    for (const int64_t per_thread : {0, 2, 8}) {
        for (const auto &[type, op] : {std::pair{Halide::Int(32), ReduceOp::Max}, {Halide::UInt(8), ReduceOp::Add}, {Halide::Bool(), ReduceOp::Or},
                                       {Halide::Float(64), ReduceOp::Min}}) {
            INFO(type << " " << ir::to_string(op) << ", " << per_thread << " PEs per thread");
            const double start = type.is_bool() ? 0 : 3;
            const Scalar initial = Scalar::cast(Scalar::of_double(start), Halide::Float(64), type);
            const Expr init = type.is_bool() ? Halide::Internal::make_bool(false) : Halide::Internal::make_const(type, start);
            const ir::UreProgram program = reduce_program(type, op, 70, 5, 3, init, 3);
            const Halide::Buffer<> x = random_values(type, 70, 5, 3, 311);
            const Buffers inputs{{"x", x}};
            check_every_evaluator(program, inputs, {{"R", folded(type, op, x, initial)}}, {"x"}, per_thread);
            KernelOptions options;
            options.pes_per_thread = per_thread;
            const kir::Kernel kernel = lower_to_kernel(compile_to_systolic(program), "R", {"x"}, options);
            CHECK(kernel.warps_per_array == (per_thread == 0 ? 3 : per_thread == 2 ? 2 : 1));
        }
    }
}

TEST_CASE("reduction outputs: the CM emulation runs them", "[reductions][cm]") {
    const std::filesystem::path dir = scratch("cm");
    std::vector<std::string> names;
    struct Case {
        Halide::Type type;
        ir::ReduceOp op;
        int I;
    };
    int k = 0;
    // (Each emulation takes the host compiler tens of seconds: two, and the
    // alignment examples in test_cm's every-example case.) A sum over 20
    // lanes: CM runs 24, and the shuffle tree spans 32, so a lane past the
    // 24 must add the identity, not its own value again.
    for (const Case &c : {Case{Halide::Int(32), ir::ReduceOp::Add, 20}, Case{Halide::Float(32), ir::ReduceOp::Min, 37}}) {
        const std::string name = "reduce" + std::to_string(k++);
        emit_cm_emulation(compile_to_systolic(reduce_program(c.type, c.op, c.I, 7, 3, ir::reduce_identity(c.op, c.type))), name, {"x"},
                          dir.string(), Target::cm_gen9());
        names.push_back(name);
    }
    std::string log;
    const int built = test::build_cm_emulations(dir, names, &log);
    INFO(log);
    REQUIRE(built == 0);
    for (const std::string &name : names) {
        std::string out;
        INFO(name);
        CHECK(run_command("'" + (dir / (name + "_emu")).string() + "' 0 3", &out) == 0);
        CHECK(out == "PASS\n");
    }
    std::filesystem::remove_all(dir.parent_path());
}

namespace {

/// A sequence of `n` residues from an alphabet of `letters`.
std::vector<int> residues(std::mt19937 &rng, int n, int letters) {
    std::vector<int> r(n);
    for (int &v : r) v = (int)(rng() % letters);
    return r;
}



/// Smith-Waterman with affine gaps (Gotoh), as the textbook writes it; a
/// pair of residues scores score(q, d).
/// Its matrices, row i of query residue i - 1 (row 0 outside), and the best score.
struct GotohMatrices {
    std::vector<std::vector<int>> H, F;
    int best = 0;
};
template<typename Score>
GotohMatrices smith_waterman_matrices(const std::vector<int> &q, const std::vector<int> &d, Score score, int open, int extend) {
    const int Q = (int)q.size(), S = (int)d.size(), none = -(1 << 14);
    std::vector<std::vector<int>> H(Q + 1, std::vector<int>(S + 1, 0)), E = H, F = H;
    int best = 0;
    for (int j = 0; j <= S; j++) F[0][j] = none;
    for (int i = 0; i <= Q; i++) E[i][0] = none;
    for (int i = 1; i <= Q; i++)
        for (int j = 1; j <= S; j++) {
            E[i][j] = std::max(E[i][j - 1] - extend, H[i][j - 1] - open);
            F[i][j] = std::max(F[i - 1][j] - extend, H[i - 1][j] - open);
            H[i][j] = std::max({0, H[i - 1][j - 1] + score(q[i - 1], d[j - 1]), E[i][j], F[i][j]});
            best = std::max(best, H[i][j]);
        }
    return GotohMatrices{H, F, best};
}
template<typename Score>
int smith_waterman(const std::vector<int> &q, const std::vector<int> &d, Score score, int open, int extend) {
    return smith_waterman_matrices(q, d, score, open, extend).best;
}

/// Needleman-Wunsch with affine gaps (Gotoh), as the textbook writes it: a
/// gap of L residues costs open + (L - 1) extend, the whole of both sequences aligned.
template<typename Score>
int needleman_wunsch(const std::vector<int> &q, const std::vector<int> &d, Score score, int open, int extend) {
    const int Q = (int)q.size(), S = (int)d.size(), none = -(1 << 28);
    std::vector<std::vector<int>> H(Q + 1, std::vector<int>(S + 1, 0)), E = H, F = H;
    for (int j = 1; j <= S; j++) H[0][j] = -(open + (j - 1) * extend), F[0][j] = none;
    for (int i = 1; i <= Q; i++) H[i][0] = -(open + (i - 1) * extend), E[i][0] = none;
    for (int i = 1; i <= Q; i++)
        for (int j = 1; j <= S; j++) {
            E[i][j] = std::max(E[i][j - 1] - extend, H[i][j - 1] - open);
            F[i][j] = std::max(F[i - 1][j] - extend, H[i - 1][j] - open);
            H[i][j] = std::max({H[i - 1][j - 1] + score(q[i - 1], d[j - 1]), E[i][j], F[i][j]});
        }
    return H[Q][S];
}

/// Levenshtein's table of q and d: its last entry and its largest.
std::pair<int, int> edit_distance(const std::vector<int> &q, const std::vector<int> &d) {
    const int Q = (int)q.size(), S = (int)d.size();
    std::vector<std::vector<int>> T(Q + 1, std::vector<int>(S + 1));
    int worst = 0;
    for (int i = 0; i <= Q; i++)
        for (int j = 0; j <= S; j++) {
            if (i == 0 || j == 0) {
                T[i][j] = i + j;
                continue;
            }
            T[i][j] = std::min({T[i - 1][j] + 1, T[i][j - 1] + 1, T[i - 1][j - 1] + (q[i - 1] != d[j - 1])});
            worst = std::max(worst, T[i][j]);
        }
    return {T[Q][S], worst};
}

}  // namespace

TEST_CASE("align_sw, align_sw_matrix, align_sw_blocked, align_nw and align_edit_distance equal plain CPU aligners on random sequences of odd lengths", "[reductions][align]") {
    for (int a = 0; a < 24; a++)
        for (int b = 0; b < 24; b++) REQUIRE(pulse_blosum62[a][b] == pulse_blosum62[b][a]);
    std::mt19937 rng(4242);
    struct Size {
        int Q, S, B;
    };
    // Past 256 residues the query runs over the warps of a block (3 PEs per thread: 3 warps).
    for (const Size n : {Size{1, 1, 3}, Size{1, 9, 2}, Size{7, 1, 2}, Size{13, 29, 5}, Size{31, 17, 3}, Size{45, 11, 2}, Size{97, 23, 2},
                         Size{261, 5, 2}}) {
        for (const int letters : {3, 24}) {
            if (n.Q > 256 && letters == 3) continue;  // the long query once, with the whole alphabet (its test's time)
            INFO("Q=" << n.Q << " S=" << n.S << " B=" << n.B << ", " << letters << " letters");
            const std::vector<int> q = residues(rng, n.Q, letters);
            std::vector<std::vector<int>> subjects;
            for (int b = 0; b < n.B; b++) subjects.push_back(residues(rng, n.S, letters));
            for (const std::string spec : {"align_sw", "align_sw_i16", "align_sw_matrix", "align_sw_blocked", "align_nw", "align_edit_distance"}) {
                INFO(spec);
                const Halide::Type type = spec == "align_sw_i16" ? Halide::Int(16) : Halide::Int(32);
                const int match = 1 + letters % 3, mismatch = 2, open = 3 + letters % 4, extend = 1;
                Params p = params({{"Q", n.Q}, {"S", n.S}, {"B", n.B}});
                if (spec == "align_sw" || spec == "align_sw_i16") {
                    for (const auto &[k, v] : {std::pair<const char *, int>{"MATCH", match}, {"MISMATCH", mismatch}}) p.set(k, v);
                }
                if (spec != "align_edit_distance") {
                    for (const auto &[k, v] : {std::pair<const char *, int>{"OPEN", open}, {"EXTEND", extend}}) p.set(k, v);
                }
                // Blocks of 3 residues per lane (the last cut short where 3 does not divide Q), or 9 past 256.
                if (spec == "align_sw_blocked") p.set("K", n.Q > 256 ? 9 : 3);
                const ir::UreProgram program = build_spec(spec, p).output.lower();
                Halide::Buffer<> query(type, {n.Q}, "query"), subject(type, {n.S, n.B}, "subject");
                for (int i = 0; i < n.Q; i++) store_element(query, {i}, Scalar::of_int(q[i]));
                for (int b = 0; b < n.B; b++)
                    for (int j = 0; j < n.S; j++) store_element(subject, {j, b}, Scalar::of_int(subjects[b][j]));
                Buffers inputs{{"query", query}, {"subject", subject}};
                if (spec == "align_sw_matrix" || spec == "align_sw_blocked" || spec == "align_nw") {
                    Halide::Buffer<> table(type, {24, 24}, "substitution");
                    for (int x = 0; x < 24; x++)
                        for (int y = 0; y < 24; y++) store_element(table, {x, y}, Scalar::of_int(pulse_blosum62[y][x]));
                    inputs["substitution"] = table;
                }
                Buffers expected;
                if (spec == "align_edit_distance") {
                    Halide::Buffer<> dist(type, {n.B}, "Dist"), worst(type, {n.B}, "Worst");
                    for (int b = 0; b < n.B; b++) {
                        auto [last, largest] = edit_distance(q, subjects[b]);
                        store_element(dist, {b}, Scalar::of_int(last));
                        store_element(worst, {b}, Scalar::of_int(largest));
                    }
                    expected = {{"Dist", dist}, {"Worst", worst}};
                } else if (spec == "align_nw") {
                    Halide::Buffer<> score(type, {n.B}, "Score");
                    for (int b = 0; b < n.B; b++) {
                        store_element(score, {b}, Scalar::of_int(needleman_wunsch(q, subjects[b], [](int x, int y) { return pulse_blosum62[x][y]; },
                                                                                  open, extend)));
                    }
                    expected = {{"Score", score}};
                } else {
                    Halide::Buffer<> best(type, {n.B}, "Best"), overflow(Halide::Bool(), {n.B}, "Overflow");
                    for (int b = 0; b < n.B; b++) {
                        const int score = spec == "align_sw_matrix" || spec == "align_sw_blocked"
                                              ? smith_waterman(q, subjects[b], [](int x, int y) { return pulse_blosum62[x][y]; }, open, extend)
                                              : smith_waterman(q, subjects[b], [&](int x, int y) { return x == y ? match : -mismatch; }, open, extend);
                        store_element(best, {b}, Scalar::of_int(score));
                        store_element(overflow, {b}, Scalar::of_int(0));  // scores of a few hundred at most
                    }
                    expected = {{"Best", best}};
                    if (spec == "align_sw_i16") expected["Overflow"] = overflow;
                }
                std::vector<std::string> order{"query", "subject"};
                if (spec == "align_sw_matrix" || spec == "align_sw_blocked" || spec == "align_nw") order.push_back("substitution");
                // (the long query's 265 steps on 3 warps rolled by blocks of 64: unrolled, its kernel takes a minute to optimize)
                if (n.Q > 256 && spec != "align_sw_blocked") check_every_evaluator(program, inputs, expected, order, 3, 64);
                else check_every_evaluator(program, inputs, expected, order);
            }
        }
    }
}

TEST_CASE("align_sw_i16 flags the pairs whose scores would leave int16, the same on every evaluator", "[reductions][align]") {
    // 333 residues matching at 100 each reach 33300 > 32767 where the sequences
    // agree; a subject of other letters scores little.
    const int Q = 333, S = 335;
    const Params p = params({{"Q", Q}, {"S", S}, {"B", 3}, {"MATCH", 100}, {"MISMATCH", 3}});
    const ir::UreProgram program = build_spec("align_sw_i16", p).output.lower();
    Halide::Buffer<> query(Halide::Int(16), {Q}, "query"), subject(Halide::Int(16), {S, 3}, "subject");
    std::vector<int> q(Q), same(S), other(S), half(S);
    for (int i = 0; i < Q; i++) q[i] = i % 5, store_element(query, {i}, Scalar::of_int(q[i]));
    for (int j = 0; j < S; j++) {
        same[j] = j < Q ? q[j] : 0;
        other[j] = 7;
        half[j] = j < Q / 2 ? q[j] : 9;  // 166 matches: 16600, in range
    }
    const std::vector<std::vector<int>> subjects{same, other, half};
    for (int b = 0; b < 3; b++)
        for (int j = 0; j < S; j++) store_element(subject, {j, b}, Scalar::of_int(subjects[b][j]));
    const Buffers inputs{{"query", query}, {"subject", subject}};
    const Buffers realized = ir::realize(program, inputs);
    const bool expected_overflow[] = {true, false, false};
    for (int b = 0; b < 3; b++) {
        INFO("database sequence " << b);
        CHECK(load_element(realized.at("Overflow"), {b}).as_uint() == (expected_overflow[b] ? 1u : 0u));
        const int score = smith_waterman(q, subjects[b], [](int x, int y) { return x == y ? 100 : -3; }, 11, 1);
        if (!expected_overflow[b]) CHECK(load_element(realized.at("Best"), {b}).as_int() == score);
        else CHECK(score > 32767);
    }
    // Every evaluator computes the same bits, the flagged pair's wrapped Best included
    // (333 PEs over the warps of a block, 8 per thread, rolled by blocks of 64 steps).
    check_every_evaluator(program, inputs, realized, {"query", "subject"}, 8, 64);
}

namespace {

/// The serial loops of `s` whose extent does not read `var`, and those that do.
std::pair<int, int> loops_bounded_by(const Halide::Internal::Stmt &s, const std::string &var) {
    struct Count : Halide::Internal::IRVisitor {
        std::string var;
        int free = 0, bounded = 0;
        using Halide::Internal::IRVisitor::visit;
        void visit(const Halide::Internal::For *op) override {
            (Halide::Internal::expr_uses_var(op->extent, var) ? bounded : free)++;
            Halide::Internal::IRVisitor::visit(op);
        }
    } count;
    count.var = var;
    s.accept(&count);
    return {count.free, count.bounded};
}

}  // namespace

namespace {

struct RaggedSize {
    int Q, K, S;
};

/// A ragged batch of the aligners' inputs (query, subject, substitution:
/// BLOSUM62, lengths) of random residues, and each pair's score by the CPU
/// aligner (OPEN 5, EXTEND 2) on the sequence cut at its length. The lengths:
/// negative and 0 (no residue), 1, odd, S and past S (the whole column), the
/// ends of int32; the padding past each length is random residues, so a
/// step run there would change the score.
struct RaggedBatch {
    Buffers inputs;
    std::vector<int> scores;
    int count = 0;
};
RaggedBatch ragged_batch(std::mt19937 &rng, const RaggedSize &n) {
    const std::vector<int> lengths{-3, 0, 1, n.S / 2 | 1, n.S, n.S + 5, (int)(rng() % (n.S + 1)), INT32_MAX, INT32_MIN};
    const int B = (int)lengths.size();
    const std::vector<int> q = residues(rng, n.Q, 24);
    std::vector<std::vector<int>> subjects;
    for (int b = 0; b < B; b++) subjects.push_back(residues(rng, n.S, 24));
    Halide::Buffer<> query(Halide::Int(32), {n.Q}, "query"), subject(Halide::Int(32), {n.S, B}, "subject");
    Halide::Buffer<> length(Halide::Int(32), {B}, "lengths"), table(Halide::Int(32), {24, 24}, "substitution");
    for (int i = 0; i < n.Q; i++) store_element(query, {i}, Scalar::of_int(q[i]));
    for (int x = 0; x < 24; x++)
        for (int y = 0; y < 24; y++) store_element(table, {x, y}, Scalar::of_int(pulse_blosum62[y][x]));
    RaggedBatch batch;
    batch.count = B;
    for (int b = 0; b < B; b++) {
        for (int j = 0; j < n.S; j++) store_element(subject, {j, b}, Scalar::of_int(subjects[b][j]));
        store_element(length, {b}, Scalar::of_int(lengths[b]));
        const std::vector<int> own(subjects[b].begin(), subjects[b].begin() + std::clamp(lengths[b], 0, n.S));
        batch.scores.push_back(smith_waterman(q, own, [](int x, int y) { return pulse_blosum62[x][y]; }, 5, 2));
    }
    batch.inputs = {{"query", query}, {"subject", subject}, {"substitution", table}, {"lengths", length}};
    return batch;
}

const std::vector<RaggedSize> ragged_sizes{{1, 1, 1}, {13, 3, 29}, {45, 8, 11}, {100, 7, 37}};

}  // namespace

TEST_CASE("align_sw_ragged: each sequence of a ragged batch aligned on its own residues, on every evaluator, its instance ending at its own last step", "[reductions][align]") {
    std::mt19937 rng(77);
    for (const RaggedSize n : ragged_sizes) {
        INFO("Q=" << n.Q << " K=" << n.K << " S=" << n.S);
        const RaggedBatch batch = ragged_batch(rng, n);
        const Params p = params({{"Q", n.Q}, {"K", n.K}, {"S", n.S}, {"B", batch.count}, {"OPEN", 5}, {"EXTEND", 2}});
        const ir::UreProgram program = build_spec("align_sw_ragged", p).output.lower();
        Halide::Buffer<> best(Halide::Int(32), {batch.count}, "Best");
        for (int b = 0; b < batch.count; b++) store_element(best, {b}, Scalar::of_int(batch.scores[b]));
        check_every_evaluator(program, batch.inputs, {{"Best", best}}, {"query", "subject", "substitution", "lengths"});
        // Rolled, every loop of the instance's steps ends at its last step.
        KernelOptions options;
        options.max_unrolled_steps = 0;
        kir::Kernel kernel = lower_to_kernel(compile_to_systolic(program), program.name, {"query", "subject", "substitution", "lengths"}, options);
        optimize_kernel(kernel);
        const auto [free, bounded] = loops_bounded_by(kernel.body, "t.last");
        if (n.S + (n.Q + n.K - 1) / n.K > 4) CHECK(bounded >= 1);
        CHECK(free == 0);
    }
}

namespace {

/// `s` with the masked register writes of pack_instances unmasked: a write
/// `a[i] = select(mask, v, a[i])` becomes `a[i] = v` (a mutant whose lanes
/// past their instance's end overwrite its registers).
Halide::Internal::Stmt drop_register_masks(const Halide::Internal::Stmt &s) {
    struct Drop : Halide::Internal::IRMutator {
        using Halide::Internal::IRMutator::visit;
        Halide::Internal::Stmt visit(const Halide::Internal::Store *op) override {
            const Halide::Internal::Select *keep = op->value.as<Halide::Internal::Select>();
            const Halide::Internal::Load *old = keep ? keep->false_value.as<Halide::Internal::Load>() : nullptr;
            if (!old || old->name != op->name || !op->value.type().is_vector()) return Halide::Internal::IRMutator::visit(op);
            return Halide::Internal::Store::make(op->name, keep->true_value, op->index, op->param, op->predicate, op->alignment);
        }
    } drop;
    return drop.mutate(s);
}

}  // namespace

TEST_CASE("align_sw_ragged_i16: two sequences a warp packed in the lanes of vectors, each lane ending at its own length, on every evaluator", "[reductions][align][vectors]") {
    std::mt19937 rng(91);
    int mutants_caught = 0;
    for (const RaggedSize n : ragged_sizes) {
        // Pairs of lengths that differ (each lane's loops end apart: masked
        // tails), agree, or are empty, and an odd count: the last pair's
        // second lane past the grid (that warp runs its instance alone).
        INFO("Q=" << n.Q << " K=" << n.K << " S=" << n.S);
        const RaggedBatch batch = ragged_batch(rng, n);
        const int B = batch.count;
        REQUIRE(B % 2 == 1);
        const Params p = params({{"Q", n.Q}, {"K", n.K}, {"S", n.S}, {"B", B}, {"OPEN", 5}, {"EXTEND", 2}});
        const ir::UreProgram program = build_spec("align_sw_ragged_i16", p).output.lower();
        REQUIRE(program.schedule.vectorize == std::make_optional(std::make_pair(std::string("b"), 2)));
        Halide::Buffer<> best(Halide::Int(16), {B}, "Best"), overflow(Halide::Bool(), {B}, "Overflow");
        for (int b = 0; b < B; b++) {
            store_element(best, {b}, Scalar::of_int(batch.scores[b]));
            store_element(overflow, {b}, Scalar::of_uint(0));
        }
        const Buffers &inputs = batch.inputs;
        const std::vector<std::string> order{"query", "subject", "substitution", "lengths"};
        const Buffers expected{{"Best", best}, {"Overflow", overflow}};
        check_every_evaluator(program, inputs, expected, order);
        // The kernel packs (its grid counts pairs, its values are vectors);
        // without the masks on its register writes a lane's garbage past its
        // end reaches its score.
        KernelOptions options;
        options.max_unrolled_steps = 0;
        kir::Kernel kernel = lower_to_kernel(compile_to_systolic(program), program.name, order, options);
        optimize_kernel(kernel);
        CHECK(kernel.packed_lanes == 2);
        CHECK(kir::uses_vectors(kernel.body));
        kernel.body = drop_register_masks(kernel.body);
        mutants_caught += test::run_cropped_against_reference(kernel, inputs, expected, 0) != "";
        // CM has no vectors: refused, with the fix.
        kir::Kernel for_cm = lower_to_kernel(compile_to_systolic(program), program.name, order, options);
        REQUIRE_THROWS_WITH(optimize_kernel(for_cm, Target::cm_gen9()), Contains("computes with vectors"));
    }
    CHECK(mutants_caught >= 2);
}

namespace {

/// The query profile of `batch`: profile(i, r) = BLOSUM62(query(i), r), Q x 24.
Halide::Buffer<> query_profile(const RaggedBatch &batch, int Q) {
    Halide::Buffer<> profile(Halide::Int(32), {Q, 24}, "profile");
    for (int i = 0; i < Q; i++) {
        const int q = load_element(batch.inputs.at("query"), {i}).as_int();
        for (int r = 0; r < 24; r++) store_element(profile, {i, r}, Scalar::of_int(pulse_blosum62[q][r]));
    }
    return profile;
}

/// `s` with every read of a block array moved to the next slot's element
/// (32 words on): a mutant that reads a neighbour's profile entries.
Halide::Internal::Stmt shift_block_reads(const Halide::Internal::Stmt &s, const std::string &array) {
    struct Shift : Halide::Internal::IRMutator {
        std::string array;
        using Halide::Internal::IRMutator::visit;
        Halide::Expr visit(const Halide::Internal::Load *op) override {
            if (op->name != array) return Halide::Internal::IRMutator::visit(op);
            Halide::Expr index = op->index + Halide::Internal::make_const(op->index.type(), 32);
            return Halide::Internal::Load::make(op->type, op->name, index % Halide::Internal::make_const(op->index.type(), 32 * 24),
                                                op->image, op->param, op->predicate, op->alignment);
        }
    } shift;
    shift.array = array;
    return shift.mutate(s);
}

}  // namespace

TEST_CASE("align_sw_ragged_profile and _i16: the query profile staged once per block, a lane's entries interleaved over the banks, on every evaluator", "[reductions][align][tables]") {
    std::mt19937 rng(17);
    int mutants_caught = 0;
    for (const RaggedSize n : ragged_sizes) {
        INFO("Q=" << n.Q << " K=" << n.K << " S=" << n.S);
        const RaggedBatch batch = ragged_batch(rng, n);
        const int B = batch.count;
        const Buffers inputs{{"profile", query_profile(batch, n.Q)}, {"subject", batch.inputs.at("subject")}, {"lengths", batch.inputs.at("lengths")}};
        const std::vector<std::string> order{"profile", "subject", "lengths"};
        for (const char *spec : {"align_sw_ragged_profile", "align_sw_ragged_profile_i16"}) {
            INFO(spec);
            const bool narrow = std::string(spec).find("i16") != std::string::npos;
            const Params p = params({{"Q", n.Q}, {"K", n.K}, {"S", n.S}, {"B", B}, {"OPEN", 5}, {"EXTEND", 2}});
            const ir::UreProgram program = build_spec(spec, p).output.lower();
            Halide::Buffer<> best(narrow ? Halide::Int(16) : Halide::Int(32), {B}, "Best"), overflow(Halide::Bool(), {B}, "Overflow");
            for (int b = 0; b < B; b++) store_element(best, {b}, Scalar::of_int(batch.scores[b])), store_element(overflow, {b}, Scalar::of_uint(0));
            Buffers expected{{"Best", best}};
            if (narrow) expected["Overflow"] = overflow;
            check_every_evaluator(program, inputs, expected, order);
            // One copy for the block, filled before the instances run; where a
            // lane reads K consecutive entries (K > 1), entry i of a row at
            // (i % K) * 32 + i / K: a row of 32 K words.
            KernelOptions options;
            options.max_unrolled_steps = 0;
            kir::Kernel kernel = lower_to_kernel(compile_to_systolic(program), program.name, order, options);
            optimize_kernel(kernel);
            REQUIRE(kernel.block_arrays.size() == 1);
            CHECK(kernel.block_setup.defined());
            CHECK(kernel.block_arrays[0].elements == (n.K > 1 ? 32 * n.K : n.Q) * 24);
            CHECK(kernel.packed_lanes == (narrow ? 2 : 1));
            if (n.K > 1) {
                kernel.body = shift_block_reads(kernel.body, kernel.block_arrays[0].name);
                mutants_caught += test::run_cropped_against_reference(kernel, inputs, expected, 0) != "";
            }
        }
    }
    CHECK(mutants_caught >= 4);
    // A profile past the block's shared memory: refused, naming it and the fix.
    const Params large = params({{"Q", 2000}, {"K", 63}, {"S", 9}, {"B", 3}});
    const ir::UreProgram program = build_spec("align_sw_ragged_profile", large).output.lower();
    kir::Kernel kernel = lower_to_kernel(compile_to_systolic(program), program.name, {"profile", "subject", "lengths"});
    CHECK_THROWS_WITH(optimize_kernel(kernel), Contains("profile (193536 bytes, one copy for the block)") && Contains("--max-shared-bytes"));
}

TEST_CASE("align_sw_ragged_profile_i16 flags the pairs whose scores would leave int16, from Best's total, on every evaluator, and with SATURATE=1 its sums saturate and only a score past 32766 is flagged", "[reductions][align][vectors]") {
    // A profile of 100 for a match and -3 otherwise (entries within
    // [-128, 127], as the flag assumes): a subject equal to the query scores
    // 100 a residue. Lengths around the flag's edge (H > 32640): 326 matches
    // score 32600 (kept), 327 score 32700 (flagged; kept when the sums
    // saturate, whose edge is 32766), the whole query 33300.
    const int saturate = GENERATE(0, 1);
    INFO("SATURATE=" << saturate);
    const int edge = saturate ? 32766 : 32640;
    const int Q = 333, K = 11, S = 335;
    const std::vector<int> lengths{326, 327, 335, 1, 0, 200, 334};
    const int B = (int)lengths.size();
    std::mt19937 rng(17);
    const std::vector<int> q = residues(rng, Q, 24);
    Halide::Buffer<> profile(Halide::Int(32), {Q, 24}, "profile"), subject(Halide::Int(32), {S, B}, "subject");
    Halide::Buffer<> length(Halide::Int(32), {B}, "lengths");
    for (int i = 0; i < Q; i++)
        for (int r = 0; r < 24; r++) store_element(profile, {i, r}, Scalar::of_int(r == q[i] ? 100 : -3));
    Halide::Buffer<> best(Halide::Int(16), {B}, "Best"), overflow(Halide::Bool(), {B}, "Overflow");
    for (int b = 0; b < B; b++) {
        std::vector<int> own;
        for (int j = 0; j < S; j++) {
            const int residue = j < Q ? q[j] : (int)(rng() % 24);
            store_element(subject, {j, b}, Scalar::of_int(residue));
            if (j < lengths[b]) own.push_back(residue);
        }
        store_element(length, {b}, Scalar::of_int(lengths[b]));
        const int score = smith_waterman(q, own, [&](int x, int y) { return x == y ? 100 : -3; }, 5, 2);
        store_element(overflow, {b}, Scalar::of_uint(score > edge));
        // Saturating, a flagged pair's Best is the type's largest value.
        store_element(best, {b}, Scalar::of_int(score <= edge ? score : saturate ? 32767 : -1));
    }
    const Params p = params({{"Q", Q}, {"K", K}, {"S", S}, {"B", B}, {"OPEN", 5}, {"EXTEND", 2}, {"SATURATE", saturate}});
    const ir::UreProgram program = build_spec("align_sw_ragged_profile_i16", p).output.lower();
    const Buffers inputs{{"profile", profile}, {"subject", subject}, {"lengths", length}};
    const std::vector<std::string> order{"profile", "subject", "lengths"};
    const Buffers realized = ir::realize(program, inputs);
    for (int b = 0; b < B; b++) {
        INFO("database sequence " << b << " of " << lengths[b] << " residues");
        CHECK(load_element(realized.at("Overflow"), {b}).as_uint() == load_element(overflow, {b}).as_uint());
        if (!load_element(overflow, {b}).as_uint() || saturate) {
            CHECK(load_element(realized.at("Best"), {b}).as_int() == load_element(best, {b}).as_int());
        }
    }
    CHECK(load_element(overflow, {0}).as_uint() == 0);
    CHECK(load_element(overflow, {1}).as_uint() == (saturate ? 0 : 1));
    CHECK(load_element(overflow, {2}).as_uint() == 1);
    // The kernel computes the sums with the saturating instruction, or without it.
    {
        kir::Kernel kernel = lower_to_kernel(compile_to_systolic(program), program.name, order);
        optimize_kernel(kernel);
        const std::string cuda = print_cuda(kernel).kernel;
        CHECK((cuda.find("pulse_vsat_add(") != std::string::npos) == (saturate == 1));
    }
    // Every evaluator computes the same bits, the flagged pairs' wrapped Best included.
    check_every_evaluator(program, inputs, realized, order);
    // The kernel accumulates no flag per step: it tests Best's total once.
    kir::Kernel kernel = lower_to_kernel(compile_to_systolic(program), program.name, order);
    std::ostringstream text;
    kir::print(text, kernel);
    CHECK(text.str().find("Overflow.reduce") == std::string::npos);
    CHECK(text.str().find("Best.reduce") != std::string::npos);
}

TEST_CASE("align_sw_segment: a long query aligned in passes over its segments, each pass's last row read by the next, equals the CPU aligner on the whole query", "[reductions][align]") {
    std::mt19937 rng(91);
    struct Size {
        int Q, segment, K, S, B;
    };
    // Segments of equal length and a shorter last one; one residue per lane or several.
    for (const Size n : {Size{37, 16, 4, 23, 3}, Size{100, 40, 8, 11, 2}, Size{9, 3, 1, 5, 2}}) {
        INFO("Q=" << n.Q << " in segments of " << n.segment << ", K=" << n.K << " S=" << n.S);
        const std::vector<int> q = residues(rng, n.Q, 24);
        std::vector<std::vector<int>> subjects;
        for (int b = 0; b < n.B; b++) subjects.push_back(residues(rng, n.S, 24));
        Halide::Buffer<> subject(Halide::Int(32), {n.S, n.B}, "subject"), table(Halide::Int(32), {24, 24}, "substitution");
        Halide::Buffer<> top_H(Halide::Int(32), {n.S, n.B}, "top_H"), top_F(Halide::Int(32), {n.S, n.B}, "top_F");
        for (int x = 0; x < 24; x++)
            for (int y = 0; y < 24; y++) store_element(table, {x, y}, Scalar::of_int(pulse_blosum62[y][x]));
        for (int b = 0; b < n.B; b++) {
            for (int j = 0; j < n.S; j++) {
                store_element(subject, {j, b}, Scalar::of_int(subjects[b][j]));
                // Above the first segment: outside the matrix.
                store_element(top_H, {j, b}, Scalar::of_int(0));
                store_element(top_F, {j, b}, Scalar::of_int(-(1 << 14)));
            }
        }
        std::vector<int> best(n.B, 0);
        int passes = 0;
        for (int first = 0; first < n.Q; first += n.segment, passes++) {
            const int length = std::min(n.segment, n.Q - first);
            INFO("the segment from residue " << first << ", " << length << " residues");
            const Params p = params({{"Q", length}, {"K", std::min(n.K, length)}, {"S", n.S}, {"B", n.B}, {"OPEN", 5}, {"EXTEND", 2}});
            const ir::UreProgram program = build_spec("align_sw_segment", p).output.lower();
            Halide::Buffer<> query(Halide::Int(32), {length}, "query");
            for (int i = 0; i < length; i++) store_element(query, {i}, Scalar::of_int(q[first + i]));
            const Buffers inputs{{"query", query}, {"subject", subject}, {"substitution", table}, {"top_H", top_H}, {"top_F", top_F}};
            // Each pass on every evaluator; the interpreter's rows go on to the next.
            const Buffers pass = ir::realize(program, inputs);
            check_every_evaluator(program, inputs, pass, {"query", "subject", "substitution", "top_H", "top_F"});
            for (int b = 0; b < n.B; b++) best[b] = std::max(best[b], (int)load_element(pass.at("Best"), {b}).as_int());
            top_H = pass.at("Bottom_H");
            top_F = pass.at("Bottom_F");
        }
        CHECK(passes == (n.Q + n.segment - 1) / n.segment);
        for (int b = 0; b < n.B; b++) {
            INFO("database sequence " << b);
            CHECK(best[b] == smith_waterman(q, subjects[b], [](int x, int y) { return pulse_blosum62[x][y]; }, 5, 2));
        }
    }
}

TEST_CASE("align_sw_ragged_segment_profile and _i16: a long query in passes against a ragged batch, each pass's rows written up to each sequence's length, equal the CPU aligner on the whole query", "[reductions][align][vectors]") {
    std::mt19937 rng(93);
    struct Size {
        int Q, segment, K, S;
    };
    for (const Size n : {Size{37, 16, 4, 23}, Size{100, 40, 8, 11}, Size{9, 3, 1, 5}}) {
        INFO("Q=" << n.Q << " in segments of " << n.segment << ", K=" << n.K << " S=" << n.S);
        // Lengths below 0, 0, 1, odd, S, past S, random and the ends of int32:
        // an odd count, so the packed kernel's last warp runs one alone.
        const RaggedBatch batch = ragged_batch(rng, RaggedSize{n.Q, n.K, n.S});
        const int B = batch.count;
        const Halide::Buffer<> profile = query_profile(batch, n.Q);
        // The textbook's matrices of each pair, for the rows the passes write.
        std::vector<GotohMatrices> matrices;
        {
            std::vector<int> q(n.Q);
            for (int i = 0; i < n.Q; i++) q[i] = (int)load_element(batch.inputs.at("query"), {i}).as_int();
            for (int b = 0; b < B; b++) {
                std::vector<int> d(std::clamp((int)load_element(batch.inputs.at("lengths"), {b}).as_int(), 0, n.S));
                for (int j = 0; j < (int)d.size(); j++) d[j] = (int)load_element(batch.inputs.at("subject"), {j, b}).as_int();
                matrices.push_back(smith_waterman_matrices(q, d, [](int x, int y) { return pulse_blosum62[x][y]; }, 5, 2));
            }
        }
        for (const bool narrow : {false, true}) {
            const std::string spec = narrow ? "align_sw_ragged_segment_profile_i16" : "align_sw_ragged_segment_profile";
            INFO(spec);
            const Halide::Type type = narrow ? Halide::Int(16) : Halide::Int(32);
            // Above the first segment: outside the matrix (H 0, F -16384). The
            // int16 spec's row is one uint32 a column: the 16 bits of H at the
            // column before times 65536 plus those of the F entering the segment.
            Halide::Buffer<> top_H(type, {n.S, B}, "top_H"), top_F(type, {n.S, B}, "top_F"), top(Halide::UInt(32), {n.S, B}, "top");
            for (int b = 0; b < B; b++) {
                for (int j = 0; j < n.S; j++) {
                    store_element(top_H, {j, b}, Scalar::of_int(0)), store_element(top_F, {j, b}, Scalar::of_int(-(1 << 14)));
                    store_element(top, {j, b}, Scalar::of_uint(0 * 65536 + (uint16_t)-(1 << 14)));
                }
            }
            const std::vector<std::string> rows_in = narrow ? std::vector<std::string>{"top"} : std::vector<std::string>{"top_H", "top_F"};
            const std::string row_out = narrow ? "Bottom" : "Bottom_H";
            std::vector<int> best(B, 0);
            int passes = 0;
            for (int first = 0; first < n.Q; first += n.segment, passes++) {
                const int length = std::min(n.segment, n.Q - first);
                INFO("the segment from residue " << first << ", " << length << " residues");
                const Params p = params({{"Q", length}, {"K", std::min(n.K, length)}, {"S", n.S}, {"B", B}, {"OPEN", 5}, {"EXTEND", 2}});
                const ir::UreProgram program = build_spec(spec, p).output.lower();
                Halide::Buffer<> rows(Halide::Int(32), {length, 24}, "profile");
                for (int i = 0; i < length; i++)
                    for (int r = 0; r < 24; r++) store_element(rows, {i, r}, load_element(profile, {first + i, r}));
                Buffers inputs{{"profile", rows}, {"subject", batch.inputs.at("subject")}, {"lengths", batch.inputs.at("lengths")}};
                if (narrow) inputs.emplace("top", top);
                else inputs.emplace("top_H", top_H), inputs.emplace("top_F", top_F);
                std::vector<std::string> names{"profile", "subject", "lengths"};
                names.insert(names.end(), rows_in.begin(), rows_in.end());
                const Buffers pass = ir::realize(program, inputs);
                check_every_evaluator(program, inputs, pass, names);
                // A row is written up to its sequence's length; past it, nothing.
                for (int b = 0; b < B; b++) {
                    const int own = std::clamp((int)load_element(batch.inputs.at("lengths"), {b}).as_int(), 0, n.S);
                    for (int j = 0; j < n.S; j++) CHECK(is_poison_element(pass.at(row_out), {j, b}) == (j >= own));
                    // The row is the textbook's at the segment's last residue: H and F, or
                    // (int16) H at the column before and the F entering the next residue.
                    const std::vector<int> &H = matrices[b].H[first + length], &F = matrices[b].F[first + length];
                    for (int j = 0; j < own; j++) {
                        INFO("column " << j);
                        if (narrow) {
                            const uint32_t entering = (uint16_t)std::max(F[j + 1] - 2, H[j + 1] - 5);
                            CHECK(load_element(pass.at("Bottom"), {j, b}).as_uint() == (uint32_t)(uint16_t)H[j] * 65536u + entering);
                        } else {
                            CHECK(load_element(pass.at("Bottom_H"), {j, b}).as_int() == H[j + 1]);
                            CHECK(load_element(pass.at("Bottom_F"), {j, b}).as_int() == F[j + 1]);
                        }
                    }
                    best[b] = std::max(best[b], (int)load_element(pass.at("Best"), {b}).as_int());
                    if (narrow) CHECK(load_element(pass.at("Overflow"), {b}).as_uint() == 0);
                }
                if (narrow) {
                    top = pass.at("Bottom");
                } else {
                    top_H = pass.at("Bottom_H");
                    top_F = pass.at("Bottom_F");
                }
            }
            CHECK(passes == (n.Q + n.segment - 1) / n.segment);
            for (int b = 0; b < B; b++) {
                INFO("database sequence " << b);
                CHECK(best[b] == batch.scores[b]);
            }
        }
    }
}

TEST_CASE("data bounds: a bound read from the inputs is refused where an instance would not be a prefix of the box, with the fix", "[reductions]") {
    Var i("i"), j("j"), b("b"), s("s"), t("t");
    Input y(Int(32), 2, "y"), lengths(Int(32), 1, "lengths");
    Func V(Int(32), {i, j, b}, Place::Device, "V"), R(Place::Device, "R");
    auto nest = [&](const Expr &value) {
        V(i, j, b) = value;
        R(b) = 0;
        R(b) = max(R(b), V(i, j, b));
        V.merge_ures(R).set_bounds(i, 0, 5, j, 0, 7, b, 0, 3);
    };
    SECTION("a bound on a loop of the PEs") {
        nest(select(j > 0, V(i, j - 1, b), 0) + y(i + j, b));
        V.where(i < lengths(b)).space_time_transform({i, j}, {s, t}, {1, 0, /**/ 1, 1});
        CHECK_THROWS_WITH(R.lower(), Contains("'i' moves the PEs") && Contains("may only advance time"));
    }
    SECTION("a read at a higher value of the bounded loop") {
        // Legal on the box (two steps back in i, one forward in j: a step back
        // in time), but a point below the bound would read one above it.
        nest(select(i > 1 && j < 6, V(i - 2, j + 1, b), 0) + y(i + j, b));
        V.where(j < lengths(b)).space_time_transform({i, j}, {s, t}, {1, 0, /**/ 1, 1});
        CHECK_THROWS_WITH(R.lower(), Contains("V reads V(i - 2, j + 1, b), at a higher 'j'") && Contains("own or lower values only"));
    }
    SECTION("a bound of the array's loops, or not an upper bound") {
        nest(select(j > 0, V(i, j - 1, b), 0) + y(i + j, b));
        V.where(j < lengths(i)).space_time_transform({i, j}, {s, t}, {1, 0, /**/ 1, 1});
        CHECK_THROWS_WITH(R.lower(), Contains("the bound uses 'i', a loop of the array"));
    }
    SECTION("a condition on the inputs that is not an upper bound of a loop") {
        nest(select(j > 0, V(i, j - 1, b), 0) + y(i + j, b));
        V.where(j > lengths(b)).space_time_transform({i, j}, {s, t}, {1, 0, /**/ 1, 1});
        CHECK_THROWS_WITH(R.lower(), Contains("bounds one loop from above") && Contains("where(j < lengths(b))"));
    }
    SECTION("a reduction indexed by a loop of the array") {
        Func O(Place::Device, "O");
        V(i, j, b) = select(j > 0, V(i, j - 1, b), 0) + y(i + j, b);
        O(j, b) = 0;
        O(j, b) = max(O(j, b), V(i, j, b));
        V.merge_ures(O).set_bounds(i, 0, 5, j, 0, 7, b, 0, 3).where(j < lengths(b)).space_time_transform({i, j}, {s, t}, {1, 0, /**/ 1, 1});
        CHECK_THROWS_WITH(O.lower(), Contains("output O(j, b) is indexed by 'j', a loop of the array"));
    }
}

TEST_CASE("reduction outputs: what is not a reduction, or not lowered, is refused with the fix", "[reductions]") {
    Var i("i"), j("j"), b("b"), s("s"), t("t");
    Input x(Float(32), 2, "x"), y(Int(32), 2, "y");
    SECTION("a float sum depends on its order") {
        Func R(Place::Device, "R");
        R(b) = 0.0f;
        CHECK_THROWS_WITH(R(b) = R(b) + x(i, b), Contains("a float sum depends on the order of its operands") && Contains("use min or max"));
    }
    SECTION("an update that is not op(self, value)") {
        Func R(Place::Device, "R");
        R(b) = 0;
        CHECK_THROWS_WITH(R(b) = R(b) - y(i, b), Contains("is not a reduction; write R(b) = op(R(b), value)"));
        CHECK_THROWS_WITH(R(b) = R(b) & y(i, b), Contains("is not a reduction"));
        CHECK_THROWS_WITH(R(b) = max(y(i, b), y(b, i)), Contains("is not a reduction"));
        CHECK_THROWS_WITH(R(b) = max(R(b), R(b) + y(i, b)), Contains("is not a reduction"));
    }
    SECTION("an update of another element") {
        Func R(Place::Device, "R");
        R(b) = 0;
        CHECK_THROWS_WITH(R(b + 1) = max(R(b + 1), y(i, b)), Contains("is not the element its pure definition R(b) names"));
    }
    SECTION("a second update") {
        Func R(Place::Device, "R");
        R(b) = 0;
        R(b) = max(R(b), y(i, b));
        CHECK_THROWS_WITH(R(b) = min(R(b), y(i, b)), Contains("has an update already"));
    }
    SECTION("an initial value that reads an input, or a loop that is not an argument") {
        Func R(Place::Device, "R"), R2(Place::Device, "R2");
        R(b) = y(0, b);
        CHECK_THROWS_WITH(R(b) = max(R(b), y(i, b)), Contains("the initial value of a reduction is an expression of its arguments"));
        R2(b) = b + i;
        CHECK_THROWS_WITH(R2(b) = max(R2(b), y(i, b)), Contains("uses 'i', which is not one of its arguments (b)"));
    }
    SECTION("an update before the pure definition") {
        Func R(Place::Device, "R");
        CHECK_THROWS_WITH(R(b) = max(R(b), y(i, b)), Contains("an output reduced by an update takes its pure definition first"));
    }
    SECTION("another Func reads a reduction") {
        Func V(Int(32), {i, b}, Place::Device, "V"), R(Place::Device, "R"), Out(Place::Device, "Out");
        V(i, b) = y(i, b);
        R(b) = 0;
        R(b) = max(R(b), V(i, b));
        Out(i, b) = V(i, b) + R(b);
        V.merge_ures(R, Out).set_bounds(i, 0, 4, b, 0, 2);
        CHECK_THROWS_WITH(Out.lower(), Contains("Out calls the output R; outputs are stored, not read by UREs"));
    }
    SECTION("a reduction indexed by a loop of the array runs on the CPU and is refused by the GPU mapping") {
        // R(i, b): each PE's own maximum over time. Every evaluator of the
        // language computes it; lower_to_kernel refuses it, naming the loop.
        Func V(Int(32), {i, j, b}, Place::Device, "V"), R(Place::Device, "R");
        V(i, j, b) = y(i + j, b);
        R(i, b) = 0;
        R(i, b) = max(R(i, b), V(i, j, b));
        V.merge_ures(R).set_bounds(i, 0, 5, j, 0, 3, b, 0, 2);
        V.space_time_transform({i, j}, {s, t}, {1, 0, /**/ 1, 1});
        const ir::UreProgram program = R.lower();
        Halide::Buffer<> in(Int(32), {7, 2}, "y");
        for (int k = 0; k < 7; k++)
            for (int m = 0; m < 2; m++) store_element(in, {k, m}, Scalar::of_int((k * 5 + m * 3) % 11 - 4));
        const Buffers expected = ir::realize(program, {{"y", in}});
        for (int k = 0; k < 5; k++)
            for (int m = 0; m < 2; m++) {
                int best = 0;
                for (int q = 0; q < 3; q++) best = std::max(best, (int)load_element(in, {k + q, m}).as_int());
                CHECK(load_element(expected.at("R"), {k, m}).as_int() == best);
            }
        const sys::SystolicProgram systolic = compile_to_systolic(program);
        CHECK(compare_outputs(expected, simulate(systolic, {{"y", in}}), 0) == "");
        try {
            lower_to_kernel(systolic, "per_pe", {"y"});
            FAIL("lower_to_kernel accepted a reduction indexed by a loop of the array");
        } catch (const CompileError &e) {
            CHECK(e.refusal == Refusal::ReductionNotLowered);
            CHECK_THAT(e.what(), Contains("reduction output R(i, b) is indexed by 'i', a loop of the array") &&
                                     Contains("index it by loops outside the array only"));
        }
    }
    SECTION("PEs per thread on an array of one warp, or more than a block holds") {
        Func V(Int(32), {i, j, b}, Place::Device, "V"), R(Place::Device, "R");
        V(i, j, b) = y(i + j, b);
        R(b) = 0;
        R(b) = max(R(b), V(i, j, b));
        V.merge_ures(R).set_bounds(i, 0, 40, j, 0, 3, b, 0, 2);
        V.space_time_transform({i, j}, {s, t}, {1, 0, /**/ 1, 1});
        KernelOptions options;
        options.pes_per_thread = 2;
        CHECK_THROWS_WITH(lower_to_kernel(compile_to_systolic(R.lower()), "one_warp", {"y"}, options),
                          Contains("pes_per_thread (--pes-per-thread=2)") && Contains("add gpu_threads(s)"));
        V.gpu_threads(s);
        options.pes_per_thread = 9;
        CHECK_THROWS_WITH(lower_to_kernel(compile_to_systolic(R.lower()), "nine", {"y"}, options),
                          Contains("--pes-per-thread=9: a linear array over the warps of a block") &&
                              Contains("runs at most 8 PEs per thread (up to 64 only as a 2-D tile"));
    }
}
