// exchange_across_warps alone, on kernels of several warps built by hand.
// Each run of array_shift lets that do not read one another becomes, per
// move by d: the in-warp shuffle (a `NAME.in_warp` let), a store to shared
// memory by the |d| lanes at the warp's edge whose value leaves the warp,
// then one barrier for the run, then the move's let reading shared memory on
// the |d| lanes whose source is in the neighbouring warp, and a flip of the
// phase that picks the half of the shared array the next run uses. The pass
// is run without the pipeline's simplify_exact after it: the expected IR is
// written in the forms the header describes (index phase * half + slot *
// threads + thread, read at thread - d), so node-for-node equality says
// exactly which slots, lanes and halves are used. The kernel executor checks
// barriers and races on shared memory, so same_outputs fails on a missing
// barrier or a half reused too early.
#include "passes/PassTest.h"

#include "lower/ExchangeAcrossWarps.h"

using namespace pulse;
using namespace Halide;
using namespace Halide::Internal;
using Catch::Matchers::Contains;

namespace {

using test::var;
Expr warp() { return var(kir::array_warp_var); }
/// Thread t of the array: array.warp * 32 + lane (kir::array_thread's form).
Expr thread() { return warp() * kir::warp_size + test::lane(); }

const char *phase = "exchange.phase";
Expr phase_now() { return kir::register_load(Int(32), phase, 0); }

/// `let b = int32(warp.index)` around the instance marker.
Stmt instance_in_grid(const Stmt &instance) {
    return LetStmt::make("b", cast(Int(32), kir::warp_index()),
                         ProducerConsumer::make_produce(kir::array_instance_marker, instance));
}

kir::Kernel make_kernel(int warps, std::vector<kir::BufferArg> buffers, const Stmt &instance) {
    return test::kernel_over_warps("exchange_test", warps, std::move(buffers), instance);
}

/// Element `index` of shared array `array`.
Expr shared_load(Type t, const std::string &array, const Expr &index) {
    return Load::make(t, array, index, Buffer<>(), Parameter(), const_true(), ModulusRemainder());
}
Stmt shared_store(const std::string &array, const Expr &value, const Expr &index) {
    return Store::make(array, value, index, Parameter(), const_true(), ModulusRemainder());
}

/// What the pass promises for one move by d of `value` in slot `slot` of
/// `array` (half the array is `half` elements, `warps` warps per array).
struct Move {
    std::string name;
    Expr value;
    int d;
    std::string array;
    int slot, half;
    int warps;

    Expr base() const { return phase_now() * half + slot * (warps * kir::warp_size); }
    /// The shuffle within the warp.
    Stmt in_warp(const Stmt &body) const { return LetStmt::make(name + ".in_warp", kir::lane_shift(value, d), body); }
    /// The |d| lanes at the edge whose value leaves the warp write it at their own thread's element.
    Stmt publish() const {
        Expr send = d > 0 ? test::lane() >= kir::warp_size - d : test::lane() < -d;
        return IfThenElse::make(send, shared_store(array, value, base() + thread()));
    }
    /// The |d| lanes whose source is in the neighbouring warp (not past the
    /// array's ends) read thread t - d's element; the others keep the shuffle.
    Stmt receive(const Stmt &body) const {
        Expr from_neighbour = d > 0 ? test::lane() < d && warp() > 0 : test::lane() >= kir::warp_size + d && warp() < warps - 1;
        Expr from_shared = shared_load(value.type(), array, base() + thread() - d);
        return LetStmt::make(name, select(from_neighbour, from_shared, var(name + ".in_warp", value.type())), body);
    }
};

/// `body` in the shared arrays (outermost the last in name order: the pass
/// wraps them in map order) and the phase register, set to 0 first.
Stmt with_exchange_storage(const std::vector<std::pair<std::string, std::pair<Type, int>>> &arrays, const Stmt &body) {
    Stmt s = kir::allocate_registers(phase, Int(32), 1, Block::make(kir::register_store(phase, 0, 0), body));
    for (const auto &[name, type_and_elements] : arrays) {
        s = Allocate::make(name, type_and_elements.first, Halide::MemoryType::GPUShared,
                           {make_const(Int(32), type_and_elements.second)}, const_true(), s);
    }
    return s;
}

Stmt flip_phase(const Stmt &rest) { return Block::make(kir::register_store(phase, 1 - phase_now(), 0), rest); }

}  // namespace

