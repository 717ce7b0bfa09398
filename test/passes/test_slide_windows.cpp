// slide_windows (lower/SlideWindows.h) on kernels built by hand in the form
// hoist_loads leaves: a warp walks rows r of a column strip in a serial loop
// around one array instance whose loads sit at its top. Each case runs the
// pass alone (no simplify_exact after it, so the result is the pass's own
// structure), compares it node for node with the IR the pass documents, and
// runs both kernels on the executor.
#include "passes/PassTest.h"

#include "ir/ExactSimplify.h"
#include "lower/SlideWindows.h"

using namespace pulse;
using namespace Halide;
using namespace Halide::Internal;

namespace {

using test::instance;
using test::lets;
using test::serial;
using test::var;

/// buffer(coords), guarded by its bounds (the kernel IR's convention).
Expr at(Type t, const std::string &buffer, const std::vector<Expr> &coords) {
    return kir::load(t, buffer, test::spelled_guard(buffer, coords), coords);
}

/// The column of this lane's PE in the strip of warp b.
Expr column() { return var("b") * 32 + test::lane(); }

/// A kernel over 2-D Int(32) input u (and any extra inputs) writing 2-D
/// Int(32) Out: one warp per 32-column strip (grid loop b), `inner` the
/// statement each warp runs after decoding b.
kir::Kernel strip_kernel(const Stmt &inner, const std::vector<kir::BufferArg> &extra_inputs = {}) {
    kir::Kernel k;
    k.name = "slide_test";
    k.buffers.push_back(test::buffer_arg("u", Int(32), 2, false));
    for (const kir::BufferArg &b : extra_inputs) k.buffers.push_back(b);
    k.buffers.push_back(test::buffer_arg("Out", Int(32), 2, true));
    Expr strips = (kir::buffer_extent("Out", 0) + kir::buffer_min("Out", 0) + make_const(Int(64), 31)) / make_const(Int(64), 32);
    k.grid.push_back({"b", 0, strips});
    k.pe_count = 32;
    k.body = LetStmt::make("b", Cast::make(Int(32), kir::warp_index()), inner);
    return k;
}

/// Out(x, row) = value, guarded by Out's bounds.
Stmt store_out(const Expr &value, const Expr &row) {
    Expr x = column();
    return kir::store("Out", test::spelled_guard("Out", {x, row}), value, {x, row});
}

Buffers strip_buffers(const kir::Kernel &k, uint32_t seed) {
    std::map<std::string, std::vector<int>> extents{{"u", {37, 7}}, {"Out", {37, 7}}, {"w", {5}}};
    return test::make_buffers(k, extents, seed);
}

}  // namespace

TEST_CASE("slide_windows carries the rows the next iteration re-reads in a register window", "[passes][slide_windows]") {
    // A 3-row vertical stencil walking rows r = 1 .. 5 of a 37 x 7 image:
    // iteration r reads rows r, r + 1 and r + 2 (row 7 lies past the image, so
    // the guards matter in the last iteration).
    Expr r = var("r"), x = column();
    Expr u0 = var("u.reg0"), u1 = var("u.reg1"), u2 = var("u.reg2");
    Stmt compute = store_out(u0 + u1 * 2 + u2 * 3, r);
    Stmt input_instance = lets({{"u.reg0", at(Int(32), "u", {x, r})},
                                {"u.reg1", at(Int(32), "u", {x, r + 1})},
                                {"u.reg2", at(Int(32), "u", {x, r + 2})}},
                               compute);
    kir::Kernel before = strip_kernel(serial("r", 1, 5, instance(input_instance)));

    kir::Kernel after = before;
    slide_windows(after);

    // u.reg0 at r + 1 is u.reg1's row at r, and u.reg1 at r + 1 is u.reg2's:
    // both are carried, in one Int(32) window (slots in name order); u.reg2
    // (row r + 2, which no load read the iteration before) is still loaded.
    const std::string window = "window.0.int32";
    Stmt body = lets({{"u.reg0", kir::register_load(Int(32), window, 0)},
                      {"u.reg1", kir::register_load(Int(32), window, 1)},
                      {"u.reg2", at(Int(32), "u", {x, r + 2})}},
                     // At the end of the iteration, inside every let: each
                     // register takes its source's value for the next one.
                     Block::make(compute, Block::make(kir::register_store(window, u1, 0), kir::register_store(window, u2, 1))));
    // Before the loop: the first iteration's (r = 1) carried rows, loaded.
    Stmt preload = Block::make(kir::register_store(window, at(Int(32), "u", {x, make_const(Int(32), 1)}), 0),
                               kir::register_store(window, at(Int(32), "u", {x, make_const(Int(32), 1) + 1}), 1));
    Stmt expected = LetStmt::make(
        "b", Cast::make(Int(32), kir::warp_index()),
        kir::allocate_registers(window, Int(32), 2, Block::make(preload, serial("r", 1, 5, instance(body)))));
    REQUIRE_SAME_IR(after.body, expected);

    for (uint32_t seed : {1u, 2u, 3u}) {
        INFO("seed " << seed);
        REQUIRE(test::same_outputs(before, after, strip_buffers(before, seed)) == "");
    }
}

