// shorten_guarded_loops (lower/ShortenGuardedLoops.h) on kernels built by
// hand: a serial loop inside an array instance whose whole body is one
// IfThenElse (no else) true on a prefix of its iterations (`i < n`,
// `i * k <= n`) loses the guard, its extent cut to that prefix,
// max(0, min(extent, last - min + 1)); a bound the same on every thread (a
// value read from an input, a buffer's extent, a constant) is cut, one that
// differs between the threads of an array (through `lane`, a let of it, or
// `array.warp`) stays a guard, since the kernel executor runs the threads in
// lock step and refuses a loop whose bounds differ between them (the test
// shows it refusing the cut the pass must not make); a loop with an else, a
// body of more than the IfThenElse, a condition that is not a prefix, a loop
// that is not serial or outside an instance stay as they are. The outputs are
// the same on the executor before and after, at bounds before, inside and
// past the loop, and a cut one iteration too long is caught. A bound through
// a let of array.warp alone, or one the loop's body changes, stays a guard.
#include "passes/PassTest.h"

#include <functional>

#include "ir/ExactSimplify.h"
#include "lower/ShortenGuardedLoops.h"

using namespace pulse;
using namespace Halide;
using namespace Halide::Internal;
using Catch::Matchers::Contains;

namespace {

using test::var;
using test::i32;

constexpr int kSteps = 8;

/// `array.warp` (Int(32)).
Expr array_warp() { return Variable::make(Int(32), kir::array_warp_var); }

/// The buffers and shape of the kernels below, `warps` warps per array, one
/// instance, no loop yet (`body` is set by guarded_kernel).
kir::Kernel kernel_shape(int warps) {
    kir::Kernel k;
    k.name = "shorten_test";
    k.buffers = {test::buffer_arg("x", Int(32), 1, false), test::buffer_arg("n", Int(32), 1, false),
                 test::buffer_arg("Out", Int(32), 1, true)};
    k.warps_per_array = warps;
    k.pe_count = warps * kir::warp_size;
    return k;
}

/// One step of thread t: S.acc += x[i * threads + t] + i (the load under its
/// bounds guard).
Stmt step(const kir::Kernel &k, const Expr &i) {
    const Expr at = i * k.array_threads() + kir::array_thread(k);
    const Expr acc = kir::register_load(Int(32), "S.acc", 0);
    return kir::register_store("S.acc", acc + test::guarded_load(k, "x", {at}) + i, 0);
}

/// Thread t binds n.bound = n[0] (the same on every thread) and n.lane =
/// n.bound + lane, sets S.acc = 0, runs `loop` (built on the kernel's shape)
/// and stores S.acc in Out[t].
kir::Kernel guarded_kernel(int warps, const std::function<Stmt(const kir::Kernel &)> &loop) {
    kir::Kernel k = kernel_shape(warps);
    const Expr acc = kir::register_load(Int(32), "S.acc", 0);
    const Stmt body = Block::make({kir::register_store("S.acc", i32(0), 0), loop(k),
                                   test::guarded_store(k, "Out", acc, {kir::array_thread(k)})});
    const Stmt bound = test::lets({{"n.bound", test::guarded_load(k, "n", {i32(0)})},
                                   {"n.lane", var("n.bound") + test::lane()}},
                                  kir::allocate_registers("S.acc", Int(32), 1, body));
    k.body = test::instance(bound);
    return k;
}

/// for (i, first, extent) if (condition) step(i).
std::function<Stmt(const kir::Kernel &)> guarded_loop(int first, int extent, const Expr &condition) {
    return [=](const kir::Kernel &k) {
        return test::serial("i", first, extent, IfThenElse::make(condition, step(k, var("i"))));
    };
}

/// for (i, first, extent) step(i), no guard: what the pass makes of the loop.
std::function<Stmt(const kir::Kernel &)> cut_loop(int first, const Expr &extent) {
    return [=](const kir::Kernel &k) {
        return For::make("i", i32(first), extent, ForType::Serial, DeviceAPI::None, step(k, var("i")));
    };
}

/// The extent of a loop over [first, first + extent) cut after `last`, as
/// the pass spells it.
Expr cut_extent(int first, int extent, const Expr &last) {
    return simplify_exact(max(0, min(i32(extent), cast(Int(32), last - first + 1))));
}

/// The first loop of `s` (outermost first); nullptr if none.
const For *first_loop(const Stmt &s) {
    struct Find : IRVisitor {
        const For *loop = nullptr;
        using IRVisitor::visit;
        void visit(const For *op) override {
            if (!loop) loop = op;
        }
    } find;
    s.accept(&find);
    return find.loop;
}

/// Random buffers for guarded_kernel(warps, ...) with n[0] = `n`.
Buffers buffers_with(const kir::Kernel &k, int n, int x_extent, uint32_t seed) {
    Buffers buffers = test::make_buffers(k, {{"x", {x_extent}}, {"n", {1}}, {"Out", {k.array_threads()}}}, seed);
    store_element(buffers.at("n"), {0}, Scalar::of_int(n));
    return buffers;
}

}  // namespace