TEST_CASE("exchange_across_warps lowers one run of moves with one barrier, a slot per value of each type",
          "[passes][exchange_across_warps]") {
    // Two warps, 64 PEs per instance. One array step: four moves that do
    // not read one another (one run): v by 1, 2v by -3 (int32, slots 0 and
    // 1), v / 2 as float by 2 (float32, slot 0 of its own array) and 7v by
    // 0 (no movement: the value itself).
    const kir::BufferArg x = test::buffer_arg("x", Int(32), 1, false), out = test::buffer_arg("Out", Int(32), 1, true),
                         f = test::buffer_arg("F", Float(32), 1, true);
    Expr i = var("b") * 64 + thread();
    Expr v = var("v"), fv = cast(Float(32), v) * 0.5f;
    Stmt stores = Block::make(kir::store("Out", kir::in_bounds(out, {i}), var("up") + var("down") * 100 + var("same"), {i}),
                              kir::store("F", kir::in_bounds(f, {i}), var("fup", Float(32)), {i}));
    Stmt instance = LetStmt::make(
        "v", kir::load(Int(32), "x", kir::in_bounds(x, {i}), {i}),
        LetStmt::make("up", kir::array_shift(v, 1),
                      LetStmt::make("down", kir::array_shift(v * 2, -3),
                                    LetStmt::make("fup", kir::array_shift(fv, 2), LetStmt::make("same", kir::array_shift(v * 7, 0), stores)))));
    const kir::Kernel before = make_kernel(2, {x, out, f}, instance);

    kir::Kernel after = before;
    exchange_across_warps(after);

    // Same outputs first (the executor's race and barrier checks give the
    // clearer message), then the IR. Odd sizes: a partial last instance
    // (guards), and one instance of 37.
    for (int n : {37, 64, 150}) {
        INFO("Out, F and x of " << n);
        Buffers buffers = test::make_buffers(before, {{"x", {n}}, {"Out", {n}}, {"F", {n}}}, 20 + n);
        REQUIRE(test::same_outputs(before, after, buffers) == "");
    }

    // int32: two values a barrier, 64 threads: halves of 128, 256 in all;
    // float32: one value, halves of 64.
    const Move up{"up", v, 1, "exchange.int32", 0, 128, 2}, down{"down", v * 2, -3, "exchange.int32", 1, 128, 2},
        fup{"fup", fv, 2, "exchange.float32", 0, 64, 2};
    Stmt lowered = up.in_warp(down.in_warp(fup.in_warp(Block::make(
        {up.publish(), down.publish(), fup.publish(), kir::barrier(),
         up.receive(down.receive(fup.receive(LetStmt::make("same", v * 7, flip_phase(stores)))))}))));
    Stmt expected = with_exchange_storage({{"exchange.float32", {Float(32), 128}}, {"exchange.int32", {Int(32), 256}}},
                                          instance_in_grid(LetStmt::make("v", kir::load(Int(32), "x", kir::in_bounds(x, {i}), {i}), lowered)));
    REQUIRE_SAME_IR(after.body, expected);
}

