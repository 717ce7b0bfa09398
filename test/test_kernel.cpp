// The kernel IR: every example, lowered to warps and optimized, runs on the CPU
// executor and equals the reference interpreter at odd sizes, with outputs
// NaN-poisoned first; cropped outputs (run-time sizes smaller than the spec's,
// tails) are written exactly inside their extents.
#include <cmath>
#include <functional>
#include <set>

#include "CroppedRun.h"
#include "TestUtil.h"

#include "analysis/Validate.h"
#include "exec/KernelExecutor.h"
#include "lower/CheckCmSupport.h"
#include "lower/LowerToKernel.h"
#include "lower/Pipeline.h"
#include "exec/Simulator.h"

using namespace pulse;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;

namespace {

struct Case {
    std::string spec;
    Params params;
};

/// Runs the kernel of `c` with each output cropped by `crop` elements per
/// dimension; returns the mismatch against the interpreter ("" if none).
/// `set_inputs` may replace the random inputs, `alter` the optimized kernel.
std::string execute_against_reference(const Case &c, int crop, const KernelOptions &options = {},
                                      const std::function<void(Buffers &)> &set_inputs = {},
                                      const std::function<void(kir::Kernel &)> &alter = {}) {
    Spec spec = build_spec(c.spec, c.params);
    ir::UreProgram program = spec.output.lower();
    sys::SystolicProgram systolic = compile_to_systolic(program);
    std::vector<std::string> order;
    for (const Input &in : spec.inputs) order.push_back(in.name());
    kir::Kernel kernel = lower_to_kernel(systolic, c.spec, order, options);
    optimize_kernel(kernel);
    if (alter) alter(kernel);
    Buffers inputs = random_input_buffers(program, 11);
    if (set_inputs) set_inputs(inputs);
    return test::run_cropped_against_reference(kernel, inputs, ir::realize(program, inputs), crop);
}

}  // namespace

TEST_CASE("every example runs on the kernel executor at odd sizes, tails included", "[kernel]") {
    std::vector<Case> cases = {
        {"conv1d_sbm", test::params({{"C", 13}, {"Q", 5}, {"B", 3}})},
        {"conv1d_bsm", test::params({{"C", 11}, {"Q", 3}, {"B", 3}})},
        {"conv1d_fsm", test::params({{"C", 9}, {"Q", 4}, {"B", 3}})},
        {"conv1d_bfs", test::params({{"C", 7}, {"Q", 5}, {"B", 3}})},
        {"conv1d_ffs", test::params({{"C", 7}, {"Q", 3}, {"B", 3}})},
        {"conv1d_fbs", test::params({{"C", 9}, {"Q", 5}, {"B", 3}})},
        {"conv1d_fbs_stride2", test::params({{"C", 7}, {"Q", 5}, {"B", 3}})},
        // Eight PEs per lane, arrays tiled (T) and split (S) per warp, as benchmarked.
        {"conv1d_fbs", test::params({{"C", 256}, {"Q", 5}, {"T", 2}, {"S", 3}, {"B", 13}})},
        {"conv1d_sbm", test::params({{"C", 240}, {"Q", 17}, {"S", 2}, {"B", 5}})},
        {"conv2d_sbm", test::params({{"C", 9}, {"P", 3}, {"Q", 3}, {"R", 5}, {"B", 3}})},
        {"conv2d_ssam", test::params({{"K", 3}, {"RT", 4}, {"R", 11}, {"B", 3}})},
        {"conv2d_ssam", test::params({{"K", 5}, {"RT", 3}, {"R", 7}, {"B", 2}})},
        {"conv2d_ssam", test::params({{"K", 15}, {"RT", 2}, {"R", 3}, {"B", 2}})},
        // Warps walking S row blocks down a strip (split), the rows blocks share in registers.
        {"conv2d_ssam", test::params({{"K", 5}, {"RT", 2}, {"S", 3}, {"R", 13}, {"B", 2}})},
        {"conv2d_ssam", test::params({{"K", 3}, {"PE", 64}, {"RT", 3}, {"S", 2}, {"R", 14}, {"B", 2}})},
        // Arrays wider than a warp: two and three PEs per lane.
        {"conv2d_ssam", test::params({{"K", 3}, {"PE", 64}, {"RT", 3}, {"R", 7}, {"B", 3}})},
        {"conv2d_ssam", test::params({{"K", 5}, {"PE", 77}, {"RT", 2}, {"R", 5}, {"B", 2}})},
        {"conv2d_os", test::params({{"K", 5}, {"PE", 70}, {"RT", 3}, {"R", 7}, {"B", 2}})},
        // Arrays over the warps of a block (gpu_threads): two and three warps,
        // moves across warps through shared memory.
        {"conv2d_ssam", test::params({{"K", 3}, {"PE", 40}, {"THREADS", 1}, {"RT", 2}, {"R", 5}, {"B", 3}})},
        {"conv2d_ssam", test::params({{"K", 5}, {"PE", 77}, {"THREADS", 1}, {"RT", 2}, {"S", 2}, {"R", 9}, {"B", 2}})},
        // Stencils (constant coefficients), fp32 and fp64, and one walking row blocks.
        {"stencil2d_5pt", test::params({{"RT", 3}, {"R", 10}, {"B", 3}})},
        {"stencil2d_9pt", test::params({{"F64", 1}, {"RT", 2}, {"R", 7}, {"B", 2}})},
        {"stencil2d_25pt", test::params({{"RT", 2}, {"R", 5}, {"B", 2}})},
        {"stencil2d_star2", test::params({{"F64", 1}, {"RT", 3}, {"S", 2}, {"R", 13}, {"B", 2}})},
        {"stencil2d_5pt", test::params({{"PE", 66}, {"THREADS", 1}, {"RT", 2}, {"R", 7}, {"B", 2}})},
        // The image cached in L1 and in shared memory (one warp, a block of
        // warps, a walk restaging per block).
        {"stencil2d_9pt", test::params({{"CACHE", 1}, {"RT", 3}, {"S", 2}, {"R", 11}, {"B", 2}})},
        {"stencil2d_5pt", test::params({{"CACHE", 2}, {"RT", 3}, {"R", 7}, {"B", 3}})},
        // Two PEs per lane walking two row blocks: lanes read columns other lanes copied,
        // so the next block's copy must wait for this block's reads.
        {"stencil2d_5pt", test::params({{"CACHE", 2}, {"PE", 40}, {"RT", 2}, {"S", 2}, {"R", 9}, {"B", 2}})},
        {"stencil2d_25pt", test::params({{"F64", 1}, {"CACHE", 2}, {"PE", 50}, {"THREADS", 1}, {"RT", 2}, {"S", 2}, {"R", 9}, {"B", 2}})},
        {"conv2d_ssam", test::params({{"K", 3}, {"CACHE", 2}, {"PE", 64}, {"RT", 2}, {"R", 5}, {"B", 2}})},
        {"stencil2d_25pt", test::params({{"F64", 1}, {"PE", 45}, {"THREADS", 1}, {"RT", 3}, {"R", 5}, {"B", 2}})},
        // 3-D stencils: the planes a grid loop (S = 1), and walked by each warp
        // (S planes per warp, the last walk partial), fp32 and fp64.
        {"stencil3d_7pt", test::params({{"RT", 3}, {"S", 1}, {"R", 5}, {"D", 4}, {"B", 2}})},
        {"stencil3d_27pt", test::params({{"F64", 1}, {"RT", 2}, {"S", 1}, {"R", 5}, {"D", 3}, {"B", 2}})},
        {"stencil3d_7pt", test::params({{"F64", 1}, {"RT", 2}, {"S", 3}, {"R", 5}, {"D", 8}, {"B", 2}})},
        {"stencil3d_27pt", test::params({{"RT", 3}, {"S", 2}, {"R", 7}, {"D", 5}, {"B", 2}})},
        {"stencil3d_7pt", test::params({{"PE", 40}, {"THREADS", 1}, {"RT", 2}, {"S", 2}, {"R", 5}, {"D", 5}, {"B", 2}})},
        {"stencil3d_7pt", test::params({{"F64", 1}, {"CACHE", 2}, {"RT", 2}, {"S", 2}, {"R", 5}, {"D", 4}, {"B", 2}})},
        {"stencil3d_27pt", test::params({{"F64", 1}, {"PE", 70}, {"THREADS", 1}, {"RT", 2}, {"S", 1}, {"R", 3}, {"D", 3}, {"B", 2}})},
        // Iterative Jacobi, T steps per launch in overlapped tiles (temporal
        // blocking): one PE per lane, two per lane (fp64), tiles of odd sizes.
        {"jacobi2d", test::params({{"T", 3}, {"PE", 16}, {"TH", 11}, {"BX", 3}, {"BY", 2}})},
        {"jacobi2d", test::params({{"F64", 1}, {"T", 2}, {"PE", 45}, {"TH", 9}, {"BX", 2}, {"BY", 3}})},
        {"jacobi2d", test::params({{"T", 3}, {"PE", 40}, {"TH", 10}, {"THREADS", 1}, {"BX", 2}, {"BY", 2}})},
        // The steps as a wavefront down the tile's rows (WAVE): tall tiles,
        // fp32 and fp64, two PEs per lane.
        {"jacobi2d", test::params({{"WAVE", 1}, {"T", 3}, {"PE", 13}, {"TH", 41}, {"BX", 3}, {"BY", 2}})},
        {"jacobi2d", test::params({{"WAVE", 1}, {"F64", 1}, {"T", 2}, {"PE", 45}, {"TH", 23}, {"BX", 2}, {"BY", 3}})},
        // The 9-point box (BOX), row sweep and wavefront.
        {"jacobi2d", test::params({{"BOX", 1}, {"T", 2}, {"PE", 19}, {"TH", 9}, {"BX", 3}, {"BY", 2}})},
        {"jacobi2d", test::params({{"BOX", 1}, {"WAVE", 1}, {"F64", 1}, {"T", 3}, {"PE", 37}, {"TH", 29}, {"BX", 2}, {"BY", 2}})},
        // In 3-D, a wavefront over the tile's planes (rolled: a block of
        // several periods, its history longer than one).
        {"jacobi3d", test::params({{"T", 2}, {"PE", 16}, {"TH", 7}, {"TZ", 9}, {"BX", 2}, {"BY", 2}, {"BZ", 2}})},
        {"jacobi3d", test::params({{"F64", 1}, {"T", 1}, {"PE", 37}, {"TH", 5}, {"TZ", 6}, {"BX", 2}, {"BY", 1}, {"BZ", 3}})},
        // The tile's plane over the threads of a block, U in shared memory
        // (PLANE): two warps; fp64 with a partial last warp; nine warps.
        {"jacobi3d", test::params({{"PLANE", 1}, {"T", 2}, {"PE", 7}, {"TH", 6}, {"TZ", 9}, {"BX", 2}, {"BY", 2}, {"BZ", 2}})},
        {"jacobi3d", test::params({{"PLANE", 1}, {"F64", 1}, {"T", 1}, {"PE", 11}, {"TH", 5}, {"TZ", 6}, {"BX", 2}, {"BY", 1}, {"BZ", 3}})},
        {"jacobi3d", test::params({{"PLANE", 1}, {"T", 2}, {"PE", 19}, {"TH", 15}, {"TZ", 7}, {"BX", 1}, {"BY", 2}, {"BZ", 1}})},
        // The 27-point box (BOX), register tile and PLANE.
        {"jacobi3d", test::params({{"BOX", 1}, {"F64", 1}, {"T", 1}, {"PE", 37}, {"TH", 5}, {"TZ", 6}, {"BX", 2}, {"BY", 1}, {"BZ", 3}})},
        {"jacobi3d", test::params({{"BOX", 1}, {"PLANE", 1}, {"T", 2}, {"PE", 9}, {"TH", 8}, {"TZ", 9}, {"BX", 2}, {"BY", 2}, {"BZ", 2}})},
        // The device-wide variant (GRID): tiles that read each other's edges
        // through global memory, a grid barrier after every step; odd tiles
        // and steps, the box in fp64.
        {"jacobi2d", test::params({{"GRID", 1}, {"T", 5}, {"PE", 6}, {"TH", 7}, {"BX", 3}, {"BY", 2}})},
        {"jacobi2d", test::params({{"GRID", 1}, {"BOX", 1}, {"F64", 1}, {"T", 4}, {"PE", 11}, {"TH", 5}, {"BX", 2}, {"BY", 3}})},
        {"matmul", test::params({{"I", 7}, {"J", 5}, {"K", 3}, {"N", 3}})},
        {"matvec", Params()},
        {"fir_stride2", Params()},
    };
    KernelOptions rolled;  // every time loop with a period rolled
    rolled.max_unrolled_steps = 0;
    for (const Case &c : cases) {
        for (int crop : {0, 1}) {
            INFO(c.spec << " crop " << crop);
            CHECK(execute_against_reference(c, crop) == "");
            INFO("time loop rolled");
            CHECK(execute_against_reference(c, crop, rolled) == "");
        }
    }
}