TEST_CASE("slide_windows gives each type of carried load its own window", "[passes][slide_windows]") {
    // Two inputs of different types walked together: u (Int(32)) rows r and
    // r + 1, v (Int(16)) rows r - 1 and r. v.a at r + 1 is v.b at r; u.c at
    // r + 1 is u.d at r.
    kir::BufferArg v_arg = test::buffer_arg("v", Int(16), 2, false);
    Expr r = var("r"), x = column();
    Expr va = var("v.a", Int(16)), vb = var("v.b", Int(16)), uc = var("u.c"), ud = var("u.d");
    Stmt compute = store_out(uc - ud * 5 + Cast::make(Int(32), va) * 7 + Cast::make(Int(32), vb), r);
    Stmt input_instance = lets({{"v.a", at(Int(16), "v", {x, r - 1})},
                                {"u.c", at(Int(32), "u", {x, r})},
                                {"v.b", at(Int(16), "v", {x, r})},
                                {"u.d", at(Int(32), "u", {x, r + 1})}},
                               compute);
    kir::Kernel before = strip_kernel(serial("r", 0, 6, instance(input_instance)), {v_arg});

    kir::Kernel after = before;
    slide_windows(after);

    const std::string w16 = "window.0.int16", w32 = "window.0.int32";
    Stmt body = lets({{"v.a", kir::register_load(Int(16), w16, 0)},
                      {"u.c", kir::register_load(Int(32), w32, 0)},
                      {"v.b", at(Int(16), "v", {x, r})},
                      {"u.d", at(Int(32), "u", {x, r + 1})}},
                     // One copy per carried let, in the order of the carried
                     // lets' names (u.c, then v.a). Any order would do: each
                     // copies a let, bound once per iteration, not a register.
                     Block::make(compute, Block::make(kir::register_store(w32, ud, 0), kir::register_store(w16, vb, 0))));
    Expr zero = make_const(Int(32), 0);
    Stmt preload = Block::make(kir::register_store(w32, at(Int(32), "u", {x, zero}), 0),
                               kir::register_store(w16, at(Int(16), "v", {x, zero - 1}), 0));
    // One register array per type, allocated around the preload and the loop.
    Stmt expected = LetStmt::make(
        "b", Cast::make(Int(32), kir::warp_index()),
        kir::allocate_registers(w32, Int(32), 1,
                                kir::allocate_registers(w16, Int(16), 1, Block::make(preload, serial("r", 0, 6, instance(body))))));
    REQUIRE_SAME_IR(after.body, expected);

    std::map<std::string, std::vector<int>> extents{{"u", {37, 7}}, {"v", {33, 5}}, {"Out", {41, 7}}};
    for (uint32_t seed : {4u, 5u}) {
        INFO("seed " << seed);
        REQUIRE(test::same_outputs(before, after, test::make_buffers(before, extents, seed)) == "");
    }

    // As the pipeline runs it (slide_windows, then simplify_exact of the
    // body): still the same outputs.
    kir::Kernel simplified = after;
    simplified.body = simplify_exact(simplified.body);
    REQUIRE(test::same_outputs(before, simplified, test::make_buffers(before, extents, 6)) == "");
}

TEST_CASE("slide_windows leaves kernels with nothing to carry as they are", "[passes][slide_windows]") {
    Expr r = var("r"), x = column();
    Expr u0 = var("u.reg0"), u1 = var("u.reg1");
    auto two_rows = [&](const Expr &row0, const Expr &row1, const Expr &out_row) {
        return lets({{"u.reg0", at(Int(32), "u", {x, row0})}, {"u.reg1", at(Int(32), "u", {x, row1})}},
                    store_out(u0 - u1 * 3, out_row));
    };
    kir::BufferArg w_const = test::buffer_arg("w", Int(32), 1, false);
    w_const.placement = kir::Placement::Constant;
    w_const.region_min = {0};
    w_const.region_extent = {5};
    Expr w0 = var("w.reg0"), w1 = var("w.reg1");
    struct Case {
        const char *why;
        kir::Kernel kernel;
    };
    std::vector<Case> cases{
        // No per-thread loop: the instance is straight-line code.
        {"no serial loop", strip_kernel(instance(two_rows(make_const(Int(32), 2), make_const(Int(32), 3), make_const(Int(32), 2))))},
        // The loop is unrolled, not serial: hoist_loads has already shared its rows.
        {"unrolled loop", strip_kernel(serial("r", 0, 5, instance(two_rows(r, r + 1, r)), ForType::Unrolled))},
        // A serial loop whose body is not an instance (a let before it).
        {"loop body not an instance",
         strip_kernel(serial("r", 0, 5, LetStmt::make("rr", r, instance(two_rows(var("rr"), var("rr") + 1, var("rr"))))))},
        // Rows 2r and 2r + 1: no row of iteration r + 1 was read at r.
        {"rows never re-read", strip_kernel(serial("r", 0, 3, instance(two_rows(r * 2, r * 2 + 1, r))))},
        // Re-read rows of a constant-memory input: operands, not registers.
        {"constant-memory input",
         strip_kernel(serial("r", 0, 4,
                             instance(lets({{"w.reg0", kir::load(Int(32), "w", const_true(), {r})},
                                            {"w.reg1", kir::load(Int(32), "w", const_true(), {r + 1})}},
                                           store_out(w0 - w1 * 3, r)))),
                      {w_const})},
    };
    for (const Case &c : cases) {
        INFO(c.why);
        kir::Kernel after = c.kernel;
        slide_windows(after);
        REQUIRE_SAME_IR(after.body, c.kernel.body);
        REQUIRE(test::same_outputs(c.kernel, after, strip_buffers(c.kernel, 7)) == "");
    }
}
