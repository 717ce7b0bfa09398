// specialize_interior alone, on instances built by hand: the instance
// becomes `if (interior) <unguarded copy> else <the original>`, where the
// interior test says that, per buffer, both corners of the box of
// coordinates its guarded accesses reach lie inside it. The pass is run
// without the pipeline's simplify_exact that follows it: the test it emits is
// already simplified, and the two copies are the body as given (guards
// replaced by true in the first), so the expected IR is written in the same
// forms as the input.
#include "passes/PassTest.h"

#include "ir/ExactSimplify.h"
#include "lower/SpecializeInterior.h"

using namespace pulse;
using namespace Halide;
using namespace Halide::Internal;

namespace {

using test::var;
Expr warp() { return var(kir::array_warp_var); }

/// `let b = int32(warp.index)`: the one grid loop of these kernels, around
/// the instance marker.
Stmt instance_in_grid(const Stmt &instance) {
    return LetStmt::make("b", cast(Int(32), kir::warp_index()),
                         ProducerConsumer::make_produce(kir::array_instance_marker, instance));
}

/// A kernel over a grid b in [0, ceil(Out.extent.0 / per_instance)).
kir::Kernel make_kernel(const std::string &name, std::vector<kir::BufferArg> buffers, int per_instance, const Stmt &instance) {
    kir::Kernel k;
    k.name = name;
    k.buffers = std::move(buffers);
    k.grid.push_back({"b", 0, (kir::buffer_extent("Out", 0) + (per_instance - 1)) / per_instance});
    k.pe_count = per_instance;
    k.body = instance_in_grid(instance);
    return k;
}

/// The instance under the marker of `body` (built by instance_in_grid).
Stmt instance_of(const Stmt &body) {
    const LetStmt *b = body.as<LetStmt>();
    REQUIRE(b);
    const ProducerConsumer *pc = b->body.as<ProducerConsumer>();
    REQUIRE(pc);
    return pc->body;
}

/// `s` with every load and store guard replaced by true: the interior copy.
Stmt unguarded(const Stmt &s) {
    std::function<Expr(const Call *)> drop = [&](const Call *op) -> Expr {
        if (op->name != kir::intrinsic::load && op->name != kir::intrinsic::store) return Expr();
        std::vector<Expr> args = op->args;
        args[1] = const_true();
        for (size_t i = 2; i < args.size(); i++) args[i] = kir::replace_calls(args[i], drop);
        return Call::make(op->type, op->name, args, op->call_type);
    };
    return kir::replace_calls(s, drop);
}

/// For each array instance b of `kernel` on `buffers`: whether the pass's
/// interior test (the condition of the instance's if) holds. Lets the cases
/// check that their sizes send some instances each way.
std::vector<bool> interior_taken(const kir::Kernel &kernel, const Buffers &buffers, int instances) {
    const IfThenElse *split = instance_of(kernel.body).as<IfThenElse>();
    REQUIRE(split);
    std::map<std::string, Expr> sizes;
    for (const kir::BufferArg &arg : kernel.buffers) {
        const Buffer<> &buf = buffers.at(arg.name);
        for (int d = 0; d < arg.dimensions; d++) {
            sizes[arg.name + ".min." + std::to_string(d)] = make_const(Int(64), buf.dim(d).min());
            sizes[arg.name + ".extent." + std::to_string(d)] = make_const(Int(64), buf.dim(d).extent());
        }
    }
    std::vector<bool> taken;
    for (int b = 0; b < instances; b++) {
        sizes["b"] = make_const(Int(32), b);
        Expr test = simplify_exact(substitute(sizes, split->condition));
        INFO("instance " << b << ": " << test);
        REQUIRE(is_const(test));
        taken.push_back(is_const_one(test));
    }
    return taken;
}

/// The pass's test for one buffer: the box [lo, hi] lies inside it (both
/// corners in bounds).
Expr box_inside(const kir::BufferArg &buffer, const std::vector<Expr> &lo, const std::vector<Expr> &hi) {
    return kir::in_bounds(buffer, lo) && kir::in_bounds(buffer, hi);
}

}  // namespace