TEST_CASE("last_iteration solves a prefix condition for the loop variable, and nothing else",
          "[passes][shorten_guarded_loops]") {
    const Expr i = var("i"), n = var("n.bound");
    auto last = [](const Expr &condition) { return last_iteration(condition, "i"); };
    // i < 5: up to 4; i <= 5: up to 5.
    REQUIRE(last(i < 5));
    CHECK(is_const(*last(i < 5), 4));
    REQUIRE(last(i <= 5));
    CHECK(is_const(*last(i <= 5), 5));
    // i * 32 < 37: up to 1 (32 <= 36, 64 > 36); i * 3 <= -1: up to -1 (rounded down).
    REQUIRE(last(i * 32 < 37));
    CHECK(is_const(*last(i * 32 < 37), 1));
    REQUIRE(last(i * 3 <= -1));
    CHECK(is_const(*last(i * 3 <= -1), -1));
    // A run-time bound: an expression of it, free of i, the same value.
    const std::optional<Expr> run_time = last(i < n);
    REQUIRE(run_time);
    CHECK(!expr_uses_var(*run_time, "i"));
    CHECK(can_prove(*run_time == n - 1));
    // Not a prefix: a suffix, every other iteration, a condition of two tests.
    CHECK(!last(n <= i));
    CHECK(!last(i % 2 == 0));
    CHECK(!last(i < n && test::lane() < 5));
    CHECK(!last(i == 3));
}

TEST_CASE("shorten_guarded_loops cuts a loop guarded by a bound the same on every thread to the prefix where it holds",
          "[passes][shorten_guarded_loops]") {
    struct Case {
        const char *what;
        int first;
        Expr condition;
        Expr last;  ///< the last iteration where the condition holds
    };
    const Expr i = var("i"), n = var("n.bound");
    const Expr x_extent = cast(Int(32), kir::buffer_extent("x", 0));
    const std::vector<Case> cases = {
        {"a value read from an input", 0, i < n, n - 1},
        {"a multiple of the loop variable below a value read", 0, i * 3 <= n, n / 3},
        {"an input's extent", 0, i < x_extent, x_extent - 1},
        {"a loop from 2 under a value read", 2, i < n, n - 1},
    };
    for (const Case &c : cases) {
        INFO(c.what);
        const kir::Kernel before = guarded_kernel(1, guarded_loop(c.first, kSteps, c.condition));
        kir::Kernel after = before;
        shorten_guarded_loops(after);  // the pass alone

        // The loop runs the IfThenElse's then_case, its extent cut.
        const For *loop = first_loop(after.body);
        REQUIRE(loop);
        CHECK(!loop->body.as<IfThenElse>());
        CHECK(!equal(loop->extent, i32(kSteps)));
        CHECK(!expr_uses_var(loop->extent, "i"));
        const kir::Kernel expected = guarded_kernel(1, cut_loop(c.first, cut_extent(c.first, kSteps, simplify_exact(c.last))));
        REQUIRE_SAME_IR(after.body, expected.body);

        // The same outputs with the bound before the loop, at its first
        // iterations, inside, at its end and past it; one iteration more is
        // caught.
        const kir::Kernel late = guarded_kernel(1, cut_loop(c.first, cut_extent(c.first, kSteps, simplify_exact(c.last + 1))));
        int late_caught = 0;
        for (int bound : {-7, -1, 0, 1, 2, 3, 5, 7, 8, 9, 30}) {
            INFO("n = " << bound);
            // For the extent's case, x's extent is the bound (at least 1).
            const int x_elements = equal(c.condition, i < x_extent) ? std::max(bound, 1) : 300;
            const Buffers buffers = buffers_with(before, bound, x_elements, 11 + bound);
            CHECK(test::same_outputs(before, after, buffers) == "");
            late_caught += test::same_outputs(before, late, buffers) != "";
        }
        CHECK(late_caught >= 3);
    }
}