TEST_CASE("the Jacobi kernels compute the interpreter's bits, star and box, one and two PEs per lane", "[kernel][stencil]") {
    // Float sums in the spec's order: no tolerance. Row sweeps and wavefronts
    // (rolled and prefetched), fp32 and fp64, 2-D and 3-D.
    KernelOptions rolled;
    rolled.max_unrolled_steps = 0;
    rolled.prefetch_walks = true;
    for (int box : {0, 1}) {
        std::vector<Case> cases{
            Case{"jacobi2d", test::params({{"BOX", box}, {"T", 2}, {"PE", 45}, {"TH", 9}, {"BX", 2}, {"BY", 2}})},
            Case{"jacobi2d", test::params({{"BOX", box}, {"F64", 1}, {"T", 3}, {"PE", 13}, {"TH", 11}, {"BX", 2}, {"BY", 2}})},
            Case{"jacobi2d", test::params({{"BOX", box}, {"WAVE", 1}, {"T", 3}, {"PE", 45}, {"TH", 23}, {"BX", 2}, {"BY", 2}})},
            Case{"jacobi2d", test::params({{"BOX", box}, {"WAVE", 1}, {"F64", 1}, {"T", 2}, {"PE", 64}, {"TH", 17}, {"BX", 2}, {"BY", 2}})}};
        // 3-D (star and 27-point box): the register tile, and the tile's
        // plane in shared memory (PLANE), fp32 and fp64.
        cases.push_back({"jacobi3d", test::params({{"BOX", box}, {"T", 2}, {"PE", 16}, {"TH", 7}, {"TZ", 9}, {"BX", 2}, {"BY", 2}, {"BZ", 2}})});
        cases.push_back({"jacobi3d", test::params({{"BOX", box}, {"PLANE", 1}, {"T", 3}, {"PE", 9}, {"TH", 8}, {"TZ", 10}, {"BX", 2}, {"BY", 2}, {"BZ", 2}})});
        cases.push_back(
            {"jacobi3d", test::params({{"BOX", box}, {"PLANE", 1}, {"F64", 1}, {"T", 2}, {"PE", 13}, {"TH", 7}, {"TZ", 9}, {"BX", 2}, {"BY", 2}, {"BZ", 2}})});
        // The device-wide variant (GRID), fp32 and fp64, odd step counts.
        cases.push_back({"jacobi2d", test::params({{"BOX", box}, {"GRID", 1}, {"T", 3}, {"PE", 9}, {"TH", 7}, {"BX", 3}, {"BY", 2}})});
        cases.push_back({"jacobi2d", test::params({{"BOX", box}, {"GRID", 1}, {"F64", 1}, {"T", 5}, {"PE", 7}, {"TH", 10}, {"BX", 2}, {"BY", 3}})});
        for (const Case &c : cases) {
            for (const KernelOptions &options : {KernelOptions{}, rolled}) {
                INFO(c.spec << ", box " << box << ", rolled " << (options.max_unrolled_steps == 0));
                Spec spec = build_spec(c.spec, c.params);
                ir::UreProgram program = spec.output.lower();
                kir::Kernel kernel = lower_to_kernel(compile_to_systolic(program), c.spec, {"u", "n"}, options);
                optimize_kernel(kernel);
                Buffers inputs = random_input_buffers(program, 5);
                Buffers expected = ir::realize(program, inputs);
                Buffers buffers = inputs;
                for (auto &[name, b] : expected) {  // poisoned: NaN where the kernel writes nothing
                    Halide::Buffer<> out = b.copy();
                    if (out.type() == Halide::Float(32)) Halide::Buffer<float>(out).fill(NAN);
                    else Halide::Buffer<double>(out).fill(NAN);
                    buffers[name] = out;
                }
                execute_kernel(kernel, buffers);
                Buffers actual;
                for (const auto &[name, b] : expected) actual[name] = buffers.at(name);
                CHECK(compare_outputs(expected, actual, 0.0) == "");
            }
        }
    }
}