TEST_CASE("specialize_interior splits an instance into an unguarded interior copy and the guarded original",
          "[passes][specialize_interior]") {
    // One warp, 16 PEs per instance: Out[i] = x[i] + x[i + 1], i = b*16 + 0..15.
    // Every lane loads x[b*16 + lane]; the shuffle brings x[b*16 + lane - 1];
    // lanes 1..16 (under `active`) store at b*16 + lane - 1.
    const kir::BufferArg x = test::buffer_arg("x", Int(32), 1, false), out = test::buffer_arg("Out", Int(32), 1, true);
    Expr i = var("b") * 16 + test::lane();
    Stmt store = IfThenElse::make(var("active", Bool()),
                                  kir::store("Out", kir::in_bounds(out, {i - 1}), var("up") + var("x.reg0"), {i - 1}));
    Stmt instance = LetStmt::make(
        "x.reg0", kir::load(Int(32), "x", kir::in_bounds(x, {i}), {i}),
        LetStmt::make("up", kir::lane_shift(var("x.reg0"), 1),
                      LetStmt::make("active", 1 <= test::lane() && test::lane() <= 16, store)));
    const kir::Kernel before = make_kernel("stencil", {x, out}, 16, instance);

    kir::Kernel after = before;
    specialize_interior(after);

    // Same outputs first (an access outside a buffer is the executor's
    // clearest message), then the IR. Odd sizes; x one longer than Out (the
    // stencil's reach). Out 46, x 47:
    // instance 0 reads x[0, 31] (interior); instance 1 would read x[16, 47],
    // one past x's end: the box's last corner decides. Out 53, x 54: 0 and 1
    // interior, 2 and 3 not. Out 5, x 6: the one instance is guarded.
    struct Size {
        int out, x;
        std::vector<bool> interior;
    };
    for (const Size &s : {Size{46, 47, {true, false, false}}, Size{53, 54, {true, true, false, false}}, Size{5, 6, {false}},
                          Size{48, 49, {true, true, false}}}) {
        INFO("Out " << s.out << ", x " << s.x);
        Buffers buffers = test::make_buffers(before, {{"x", {s.x}}, {"Out", {s.out}}}, 7 + s.out);
        REQUIRE(test::same_outputs(before, after, buffers) == "");
        CHECK(interior_taken(after, buffers, (int)s.interior.size()) == s.interior);
    }

    // Boxes: x over all 32 lanes, [b*16, b*16 + 31]; Out over the lanes
    // `active` lets through (1..16), [b*16, b*16 + 15]. Per buffer (in name
    // order) both corners in bounds.
    Expr b16 = var("b") * 16;
    Expr interior = simplify_exact(box_inside(out, {b16}, {b16 + 15}) && box_inside(x, {b16}, {b16 + 31}));
    Stmt expected = instance_in_grid(IfThenElse::make(interior, unguarded(instance), instance));
    REQUIRE_SAME_IR(after.body, expected);
    // The interior copy has no guard left (spelled out, not only via unguarded()).
    const IfThenElse *split = instance_of(after.body).as<IfThenElse>();
    REQUIRE(split);
    int guarded = 0;
    class CountGuards : public IRVisitor {
    public:
        int &n;
        explicit CountGuards(int &n) : n(n) {}
        using IRVisitor::visit;
        void visit(const Call *op) override {
            if ((op->name == kir::intrinsic::load || op->name == kir::intrinsic::store) && !is_const_one(op->args[1])) n++;
            IRVisitor::visit(op);
        }
    } count(guarded);
    split->then_case.accept(&count);
    CHECK(guarded == 0);
}

TEST_CASE("specialize_interior takes the box over every iteration of a constant loop, narrowed where a condition pins it",
          "[passes][specialize_interior]") {
    // 2-D, one warp: for r in [0, 3): v = x(i, r); if (r >= 1) Out(i, r - 1) = 2 v,
    // i = b*32 + lane. The store runs for r in [1, 2] only (the condition pins r).
    const kir::BufferArg x = test::buffer_arg("x", Int(32), 2, false), out = test::buffer_arg("Out", Int(32), 2, true);
    Expr i = var("b") * 32 + test::lane(), r = var("r");
    Stmt step = LetStmt::make("v", kir::load(Int(32), "x", kir::in_bounds(x, {i, r}), {i, r}),
                              IfThenElse::make(1 <= r, kir::store("Out", kir::in_bounds(out, {i, r - 1}), var("v") * 2, {i, r - 1})));
    Stmt instance = For::make("r", 0, 3, ForType::Serial, DeviceAPI::None, step);
    const kir::Kernel before = make_kernel("rows", {x, out}, 32, instance);

    kir::Kernel after = before;
    specialize_interior(after);

    // x: [b*32, b*32 + 31] x [0, 2]; Out: [b*32, b*32 + 31] x [0, 1] (r - 1
    // over r in [1, 2], not [-1, 1], which would never be inside). The loop
    // variable does not appear: the test is made before the loop.
    Expr b32 = var("b") * 32;
    Expr interior = simplify_exact(box_inside(out, {b32, 0}, {b32 + 31, 1}) && box_inside(x, {b32, 0}, {b32 + 31, 2}));
    REQUIRE_SAME_IR(after.body, instance_in_grid(IfThenElse::make(interior, unguarded(instance), instance)));

    // Out 45 x 2: instance 0 interior, 1 not (columns past 44). Out 70 x 2:
    // 0 and 1 interior. x with 2 rows where the loop reads 3: none interior.
    struct Size {
        std::vector<int> out, x;
        std::vector<bool> interior;
    };
    for (const Size &s : {Size{{45, 2}, {45, 3}, {true, false}}, Size{{70, 2}, {71, 3}, {true, true, false}},
                          Size{{70, 2}, {70, 2}, {false, false, false}}}) {
        INFO("Out " << s.out[0] << " x " << s.out[1] << ", x " << s.x[0] << " x " << s.x[1]);
        Buffers buffers = test::make_buffers(before, {{"x", s.x}, {"Out", s.out}}, 11 + s.out[0] + s.x[1]);
        REQUIRE(test::same_outputs(before, after, buffers) == "");
        CHECK(interior_taken(after, buffers, (int)s.interior.size()) == s.interior);
    }
}

