// Vectors in the kernel IR (Halide's vector types): two array instances'
// int16 values in one 32-bit register. The kernels are built by hand: one
// computes two instances a warp with vectors, its twin one instance a warp
// with scalars, and the executor must give both the same bits (each lane of
// a vector has the language's semantics), on inputs full of int16's edge
// values. The CUDA printer prints the vectors as packed SIMD and DPX calls
// (runtime/emitted/pulse_vectors.cuh); PULSE_VECTOR_CUDA_DIR=DIR also writes
// the vector kernel and a bit-for-bit check of it into DIR for a GPU
// (scripts/gpu_kernel_vectors.sh). CM refuses vectors.
#include <filesystem>
#include <fstream>
#include <random>

#include "TestUtil.h"

#include "codegen/CodeGenC.h"
#include "pulse/Error.h"
#include "codegen/CodeGenCudaKernel.h"
#include "exec/KernelExecutor.h"
#include "lower/CheckCmSupport.h"

using namespace pulse;
using namespace Halide;
using namespace Halide::Internal;
using Catch::Matchers::Contains;

namespace {

Expr lane() { return Variable::make(Int(32), kir::lane_var); }

kir::BufferArg buffer(const std::string &name, bool output) {
    kir::BufferArg b;
    b.name = name;
    b.type = Int(16);
    b.dimensions = 2;
    b.is_output = output;
    return b;
}

/// The step both kernels take, for instance (or instances) `b`: x = X(lane,
/// b); y = x on the lane below; a register accumulator; Out(lane, b_out) = a
/// mix of sums (which wrap), maxima of three and four terms with and without
/// 0, comparisons, a select on them, and a product (b_out is b but in a mutant).
Stmt step(const Expr &b, Expr b_out = Expr()) {
    if (!b_out.defined()) b_out = b;
    const kir::BufferArg x = buffer("X", false), out = buffer("Out", true);
    const Type t = Int(16).with_lanes(b.type().lanes());
    auto constant = [&](int v) { return make_const(t, v); };
    auto var = [&](const std::string &n) { return Variable::make(t, n); };
    const Expr acc_index = b.type().is_vector() ? Ramp::make(0, 1, b.type().lanes()) : Expr(0);
    const Expr acc = Load::make(t, "acc", acc_index, Buffer<>(), Parameter(), const_true(t.lanes()), ModulusRemainder());
    auto acc_store = [&](const Expr &v) { return Store::make("acc", v, acc_index, Parameter(), const_true(t.lanes()), ModulusRemainder()); };
    Expr v_x = var("x"), v_y = var("y"), v_z = var("z");
    Stmt body = Block::make(
        {acc_store(max(v_z, v_x * constant(3))),
         kir::store("Out", kir::in_bounds(out, {lane(), b_out}),
                    select(v_x < v_y && !(v_x == v_z), v_z, v_x - v_y) + min(acc, v_x), {lane(), b_out})});
    body = LetStmt::make("z", max(max(v_x + v_y, constant(-5)), max(v_x, constant(0))), body);
    body = Block::make(acc_store(max(max(v_x, v_y), max(v_x + constant(7), constant(-300)))), body);
    body = LetStmt::make("y", kir::lane_shift(v_x, 1), body);
    body = LetStmt::make("x", kir::load(t, "X", kir::in_bounds(x, {lane(), b}), {lane(), b}), body);
    return Allocate::make("acc", Int(16), Halide::MemoryType::Register, {make_const(Int(32), t.lanes())}, const_true(), body);
}

/// The kernel over instances b of Out's dimension 1: one a warp, or two (b =
/// 2 p + 0 and 2 p + 1 as the lanes of a vector).
kir::Kernel make_kernel(bool vectors) {
    kir::Kernel k;
    k.name = vectors ? "pairs" : "singles";
    k.description = vectors ? "two array instances a warp, their int16 values packed in pairs (built by hand)" : "one array instance a warp (built by hand)";
    k.buffers = {buffer("X", false), buffer("Out", true)};
    const Expr instances = kir::buffer_extent("Out", 1);
    k.grid.push_back({"p", 0, vectors ? (instances + 1) / 2 : instances});
    k.pe_count = kir::warp_size;
    const Expr p = Variable::make(Int(32), "p");
    k.body = LetStmt::make("p", cast(Int(32), kir::warp_index()), step(vectors ? Ramp::make(p * 2, 1, 2) : p));
    return k;
}

/// X of 32 x instances int16, a third of them edge values (the extremes, +-1, 0).
Buffers inputs(int instances, uint32_t seed) {
    std::mt19937 rng(seed);
    const int16_t edges[] = {INT16_MIN, INT16_MIN + 1, -1, 0, 1, INT16_MAX - 1, INT16_MAX};
    Buffer<int16_t> x(kir::warp_size, instances);
    x.for_each_value([&](int16_t &v) {
        v = rng() % 3 == 0 ? edges[rng() % 7] : (int16_t)(rng() % 65536 - 32768);
    });
    Buffer<int16_t> out(kir::warp_size, instances);
    Buffers b{{"X", x}, {"Out", out}};
    poison(b.at("Out"));
    return b;
}

}  // namespace

