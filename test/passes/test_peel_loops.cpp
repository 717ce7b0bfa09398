// peel_loops (lower/PeelLoops.h) on kernels built by hand: a rolled time loop
// inside an array instance loses its first and last iteration to
// straight-line copies with the loop variable a constant, and the middle loop
// has the expressions of the loop variable alone that are constant over its
// range folded; loops the pass must not touch stay as they are.
#include "passes/PassTest.h"

#include "ir/ExactSimplify.h"
#include "lower/PeelLoops.h"

using namespace pulse;
using namespace Halide;
using namespace Halide::Internal;

namespace {

using test::var;
using test::i32;

/// buffer.min.0 <= c < buffer.min.0 + buffer.extent.0, written out (not
/// simplified: Cast::make, not cast(), which would fold a constant) so that
/// it reads the same around a loop variable and around the constant the pass
/// substitutes for it.
Expr inside(const std::string &buffer, const Expr &c) {
    Expr c64 = Cast::make(Int(64), c);
    return kir::buffer_min(buffer, 0) <= c64 && c64 < kir::buffer_min(buffer, 0) + kir::buffer_extent(buffer, 0);
}

/// A 1-D convolution rolled over its time blocks (the shape of conv1d_sbm
/// after lower_to_kernel with --unroll-steps=0): instance b covers outputs
/// b*16 .. b*16+15; lane l holds x[b*16 + l], block k multiplies it by w[k]
/// and adds the partial sum of lane l - 1 (carried in a register), and the
/// last block's lanes 4..19 store Out[b*16 + l - 4].
constexpr int kBlocks = 5;

/// One block's body. The conditions and the decode the pass folds are
/// parameters, so the expected copies can be written with them folded.
///   is_first: the block reads no carried value (block == 0)
///   is_last:  the block stores the outputs (block == last)
///   phase:    a decode of the block index, (block + 3) / 4: 0 on block 0,
///             1 on every later one (scales this block's product)
Stmt conv_block(const Expr &block, const Expr &is_first, const Expr &is_last, const Expr &phase) {
    Expr b = var("b"), l = test::lane();
    Expr xi = b * 16 + l, oi = b * 16 + l - 4;
    Expr carry = kir::register_load(Int(32), "Z.carry", 0);
    Expr z = select(is_first, i32(0), var("Z.up")) + var("X.t0") * var("W.t0") * var("phase.t0");
    Stmt store = IfThenElse::make(is_last && l >= 4 && l < 20, kir::store("Out", inside("Out", oi), var("Z.t0"), {oi}));
    Stmt body = Block::make(store, kir::register_store("Z.carry", var("Z.t0"), 0));
    body = LetStmt::make("Z.t0", z, body);
    body = LetStmt::make("Z.up", kir::lane_shift(carry, 1), body);
    body = LetStmt::make("phase.t0", phase, body);
    body = LetStmt::make("W.t0", kir::load(Int(32), "w", inside("w", block), {block}), body);
    body = LetStmt::make("X.t0", kir::load(Int(32), "x", inside("x", xi), {xi}), body);
    return body;
}

/// The kernel around `loop` (what the instance runs after the carry's
/// initialisation): grid b over ceil(Out.extent / 16) instances.
kir::Kernel conv_kernel(const Stmt &loop) {
    kir::Kernel k;
    k.name = "peel_test";
    k.buffers = {test::buffer_arg("x", Int(32), 1, false), test::buffer_arg("w", Int(32), 1, false),
                 test::buffer_arg("Out", Int(32), 1, true)};
    Expr outputs = kir::buffer_extent("Out", 0) + kir::buffer_min("Out", 0);
    k.grid.push_back({"b", 0, max((outputs + make_const(Int(64), 15)) / make_const(Int(64), 16), make_const(Int(64), 0))});
    k.pe_count = 20;
    Stmt instance = kir::allocate_registers("Z.carry", Int(32), 1, Block::make(kir::register_store("Z.carry", i32(0), 0), loop));
    k.body = LetStmt::make("b", cast(Int(32), kir::warp_index()),
                           ProducerConsumer::make(kir::array_instance_marker, true, instance));
    return k;
}

Stmt rolled_loop() {
    Expr t = var("t.block");
    return For::make("t.block", i32(0), i32(kBlocks), ForType::Serial, DeviceAPI::None,
                     conv_block(t, t == 0, t == kBlocks - 1, (t + 3) / 4));
}

/// Odd sizes: 37 outputs (3 instances, the last one partly outside Out), x
/// shorter than the outputs read, so some loads fall outside and read 0.
std::map<std::string, std::vector<int>> conv_sizes() { return {{"x", {39}}, {"w", {kBlocks}}, {"Out", {37}}}; }

}  // namespace