TEST_CASE("exchange_across_warps gives each dependent move its own barrier and alternates the halves",
          "[passes][exchange_across_warps]") {
    // Three warps; a chain of moves each reading the last: a = v by 1, c =
    // (a + v) by 1, e = (c - v) by -2. Three runs, three barriers; the runs
    // use halves 0, 1, 0 (the phase flips after each run's reads), so the
    // third run's writes to half 0 come after the second barrier, which every
    // reader of the first run has passed.
    const kir::BufferArg x = test::buffer_arg("x", Int(32), 1, false), out = test::buffer_arg("Out", Int(32), 1, true);
    Expr i = var("b") * 96 + thread();
    Expr v = var("v"), a = var("a"), c = var("c");
    Stmt store = kir::store("Out", kir::in_bounds(out, {i}), var("e"), {i});
    Stmt instance = LetStmt::make(
        "v", kir::load(Int(32), "x", kir::in_bounds(x, {i}), {i}),
        LetStmt::make("a", kir::array_shift(v, 1),
                      LetStmt::make("c", kir::array_shift(a + v, 1), LetStmt::make("e", kir::array_shift(c - v, -2), store))));
    const kir::Kernel before = make_kernel(3, {x, out}, instance);

    kir::Kernel after = before;
    exchange_across_warps(after);

    // Same outputs first, then the IR; sizes around one instance of 96.
    for (int n : {95, 97, 250}) {
        INFO("Out and x of " << n);
        Buffers buffers = test::make_buffers(before, {{"x", {n}}, {"Out", {n}}}, 40 + n);
        REQUIRE(test::same_outputs(before, after, buffers) == "");
    }

    // One int32 value a barrier: halves of 96 threads.
    const Move ma{"a", v, 1, "exchange.int32", 0, 96, 3}, mc{"c", a + v, 1, "exchange.int32", 0, 96, 3},
        me{"e", c - v, -2, "exchange.int32", 0, 96, 3};
    auto run = [](const Move &m, const Stmt &rest) {
        return m.in_warp(Block::make({m.publish(), kir::barrier(), m.receive(flip_phase(rest))}));
    };
    Stmt lowered = run(ma, run(mc, run(me, store)));
    Stmt expected = with_exchange_storage({{"exchange.int32", {Int(32), 192}}},
                                          instance_in_grid(LetStmt::make("v", kir::load(Int(32), "x", kir::in_bounds(x, {i}), {i}), lowered)));
    REQUIRE_SAME_IR(after.body, expected);
}

TEST_CASE("exchange_across_warps leaves a kernel with nothing to move across warps as it is", "[passes][exchange_across_warps]") {
    const kir::BufferArg x = test::buffer_arg("x", Int(32), 1, false), out = test::buffer_arg("Out", Int(32), 1, true);
    Expr v = var("v");
    kir::Kernel before;
    std::map<std::string, std::vector<int>> sizes{{"x", {45}}, {"Out", {45}}};
    SECTION("an array of one warp, even with an array_shift") {
        // The header: nothing to do for an array of one warp (array_shift is
        // then a move within the warp).
        Expr i = var("b") * 32 + test::lane();
        Stmt instance = LetStmt::make(
            "v", kir::load(Int(32), "x", kir::in_bounds(x, {i}), {i}),
            LetStmt::make("up", kir::array_shift(v, 1),
                          LetStmt::make("down", kir::lane_shift(v, -2),
                                        kir::store("Out", kir::in_bounds(out, {i}), var("up") * 10 + var("down"), {i}))));
        before = make_kernel(1, {x, out}, instance);
    }
    SECTION("an array of two warps whose moves stay within each warp") {
        // Warp shuffles only: no array_shift, no shared memory, no phase.
        Expr i = var("b") * 64 + thread();
        Stmt instance = LetStmt::make(
            "v", kir::load(Int(32), "x", kir::in_bounds(x, {i}), {i}),
            LetStmt::make("up", kir::lane_shift(v, 1), kir::store("Out", kir::in_bounds(out, {i}), var("up") - v, {i})));
        before = make_kernel(2, {x, out}, instance);
        sizes = {{"x", {101}}, {"Out", {101}}};
    }
    kir::Kernel after = before;
    exchange_across_warps(after);
    REQUIRE_SAME_IR(after.body, before.body);
    REQUIRE(test::same_outputs(before, after, test::make_buffers(before, sizes, 9)) == "");
}