TEST_CASE("vectors: two instances a warp compute the bits of one instance a warp, lane by lane", "[kernel][vectors]") {
    const kir::Kernel pairs = make_kernel(true), singles = make_kernel(false);
    for (int instances : {1, 2, 7, 12}) {
        INFO(instances << " instances");
        Buffers a = inputs(instances, 17 + instances), b = inputs(instances, 17 + instances);
        execute_kernel(pairs, a);
        execute_kernel(singles, b);
        const Buffer<int16_t> got(a.at("Out")), want(b.at("Out"));
        int differ = 0, wrapped = 0;
        const Buffer<int16_t> x(a.at("X"));
        for (int i = 0; i < instances; i++) {
            for (int l = 0; l < kir::warp_size; l++) {
                differ += got(l, i) != want(l, i);
                // The sums reach past int16 somewhere: the wrap is exercised.
                if (l > 0) wrapped += std::abs((int)x(l, i) + (int)x(l - 1, i)) > INT16_MAX;
            }
        }
        CHECK(differ == 0);
        CHECK(wrapped > 0);
        // Every element written (the poison is 0x5A5A).
        int poisoned = 0;
        got.for_each_value([&](int16_t v) { poisoned += v == (int16_t)0x5A5A; });
        CHECK(poisoned < instances * kir::warp_size / 8);
    }
}

TEST_CASE("vectors: a wrong lane in a vector kernel is caught", "[kernel][vectors]") {
    // A mutant that stores each lane's result in the other lane's instance
    // (b = 2 p + 1, 2 p for the store) differs from the scalar twin.
    kir::Kernel swapped = make_kernel(true);
    const Expr p = Variable::make(Int(32), "p");
    swapped.body = LetStmt::make("p", cast(Int(32), kir::warp_index()), step(Ramp::make(p * 2, 1, 2), Ramp::make(p * 2 + 1, -1, 2)));
    Buffers a = inputs(8, 5), b = inputs(8, 5);
    execute_kernel(swapped, a);
    execute_kernel(make_kernel(false), b);
    const Buffer<int16_t> got(a.at("Out")), want(b.at("Out"));
    int same = 0;
    got.for_each_element([&](int l, int i) { same += got(l, i) == want(l, i); });
    CHECK(same < 8 * kir::warp_size / 2);
}

