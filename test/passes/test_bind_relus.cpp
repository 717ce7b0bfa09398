// bind_relus (lower/BindRelus.h) on a kernel built by hand, two instances a
// warp as packed int16 vectors: a let read only as max(v, 0), in two places,
// binds its relu and is read plainly; a let read once without its relu keeps
// its value; the expected IR node for node, the same outputs on the executor
// (inputs in [-9, 9], so the relu matters), and a relu bound where a read
// wanted the value itself is caught.
#include "passes/PassTest.h"

#include "lower/BindRelus.h"

using namespace pulse;
using namespace Halide;
using namespace Halide::Internal;

namespace {

const Type pair_type = Int(16).with_lanes(2);

Expr pair_var(const std::string &name) { return Variable::make(pair_type, name); }
Expr pair_const(int v) { return make_const(pair_type, v); }
Expr relu(const Expr &v) { return Max::make(v, pair_const(0)); }

/// Out(lane, b) for the pair b = 2 p + k: h = max(3 x, x + 7) read as its
/// relu in u and in the store, g = max(x, x - 2) read plainly; `h_value` and
/// `g_value` bind them (what the pass should leave or make).
kir::Kernel pairs_kernel(const Expr &h_value, const Expr &g_value, bool h_bound) {
    kir::Kernel k;
    k.name = "bind_relus_test";
    k.buffers = {test::buffer_arg("X", Int(16), 2, false), test::buffer_arg("Out", Int(16), 2, true)};
    for (kir::BufferArg &b : k.buffers) b.type = Int(16);
    k.grid.push_back({"p", 0, (kir::buffer_extent("Out", 1) + 1) / 2});
    k.pe_count = kir::warp_size;
    k.packed_lanes = 2;
    const Expr b = Ramp::make(Variable::make(Int(32), "p") * 2, 1, 2);
    const Expr x = kir::load(pair_type, "X", kir::in_bounds(k.buffer("X"), {test::lane(), b}), {test::lane(), b});
    const Expr h_read = h_bound ? pair_var("h") : relu(pair_var("h"));
    const Stmt store = kir::store("Out", kir::in_bounds(k.buffer("Out"), {test::lane(), b}), h_read - pair_var("g") + pair_var("u"),
                                  {test::lane(), b});
    const Stmt body = test::lets({{"x", x}, {"h", h_value}, {"g", g_value}, {"u", h_read * pair_const(2)}}, store);
    k.body = LetStmt::make("p", cast(Int(32), kir::warp_index()), body);
    return k;
}

}  // namespace

TEST_CASE("bind_relus binds the relu of a vector let read only as its relu, and leaves the others", "[passes][bind_relus]") {
    const Expr x = pair_var("x");
    const Expr h = max(x * pair_const(3), x + pair_const(7)), g = max(x, x - pair_const(2));
    const kir::Kernel before = pairs_kernel(h, g, false);
    kir::Kernel after = before;
    bind_relus(after);  // the pass alone
    const kir::Kernel expected = pairs_kernel(relu(h), g, true);
    REQUIRE_SAME_IR(after.body, expected.body);
    // g's relu bound too, though the store reads g itself: wrong.
    const kir::Kernel wrong = pairs_kernel(relu(h), relu(g), true);
    for (uint32_t seed : {1u, 2u, 3u}) {
        Buffers buffers = test::make_buffers(before, {{"X", {32, 7}}, {"Out", {32, 7}}}, seed);
        CHECK(test::same_outputs(before, after, buffers) == "");
        CHECK(test::same_outputs(before, wrong, buffers) != "");
    }
}

TEST_CASE("bind_relus leaves a kernel whose vector lets are read without their relus as it is", "[passes][bind_relus]") {
    const Expr x = pair_var("x");
    kir::Kernel k = pairs_kernel(max(x, pair_const(1)), max(x, x - pair_const(2)), true);  // h read plainly
    const kir::Kernel before = k;
    bind_relus(k);
    REQUIRE_SAME_IR(k.body, before.body);
}