TEST_CASE("specialize_interior narrows a one-lane store by its activity, and leaves out a store that never runs",
          "[passes][specialize_interior]") {
    // One warp, a drain PE's stores: lane 31 stores Out(b*9 + r - 31) where
    // it is active (31 <= r) over r in [0, 40), so at r - 31 in [0, 8], not
    // from -31; before the loop, its store at step 0 (where 31 <= 0 fails)
    // never runs. Neither reaches below the instance's 9 elements: the test
    // asks for [b*9, b*9 + 8] only, and the store that never runs keeps its
    // guard in the fast copy.
    const kir::BufferArg out = test::buffer_arg("Out", Int(32), 1, true);
    Expr lane = test::lane(), r = var("r"), b9 = var("b") * 9;
    Stmt never = IfThenElse::make(lane == 31 && lane <= 0, kir::store("Out", kir::in_bounds(out, {b9 - 31}), lane, {b9 - 31}));
    Stmt loop = For::make("r", 0, 40, ForType::Serial, DeviceAPI::None,
                          IfThenElse::make(lane == 31 && lane <= r,
                                           kir::store("Out", kir::in_bounds(out, {b9 + r - lane}), r * 3, {b9 + r - lane})));
    Stmt instance = Block::make(never, loop);
    const kir::Kernel before = make_kernel("drain", {out}, 9, instance);

    kir::Kernel after = before;
    specialize_interior(after);

    Expr interior = simplify_exact(box_inside(out, {b9}, {b9 + 8}));
    REQUIRE_SAME_IR(after.body, instance_in_grid(IfThenElse::make(interior, Block::make(never, unguarded(loop)), instance)));

    // Out 27: every instance interior; Out 25: the third is not.
    for (int extent : {27, 25}) {
        INFO("Out " << extent);
        Buffers buffers = test::make_buffers(before, {{"Out", {extent}}}, 3 + extent);
        REQUIRE(test::same_outputs(before, after, buffers) == "");
        CHECK(interior_taken(after, buffers, 3) == std::vector<bool>{true, true, extent == 27});
    }
}

TEST_CASE("specialize_interior on an array of several warps tests the box over every thread, unnarrowed",
          "[passes][specialize_interior]") {
    // Two warps, 40 PEs: thread t = array.warp*32 + lane loads x[b*40 + t];
    // threads 2..41 store Out[b*40 + t - 2]. Conditions narrow the lanes of
    // a one-warp array only (the header's promise): the store's box spans
    // all 64 threads, [b*40 - 2, b*40 + 61], a wider but correct test.
    const kir::BufferArg x = test::buffer_arg("x", Int(32), 1, false), out = test::buffer_arg("Out", Int(32), 1, true);
    Expr t = warp() * 32 + test::lane();
    Expr i = var("b") * 40 + t;
    Stmt instance =
        LetStmt::make("v", kir::load(Int(32), "x", kir::in_bounds(x, {i}), {i}),
                      IfThenElse::make(2 <= t && t <= 41, kir::store("Out", kir::in_bounds(out, {i - 2}), var("v") + 1, {i - 2})));
    kir::Kernel before = make_kernel("wide", {x, out}, 40, instance);
    before.warps_per_array = 2;

    kir::Kernel after = before;
    specialize_interior(after);

    Expr b40 = var("b") * 40;
    Expr interior = simplify_exact(box_inside(out, {b40 + -2}, {b40 + 61}) && box_inside(x, {b40}, {b40 + 63}));
    REQUIRE_SAME_IR(after.body, instance_in_grid(IfThenElse::make(interior, unguarded(instance), instance)));

    // Out 157, x 159: instance 0 is not interior (its box starts at -2), 1
    // and 2 are, 3 is not (x[120, 183]).
    Buffers buffers = test::make_buffers(before, {{"x", {159}}, {"Out", {157}}}, 5);
    REQUIRE(test::same_outputs(before, after, buffers) == "");
    CHECK(interior_taken(after, buffers, 4) == std::vector<bool>{false, true, true, false});
}