TEST_CASE("vectors: CUDA prints packed int16 as SIMD and DPX calls, an accumulator as an array of vectors", "[cuda][vectors]") {
    const std::string text = print_cuda(make_kernel(true)).kernel;
    CHECK_THAT(text, Contains("struct pulse_i16x2 { uint32_t bits; };"));
    CHECK_THAT(text, Contains("pulse_i16x2 acc[1];"));
    CHECK_THAT(text, Contains("pulse_vshfl_up(x, 1)"));
    // max(max(x + y, -5), max(x, 0)): one add-max and one relu max (of three, an operand repeated).
    CHECK_THAT(text, Contains("pulse_vmax_relu(pulse_vbroadcast<pulse_i16x2>((-5)), pulse_vaddmax(x, y, x))"));
    // max(max(x, y), max(x + 7, -300)): one add-max and one max of three.
    CHECK_THAT(text, Contains("pulse_vmax3(x, y, pulse_vaddmax(x, pulse_vbroadcast<pulse_i16x2>(7), pulse_vbroadcast<pulse_i16x2>((-300))))"));
    CHECK_THAT(text, Contains("pulse_vselect("));
    CHECK_THAT(text, Contains("pulse_vpack<pulse_i16x2>("));
    // The stored vector computed once, each lane written to its own element.
    CHECK_THAT(text, Contains("const pulse_i16x2 pulse_stored = ") && Contains("= pulse_vlane(pulse_stored, 1);"));
    // The scalar twin carries no vector code.
    CHECK_THAT(print_cuda(make_kernel(false)).kernel, !Contains("pulse_i16x2"));
    if (const char *dir = std::getenv("PULSE_VECTOR_CUDA_DIR")) {
        // The GPU check: the vector kernel on these inputs against the executor's bits.
        const int instances = 13;
        Buffers run = inputs(instances, 99);
        execute_kernel(make_kernel(true), run);
        const std::filesystem::path d(dir);
        std::filesystem::create_directories(d);
        const CudaKernelSources sources = print_cuda(make_kernel(true));
        std::ofstream(d / "pairs.h") << sources.header;
        std::ofstream(d / "pairs.cu") << sources.kernel;
        auto values = [](const Buffer<int16_t> &b) {
            std::string s;
            b.for_each_value([&](int16_t v) { s += std::to_string(v) + ", "; });
            return s;
        };
        std::ofstream(d / "main.cu")
            << "// Runs pairs_kernel on X and compares Out with the executor's bits. Generated by test_kernel_vectors.\n"
            << "#include <cstdio>\n#include <cstdint>\n#include \"pairs.h\"\n"
            << "static const int16_t x_host[] = {" << values(Buffer<int16_t>(run.at("X"))) << "};\n"
            << "static const int16_t want[] = {" << values(Buffer<int16_t>(run.at("Out"))) << "};\n"
            << "int main() {\n    const int n = " << instances * kir::warp_size << ";\n"
            << "    int16_t *x = nullptr, *out = nullptr;\n    cudaMalloc(&x, n * 2);\n    cudaMalloc(&out, n * 2);\n"
            << "    cudaMemcpy(x, x_host, n * 2, cudaMemcpyHostToDevice);\n    cudaMemset(out, 0xff, n * 2);\n"
            << "    cudaError_t status = pairs(pulse_dense_buffer(x, {32, " << instances << "}), pulse_dense_buffer(out, {32, " << instances
            << "}), 0);\n"
            << "    if (status == cudaSuccess) status = cudaDeviceSynchronize();\n"
            << "    if (status != cudaSuccess) { std::printf(\"CUDA error: %s\\n\", cudaGetErrorString(status)); return 2; }\n"
            << "    static int16_t got[" << instances * kir::warp_size << "];\n    cudaMemcpy(got, out, n * 2, cudaMemcpyDeviceToHost);\n"
            << "    int differ = 0;\n    for (int i = 0; i < n; i++) {\n"
            << "        if (got[i] != want[i] && differ++ < 5) std::printf(\"Out[%d] = %d, the executor's %d\\n\", i, got[i], want[i]);\n"
            << "    }\n    std::printf(\"%s: %d of %d elements equal the executor's\\n\", differ ? \"FAIL\" : \"PASS\", n - differ, n);\n"
            << "    return differ ? 1 : 0;\n}\n";
    }
}

TEST_CASE("vectors: CM refuses a kernel that computes with vectors, naming the fix", "[cm][vectors]") {
    kir::Kernel pairs = make_kernel(true);
    try {
        check_cm_support(pairs, CmTarget::gen9());
        FAIL("expected a CompileError");
    } catch (const pulse::CompileError &e) {
        CHECK(e.refusal == Refusal::UnsupportedByTarget);
        CHECK_THAT(std::string(e.what()), Contains("computes with vectors") && Contains("emit CUDA for this schedule"));
    }
    // The scalar twin is refused for something else (its 16-bit buffers), not for vectors.
    try {
        check_cm_support(make_kernel(false), CmTarget::gen9());
        FAIL("expected a CompileError");
    } catch (const pulse::CompileError &e) {
        CHECK_THAT(std::string(e.what()), !Contains("computes with vectors"));
    }
}
