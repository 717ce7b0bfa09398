// kir::NameGenerator (KernelIR.h), the one source of the names the kernel
// lowering and the kernel passes bind: a name keeps its natural spelling
// BASE.ROLE unless it was minted before or the kernel already uses it, and
// then gets the first free BASE.ROLE$N. And a pass that mints through it
// (hoist_loads) where the natural name is taken.
#include "passes/PassTest.h"

#include "lower/HoistLoads.h"

using namespace pulse;
using namespace Halide;
using namespace Halide::Internal;

TEST_CASE("NameGenerator spells a name BASE.ROLE and never mints one twice", "[passes][names]") {
    kir::NameGenerator names;
    CHECK(names.fresh("Z.t3", "own") == "Z.t3.own");
    CHECK(names.fresh("Z.t3", "from") == "Z.t3.from");
    // The same base and role again: a distinct name each time.
    CHECK(names.fresh("Z.t3", "own") == "Z.t3.own$1");
    CHECK(names.fresh("Z.t3", "own") == "Z.t3.own$2");
    // With an index: BASE.ROLE<index>.
    CHECK(names.fresh("x", "reg", 0) == "x.reg0");
    CHECK(names.fresh("x", "reg", 1) == "x.reg1");
    CHECK(names.fresh("x", "reg", 0) == "x.reg0$1");
    // A reserved name is taken, and so is a suffixed one: the next free N.
    names.reserve("w.carry");
    names.reserve("w.carry$1");
    CHECK(names.fresh("w", "carry") == "w.carry$2");
    // spell only spells: the name stays free.
    CHECK(kir::NameGenerator::spell("active", "t", 5) == "active.t5");
    CHECK_FALSE(names.is_used("active.t5"));
    CHECK(names.fresh("active", "t", 5) == "active.t5");
    CHECK(names.is_used("active.t5"));
}

TEST_CASE("NameGenerator seeded with a kernel avoids every name the kernel uses", "[passes][names]") {
    kir::Kernel k;
    k.name = "names_test";
    k.buffers = {test::buffer_arg("A", Int(32), 1, false), test::buffer_arg("Out", Int(32), 1, true)};
    k.grid.push_back({"tile", 0, kir::buffer_extent("Out", 0)});
    // A let, a loop, a register array, a shared array read by Load, a variable only read.
    Stmt inner = kir::register_store("w.carry", Load::make(Int(32), "A.shared", 0, Buffer<>(), Parameter(), const_true(), ModulusRemainder()), 0);
    inner = LetStmt::make("A.t0.up1", test::var("x.reg1"), inner);
    inner = test::serial("t.block", 0, 4, inner);
    k.body = kir::allocate_registers("w.carry", Int(32), 1, inner);

    kir::NameGenerator names(k);
    CHECK(names.fresh("A.t0", "up", 1) == "A.t0.up1$1");  // a let
    CHECK(names.fresh("t", "block") == "t.block$1");      // a loop
    CHECK(names.fresh("w", "carry") == "w.carry$1");      // a register array
    CHECK(names.fresh("A", "shared") == "A.shared$1");    // an array read by a Load
    CHECK(names.fresh("x", "reg", 1) == "x.reg1$1");      // a variable read
    CHECK(names.fresh("Out.extent", "0") == "Out.extent.0$1");  // a buffer's run-time size
    CHECK(names.fresh("warp", "index") == "warp.index$1");      // the grid index
    CHECK(names.is_used("tile"));
    // Names the kernel does not use keep their spelling.
    CHECK(names.fresh("x", "reg", 2) == "x.reg2");
    CHECK(names.fresh("A.t1", "up", 1) == "A.t1.up1");
}

TEST_CASE("hoist_loads names a hoisted load apart from a let the instance already binds", "[passes][hoist_loads][names]") {
    kir::Kernel before;
    before.name = "hoist_names_test";
    before.buffers = {test::buffer_arg("A", Int(32), 1, false), test::buffer_arg("Out", Int(32), 1, true)};
    before.pe_count = 32;
    before.grid.push_back({"tile", 0, (kir::buffer_extent("Out", 0) + 31) / 32});
    Expr x = test::var("tile") * 32 + test::lane();
    Expr load = test::guarded_load(before, "A", {x});
    // instance { let A.reg0 = 7; Out[x] = A[x] + A.reg0 }: the natural name of
    // the hoisted A[x], A.reg0, is bound already (around it, it would be shadowed).
    auto in_tile = [&](const Stmt &s) { return LetStmt::make("tile", cast(Int(32), kir::warp_index()), test::instance(s)); };
    before.body = in_tile(LetStmt::make("A.reg0", 7, test::guarded_store(before, "Out", load + test::var("A.reg0"), {x})));

    kir::Kernel after = before;
    hoist_loads(after);

    Expr hoisted = test::var("A.reg0$1");
    Stmt expected = in_tile(LetStmt::make(
        "A.reg0$1", load, LetStmt::make("A.reg0", 7, test::guarded_store(before, "Out", hoisted + test::var("A.reg0"), {x}))));
    REQUIRE_SAME_IR(after.body, expected);
    Buffers buffers = test::make_buffers(before, {{"A", {70}}, {"Out", {70}}}, 3);
    REQUIRE(test::same_outputs(before, after, buffers) == "");
}