TEST_CASE("specialize_interior leaves an instance it cannot or need not split as it is", "[passes][specialize_interior]") {
    const kir::BufferArg x = test::buffer_arg("x", Int(32), 1, false), out = test::buffer_arg("Out", Int(32), 1, true);
    Expr i = var("b") * 32 + test::lane();
    Stmt instance;
    std::map<std::string, std::vector<int>> sizes{{"x", {70}}, {"Out", {64}}};
    SECTION("no guarded access: nothing to specialize") {
        // Both buffers cover every instance's 32 elements (Out 64: two instances).
        instance = LetStmt::make("v", kir::load(Int(32), "x", const_true(), {i}), kir::store("Out", const_true(), var("v") * 3, {i}));
    }
    SECTION("a coordinate bound inside the instance: the test could not be made before it") {
        // The coordinate is j, a let of the instance (the pass does not look
        // through it): the box [j, j] names j, and a test made before the
        // instance cannot.
        Expr j = var("j");
        instance = LetStmt::make(
            "j", i, LetStmt::make("v", kir::load(Int(32), "x", kir::in_bounds(x, {j}), {j}), kir::store("Out", kir::in_bounds(out, {j}), var("v"), {j})));
        sizes = {{"x", {45}}, {"Out", {45}}};
    }
    SECTION("a coordinate read from a buffer: no box") {
        // Out[i] = x[x[i] + 9]: the inner load is guarded, the outer one's
        // coordinate is a loaded value, unbounded.
        Expr inner = kir::load(Int(32), "x", kir::in_bounds(x, {i}), {i}) + 9;
        instance = LetStmt::make("v", kir::load(Int(32), "x", kir::in_bounds(x, {inner}), {inner}),
                                 kir::store("Out", kir::in_bounds(out, {i}), var("v"), {i}));
        sizes = {{"x", {45}}, {"Out", {45}}};
    }
    const kir::Kernel before = make_kernel("unchanged", {x, out}, 32, instance);
    kir::Kernel after = before;
    specialize_interior(after);
    REQUIRE_SAME_IR(after.body, before.body);
    REQUIRE(test::same_outputs(before, after, test::make_buffers(before, sizes, 3)) == "");
}

TEST_CASE("specialize_interior works only inside the array-instance marker", "[passes][specialize_interior]") {
    // A guarded copy with no marker: passes that work on straight-line
    // code start at the marker (KernelIR.h), so nothing changes.
    const kir::BufferArg x = test::buffer_arg("x", Int(32), 1, false), out = test::buffer_arg("Out", Int(32), 1, true);
    Expr i = var("b") * 32 + test::lane();
    kir::Kernel before = make_kernel("no_marker", {x, out}, 32, Evaluate::make(0));
    before.body = LetStmt::make("b", cast(Int(32), kir::warp_index()),
                                kir::store("Out", kir::in_bounds(out, {i}), kir::load(Int(32), "x", kir::in_bounds(x, {i}), {i}), {i}));
    kir::Kernel after = before;
    specialize_interior(after);
    REQUIRE_SAME_IR(after.body, before.body);
    REQUIRE(test::same_outputs(before, after, test::make_buffers(before, {{"x", {33}}, {"Out", {33}}}, 4)) == "");
}

