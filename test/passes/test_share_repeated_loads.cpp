// share_repeated_loads (lower/ShareRepeatedLoads.h) on kernels built by hand:
// the loads a chain of lets reads twice or more (the same buffer, guard and
// coordinates, each PE of a lane reading the residue of its step, and a table
// read at that residue) are read once, into a let ahead of their first
// reader; a load read once, one under another guard and one at a Let's
// variable stay where they are; the outputs are the same on the executor with
// guards that fail on some lanes and steps, and merging loads under different
// guards is caught.
#include "passes/PassTest.h"

#include "lower/ShareRepeatedLoads.h"

using namespace pulse;
using namespace Halide;
using namespace Halide::Internal;

namespace {

using test::var;
using test::i32;

/// The kir::load calls of `s`, counted where they occur.
int loads_in(const Stmt &s, const std::string &buffer) {
    struct Count : IRVisitor {
        std::string buffer;
        int n = 0;
        using IRVisitor::visit;
        void visit(const Call *op) override {
            if (op->name == kir::intrinsic::load && kir::access_of(op).buffer == buffer) n++;
            IRVisitor::visit(op);
        }
    } count;
    count.buffer = buffer;
    s.accept(&count);
    return count.n;
}

/// Lane l, at steps t in [0, 40), reads x at t - l (outside x before step l:
/// the guard fails), four times under its bounds guard, once more under a
/// stricter one (x at t - l only where t - l is even), a table y at that
/// value twice, and x at a Let's variable twice; it sums them all into Out[l].
struct Skewed {
    kir::Kernel kernel;
    Expr strict_load, loose_load;  ///< the x read under the stricter guard, and the same read under the bounds guard
};

Skewed skewed_kernel() {
    Skewed s;
    kir::Kernel &k = s.kernel;
    k.name = "share_loads_test";
    k.buffers = {test::buffer_arg("x", Int(32), 1, false), test::buffer_arg("y", Int(32), 1, false),
                 test::buffer_arg("Out", Int(32), 1, true)};
    k.pe_count = 32;
    const Expr j = var("t") - test::lane();
    const Expr x = test::guarded_load(k, "x", {j});
    s.loose_load = x;
    s.strict_load = kir::load(Int(32), "x", kir::in_bounds(k.buffer("x"), {j}) && j % 2 == 0, {j});
    const Expr y = test::guarded_load(k, "y", {x + 9});
    const Expr at_let = Let::make("u", j - 1, test::guarded_load(k, "x", {var("u")}));
    const Expr acc = kir::register_load(Int(32), "S.acc", 0);
    const Stmt step = test::lets({{"a", x * 2}, {"b", x + 1}, {"c", y * x}, {"d", s.strict_load - y}, {"e", at_let + at_let},
                                  {"f", x * 3}},
                                 kir::register_store("S.acc", acc + var("a") + var("b") + var("c") + var("d") + var("e") + var("f"), 0));
    const Stmt loop = test::serial("t", 0, 40, step);
    const Stmt body = Block::make({kir::register_store("S.acc", i32(0), 0), loop, test::guarded_store(k, "Out", acc, {test::lane()})});
    k.body = test::instance(kir::allocate_registers("S.acc", Int(32), 1, body));
    return s;
}

}  // namespace

TEST_CASE("share_repeated_loads reads a load repeated in a chain of lets once, ahead of its first reader",
          "[passes][share_repeated_loads]") {
    const Skewed shape = skewed_kernel();
    const kir::Kernel &before = shape.kernel;
    kir::Kernel after = before;
    share_repeated_loads(after);  // the pass alone
    INFO(test::text(after.body));
    // x under its bounds guard: read once (the let), y at it once; x under the
    // stricter guard and x at the Let's variable (twice) stay. (Before, each
    // y read holds three reads of x: in its guard's two comparisons and its
    // coordinate.)
    CHECK(loads_in(before.body, "x") == 4 + 2 * 3 + 1 + 2);
    CHECK(loads_in(after.body, "x") == 1 + 1 + 2);
    CHECK(loads_in(before.body, "y") == 2);
    CHECK(loads_in(after.body, "y") == 1);
    // The shared reads are bound before the first let that reads them, x's first.
    const std::string text = test::text(after.body);
    const size_t x_read = text.find("let x.read"), y_read = text.find("let y.read"), a = text.find("let a =");
    REQUIRE(x_read != std::string::npos);
    REQUIRE(y_read != std::string::npos);
    CHECK(x_read < a);
    CHECK(a < y_read);
    // Steps where the guards fail (t < lane, odd t - lane) and where they hold.
    kir::Kernel merged = before;  // the stricter read merged into the others: wrong
    merged.body = substitute(shape.strict_load, shape.loose_load, merged.body);
    for (uint32_t seed : {1u, 2u, 3u}) {
        Buffers buffers = test::make_buffers(before, {{"x", {40}}, {"y", {19}}, {"Out", {32}}}, seed);
        CHECK(test::same_outputs(before, after, buffers) == "");
        CHECK(test::same_outputs(before, merged, buffers) != "");
    }
}

TEST_CASE("share_repeated_loads leaves a chain whose loads are each read once as it is", "[passes][share_repeated_loads]") {
    kir::Kernel k;
    k.name = "share_loads_once";
    k.buffers = {test::buffer_arg("x", Int(32), 1, false), test::buffer_arg("Out", Int(32), 1, true)};
    k.pe_count = 32;
    const Expr l = test::lane();
    const Stmt body = test::lets({{"a", test::guarded_load(k, "x", {l})}, {"b", test::guarded_load(k, "x", {l + 1})}},
                                 test::guarded_store(k, "Out", var("a") + var("b"), {l}));
    k.body = test::instance(body);
    const kir::Kernel before = k;
    share_repeated_loads(k);
    REQUIRE_SAME_IR(k.body, before.body);
}
