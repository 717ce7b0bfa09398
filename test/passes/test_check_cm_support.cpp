// check_cm_support (lower/CheckCmSupport.h) alone, on kernels built by hand:
// a kernel CM can run passes; each thing CM has no form for is refused as a
// value (CompileError::refusal) with a message that names it and the fix.
#include "passes/PassTest.h"

#include <functional>
#include <optional>

#include "lower/CheckCmSupport.h"
#include "pulse/Error.h"

using namespace pulse;
using namespace Halide;
using namespace Halide::Internal;
using Catch::Matchers::Contains;

namespace {

using test::var;

/// Out[b*32 + lane] = value(x[b*32 + lane]) on one warp per instance.
kir::Kernel map_kernel(Type type, const std::function<Expr(Expr)> &value) {
    kir::Kernel k;
    k.name = "cm_test";
    k.buffers = {test::buffer_arg("x", type, 1, false), test::buffer_arg("Out", type, 1, true)};
    k.grid.push_back({"b", 0, (kir::buffer_extent("Out", 0) + 31) / 32});
    k.pe_count = 32;
    Expr i = var("b") * 32 + test::lane();
    Stmt body = LetStmt::make("x.t0", test::guarded_load(k, "x", {i}), test::guarded_store(k, "Out", value(var("x.t0", type)), {i}));
    k.body = LetStmt::make("b", cast(Int(32), kir::warp_index()), test::instance(body));
    return k;
}

/// The refusal check_cm_support raises for `k`, or nothing.
std::optional<pulse::CompileError> refusal(const kir::Kernel &k, const CmTarget &target = CmTarget::gen9()) {
    try {
        check_cm_support(k, target);
    } catch (const pulse::CompileError &e) {
        return e;
    }
    return std::nullopt;
}

}  // namespace

TEST_CASE("check_cm_support: a kernel CM can run passes", "[passes]") {
    CHECK_FALSE(refusal(map_kernel(Float(32), [](Expr v) { return v * 2.0f; })));
    CHECK_FALSE(refusal(map_kernel(Int(32), [](Expr v) { return v % 3; })));
}

TEST_CASE("check_cm_support: what CM has no form for is refused, by kind, with the fix", "[passes]") {
    auto require = [](const std::optional<pulse::CompileError> &e, Refusal kind, const std::string &phrase) {
        REQUIRE(e);
        INFO(e->what());
        CHECK(e->refusal == kind);
        CHECK_THAT(e->what(), Contains(phrase));
    };
    kir::Kernel wide = map_kernel(Float(32), [](Expr v) { return v; });
    wide.warps_per_array = 2;
    require(refusal(wide), Refusal::UnsupportedByTarget, "a CM array runs on one hardware thread");

    kir::Kernel staged = map_kernel(Float(32), [](Expr v) { return v; });
    staged.buffer("x").cache = kir::InputCache::Shared;
    require(refusal(staged), Refusal::UnsupportedByTarget, "input x is cached in shared memory");

    kir::Kernel constant = map_kernel(Float(32), [](Expr v) { return v; });
    constant.buffer("x").placement = kir::Placement::Constant;
    require(refusal(constant), Refusal::UnsupportedByTarget, "x is placed in constant memory");

    require(refusal(map_kernel(Float(64), [](Expr v) { return v; })), Refusal::UnsupportedByTarget,
            "input x has 64-bit elements");
    require(refusal(map_kernel(Float(32), [](Expr v) { return cast(Float(32), cast(Float(16), v)); })),
            Refusal::UnsupportedByTarget, "element type float16");
    require(refusal(map_kernel(Float(32), [](Expr v) { return Mod::make(v, make_const(Float(32), 0.5)); })),
            Refusal::UnsupportedByTarget, "floating-point % is not supported");
    require(refusal(map_kernel(Float(32), [](Expr v) { return Halide::sqrt(v); })), Refusal::UnsupportedByTarget,
            "the math function sqrt_f32 has no CM form in Pulse; emit CUDA for this spec");

    // 64 lane vectors live at once: 64 x 32 lanes x 4 bytes = 8 KiB, twice Gen9's GRF.
    kir::Kernel big = map_kernel(Float(32), [](Expr v) { return v; });
    const Expr i = var("b") * 32 + test::lane();
    Expr sum = make_const(Float(32), 0);
    for (int r = 0; r < 64; r++) sum = sum + kir::register_load(Float(32), "acc", r);
    Stmt fill;
    for (int r = 63; r >= 0; r--) {
        Stmt s = kir::register_store("acc", var("x.t0", Float(32)) * (float)r, r);
        fill = fill.defined() ? Block::make(s, fill) : s;
    }
    Stmt body = LetStmt::make("x.t0", test::guarded_load(big, "x", {i}),
                              kir::allocate_registers("acc", Float(32), 64, Block::make(fill, test::guarded_store(big, "Out", sum, {i}))));
    big.body = LetStmt::make("b", cast(Int(32), kir::warp_index()), test::instance(body));
    require(refusal(big), Refusal::ResourceLimit, "bytes of registers per thread but target Gen9 has 4096");
    CHECK_FALSE(refusal(big, CmTarget{"large GRF", 512, 64}));
}