namespace {

/// A 1-D heat equation in tiles of PE cells that read each other's edge
/// cells of the step before (gpu_grid_sync over bx), for a batch of C rows
/// that each warp runs in sequence (c is no grid loop); `tile_bx` splits bx
/// by 2 into (bxo, bx).
ir::UreProgram grid_batch(int PE, int T, int BX, int C, bool tile_bx = false, bool tile_c = false) {
    Var x("x"), t("t"), bx("bx"), c("c"), s("s"), time("time"), bxo("bxo");
    Input u(Float(32), 2, "u");
    Func U(Float(32), {x, t, bx, c}, Place::Device, "U"), Out(Place::Device, "Out");
    Expr gx = bx * PE + x;
    Expr left = select(x >= 1, U(x - 1, t - 1, bx, c), U(x - 1 + PE, t - 1, bx - 1, c));
    Expr right = select(x < PE - 1, U(x + 1, t - 1, bx, c), U(x + 1 - PE, t - 1, bx + 1, c));
    Expr interior = gx >= 1 && gx < BX * PE - 1;
    U(x, t, bx, c) = select(t == 0, u(gx, c), select(interior, 0.5f * (left + right), U(x, t - 1, bx, c)));
    Out(gx, c) = select(t == T, U(x, t, bx, c));
    U.merge_ures(Out).set_bounds(x, 0, PE, t, 0, T + 1, bx, 0, BX, c, 0, C);
    Var ci("ci");
    if (tile_c) U.tile(c, c, ci, 2);  // the outer piece named like the loop
    if (tile_bx) U.tile(bx, bxo, bx, 2).gpu_blocks(bx, bxo);
    else U.gpu_blocks(bx);
    U.gpu_grid_sync();
    U.space_time_transform({x, t}, {s, time}, {1, 0, /**/ 0, 1});
    return Out.lower();
}

}  // namespace

TEST_CASE("grid-synchronised instances meet at a barrier between the iterations of a per-thread loop", "[kernel]") {
    // T 3: four steps read the step before (two slots), so the last step of
    // batch row c reads the slot the first step of row c + 1 writes: a grid
    // barrier must come between (the executor reports the race otherwise).
    ir::UreProgram program = grid_batch(7, 3, 3, 4);
    for (int64_t unroll : {int64_t(1024), int64_t(0)}) {
        INFO("max_unrolled_steps " << unroll);
        KernelOptions options;
        options.max_unrolled_steps = unroll;
        kir::Kernel kernel = lower_to_kernel(compile_to_systolic(program), "k", {"u"}, options);
        optimize_kernel(kernel);
        REQUIRE(kernel.grid_sync);
        REQUIRE(kernel.grid.size() == 1);
        Buffers inputs = random_input_buffers(program, 3);
        CHECK(test::run_cropped_against_reference(kernel, inputs, ir::realize(program, inputs), 0) == "");
    }
    // A tile naming its outer piece like the loop it splits (c): applied once, the rows two at a time.
    ir::UreProgram tiled = grid_batch(7, 3, 3, 4, false, true);
    kir::Kernel rows = lower_to_kernel(compile_to_systolic(tiled), "k", {"u"});
    optimize_kernel(rows);
    Buffers tiled_inputs = random_input_buffers(tiled, 5);
    CHECK(test::run_cropped_against_reference(rows, tiled_inputs, ir::realize(tiled, tiled_inputs), 0) == "");
    // A tile that splits bx (reusing its name for a piece) is not a gpu_blocks loop of its own.
    REQUIRE_THROWS_WITH(validate_transform(grid_batch(7, 3, 4, 2, true)),
                        Catch::Contains("crosses array instances") && Catch::Contains("map 'bx' to the grid with gpu_blocks"));
}

TEST_CASE("the kernel executor catches a wrong mapping", "[kernel]") {
    // A kernel whose loads lose their guards reads outside the input at the border.
    Spec spec = build_spec("conv1d_sbm", test::params({{"C", 6}, {"Q", 3}, {"B", 2}}));
    ir::UreProgram program = spec.output.lower();
    kir::Kernel kernel = lower_to_kernel(compile_to_systolic(program), "k", {"x", "w"});
    kernel.body = kir::replace_calls(kernel.body, [](const Halide::Internal::Call *op) -> Halide::Expr {
        if (op->name != kir::intrinsic::load) return Halide::Expr();
        kir::Access a = kir::access_of(op);
        return kir::load(op->type, a.buffer, Halide::Internal::const_true(), a.coords);
    });
    Buffers buffers = random_input_buffers(program, 1);
    Buffers expected = ir::realize(program, buffers);
    for (auto &[name, b] : expected) buffers[name] = b.copy();
    REQUIRE_THROWS_WITH(execute_kernel(kernel, buffers), Contains("outside the buffer"));
}

TEST_CASE("the kernel mapping refuses what it cannot honour", "[kernel]") {
    Spec spec = build_spec("conv2d_ssam", test::params({{"K", 3}}));
    ir::UreProgram program = spec.output.lower();
    program.schedule.gpu_threads.push_back("b");
    REQUIRE_THROWS_WITH(lower_to_kernel(compile_to_systolic(program), "k", {"x", "w"}),
                        Contains("gpu_threads(b): only the array's space loop 's' maps to threads"));
    program.schedule.gpu_threads.clear();
    program.schedule.gpu_blocks.push_back("nope");
    REQUIRE_THROWS_WITH(lower_to_kernel(compile_to_systolic(program), "k", {"x", "w"}), Contains("gpu_blocks(nope)"));
    // Wider than 8 PEs per lane.
    Spec wide = build_spec("conv2d_ssam", test::params({{"K", 3}, {"PE", 257}, {"RT", 1}}));
    REQUIRE_THROWS_WITH(lower_to_kernel(compile_to_systolic(wide.output.lower()), "k", {"x", "w"}),
                        Contains("a warp runs at most 256 (8 per lane)"));
}