TEST_CASE("specialize_interior lifts a lower bound of the grid point into the interior test, not an upper one",
          "[passes][specialize_interior]") {
    // A rolled loop r in [1, 4): Out(i, r) = select(edge test, 2 x(i, r), x(i, r)),
    // i = b*32 + lane. The edge test `3 r + 1 <= 4 r + 32 b + lane - 30` (the
    // cell's column past the grid's first two, with the loop's terms on both
    // sides, as a rolled time loop's decode leaves them) holds for every lane
    // and iteration when b >= 1: it joins the test and the interior copy takes
    // its first branch. `i < 5` holds near the origin only: it stays, as does
    // a comparison of loaded values.
    const kir::BufferArg x = test::buffer_arg("x", Int(32), 2, false), out = test::buffer_arg("Out", Int(32), 2, true);
    Expr b = var("b"), r = var("r"), i = b * 32 + test::lane();
    auto instance_with = [&](const Expr &edge) {
        Expr v = var("v");
        Stmt step = LetStmt::make("v", kir::load(Int(32), "x", kir::in_bounds(x, {i, r}), {i, r}),
                                  kir::store("Out", kir::in_bounds(out, {i, r}), select(edge, v * 2, v), {i, r}));
        return For::make("r", 1, 3, ForType::Serial, DeviceAPI::None, step);
    };
    struct Case {
        const char *what;
        Expr edge;
        bool lifted;
        std::vector<bool> interior;  ///< instances 0, 1, 2 on Out 80 x 4
    };
    for (const Case &c : {Case{"a lower bound", r * 3 + 1 <= r * 4 + b * 32 + test::lane() - 30, true, {false, true, false}},
                          Case{"an upper bound against a constant", i < 5, false, {true, true, false}},
                          // A comparison of values is the spec's: `f <= f` is false for NaN,
                          // though Halide's simplifier takes it for true.
                          Case{"a comparison of values", cast(Float(32), var("v")) <= cast(Float(32), var("v")), false,
                               {true, true, false}}}) {
        INFO(c.what);
        const kir::Kernel before = make_kernel("edge", {x, out}, 32, instance_with(c.edge));
        kir::Kernel after = before;
        specialize_interior(after);
        const IfThenElse *split = instance_of(after.body).as<IfThenElse>();
        REQUIRE(split);
        INFO("interior test: " << split->condition);
        class Selects : public IRVisitor {
        public:
            int n = 0;
            using IRVisitor::visit;
            void visit(const Select *op) override { n++, IRVisitor::visit(op); }
        } in_fast, in_guarded;
        split->then_case.accept(&in_fast);
        split->else_case.accept(&in_guarded);
        CHECK(in_guarded.n == 1);
        CHECK(in_fast.n == (c.lifted ? 0 : 1));
        Buffers buffers = test::make_buffers(before, {{"x", {81, 4}}, {"Out", {80, 4}}}, 5);
        REQUIRE(test::same_outputs(before, after, buffers) == "");
        CHECK(interior_taken(after, buffers, (int)c.interior.size()) == c.interior);
    }
}

TEST_CASE("specialize_interior keeps the guard of a read past what the domain reads, and leaves it out of the test",
          "[passes][specialize_interior]") {
    // A 9-PE dynamic program on one warp: every lane loads a[lane - 1]
    // (hoisted; lane 0 and the idle lanes 10..31 discard it), while the
    // domain reads a[0, 8] only. Lanes 0..8 store Out[b*9 + lane]. A test
    // demanding a[-1, 30] would never hold on an `a` sized as the header says
    // ([0, 8]); instead the load keeps its guard in the fast copy and the
    // test is Out's box alone.
    kir::BufferArg a = test::buffer_arg("a", Int(32), 1, false);
    a.domain_reads = {{0, 8}};
    const kir::BufferArg out = test::buffer_arg("Out", Int(32), 1, true);
    Expr i = var("b") * 9 + test::lane();
    Expr load = kir::load(Int(32), "a", kir::in_bounds(a, {test::lane() - 1}), {test::lane() - 1});
    Stmt store = IfThenElse::make(var("active", Bool()), kir::store("Out", kir::in_bounds(out, {i}), var("a.reg0") + 1, {i}));
    Stmt instance = LetStmt::make("a.reg0", load, LetStmt::make("active", test::lane() <= 8, store));
    const kir::Kernel before = make_kernel("dp", {a, out}, 9, instance);

    kir::Kernel after = before;
    specialize_interior(after);

    Expr b9 = var("b") * 9;
    Stmt fast = LetStmt::make("a.reg0", load,
                              LetStmt::make("active", test::lane() <= 8,
                                            IfThenElse::make(var("active", Bool()),
                                                             kir::store("Out", const_true(), var("a.reg0") + 1, {i}))));
    Expr interior = simplify_exact(box_inside(out, {b9}, {b9 + 8}));
    REQUIRE_SAME_IR(after.body, instance_in_grid(IfThenElse::make(interior, fast, instance)));
    // a exactly as the domain reads it: the fast copy runs where Out's box fits.
    for (int n : {18, 20, 7}) {
        INFO("Out " << n);
        Buffers buffers = test::make_buffers(before, {{"a", {9}}, {"Out", {n}}}, 3 + n);
        REQUIRE(test::same_outputs(before, after, buffers) == "");
        CHECK(interior_taken(after, buffers, 2)[0] == (n >= 9));
    }
}