TEST_CASE("shorten_guarded_loops cuts a loop under a constant bound to a constant extent", "[passes][shorten_guarded_loops]") {
    const Expr i = var("i");
    struct Case {
        int first;
        Expr condition;
        int extent;  ///< the cut loop's
    };
    const std::vector<Case> cases = {
        {0, i < 5, 5},          // iterations 0 .. 4
        {0, i * 32 < 37, 2},    // 0 and 1
        {2, i < 5, 3},          // 2 .. 4
        {2, i <= 30, kSteps},   // every iteration: the extent stays
        {0, i < -3, 0},         // none
        {3, i < 2, 0},          // none: the loop starts past the bound
    };
    for (const Case &c : cases) {
        INFO("for (i, " << c.first << ", " << kSteps << ") if (" << c.condition << ")");
        const kir::Kernel before = guarded_kernel(1, guarded_loop(c.first, kSteps, c.condition));
        kir::Kernel after = before;
        shorten_guarded_loops(after);
        const kir::Kernel expected = guarded_kernel(1, cut_loop(c.first, i32(c.extent)));
        REQUIRE_SAME_IR(after.body, expected.body);
        const Buffers buffers = buffers_with(before, 0, 300, 40 + c.extent);
        CHECK(test::same_outputs(before, after, buffers) == "");
    }
}

TEST_CASE("shorten_guarded_loops keeps the guard of a bound that differs between the threads of an array",
          "[passes][shorten_guarded_loops]") {
    struct Case {
        const char *what;
        int warps;
        Expr condition;
    };
    const Expr i = var("i"), n = var("n.bound");
    const std::vector<Case> cases = {
        {"the lane: i * 32 + lane < 37", 1, i * 32 + test::lane() < 37},
        {"a let of the lane: i < n.lane", 1, i < var("n.lane")},
        {"the warp in the array: i * 2 + array.warp < n.bound", 2, i * 2 + array_warp() < n},
        {"the thread in the array: i * 64 + array.warp * 32 + lane < 150", 2, i * 64 + array_warp() * 32 + test::lane() < 150},
    };
    for (const Case &c : cases) {
        INFO(c.what);
        // The solver does find the loop's last iteration: only its
        // dependence on the thread keeps the guard.
        const std::optional<Expr> last = last_iteration(c.condition, "i");
        REQUIRE(last);
        const kir::Kernel before = guarded_kernel(c.warps, guarded_loop(0, kSteps, c.condition));
        kir::Kernel after = before;
        shorten_guarded_loops(after);
        REQUIRE_SAME_IR(after.body, before.body);  // guard kept, extent unchanged

        // On the executor: the kernel after the pass runs and gives the same
        // outputs; the loop cut to each thread's own bound (what the pass
        // must not make) is refused, its bounds differing between threads.
        // (At n = 3 and 5 the cut extents differ between threads in every
        // case; at some other bounds they agree, clamped to 0 or 8.)
        const kir::Kernel cut = guarded_kernel(c.warps, cut_loop(0, cut_extent(0, kSteps, *last)));
        for (int bound : {-1, 0, 3, 5, 9, 40}) {
            INFO("n = " << bound);
            const Buffers buffers = buffers_with(before, bound, 300, 60 + bound);
            CHECK(test::same_outputs(before, after, buffers) == "");
            if (bound == 3 || bound == 5) {
                CHECK_THAT(test::same_outputs(before, cut, buffers), Contains("has different bounds on threads"));
            }
        }
    }
}