TEST_CASE("peel_loops peels the first and last block off a rolled time loop", "[passes][peel_loops]") {
    const kir::Kernel before = conv_kernel(rolled_loop());
    kir::Kernel after = before;
    peel_loops(after);  // the pass alone: no simplify_exact, its output is fully specified

    // Expected: the block with t.block = 0, the loop over blocks 1..3, the
    // block with t.block = 4. The ends keep their conditions as written, over
    // constants (the pipeline's simplify_exact folds them next). In the
    // middle loop the expressions of t.block alone that take one value over
    // 1..3 are folded: block == 0 and block == 4 to false, and the decode
    // (block + 3) / 4 to 1 (each evaluated on 1, 2, 3). t.block itself, and
    // int64(t.block) in w's guard (1, 2, 3 differ), stay.
    Expr t = var("t.block"), first = i32(0), last = i32(kBlocks - 1);
    Stmt first_block = conv_block(first, first == 0, first == kBlocks - 1, (first + 3) / 4);
    Stmt middle = For::make("t.block", i32(1), i32(kBlocks - 2), ForType::Serial, DeviceAPI::None,
                            conv_block(t, const_false(), const_false(), i32(1)));
    Stmt last_block = conv_block(last, last == 0, last == kBlocks - 1, (last + 3) / 4);
    const kir::Kernel expected = conv_kernel(Block::make({first_block, middle, last_block}));
    REQUIRE_SAME_IR(after.body, expected.body);

    // The same outputs on random inputs, for two seeds.
    for (uint32_t seed : {1u, 2u}) {
        Buffers buffers = test::make_buffers(before, conv_sizes(), seed);
        REQUIRE(test::same_outputs(before, after, buffers) == "");
    }
}

TEST_CASE("peel_loops then simplify_exact leaves the ends straight-line and the middle unconditional",
          "[passes][peel_loops]") {
    const kir::Kernel before = conv_kernel(rolled_loop());
    kir::Kernel after = before;
    peel_loops(after);
    after.body = simplify_exact(after.body);  // as the pipeline runs it after every pass

    // What the header promises of the peeled loop once simplified: block 0
    // reads no carried value (its product, scaled by phase 0, stays: integer
    // products of loaded values are not index arithmetic; the unused shuffle
    // goes), the middle blocks neither select nor store, and the last block
    // stores under the lanes' condition alone.
    Expr b = var("b"), l = test::lane();
    Expr xi = b * 16 + l, oi = b * 16 + l - 4;
    auto x_load = [&] { return kir::load(Int(32), "x", kir::in_bounds(before.buffer("x"), {xi}), {xi}); };
    auto w_load = [&](const Expr &k) { return kir::load(Int(32), "w", kir::in_bounds(before.buffer("w"), {k}), {k}); };
    Expr up = kir::lane_shift(kir::register_load(Int(32), "Z.carry", 0), 1);
    auto block = [&](const Expr &k, const Expr &z, bool stores) {
        Stmt s = kir::register_store("Z.carry", var("Z.t0"), 0);
        if (stores) {
            s = Block::make(IfThenElse::make(4 <= l && l < 20, kir::store("Out", kir::in_bounds(before.buffer("Out"), {oi}),
                                                                             var("Z.t0"), {oi})),
                            s);
        }
        return LetStmt::make("Z.t0", z, s);
    };
    Expr xw = var("X.t0") * var("W.t0");
    Stmt first = LetStmt::make("X.t0", x_load(), LetStmt::make("W.t0", w_load(i32(0)), block(i32(0), 0 + xw * 0, false)));
    Stmt middle = For::make("t.block", i32(1), i32(kBlocks - 2), ForType::Serial, DeviceAPI::None,
                            LetStmt::make("X.t0", x_load(),
                                          LetStmt::make("W.t0", w_load(var("t.block")),
                                                        LetStmt::make("Z.up", up, block(var("t.block"), var("Z.up") + xw * 1, false)))));
    Stmt last = LetStmt::make("X.t0", x_load(),
                              LetStmt::make("W.t0", w_load(i32(kBlocks - 1)),
                                            LetStmt::make("Z.up", up, block(i32(kBlocks - 1), var("Z.up") + xw * 1, true))));
    kir::Kernel expected = conv_kernel(Block::make({first, middle, last}));
    // Only the arithmetic's spelling is left to the simplifier: expected
    // goes through it too (a no-op where it is already in normal form).
    expected.body = simplify_exact(expected.body);
    REQUIRE_SAME_IR(after.body, expected.body);

    Buffers buffers = test::make_buffers(before, conv_sizes(), 3);
    REQUIRE(test::same_outputs(before, after, buffers) == "");
}