TEST_CASE("exchange_across_warps moves a value held in shared memory once, to readers any distance away",
          "[passes][exchange_across_warps]") {
    // Two warps; one run: v moved through shared memory by 1, -1, 33 and -40
    // (one slot: every thread writes v once), 2v by 5 (a second slot), and
    // 3v by 0 (the value itself, no slot). Each move reads thread t - d's
    // element where that thread is inside the array, else keeps the own value.
    const kir::BufferArg x = test::buffer_arg("x", Int(32), 1, false), out = test::buffer_arg("Out", Int(32), 1, true);
    Expr i = var("b") * 64 + thread();
    Expr v = var("v");
    const std::vector<std::pair<std::string, std::pair<Expr, int>>> moves{
        {"a", {v, 1}}, {"c", {v, -1}}, {"e", {v, 33}}, {"f", {v, -40}}, {"g", {v * 2, 5}}, {"h", {v * 3, 0}}};
    Expr sum = var("a") + var("c") * 3 + var("e") * 5 + var("f") * 7 + var("g") * 11 + var("h");
    Stmt store = kir::store("Out", kir::in_bounds(out, {i}), sum, {i});
    Stmt body = store;
    for (size_t k = moves.size(); k-- > 0;) {
        body = LetStmt::make(moves[k].first, kir::array_shift(moves[k].second.first, moves[k].second.second, true), body);
    }
    Stmt instance = LetStmt::make("v", kir::load(Int(32), "x", kir::in_bounds(x, {i}), {i}), body);
    const kir::Kernel before = make_kernel(2, {x, out}, instance);

    kir::Kernel after = before;
    exchange_across_warps(after);

    for (int n : {63, 64, 200}) {
        INFO("Out and x of " << n);
        Buffers buffers = test::make_buffers(before, {{"x", {n}}, {"Out", {n}}}, 70 + n);
        REQUIRE(test::same_outputs(before, after, buffers) == "");
    }

    // Two int32 values a barrier, 64 threads: halves of 128.
    auto base = [](int slot) { return phase_now() * 128 + slot * 64; };
    auto received = [&](const std::string &name, const Expr &value, int slot, int d, const Stmt &rest) {
        Expr inside = d > 0 ? thread() >= d : thread() < 64 + d;
        return LetStmt::make(name, select(inside, shared_load(Int(32), "exchange.int32", base(slot) + thread() - d), value), rest);
    };
    Stmt reads = LetStmt::make("h", v * 3, flip_phase(store));
    reads = received("g", v * 2, 1, 5, reads);
    reads = received("f", v, 0, -40, reads);
    reads = received("e", v, 0, 33, reads);
    reads = received("c", v, 0, -1, reads);
    reads = received("a", v, 0, 1, reads);
    Stmt lowered = Block::make({shared_store("exchange.int32", v, base(0) + thread()), shared_store("exchange.int32", v * 2, base(1) + thread()),
                                kir::barrier(), reads});
    Stmt expected = with_exchange_storage({{"exchange.int32", {Int(32), 256}}},
                                          instance_in_grid(LetStmt::make("v", kir::load(Int(32), "x", kir::in_bounds(x, {i}), {i}), lowered)));
    REQUIRE_SAME_IR(after.body, expected);

    // The barrier is what orders the writes before the reads: the executor's
    // race check catches its absence.
    kir::Kernel no_barrier = after;
    class DropBarrier : public IRMutator {
    public:
        using IRMutator::visit;
        Stmt visit(const Evaluate *op) override {
            if (kir::as_intrinsic(op->value, kir::intrinsic::barrier)) return Evaluate::make(0);
            return op;
        }
    } drop;
    no_barrier.body = drop.mutate(no_barrier.body);
    REQUIRE(test::same_outputs(before, no_barrier, test::make_buffers(before, {{"x", {64}}, {"Out", {64}}}, 5)) != "");
}

