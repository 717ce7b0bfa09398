// narrow_index_comparisons (lower/NarrowIndexComparisons.h) alone, on a kernel
// built by hand: the 64-bit bounds guards of a load and a store become 32-bit
// comparisons (a widening cast taken off, a buffer field cast down), a
// comparison of loaded values stays, and the kernel executor computes the
// same outputs before and after.
#include "passes/PassTest.h"

#include "lower/NarrowIndexComparisons.h"

using namespace pulse;
using namespace Halide;
using namespace Halide::Internal;

namespace {

using test::var;

/// Instance b (warp b) stores x[b*32 + lane] to Out at the same place when
/// the loaded value is positive, under the bounds guards.
kir::Kernel guarded_copy() {
    kir::Kernel k;
    k.name = "narrow_test";
    k.buffers = {test::buffer_arg("x", Int(32), 1, false), test::buffer_arg("Out", Int(32), 1, true)};
    k.grid.push_back({"b", 0, (kir::buffer_extent("Out", 0) + 31) / 32});
    k.pe_count = 32;
    const Expr i = var("b") * 32 + test::lane();
    Stmt store = kir::store("Out", test::spelled_guard("Out", {i}), var("x.t0"), {i});
    Stmt body = test::lets({{"x.t0", kir::load(Int(32), "x", test::spelled_guard("x", {i}), {i})}},
                           IfThenElse::make(Cast::make(Int(64), var("x.t0")) > make_const(Int(64), 0), store));
    k.body = LetStmt::make("b", cast(Int(32), kir::warp_index()), test::instance(body));
    return k;
}

/// The comparisons of a statement, by the type of their operands.
struct CountComparisons : public IRVisitor {
    int wide = 0, narrow = 0;
    using IRVisitor::visit;
    void count(const Expr &a) { (a.type() == Int(64) ? wide : narrow)++; }
    void visit(const LE *op) override { count(op->a); IRVisitor::visit(op); }
    void visit(const LT *op) override { count(op->a); IRVisitor::visit(op); }
    void visit(const GT *op) override { count(op->a); IRVisitor::visit(op); }
};

}  // namespace

TEST_CASE("narrow_index_comparisons: bounds guards become 32-bit, comparisons of values stay", "[passes]") {
    kir::Kernel k = guarded_copy();
    CountComparisons before;
    k.body.accept(&before);
    CHECK(before.wide == 5);  // min <= i and i < min + extent for x and Out; the value test
    kir::Kernel after = k;
    narrow_index_comparisons(after);
    CountComparisons counted;
    after.body.accept(&counted);
    CHECK(counted.wide == 1);  // x.t0 > 0: a loaded value, not an index
    CHECK(counted.narrow == 4);
    // min <= i: the buffer field cast down, the widening cast of i taken off.
    const std::string printed = test::text(after.body);
    INFO(printed);
    CHECK(printed.find("(int32((int64)x.min.0) <= ((b*32) + lane))") != std::string::npos);
    for (uint32_t seed : {1u, 2u}) {
        CHECK(test::same_outputs(k, after, test::make_buffers(k, {{"x", {101}}, {"Out", {101}}}, seed)) == "");
    }
    // Run again: nothing left to narrow.
    kir::Kernel twice = after;
    narrow_index_comparisons(twice);
    REQUIRE_SAME_IR(twice.body, after.body);
}
