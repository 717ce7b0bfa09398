// The pass pack_instances on kernels built by hand: a kernel of one array
// instance a warp, and the same kernel after the pass (two instances a warp,
// lanes of vectors), must leave the same bits on the executor. Each instance
// runs a loop of its own trip count, read from the inputs, whose register
// state is stored after the loop, a test of its own inside the loop, and a
// shuffle: lanes whose loops end apart, and warps whose second lane is past
// the grid, are masked or run alone, as PackInstances.h says.
#include "PassTest.h"

#include "lower/PackInstances.h"
#include "pulse/Error.h"

using namespace pulse;
using namespace pulse::test;
using namespace Halide;
using namespace Halide::Internal;
using Catch::Matchers::Contains;

namespace {

/// Instance b: acc = X(lane, b); for x in [1, N(b)): acc = acc * 3 + the
/// lane below's acc + x, plus 7 where x is past 4 and the lane is odd;
/// Out(lane, b) = acc.
kir::Kernel make_kernel(int packed_lanes) {
    kir::Kernel k;
    k.name = packed_lanes > 1 ? "packed" : "alone";
    k.description = "a loop of its instance's own trip count (built by hand)";
    k.buffers = {buffer_arg("X", Int(16), 2, false), buffer_arg("N", Int(32), 1, false), buffer_arg("Out", Int(16), 2, true)};
    k.grid.push_back({"b", 0, kir::buffer_extent("Out", 1)});
    k.pe_count = kir::warp_size;
    k.packed_lanes = packed_lanes;
    const Expr b = var("b"), step = var("x");
    const Expr acc = Load::make(Int(16), "acc", 0, Buffer<>(), Parameter(), const_true(), ModulusRemainder());
    auto set_acc = [](const Expr &v) { return Store::make("acc", v, 0, Parameter(), const_true(), ModulusRemainder()); };
    const Expr below = var("below", Int(16));
    Stmt loop_body = set_acc(acc * make_const(Int(16), 3) + below + cast(Int(16), step));
    loop_body = Block::make(loop_body, IfThenElse::make(step > 4 && lane() % 2 == 1, set_acc(acc + make_const(Int(16), 7))));
    loop_body = LetStmt::make("below", kir::lane_shift(acc, 1), loop_body);
    const Expr trips = var("trips");
    Stmt body = Block::make({set_acc(guarded_load(k, "X", {lane(), b})), For::make("x", 1, trips - 1, ForType::Serial, DeviceAPI::None, loop_body),
                             guarded_store(k, "Out", acc, {lane(), b})});
    body = Allocate::make("acc", Int(16), Halide::MemoryType::Register, {make_const(Int(32), 1)}, const_true(), body);
    body = LetStmt::make("trips", guarded_load(k, "N", {b}), body);
    k.body = LetStmt::make("b", cast(Int(32), kir::warp_index()), body);
    return k;
}

Buffers inputs(int instances, uint32_t seed) {
    std::mt19937 rng(seed);
    Buffer<int16_t> x(kir::warp_size, instances), out(kir::warp_size, instances);
    x.for_each_value([&](int16_t &v) { v = (int16_t)(rng() % 65536 - 32768); });
    Buffer<int32_t> n(instances);
    // Trip counts that differ within a pair, agree, or run no iteration.
    n.for_each_value([&](int32_t &v) { v = (int32_t)(rng() % 23) - 3; });
    Buffers b{{"X", x}, {"N", n}, {"Out", out}};
    poison(b.at("Out"));
    return b;
}

/// Elements of Out where the two runs differ.
int differences(const kir::Kernel &a, const kir::Kernel &b, int instances, uint32_t seed) {
    Buffers ra = inputs(instances, seed), rb = inputs(instances, seed);
    execute_kernel(a, ra);
    execute_kernel(b, rb);
    const Buffer<int16_t> got(ra.at("Out")), want(rb.at("Out"));
    int differ = 0;
    got.for_each_element([&](int l, int i) { differ += got(l, i) != want(l, i); });
    return differ;
}

/// Instance b (marked as one): Out(lane, b) = X(lane, b) if X(0, b) > 0, else
/// -X(lane, b): an instance whose first statement is a test of its own with an
/// else, not specialize_interior's.
kir::Kernel make_tested_kernel(int packed_lanes) {
    kir::Kernel k = make_kernel(packed_lanes);
    const Expr b = var("b"), x = guarded_load(k, "X", {lane(), b});
    const Stmt tested = IfThenElse::make(guarded_load(k, "X", {make_const(Int(32), 0), b}) > make_const(Int(16), 0),
                                         guarded_store(k, "Out", x, {lane(), b}),
                                         guarded_store(k, "Out", make_const(Int(16), 0) - x, {lane(), b}));
    k.body = LetStmt::make("b", cast(Int(32), kir::warp_index()), instance(tested));
    return k;
}

}  // namespace