TEST_CASE("a long time loop rolls into blocks of its period, carrying values in register arrays", "[kernel]") {
    Spec spec = build_spec("conv2d_ssam", test::params({{"K", 5}, {"RT", 2}}));
    sys::SystolicProgram systolic = compile_to_systolic(spec.output.lower());
    KernelOptions options;
    options.max_unrolled_steps = 10;  // 25 steps x 2 rows
    kir::Kernel kernel = lower_to_kernel(systolic, "k", {"x", "w"}, options);
    optimize_kernel(kernel);
    std::ostringstream text;
    kir::print(text, kernel);
    // t = p + 5q: five blocks of five steps, the first and last peeled off
    // (peel_loops); Z (history 1) carried per row.
    CHECK_THAT(text.str(), Contains("for (t.block, 1, 3)"));
    CHECK_THAT(text.str(), Contains("allocate Z.carry[float32 * 2] in Register"));
    // The filter is still in constant memory: its index ranges over the block loop.
    CHECK(kernel.buffer("w").placement == kir::Placement::Constant);
    // Unrolled (the default for 50 steps), no loop.
    kir::Kernel unrolled = lower_to_kernel(systolic, "k", {"x", "w"});
    std::ostringstream plain;
    kir::print(plain, unrolled);
    CHECK_THAT(plain.str(), !Contains("t.block"));
}

TEST_CASE("a wavefront's time loop rolls into blocks of several periods, its block-only conditions folded", "[kernel]") {
    // jacobi3d, TH 8, T 2: the plane loop's coefficient (period) is 24 steps, a
    // value is read up to 56 steps later: a block is three periods, 72 steps.
    Spec spec = build_spec("jacobi3d", test::params({{"T", 2}, {"PE", 16}, {"TH", 8}, {"TZ", 20}}));
    KernelOptions options;
    options.max_unrolled_steps = 0;
    kir::Kernel kernel = lower_to_kernel(compile_to_systolic(spec.output.lower()), "k", {"u", "n"}, options);
    optimize_kernel(kernel);
    // The middle blocks' loop (peeled: from block 1), and its range.
    class Loops : public Halide::Internal::IRVisitor {
    public:
        std::vector<const Halide::Internal::For *> found;
        using IRVisitor::visit;
        void visit(const Halide::Internal::For *op) override {
            if (op->name == "time.block") found.push_back(op);
            IRVisitor::visit(op);
        }
    } loops;
    kernel.body.accept(&loops);
    REQUIRE(!loops.found.empty());
    const Halide::Internal::For *loop = loops.found.front();
    const int64_t *lo = Halide::Internal::as_const_int(loop->min), *n = Halide::Internal::as_const_int(loop->extent);
    REQUIRE(lo);
    REQUIRE(n);
    CHECK(*lo == 1);
    CHECK(*n == 24 * (20 + 2) / 72 - 2);  // 528 steps: 7 blocks of 72 and a tail of 24, less the two peeled
    // No condition of the block index alone is left that is one value on every middle block.
    class Conditions : public Halide::Internal::IRGraphVisitor {
    public:
        std::string var;
        std::vector<Halide::Expr> of_block;
        using IRGraphVisitor::include;
        void include(const Halide::Expr &e) override {
            if (e.type().is_bool() && !Halide::Internal::is_const(e) && only_block(e)) of_block.push_back(e);
            IRGraphVisitor::include(e);
        }
        bool only_block(const Halide::Expr &e) const {
            class Free : public Halide::Internal::IRVisitor {
            public:
                const std::string &var;
                bool block = false, other = false;
                explicit Free(const std::string &v) : var(v) {}
                using IRVisitor::visit;
                void visit(const Halide::Internal::Variable *op) override { (op->name == var ? block : other) = true; }
                void visit(const Halide::Internal::Call *) override { other = true; }
            } free(var);
            e.accept(&free);
            return free.block && !free.other;
        }
    } conditions;
    conditions.var = loop->name;
    loop->body.accept(&conditions);
    int constant = 0;
    for (const Halide::Expr &e : conditions.of_block) {
        std::set<bool> values;
        for (int64_t b = *lo; b < *lo + *n; b++) {
            values.insert(Halide::Internal::is_const_one(
                Halide::Internal::simplify(Halide::Internal::substitute(loop->name, Halide::Expr((int)b), e))));
        }
        constant += values.size() == 1;
    }
    INFO(conditions.of_block.size() << " conditions of the block index alone");
    CHECK(constant == 0);
}

TEST_CASE("rows re-read by a warp's next row block stay in registers (a sliding window)", "[kernel]") {
    // K = 5, RT = 2: a block reads rows 2*ros .. 2*ros + 5; the next block's
    // first four rows are this block's last four.
    Spec spec = build_spec("conv2d_ssam", test::params({{"K", 5}, {"RT", 2}, {"S", 4}}));
    kir::Kernel kernel = lower_to_kernel(compile_to_systolic(spec.output.lower()), "k", {"x", "w"});
    optimize_kernel(kernel);
    std::ostringstream text;
    kir::print(text, kernel);
    const std::string ir = text.str();
    CHECK_THAT(ir, Contains("allocate window.0.float32[float32 * 4] in Register"));
    CHECK_THAT(ir, Contains("for (ros, 0, 4)"));
    // Inside the loop, the unguarded copy loads two new rows (the fast path's loads carry no guard).
    size_t loop = ir.find("for (ros, 0, 4)");
    size_t loads = 0;
    for (size_t at = ir.find("pulse.load(\"x\", (uint1)1", loop); at != std::string::npos;
         at = ir.find("pulse.load(\"x\", (uint1)1", at + 1)) loads++;
    CHECK(loads == 2);
}

TEST_CASE("planes re-read by a warp's next plane stay in registers (a 3-D sliding window)", "[kernel][stencil]") {
    // stencil3d_27pt at RT = 3, S = 4: a plane reads rows 3*ro .. 3*ro + 4 of
    // planes d .. d + 2; the next plane's first two planes are this one's last
    // two, so each iteration loads the RT + 2 = 5 rows of one new plane.
    Spec spec = build_spec("stencil3d_27pt", test::params({{"RT", 3}, {"S", 4}}));
    kir::Kernel kernel = lower_to_kernel(compile_to_systolic(spec.output.lower()), "k", {"u"});
    optimize_kernel(kernel);
    std::ostringstream text;
    kir::print(text, kernel);
    const std::string ir = text.str();
    CHECK_THAT(ir, Contains("allocate window.0.float32[float32 * 10] in Register"));
    CHECK_THAT(ir, Contains("for (ds, 0, 4)"));
    size_t loop = ir.find("for (ds, 0, 4)");
    size_t loads = 0;
    for (size_t at = ir.find("pulse.load(\"u\", (uint1)1", loop); at != std::string::npos;
         at = ir.find("pulse.load(\"u\", (uint1)1", at + 1)) loads++;
    CHECK(loads == 5);
}