TEST_CASE("exchange_across_warps cuts a run where shared memory is full, and refuses moves that cannot fit",
          "[passes][exchange_across_warps]") {
    // Two warps beside a staged array: with 48 KiB - 1 KiB staged, a run of
    // int32 moves (512 B a slot) holds two; three moves of three values take
    // two barriers. With all 48 KiB staged, no move fits: a ResourceLimit.
    const kir::BufferArg x = test::buffer_arg("x", Int(32), 1, false), out = test::buffer_arg("Out", Int(32), 1, true);
    Expr i = var("b") * 64 + thread();
    Expr v = var("v");
    auto staged_beside = [&](int64_t staged_elements) {
        Stmt body = LetStmt::make(
            "v", kir::load(Int(32), "x", kir::in_bounds(x, {i}), {i}),
            LetStmt::make("a", kir::array_shift(v, 1, true),
                          LetStmt::make("c", kir::array_shift(v * 2, 1, true),
                                        LetStmt::make("e", kir::array_shift(v * 3, 1, true),
                                                      Block::make(shared_store("staged", v, thread()),
                                                                  kir::store("Out", kir::in_bounds(out, {i}), var("a") + var("c") + var("e"), {i}))))));
        kir::Kernel k = make_kernel(2, {x, out}, body);
        k.body = Allocate::make("staged", Int(32), Halide::MemoryType::GPUShared, {make_const(Int(32), staged_elements)}, const_true(), k.body);
        return k;
    };
    kir::Kernel fits = staged_beside((kir::shared_bytes_per_block - 1024) / 4);
    exchange_across_warps(fits);
    std::ostringstream text;
    text << fits.body;
    size_t barriers = 0;
    for (size_t at = text.str().find("pulse.barrier()"); at != std::string::npos; at = text.str().find("pulse.barrier()", at + 1)) barriers++;
    CHECK(barriers == 2);
    CHECK(kir::shared_bytes(fits.body) <= kir::shared_bytes_per_block);
    kir::Kernel full = staged_beside(kir::shared_bytes_per_block / 4);
    try {
        exchange_across_warps(full);
        FAIL("no refusal");
    } catch (const pulse::CompileError &e) {
        CHECK(e.refusal == Refusal::ResourceLimit);
        CHECK_THAT(std::string(e.what()), Contains("more than the 49152 bytes of a block"));
    }
}

TEST_CASE("exchange_across_warps refuses a move of a warp or more", "[passes][exchange_across_warps]") {
    // |d| >= 32 would need a source two warps away: a CompileError.
    const kir::BufferArg x = test::buffer_arg("x", Int(32), 1, false), out = test::buffer_arg("Out", Int(32), 1, true);
    Expr i = var("b") * 64 + thread();
    Stmt instance = LetStmt::make("far", kir::array_shift(kir::load(Int(32), "x", kir::in_bounds(x, {i}), {i}), -32),
                                  kir::store("Out", kir::in_bounds(out, {i}), var("far"), {i}));
    kir::Kernel k = make_kernel(2, {x, out}, instance);
    REQUIRE_THROWS_WITH(exchange_across_warps(k), Contains("far moves values by -32 threads") &&
                                                      Contains("moves across warps must be constants below 32"));
    // Through shared memory, up to the array's threads (64 here), not beyond.
    Stmt beyond = LetStmt::make("far", kir::array_shift(kir::load(Int(32), "x", kir::in_bounds(x, {i}), {i}), 64, true),
                                kir::store("Out", kir::in_bounds(out, {i}), var("far"), {i}));
    kir::Kernel shared = make_kernel(2, {x, out}, beyond);
    REQUIRE_THROWS_WITH(exchange_across_warps(shared), Contains("far moves values by 64 threads") &&
                                                           Contains("moves through shared memory must be constants below 64"));
}