TEST_CASE("peel_loops peels a loop that starts past 0 at its own first and last index", "[passes][peel_loops]") {
    // for (i, 2, 3): lane l < 3 stores Out[l * 3 + i - 2] = x[l * 3 + i - 2] * i.
    auto body = [](const Expr &i) {
        Expr at = test::lane() * 3 + i - 2;
        return IfThenElse::make(test::lane() < 3, kir::store("Out", inside("Out", at),
                                                            kir::load(Int(32), "x", inside("x", at), {at}) * i, {at}));
    };
    auto kernel = [](const Stmt &s) {
        kir::Kernel k;
        k.name = "peel_offset";
        k.buffers = {test::buffer_arg("x", Int(32), 1, false), test::buffer_arg("Out", Int(32), 1, true)};
        k.pe_count = 3;
        k.body = ProducerConsumer::make(kir::array_instance_marker, true, s);
        return k;
    };
    const kir::Kernel before = kernel(For::make("i", i32(2), i32(3), ForType::Serial, DeviceAPI::None, body(var("i"))));
    kir::Kernel after = before;
    peel_loops(after);  // the pass alone

    // i = 2, the loop over i in [3, 4) (one iteration), i = 4.
    const kir::Kernel expected = kernel(Block::make(
        {body(i32(2)), For::make("i", i32(3), i32(1), ForType::Serial, DeviceAPI::None, body(var("i"))), body(i32(4))}));
    REQUIRE_SAME_IR(after.body, expected.body);

    Buffers buffers = test::make_buffers(before, {{"x", {9}}, {"Out", {9}}}, 4);
    REQUIRE(test::same_outputs(before, after, buffers) == "");
}

TEST_CASE("peel_loops leaves loops outside an instance, short or of run-time bounds as they are",
          "[passes][peel_loops]") {
    // Per-thread loop r (outside the array instance, 3 iterations) around an
    // instance holding a loop of 2 iterations and one of run-time extent
    // (x.extent.0): none is a rolled time loop the pass may peel.
    Expr r = var("r"), l = test::lane(), j = var("j"), k = var("k");
    Expr at = r * 64 + l * 2 + j;
    Stmt two = For::make("j", i32(0), i32(2), ForType::Serial, DeviceAPI::None,
                         kir::store("Out", inside("Out", at), kir::load(Int(32), "x", inside("x", at), {at}) + j, {at}));
    // The run-time loop adds x[0 .. x.extent.0) into the lane's first element.
    Expr x_extent = cast(Int(32), kir::buffer_extent("x", 0));
    Expr first = r * 64 + l * 2;
    Stmt sum = For::make("k", i32(0), x_extent, ForType::Serial, DeviceAPI::None,
                         kir::store("Out", inside("Out", first),
                                    kir::load(Int(32), "Out", inside("Out", first), {first}) +
                                        kir::load(Int(32), "x", inside("x", k), {k}),
                                    {first}));
    Stmt instance = ProducerConsumer::make(kir::array_instance_marker, true, Block::make(two, sum));
    kir::Kernel before;
    before.name = "peel_nothing";
    before.buffers = {test::buffer_arg("x", Int(32), 1, false), test::buffer_arg("Out", Int(32), 1, true)};
    before.pe_count = 32;
    before.body = For::make("r", i32(0), i32(3), ForType::Serial, DeviceAPI::None, instance);

    kir::Kernel after = before;
    peel_loops(after);  // the pass alone
    REQUIRE_SAME_IR(after.body, before.body);

    Buffers buffers = test::make_buffers(before, {{"x", {151}}, {"Out", {191}}}, 5);
    REQUIRE(test::same_outputs(before, after, buffers) == "");
}