TEST_CASE("with prefetch_walks a walk's loads are issued one iteration ahead, and the kernel still matches", "[kernel]") {
    // conv2d_ssam at K = 5, RT = 2, S = 4: each row block loads two new rows;
    // with prefetching the block reads them from registers filled by the
    // block before and loads the next block's two rows (ros + 1) before its
    // arithmetic; the first block's come from a preload before the loop.
    KernelOptions options;
    options.prefetch_walks = true;
    Spec spec = build_spec("conv2d_ssam", test::params({{"K", 5}, {"RT", 2}, {"S", 4}}));
    kir::Kernel kernel = lower_to_kernel(compile_to_systolic(spec.output.lower()), "k", {"x", "w"}, options);
    optimize_kernel(kernel);
    std::ostringstream text;
    kir::print(text, kernel);
    const std::string ir = text.str();
    CHECK_THAT(ir, Contains("allocate prefetch.0.float32[float32 * 2] in Register"));
    size_t loop = ir.find("for (ros, 0, 4)");
    REQUIRE(loop != std::string::npos);
    CHECK(ir.rfind("prefetch.0.float32[1] = (float32)pulse.load(\"x\"", loop) != std::string::npos);  // the preload
    CHECK_THAT(ir.substr(loop), Contains("= prefetch.0.float32[0]"));
    // The interior copy's loads inside the loop: the two new rows of the next
    // block, rows 2 (ros + 1) + 4 and + 5, not this block's (+ 4, + 5).
    std::vector<std::string> loads;
    for (size_t at = ir.find("pulse.load(\"x\", (uint1)1", loop); at != std::string::npos;
         at = ir.find("pulse.load(\"x\", (uint1)1", at + 1)) {
        loads.push_back(ir.substr(at, ir.find('\n', at) - at));
    }
    REQUIRE(loads.size() == 2);
    CHECK_THAT(loads[0], EndsWith("*2) + 6)"));
    CHECK_THAT(loads[1], EndsWith("*2) + 7)"));
    // Walks with a partial last walk, fp32 and fp64, 2-D and 3-D, full and cropped.
    for (const Case &c : {Case{"conv2d_ssam", test::params({{"K", 5}, {"RT", 2}, {"S", 3}, {"R", 13}, {"B", 2}})},
                          Case{"stencil3d_7pt", test::params({{"F64", 1}, {"RT", 2}, {"S", 3}, {"R", 5}, {"D", 8}, {"B", 2}})},
                          Case{"stencil3d_27pt", test::params({{"RT", 3}, {"S", 2}, {"R", 7}, {"D", 5}, {"B", 2}})}}) {
        for (int crop : {0, 1}) {
            INFO(c.spec << " crop " << crop);
            CHECK(execute_against_reference(c, crop, options) == "");
        }
    }
}

TEST_CASE("with prefetch_walks a rolled time loop issues its next block's loads at its top", "[kernel][stencil]") {
    // jacobi2d as a wavefront (WAVE): each block of 3 rows x (T+1) steps loads
    // the next rows of the tile's input; they come from registers the block
    // before filled.
    KernelOptions options;
    options.prefetch_walks = true;
    options.max_unrolled_steps = 0;
    const Case wave{"jacobi2d", test::params({{"WAVE", 1}, {"T", 2}, {"PE", 16}, {"TH", 13}, {"BX", 2}, {"BY", 2}})};
    Spec spec = build_spec(wave.spec, wave.params);
    kir::Kernel kernel = lower_to_kernel(compile_to_systolic(spec.output.lower()), "k", {"u", "n"}, options);
    optimize_kernel(kernel);
    std::ostringstream text;
    kir::print(text, kernel);
    const std::string ir = text.str();
    // Three rows of the tile's input per block (3 rows x 3 steps).
    CHECK_THAT(ir, Contains("allocate prefetch.0.float32[float32 * 3] in Register"));
    size_t loop = ir.find("for (time.block, 1, ");
    REQUIRE(loop != std::string::npos);
    CHECK(ir.rfind("prefetch.0.float32[0] = (float32)pulse.load(\"u\"", loop) != std::string::npos);  // the preload
    const std::string body = ir.substr(loop);
    CHECK_THAT(body, Contains("= prefetch.0.float32[0]"));
    CHECK_THAT(body, Contains("prefetch.0.float32[0] = (float32)pulse.load(\"u\""));
    // fp32 and fp64, full and cropped, tails and two PEs per lane, against the reference.
    for (const Case &c : {wave, Case{"jacobi2d", test::params({{"WAVE", 1}, {"F64", 1}, {"T", 3}, {"PE", 45}, {"TH", 29}, {"BX", 2}, {"BY", 3}})}}) {
        for (int crop : {0, 1}) {
            INFO(c.spec << " crop " << crop);
            CHECK(execute_against_reference(c, crop, options) == "");
        }
    }
}

TEST_CASE("an array wider than a warp runs several PEs per lane, blocked", "[kernel]") {
    Spec spec = build_spec("conv2d_ssam", test::params({{"K", 3}, {"PE", 64}, {"RT", 1}}));
    kir::Kernel kernel = lower_to_kernel(compile_to_systolic(spec.output.lower()), "k", {"x", "w"});
    CHECK(kernel.pes_per_lane == 2);
    std::ostringstream text;
    kir::print(text, kernel);
    // Slot 0 takes the partial sum of the PE below it from slot 1 of the lane
    // below (a shuffle); slot 1 from slot 0 of its own lane (a register).
    CHECK_THAT(text.str(), Contains("pulse.shfl_up(Z.ri0.v1."));
    CHECK_THAT(text.str(), !Contains("pulse.shfl_up(Z.ri0.v0."));
}

TEST_CASE("an array over the warps of a block moves values across them through shared memory", "[kernel]") {
    Spec spec = build_spec("conv2d_ssam", test::params({{"K", 3}, {"PE", 70}, {"THREADS", 1}, {"RT", 2}}));
    kir::Kernel kernel = lower_to_kernel(compile_to_systolic(spec.output.lower()), "k", {"x", "w"});
    CHECK(kernel.warps_per_array == 3);
    CHECK(kernel.pes_per_lane == 1);
    std::ostringstream lowered;
    kir::print(lowered, kernel);
    CHECK_THAT(lowered.str(), Contains("pulse.array_shift("));
    optimize_kernel(kernel);
    std::ostringstream text;
    kir::print(text, kernel);
    const std::string ir = text.str();
    CHECK_THAT(ir, !Contains("pulse.array_shift("));
    CHECK_THAT(ir, Contains("in GPUShared"));
    CHECK_THAT(ir, Contains("pulse.shfl_up("));
    // The two rows' moves of a step share one barrier: as many barriers as steps that move.
    size_t barriers = 0, shuffles = 0;
    for (size_t at = ir.find("pulse.barrier()"); at != std::string::npos; at = ir.find("pulse.barrier()", at + 1)) barriers++;
    for (size_t at = ir.find("pulse.shfl_up("); at != std::string::npos; at = ir.find("pulse.shfl_up(", at + 1)) shuffles++;
    CHECK(barriers > 0);
    CHECK(shuffles == 2 * barriers);
    // Wider than a block's threads: two PEs per thread on 18 warps, or
    // refused where the option asks for one per thread.
    Spec wide = build_spec("conv2d_ssam", test::params({{"K", 3}, {"PE", 1100}, {"THREADS", 1}, {"RT", 1}}));
    const kir::Kernel two = lower_to_kernel(compile_to_systolic(wide.output.lower()), "k", {"x", "w"});
    CHECK(two.pes_per_lane == 2);
    CHECK(two.warps_per_array == 18);
    KernelOptions one;
    one.pes_per_thread = 1;
    REQUIRE_THROWS_WITH(lower_to_kernel(compile_to_systolic(wide.output.lower()), "k", {"x", "w"}, one),
                        Contains("a block runs at most 8192 (32 warps, 8 PEs per thread); with 1 PEs per thread (--pes-per-thread), 35 warps"));
    // Moves of a step that need more shared memory than a block has (25 rows
    // x 256 threads x 2 halves x 4 B) are cut into runs that fit, a barrier each.
    auto barriers_of = [](int rows) {
        Spec tall = build_spec("conv2d_ssam", test::params({{"K", 3}, {"PE", 256}, {"THREADS", 1}, {"RT", rows}}));
        kir::Kernel k = lower_to_kernel(compile_to_systolic(tall.output.lower()), "k", {"x", "w"});
        optimize_kernel(k);
        CHECK(kir::shared_bytes(k.body) <= kir::shared_bytes_per_block);
        std::ostringstream out;
        kir::print(out, k);
        size_t n = 0;
        for (size_t at = out.str().find("pulse.barrier()"); at != std::string::npos; at = out.str().find("pulse.barrier()", at + 1)) n++;
        return n;
    };
    CHECK(barriers_of(25) > barriers_of(12));
    CHECK(execute_against_reference({"conv2d_ssam", test::params({{"K", 3}, {"PE", 256}, {"THREADS", 1}, {"RT", 25}, {"R", 3}})}, 0) == "");
    // Without gpu_threads, the message names it.
    Spec lanes = build_spec("conv2d_ssam", test::params({{"K", 3}, {"PE", 300}, {"RT", 1}}));
    REQUIRE_THROWS_WITH(lower_to_kernel(compile_to_systolic(lanes.output.lower()), "k", {"x", "w"}),
                        Contains("or spread it over the warps of a block with gpu_threads(s)"));
}

