// share_recomputed_values (lower/ShareRecomputedValues.h) on kernels built by
// hand: a let whose value an earlier let of the chain computes inline (F of
// the slot above reading H's definition) moves up before that let, which
// then reads it; a value an earlier let binds is read from it; leaves and
// constants stay inline; the outputs are the same on the executor, and
// reading the moved let in a value that did not contain it is caught.
#include "passes/PassTest.h"

#include "lower/ShareRecomputedValues.h"

using namespace pulse;
using namespace Halide;
using namespace Halide::Internal;

namespace {

using test::var;
using test::i32;

/// Lane l, at steps t in [0, 24): h = a + y(a % 7) (a = 2 x(l + t)); f, bound
/// before h, computes max(a + y(a % 7), 5) * 3 inline; g reads h; k is
/// (a + y(a % 7)) * 2 again; c is a constant that f and g also spell. Out[l]
/// sums them.
kir::Kernel recomputing_kernel() {
    kir::Kernel k;
    k.name = "share_values_test";
    k.buffers = {test::buffer_arg("x", Int(32), 1, false), test::buffer_arg("y", Int(32), 1, false),
                 test::buffer_arg("Out", Int(32), 1, true)};
    k.pe_count = 32;
    const Expr a = var("a");
    const Expr h_value = a + test::guarded_load(k, "y", {a % 7});
    const Expr acc = kir::register_load(Int(32), "S.acc", 0);
    const Stmt step = test::lets({{"a", test::guarded_load(k, "x", {test::lane() + var("t")}) * 2},
                                  {"f", max(h_value, 5) * 3},
                                  {"c", i32(4)},
                                  {"h", h_value},
                                  {"g", var("h") + 4},
                                  {"k", h_value * 2}},
                                 kir::register_store("S.acc", acc + var("f") + var("c") + var("g") + var("k"), 0));
    const Stmt loop = test::serial("t", 0, 24, step);
    const Stmt body = Block::make({kir::register_store("S.acc", i32(0), 0), loop, test::guarded_store(k, "Out", acc, {test::lane()})});
    k.body = test::instance(kir::allocate_registers("S.acc", Int(32), 1, body));
    return k;
}

}  // namespace

TEST_CASE("share_recomputed_values moves a let ahead of an earlier let that computes its value inline, and reads it there",
          "[passes][share_recomputed_values]") {
    const kir::Kernel before = recomputing_kernel();
    kir::Kernel after = before;
    share_recomputed_values(after);  // the pass alone
    const std::string text = test::text(after.body);
    INFO(text);
    // h now comes before f, and f, k read it; c, g and a stay where they were.
    const size_t a = text.find("let a ="), h = text.find("let h ="), f = text.find("let f ="), c = text.find("let c ="),
                 g = text.find("let g ="), k = text.find("let k =");
    REQUIRE(h != std::string::npos);
    CHECK(a < h);
    CHECK(h < f);
    CHECK(f < c);
    CHECK(c < g);
    CHECK(g < k);
    CHECK(text.find("let f = max(h, 5)*3") != std::string::npos);
    CHECK(text.find("let k = h*2") != std::string::npos);
    // y is read once (in h), not three times.
    auto reads_of_y = [](const std::string &ir) {
        size_t reads = 0;
        for (size_t at = ir.find("\"y\""); at != std::string::npos; at = ir.find("\"y\"", at + 1)) reads++;
        return reads;
    };
    CHECK(reads_of_y(test::text(before.body)) == 3);
    CHECK(reads_of_y(text) == 1);
    // The same outputs; reading h in g's place is caught.
    kir::Kernel wrong = after;
    wrong.body = substitute(var("h") + 4, var("h"), wrong.body);
    for (uint32_t seed : {1u, 2u, 3u}) {
        Buffers buffers = test::make_buffers(before, {{"x", {56}}, {"y", {7}}, {"Out", {32}}}, seed);
        CHECK(test::same_outputs(before, after, buffers) == "");
        CHECK(test::same_outputs(before, wrong, buffers) != "");
    }
}

TEST_CASE("share_recomputed_values leaves a chain that computes nothing twice as it is", "[passes][share_recomputed_values]") {
    kir::Kernel k;
    k.name = "share_values_once";
    k.buffers = {test::buffer_arg("x", Int(32), 1, false), test::buffer_arg("Out", Int(32), 1, true)};
    k.pe_count = 32;
    const Expr l = test::lane();
    // b's value holds a leaf (a) and a constant that other lets are: neither is shared.
    const Stmt body = test::lets({{"a", test::guarded_load(k, "x", {l})}, {"b", var("a") * 7 + 1}, {"c", i32(7)}, {"d", var("a")}},
                                 test::guarded_store(k, "Out", var("b") + var("c") + var("d"), {l}));
    k.body = test::instance(body);
    const kir::Kernel before = k;
    share_recomputed_values(k);
    REQUIRE_SAME_IR(k.body, before.body);
}