TEST_CASE("pack_instances: an instance that runs alone takes its first test's branch, packed with both lanes set to it or the else", "[pack_instances][vectors]") {
    // A pair whose lanes disagree on the test, and the last of an odd count,
    // run one instance at a time: where its test holds, on the packed code with
    // both lanes set to it; else on the test's else (the else alone is wrong
    // where the test holds when it is specialize_interior's, which the
    // simplifier folds knowing the test fails: test_reductions "[vectors]", a
    // pair cut short at the grid's end).
    kir::Kernel packed = make_tested_kernel(2);
    pack_instances(packed);
    const kir::Kernel alone = make_tested_kernel(1);
    for (int instances : {1, 2, 7, 12}) {
        INFO(instances << " instances");
        CHECK(differences(packed, alone, instances, 60 + instances) == 0);
    }
}

TEST_CASE("pack_instances: two instances a warp leave the bits of one a warp, their loops ending apart", "[pack_instances][vectors]") {
    kir::Kernel packed = make_kernel(2);
    pack_instances(packed);
    CHECK(kir::uses_vectors(packed.body));
    CHECK(packed.grid[0].extent.type() == kir::buffer_extent("Out", 1).type());
    const kir::Kernel alone = make_kernel(1);
    for (int instances : {1, 2, 7, 12, 31}) {
        INFO(instances << " instances");
        CHECK(differences(packed, alone, instances, 40 + instances) == 0);
    }
}

TEST_CASE("pack_instances: without the masks of a loop's iterations past a lane's end, the bits differ", "[pack_instances][vectors]") {
    // The mutant runs every lane over every pair's iterations: each lane's
    // register keeps changing past its own trip count.
    kir::Kernel packed = make_kernel(2);
    pack_instances(packed);
    struct Unmask : IRMutator {
        using IRMutator::visit;
        Stmt visit(const Store *op) override {
            const Select *keep = op->value.as<Select>();
            const Load *old = keep ? keep->false_value.as<Load>() : nullptr;
            if (!old || old->name != op->name) return IRMutator::visit(op);
            return Store::make(op->name, keep->true_value, op->index, op->param, op->predicate, op->alignment);
        }
    } unmask;
    packed.body = unmask.mutate(packed.body);
    CHECK(differences(packed, make_kernel(1), 12, 52) > 0);
}

TEST_CASE("pack_instances: what it cannot pack is refused with the fix", "[pack_instances][errors]") {
    kir::Kernel three = make_kernel(3);
    REQUIRE_THROWS_WITH(pack_instances(three), Contains("two instances a warp are packed, not 3"));
    kir::Kernel two_loops = make_kernel(2);
    two_loops.grid.push_back({"c", 0, make_const(Int(64), 2)});
    REQUIRE_THROWS_WITH(pack_instances(two_loops), Contains("a grid of one gpu_blocks loop") && Contains("drop vectorize"));
    kir::Kernel synchronised = make_kernel(2);
    synchronised.grid_sync = true;
    REQUIRE_THROWS_WITH(pack_instances(synchronised), Contains("grid-synchronised"));
}