TEST_CASE("a Func held in shared memory moves across the whole block, one barrier per group of steps", "[kernel][stencil]") {
    // jacobi3d PLANE: the tile's 13 x 7 plane over the threads of a block
    // (91 PEs, 3 warps), neighbours in y 13 threads away.
    const Params plane = test::params({{"PLANE", 1}, {"T", 2}, {"PE", 13}, {"TH", 7}, {"TZ", 9}});
    ir::UreProgram program = build_spec("jacobi3d", plane).output.lower();
    KernelOptions rolled;
    rolled.max_unrolled_steps = 0;
    kir::Kernel kernel = lower_to_kernel(compile_to_systolic(program), "k", {"u", "n"}, rolled);
    CHECK(kernel.warps_per_array == 3);
    CHECK(kernel.shared_state == std::vector<std::string>{"U"});
    std::ostringstream lowered;
    kir::print(lowered, kernel);
    CHECK_THAT(lowered.str(), Contains("U: held in shared memory") && Contains("pulse.array_shift(U.carry[2], 13, (uint1)1)"));
    optimize_kernel(kernel);
    std::ostringstream text;
    kir::print(text, kernel);
    const std::string ir = text.str();
    CHECK_THAT(ir, !Contains("pulse.array_shift(") && Contains("in GPUShared"));
    // Each computed step moves one value; batched, a barrier serves several.
    size_t barriers = 0, updates = 0;
    for (size_t at = ir.find("pulse.barrier()"); at != std::string::npos; at = ir.find("pulse.barrier()", at + 1)) barriers++;
    for (size_t at = ir.find("0.125000f*"); at != std::string::npos; at = ir.find("0.125000f*", at + 1)) updates++;
    CHECK(barriers > 0);
    CHECK(2 * barriers <= updates);
    CHECK_THROWS_WITH(check_cm_support(kernel, CmTarget::gen9()),
                      Contains("holds U in shared memory (U.store_in(MemoryType::Shared))") && Contains("drop store_in"));

    // Refused: a store_in(Shared) array of one warp; a tap further than a
    // warp without it; Global, and a compute_at level, for a Func.
    ir::UreProgram small = build_spec("jacobi3d", test::params({{"PLANE", 1}, {"T", 2}, {"PE", 6}, {"TH", 5}})).output.lower();
    CHECK_THROWS_WITH(lower_to_kernel(compile_to_systolic(small), "k", {"u", "n"}),
                      Contains("U.store_in(MemoryType::Shared)") && Contains("30 PEs run on one warp") &&
                          Contains("give the array more than 32 PEs"));
    ir::UreProgram unstaged = build_spec("jacobi3d", test::params({{"PLANE", 1}, {"T", 2}, {"PE", 33}, {"TH", 5}})).output.lower();
    unstaged.schedule.stagings.clear();
    CHECK_THROWS_WITH(lower_to_kernel(compile_to_systolic(unstaged), "k", {"u", "n"}),
                      Contains("a tap of U moves 33 PEs, further than a warp") &&
                          Contains("hold U in shared memory (U.store_in(MemoryType::Shared))"));
    ir::UreProgram global = program;
    for (ir::Staging &st : global.schedule.stagings) {
        if (st.source == "U") st.memory = MemoryType::Global;
    }
    CHECK_THROWS_WITH(lower_to_kernel(compile_to_systolic(global), "k", {"u", "n"}),
                      Contains("U.store_in(MemoryType::Global)") && Contains("a recurrence's values stay on chip"));
    ir::UreProgram placed = program;
    for (ir::Staging &st : placed.schedule.stagings) {
        if (st.source == "U") st.compute_at_func = "U", st.compute_at_loop = "bx";
    }
    CHECK_THROWS_WITH(lower_to_kernel(compile_to_systolic(placed), "k", {"u", "n"}),
                      Contains("lives for one array instance; drop compute_at(U, bx)"));
}

TEST_CASE("an input cached in shared memory is staged per array instance, between barriers", "[kernel]") {
    Spec spec = build_spec("stencil2d_5pt", test::params({{"CACHE", 2}, {"RT", 4}}));
    kir::Kernel kernel = lower_to_kernel(compile_to_systolic(spec.output.lower()), "k", {"u"});
    CHECK(kernel.buffer("u").cache == kir::InputCache::Shared);
    optimize_kernel(kernel);
    std::ostringstream text;
    kir::print(text, kernel);
    const std::string ir = text.str();
    // The box one warp reads: 32 columns x (RT + 2) rows.
    CHECK_THAT(ir, Contains("allocate u.shared[float32 * 192] in GPUShared"));
    CHECK_THAT(ir, Contains("input u: float32, 2-D, cached in shared memory"));
    CHECK_THAT(ir, Contains("pulse.barrier()"));
    // Every read of u inside the instance is a read of the copy: the only
    // loads of u left are the copy's own.
    size_t loads = 0;
    for (size_t at = ir.find("pulse.load(\"u\""); at != std::string::npos; at = ir.find("pulse.load(\"u\"", at + 1)) loads++;
    // The interior copy and the guarded copy, each in one batch of
    // 192 / 32 = 6 loads a thread ahead of their stores.
    CHECK(loads == 2 * 6);
    // L1: nothing hoisted, every use a load.
    Spec l1 = build_spec("stencil2d_5pt", test::params({{"CACHE", 1}, {"RT", 4}}));
    kir::Kernel through_l1 = lower_to_kernel(compile_to_systolic(l1.output.lower()), "k", {"u"});
    optimize_kernel(through_l1);
    std::ostringstream l1_text;
    kir::print(l1_text, through_l1);
    CHECK_THAT(l1_text.str(), !Contains("u.reg"));
    // A Func cannot be staged; a staging at a loop of the array is refused.
    ir::UreProgram program = build_spec("stencil2d_5pt", Params()).output.lower();
    program.schedule.stagings.push_back(ir::Staging{"u", "X", std::string("X"), std::string("q"), MemoryType::Shared});
    REQUIRE_THROWS_WITH(lower_to_kernel(compile_to_systolic(program), "k", {"u"}), Contains("not at 'q' (a loop of the array"));
    // At a grid loop it is the copy per instance; at an unrolled loop (a tile's rows) it is refused.
    program.schedule.stagings.back().compute_at_loop = "ro";
    CHECK_NOTHROW(lower_to_kernel(compile_to_systolic(program), "k", {"u"}));
    program.schedule.stagings.back().compute_at_loop = "ri";
    REQUIRE_THROWS_WITH(lower_to_kernel(compile_to_systolic(program), "k", {"u"}), Contains("not at 'ri'"));
    // Read through L1, there is no copy to place.
    program.schedule.stagings.back().memory = MemoryType::Global;
    REQUIRE_THROWS_WITH(lower_to_kernel(compile_to_systolic(program), "k", {"u"}), Contains("no copy is made: drop compute_at"));
}