TEST_CASE("shorten_guarded_loops leaves a loop with an else, a longer body, a condition that is not a prefix, "
          "a loop that is not serial or outside an instance as it is",
          "[passes][shorten_guarded_loops]") {
    const Expr i = var("i"), n = var("n.bound");
    using Loop = std::function<Stmt(const kir::Kernel &)>;
    const Expr acc = kir::register_load(Int(32), "S.acc", 0);
    const std::vector<std::pair<const char *, Loop>> cases = {
        {"an else branch",
         [&](const kir::Kernel &k) {
             return test::serial("i", 0, kSteps, IfThenElse::make(i < n, step(k, i), kir::register_store("S.acc", acc - 1, 0)));
         }},
        {"a statement after the IfThenElse",
         [&](const kir::Kernel &k) {
             return test::serial("i", 0, kSteps, Block::make(IfThenElse::make(i < n, step(k, i)), kir::register_store("S.acc", acc * 2, 0)));
         }},
        {"a let around the IfThenElse",
         [&](const kir::Kernel &k) {
             return test::serial("i", 0, kSteps, LetStmt::make("i.next", i + 1, IfThenElse::make(var("i.next") <= n, step(k, i))));
         }},
        {"a suffix: n.bound <= i", guarded_loop(0, kSteps, n <= i)},
        {"every other iteration", guarded_loop(0, kSteps, i % 2 == 0)},
        {"two tests: i < n.bound && lane < 5", guarded_loop(0, kSteps, i < n && test::lane() < 5)},
        {"an unrolled loop",
         [&](const kir::Kernel &k) { return test::serial("i", 0, kSteps, IfThenElse::make(i < n, step(k, i)), ForType::Unrolled); }},
    };
    for (const auto &[what, loop] : cases) {
        INFO(what);
        const kir::Kernel before = guarded_kernel(1, loop);
        kir::Kernel after = before;
        shorten_guarded_loops(after);
        REQUIRE_SAME_IR(after.body, before.body);
    }

    // Outside an instance: a per-thread loop around it, guarded by a
    // constant bound (inside, it would be cut).
    kir::Kernel outside = kernel_shape(1);
    const Stmt inner = test::instance(Evaluate::make(0));
    outside.body = test::serial("r", 0, kSteps, IfThenElse::make(var("r") < 3, inner));
    const kir::Kernel outside_before = outside;
    shorten_guarded_loops(outside);
    REQUIRE_SAME_IR(outside.body, outside_before.body);
}

// A bound that differs between threads only through a let of the warp's
// index, and a bound the loop's body changes, both stay guards.

TEST_CASE("shorten_guarded_loops keeps the guard of a bound read from a let of array.warp alone",
          "[passes][shorten_guarded_loops]") {
    // LaneVarying follows lets of `lane` only: the pass follows lets of
    // `array.warp` itself. Cut, the loop's extents would differ between the
    // array's two warps, which the executor refuses.
    const Expr i = var("i"), n = var("n.bound");
    const kir::Kernel before = guarded_kernel(2, [&](const kir::Kernel &k) {
        return LetStmt::make("w.bound", n + array_warp(),
                             test::serial("i", 0, kSteps, IfThenElse::make(i < var("w.bound"), step(k, i))));
    });
    kir::Kernel after = before;
    shorten_guarded_loops(after);
    REQUIRE_SAME_IR(after.body, before.body);
}

TEST_CASE("shorten_guarded_loops keeps the guard of a bound read from a register array", "[passes][shorten_guarded_loops]") {
    // A register array may hold a different value on each warp (written from
    // array.warp, or under a guard of it), which LaneVarying does not follow:
    // a bound read from one stays a guard.
    const Expr i = var("i"), n = var("n.bound");
    const kir::Kernel before = guarded_kernel(2, [&](const kir::Kernel &k) {
        const Expr w = kir::register_load(Int(32), "W", 0);
        return kir::allocate_registers("W", Int(32), 1,
                                       Block::make(kir::register_store("W", n + array_warp(), 0),
                                                   test::serial("i", 0, kSteps, IfThenElse::make(i < w, step(k, i)))));
    });
    kir::Kernel after = before;
    shorten_guarded_loops(after);
    REQUIRE_SAME_IR(after.body, before.body);
    const Buffers buffers = buffers_with(before, 3, 300, 7);
    CHECK(test::same_outputs(before, after, buffers) == "");
}

TEST_CASE("shorten_guarded_loops keeps the guard of a bound the loop itself changes",
          "[passes][shorten_guarded_loops]") {
    // The cut extent reads the bound once, before the loop; the guard read it
    // at every iteration. Here the bound is a register the loop's body
    // increments, so the guard holds on every iteration, where a cut loop
    // would stop after n.bound of them.
    const Expr i = var("i"), n = var("n.bound");
    const kir::Kernel before = guarded_kernel(1, [&](const kir::Kernel &k) {
        const Expr c = kir::register_load(Int(32), "C", 0);
        const Stmt body = Block::make(kir::register_store("C", c + 1, 0), step(k, i));
        return kir::allocate_registers("C", Int(32), 1,
                                       Block::make(kir::register_store("C", n, 0), test::serial("i", 0, kSteps, IfThenElse::make(i < c, body))));
    });
    kir::Kernel after = before;
    shorten_guarded_loops(after);
    const Buffers buffers = buffers_with(before, 3, 300, 5);
    CHECK(test::same_outputs(before, after, buffers) == "");
}