TEST_CASE("the filter of conv2d_ssam moves to constant memory and the interior runs unguarded", "[kernel]") {
    Spec spec = build_spec("conv2d_ssam", test::params({{"K", 5}}));
    ir::UreProgram program = spec.output.lower();
    kir::Kernel kernel = lower_to_kernel(compile_to_systolic(program), "k", {"x", "w"});
    optimize_kernel(kernel);
    CHECK(kernel.buffer("w").placement == kir::Placement::Constant);
    CHECK(kernel.buffer("x").placement == kir::Placement::Global);
    // The unguarded copy: an IfThenElse at the top of the instance whose then-branch has no guarded load.
    std::ostringstream text;
    kir::print(text, kernel);
    CHECK_THAT(text.str(), Contains("pulse.load(\"x\", (uint1)1"));
}

TEST_CASE("a tile inside the grid runs the stencil update without the per-cell boundary test", "[kernel][stencil]") {
    // jacobi2d updates a cell only inside the grid (a select on the run-time
    // size n); the interior copy is taken only where the whole tile is inside,
    // and there every cell updates: no select reads n.
    for (const char *spec_name : {"jacobi2d", "jacobi3d"}) {
        INFO(spec_name);
        Spec spec = build_spec(spec_name, test::params({{"T", 2}, {"PE", 16}, {"TH", 8}}));
        ir::UreProgram program = spec.output.lower();
        kir::Kernel kernel = lower_to_kernel(compile_to_systolic(program), "k", {"u", "n"});
        optimize_kernel(kernel);
        REQUIRE(kernel.buffer("n").placement == kir::Placement::Constant);
        // Selects whose condition reads a let bound to a load of n, and the interior test's loads of n.
        class Count : public Halide::Internal::IRVisitor {
        public:
            std::set<std::string> n_lets;
            int selects_on_n = 0, tests_on_n = 0;
            bool reads_n(const Halide::Expr &e) const {
                bool found = false;
                kir::for_each_call(e, [&](const Halide::Internal::Call *c) {
                    found |= c->name == kir::intrinsic::load && kir::access_of(c).buffer == "n";
                });
                class Uses : public Halide::Internal::IRVisitor {
                public:
                    const std::set<std::string> &names;
                    bool found = false;
                    explicit Uses(const std::set<std::string> &n) : names(n) {}
                    using IRVisitor::visit;
                    void visit(const Halide::Internal::Variable *op) override { found |= names.count(op->name) > 0; }
                } uses(n_lets);
                e.accept(&uses);
                return found || uses.found;
            }
            using IRVisitor::visit;
            void visit(const Halide::Internal::LetStmt *op) override {
                if (reads_n(op->value)) n_lets.insert(op->name);
                IRVisitor::visit(op);
            }
            void visit(const Halide::Internal::Select *op) override {
                selects_on_n += reads_n(op->condition);
                IRVisitor::visit(op);
            }
            void visit(const Halide::Internal::IfThenElse *op) override {
                tests_on_n += reads_n(op->condition);
                IRVisitor::visit(op);
            }
        };
        // The instance: if (interior, n's test included) {fast} else {guarded}.
        const Halide::Internal::IfThenElse *split = nullptr;
        kir::on_instances(kernel.body, [&](const Halide::Internal::Stmt &body) {
            Halide::Internal::Stmt s = body;
            while (const auto *let = s.as<Halide::Internal::LetStmt>()) s = let->body;
            split = s.as<Halide::Internal::IfThenElse>();
            return body;
        });
        REQUIRE(split != nullptr);
        Count test, fast, guarded;
        split->condition.accept(&test);
        CHECK(test.reads_n(split->condition));
        split->then_case.accept(&fast);
        split->else_case.accept(&guarded);
        CHECK(fast.selects_on_n == 0);
        CHECK(guarded.selects_on_n > 0);
    }
}

TEST_CASE("tiles inside the grid take the update without the boundary test, and match the reference", "[kernel][stencil]") {
    // The random grid sizes of the other tests (1 ... 9) put no tile inside the
    // grid; here n is the whole tiled grid, so the middle tiles take the fast
    // copy. Emptying that copy must then break the result: it runs.
    struct Grid {
        Case c;
        std::vector<int32_t> size;
    };
    const std::vector<Grid> grids = {
        // jacobi2d, T 2: tiles of 16 x 9 write 12 x 5 cells; 4 x 4 tiles.
        {{"jacobi2d", test::params({{"T", 2}, {"PE", 16}, {"TH", 9}, {"BX", 4}, {"BY", 4}})}, {48, 20}},
        // The steps as a wavefront down tiles of 16 x 15 (12 x 11 cells written):
        // tile (1, 1) is inside.
        {{"jacobi2d", test::params({{"WAVE", 1}, {"T", 2}, {"PE", 16}, {"TH", 15}, {"BX", 4}, {"BY", 3}})}, {48, 33}},
        // jacobi3d, T 1, fp64: tiles of 32 x 5 x 6 write 30 x 3 x 4 cells (a full
        // warp: the test covers every lane's column); 3 x 3 x 3 tiles.
        {{"jacobi3d", test::params({{"F64", 1}, {"T", 1}, {"PE", 32}, {"TH", 5}, {"TZ", 6}, {"BX", 3}, {"BY", 3}, {"BZ", 3}})},
         {90, 9, 12}},
        // The plane over a block (PLANE), T 1: tiles of 12 x 9 x 6 write 10 x 7 x 4; 3 x 3 x 3 tiles.
        {{"jacobi3d", test::params({{"PLANE", 1}, {"T", 1}, {"PE", 12}, {"TH", 9}, {"TZ", 6}, {"BX", 3}, {"BY", 3}, {"BZ", 3}})},
         {30, 21, 12}},
    };
    KernelOptions rolled;
    rolled.max_unrolled_steps = 0;
    for (const Grid &g : grids) {
        INFO(g.c.spec << " on a grid of " << g.size.size() << " dimensions, " << g.size[0] << " x " << g.size[1]);
        auto set_size = [&](Buffers &inputs) {
            Halide::Buffer<int32_t> n(*inputs.at("n").raw_buffer());
            REQUIRE(n.dim(0).extent() == (int)g.size.size());
            for (size_t d = 0; d < g.size.size(); d++) n(n.dim(0).min() + (int)d) = g.size[d];
        };
        CHECK(execute_against_reference(g.c, 0, {}, set_size) == "");
        CHECK(execute_against_reference(g.c, 1, rolled, set_size) == "");
        auto empty_fast_copy = [](kir::Kernel &kernel) {
            kernel.body = kir::on_instances(kernel.body, [](const Halide::Internal::Stmt &body) {
                class Empty : public Halide::Internal::IRMutator {
                public:
                    bool done = false;
                    using IRMutator::visit;
                    Halide::Internal::Stmt visit(const Halide::Internal::IfThenElse *op) override {
                        if (done) return op;
                        done = true;
                        return Halide::Internal::IfThenElse::make(op->condition, Halide::Internal::Evaluate::make(0), op->else_case);
                    }
                } empty;
                return empty.mutate(body);
            });
        };
        CHECK(execute_against_reference(g.c, 0, {}, set_size, empty_fast_copy) != "");
    }
}

namespace {

/// A weight chain through two variables in the same step: W(c) copies V(c - 1),
/// V copies W. Lowered naively, W would read V before V is computed in the step.
Spec two_variable_chain(const Params &) {
    const int C = 5, Q = 3;
    Var c("c"), q("q"), s("s"), t("t");
    Input x(Float(32), 1, "x"), w(Float(32), 1, "w");
    std::vector<Var> loops{c, q};
    Func X(Float(32), loops, Place::Device, "X"), W(Float(32), loops, Place::Device, "W"),
        V(Float(32), loops, Place::Device, "V"), Z(Float(32), loops, Place::Device, "Z"), Out(Place::Device, "Out");
    X(c, q) = x(c + q);
    W(c, q) = select(c == 0, w(q), V(c - 1, q));
    V(c, q) = W(c, q);
    Z(c, q) = select(q == 0, 0.0f, Z(c, q - 1)) + X(c, q) * W(c, q);
    Out(c) = select(q == Q - 1, Z(c, q));
    X.merge_ures(W, V, Z, Out).set_bounds(c, 0, C, q, 0, Q);
    X.space_time_transform({c, q}, {s, t}, {1, 1, /**/ 0, 1});
    return Spec{Out, {x, w}};
}

}  // namespace

TEST_CASE("a same-step copy chain through two variables is one chain", "[kernel][systolic]") {
    Spec spec = two_variable_chain(Params());
    ir::UreProgram program = spec.output.lower();
    sys::SystolicProgram systolic = compile_to_systolic(program);
    Buffers inputs = random_input_buffers(program, 3);
    Buffers expected = ir::realize(program, inputs);
    CHECK(compare_outputs(expected, simulate(systolic, inputs)) == "");
    for (int64_t unroll : {int64_t(1024), int64_t(0)}) {
        KernelOptions options;
        options.max_unrolled_steps = unroll;
        kir::Kernel kernel = lower_to_kernel(systolic, "k", {"x", "w"}, options);
        optimize_kernel(kernel);
        CHECK(execute_against_reference(kernel, program, 3) == "");
    }
}

TEST_CASE("a read of a later step, never taken on the domain, does not reach the kernel", "[kernel]") {
    // Q = 1: Z(c, q - 1) is never read, and t = c - q gives it dt = -1. The
    // validator accepts the transform; the kernel must not read a value the
    // step has not computed (it read its own, unbound, value before).
    ir::UreProgram program = build_spec("conv1d_sbm", test::params({{"C", 4}, {"Q", 1}, {"B", 1}})).output.lower();
    program.schedule.transform->matrix = {{-1, 0}, {1, -1}};
    sys::SystolicProgram systolic = compile_to_systolic(program);
    kir::Kernel kernel = lower_to_kernel(systolic, "k", {"x", "w"});
    optimize_kernel(kernel);
    CHECK(execute_against_reference(kernel, program, 2) == "");
}

TEST_CASE("a stencil's points off its shape cost nothing: one multiply per point", "[kernel][stencil]") {
    // The radius-2 star has 9 points in its 5 x 5 window: with the time loop
    // unrolled each step's coefficient is a constant, and zero terms fold away.
    // The same in 3-D: the 7-point star in its 3 x 3 x 3 window.
    const std::map<std::string, size_t> points = {
        {"stencil2d_star2", 9}, {"stencil2d_25pt", 25}, {"stencil3d_7pt", 7}, {"stencil3d_27pt", 27}};
    for (const auto &[spec, expected] : points) {
        Spec built = build_spec(spec, test::params({{"RT", 1}, {"S", 1}}));
        kir::Kernel kernel = lower_to_kernel(compile_to_systolic(built.output.lower()), "k", {"u"});
        optimize_kernel(kernel);
        // Multiplications in the unguarded copy (the first of the two).
        std::ostringstream text;
        kir::print(text, kernel);
        std::string ir = text.str();
        std::string fast = ir.substr(0, ir.find("} else {"));
        size_t multiplies = 0;
        for (size_t at = fast.find("*0."); at != std::string::npos; at = fast.find("*0.", at + 1)) multiplies++;
        INFO(spec);
        CHECK(multiplies == expected);
    }
}

namespace {

/// Runs `program`'s kernel, unrolled and with its time loop rolled, against the interpreter.
void check_unrolled_and_rolled(const ir::UreProgram &program, const std::vector<std::string> &inputs) {
    sys::SystolicProgram systolic = compile_to_systolic(program);
    for (int64_t unroll : {int64_t(1024), int64_t(0)}) {
        INFO("max_unrolled_steps " << unroll);
        KernelOptions options;
        options.max_unrolled_steps = unroll;
        kir::Kernel kernel = lower_to_kernel(systolic, "k", inputs, options);
        optimize_kernel(kernel);
        CHECK(pulse::execute_against_reference(kernel, program, 5) == "");
    }
}

}  // namespace

TEST_CASE("a variable a select leaves undefined on part of the domain is computed there, never read", "[kernel]") {
    // A is defined for i >= 1 only, and B reads it only there; every PE still
    // computes A. The undefined branch reached the kernel IR, which cannot run it.
    Var i("i"), s("s"), t("t");
    Input x(Int(32), 1, "x");
    Func A(Int(32), {i}, Place::Device, "A"), B(Int(32), {i}, Place::Device, "B"), Out(Place::Device, "Out");
    A(i) = select(i >= 1, x(i) * 3);
    B(i) = select(i >= 1, A(i), 4);
    Out(i) = B(i);
    A.merge_ures(B, Out).set_bounds(i, 0, 5);
    A.space_time_transform({i}, {s, t}, {1, /**/ 0});
    check_unrolled_and_rolled(Out.lower(), {"x"});
}

TEST_CASE("a value read from the same lanes by two later steps is shuffled once per step, under its own name", "[kernel]") {
    // B reads A two PEs away two and three steps later: both steps shuffle
    // A's value of one step by two lanes, and their lets must not share a name.
    Var i("i"), j("j"), s("s"), t("t");
    Input x(Int(32), 1, "x");
    Func A(Int(32), {i, j}, Place::Device, "A"), B(Int(32), {i, j}, Place::Device, "B"), Out(Place::Device, "Out");
    A(i, j) = x(i + j);
    B(i, j) = select(j >= 2, A(i, j - 2), 0) + select(i >= 1 && j >= 2, A(i - 1, j - 2), 0);
    Out(i, j) = B(i, j);
    A.merge_ures(B, Out).set_bounds(i, 0, 3, j, 0, 4);
    A.space_time_transform({i, j}, {s, t}, {0, 1, /**/ 1, 1});
    check_unrolled_and_rolled(Out.lower(), {"x"});
}

TEST_CASE("an input in constant memory is copied only where the domain reads it", "[kernel]") {
    // Three loops on a linear array with a rolled time loop: the loops around
    // the reads of y also range over idle steps, whose indices reach beyond what
    // the domain reads (and the buffer holds). The region copied to constant
    // memory must stay inside what the domain reads.
    Var i("i"), j("j"), k("k"), s("s"), t("t");
    Input y(Float(32), 1, "y");
    Func A(Float(32), {i, j, k}, Place::Device, "A"), Out(Place::Device, "Out");
    A(i, j, k) = y(k - j);
    Out(k) = select(i == 1 && j == 1, A(i, j, k));
    A.merge_ures(Out).set_bounds(i, 0, 2, j, 0, 2, k, 0, 2);
    A.space_time_transform({i, j, k}, {s, t}, {1, -2, 1, /**/ -1, -2, 2});
    ir::UreProgram program = Out.lower();
    check_unrolled_and_rolled(program, {"y"});
    KernelOptions rolled;
    rolled.max_unrolled_steps = 0;
    kir::Kernel kernel = lower_to_kernel(compile_to_systolic(program), "k", {"y"}, rolled);
    optimize_kernel(kernel);
    const kir::BufferArg &b = kernel.buffer("y");
    REQUIRE(b.placement == kir::Placement::Constant);
    CHECK(b.region_min[0] >= -1);
    CHECK(b.region_min[0] + b.region_extent[0] <= 2);
}
