// prefetch_loads (lower/PrefetchLoads.h) on kernels built by hand in the form
// hoist_loads (and slide_windows) leave: a warp walks rows r of a column strip
// in a serial loop around one array instance whose loads sit at its top. Each
// case runs the pass alone (no simplify_exact after it, so the result is the
// pass's own structure), compares it node for node with the IR the pass
// documents, and runs both kernels on the executor.
#include "passes/PassTest.h"

#include "ir/ExactSimplify.h"
#include "lower/PrefetchLoads.h"

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

/// Out(x, row) = value, guarded by Out's bounds.
Stmt store_out(const Expr &value, const Expr &row) {
    Expr x = column();
    return kir::store("Out", test::spelled_guard("Out", {x, row}), value, {x, row});
}

/// Wraps `inner` in the decode of the grid: one warp per 32-column strip of Out.
Stmt in_strip(const Stmt &inner) { return LetStmt::make("b", Cast::make(Int(32), kir::warp_index()), inner); }

/// Inputs u (Float(32), 2-D), w (Float(32), 1-D), v (Int(32), 2-D), c
/// (Float(32), 1-D, constant memory over [0, 8)); output Out (Float(32), 2-D).
kir::Kernel walk_kernel(const Stmt &inner, bool prefetch) {
    kir::Kernel k;
    k.name = "prefetch_test";
    k.buffers.push_back(test::buffer_arg("u", Float(32), 2, false));
    k.buffers.push_back(test::buffer_arg("w", Float(32), 1, false));
    k.buffers.push_back(test::buffer_arg("v", Int(32), 2, false));
    kir::BufferArg c = test::buffer_arg("c", Float(32), 1, false);
    c.placement = kir::Placement::Constant;
    c.region_min = {0};
    c.region_extent = {8};
    k.buffers.push_back(c);
    k.buffers.push_back(test::buffer_arg("Out", Float(32), 2, true));
    Expr strips = (kir::buffer_extent("Out", 0) + kir::buffer_min("Out", 0) + make_const(Int(64), 31)) / make_const(Int(64), 32);
    k.grid.push_back({"b", 0, strips});
    k.pe_count = 32;
    k.prefetch_walks = prefetch;
    k.body = in_strip(inner);
    return k;
}

/// Buffers at odd sizes, Out of `out_rows` rows. Every kernel here writes
/// every element of Out: an unwritten float element keeps its NaN poison,
/// which compare_outputs counts as a difference even where both kernels leave it.
Buffers walk_buffers(const kir::Kernel &k, uint32_t seed, int out_rows = 5) {
    std::map<std::string, std::vector<int>> extents{{"u", {37, 7}}, {"w", {35}}, {"v", {39, 5}}, {"c", {9}}, {"Out", {41, out_rows}}};
    return test::make_buffers(k, extents, seed);
}

}  // namespace

TEST_CASE("prefetch_loads issues the next iteration's moving loads before the arithmetic", "[passes][prefetch_loads]") {
    // A walk over rows r = 1 .. 5 (writing Out row r - 1) whose instance starts with six hoisted loads:
    //   u.a = u(x, r)          moves with r: prefetched (float32 slot 0)
    //   w.b = w(x)             the same every iteration: stays
    //   v.c = v(x, r)          moves: prefetched (int32 slot 0)
    //   u.d = u(x, r + 1)      moves: prefetched (float32 slot 1)
    //   c.e = c(r)             constant memory: an operand, stays
    //   u.f = u(x, r + v.c)    reads an earlier let (a gather): stays
    Expr r = var("r"), x = column();
    Expr ua = var("u.a", Float(32)), wb = var("w.b", Float(32)), vc = var("v.c"), ud = var("u.d", Float(32)),
         ce = var("c.e", Float(32)), uf = var("u.f", Float(32));
    Stmt compute = LetStmt::make("sum", ua * wb + ud * ce + Cast::make(Float(32), vc) - uf,
                                 store_out(var("sum", Float(32)), r - 1));
    Stmt constant_and_gather =
        lets({{"c.e", kir::load(Float(32), "c", const_true(), {r})}, {"u.f", at(Float(32), "u", {x, r + vc})}}, compute);
    auto top = [&](const Expr &a, const Expr &c, const Expr &d, const Stmt &rest) {
        return lets({{"u.a", a}, {"w.b", at(Float(32), "w", {x})}, {"v.c", c}, {"u.d", d}}, rest);
    };
    Stmt input_instance = top(at(Float(32), "u", {x, r}), at(Int(32), "v", {x, r}), at(Float(32), "u", {x, r + 1}),
                              constant_and_gather);
    kir::Kernel before = walk_kernel(serial("r", 1, 5, instance(input_instance)), true);

    kir::Kernel after = before;
    prefetch_loads(after);

    const std::string pf32 = "prefetch.0.float32", pi32 = "prefetch.0.int32";
    // Iteration r reads its rows from the registers the one before filled,
    // and right after the last of them (before c.e, u.f and the arithmetic)
    // issues the loads of r + 1 into the same registers.
    Expr next = r + 1;
    Stmt issue_next = Block::make({kir::register_store(pf32, at(Float(32), "u", {x, next}), 0),
                                   kir::register_store(pi32, at(Int(32), "v", {x, next}), 0),
                                   kir::register_store(pf32, at(Float(32), "u", {x, next + 1}), 1)});
    Stmt body = top(kir::register_load(Float(32), pf32, 0), kir::register_load(Int(32), pi32, 0),
                    kir::register_load(Float(32), pf32, 1), Block::make(issue_next, constant_and_gather));
    // Before the loop: the first iteration's (r = 1) loads.
    Expr first = make_const(Int(32), 1);
    Stmt issue_first = Block::make({kir::register_store(pf32, at(Float(32), "u", {x, first}), 0),
                                    kir::register_store(pi32, at(Int(32), "v", {x, first}), 0),
                                    kir::register_store(pf32, at(Float(32), "u", {x, first + 1}), 1)});
    // One register array per type, around the preload and the loop.
    Stmt expected = in_strip(kir::allocate_registers(
        pi32, Int(32), 1,
        kir::allocate_registers(pf32, Float(32), 2, Block::make(issue_first, serial("r", 1, 5, instance(body))))));
    REQUIRE_SAME_IR(after.body, expected);

    for (uint32_t seed : {1u, 2u, 3u}) {
        INFO("seed " << seed);
        REQUIRE(test::same_outputs(before, after, walk_buffers(before, seed)) == "");
    }
    // As the pipeline runs it (prefetch_loads, then simplify_exact of the body).
    kir::Kernel simplified = after;
    simplified.body = simplify_exact(simplified.body);
    REQUIRE(test::same_outputs(before, simplified, walk_buffers(before, 4)) == "");
}

TEST_CASE("prefetch_loads prefetches only the rows slide_windows still loads", "[passes][prefetch_loads]") {
    // The form slide_windows leaves for a 3-row walk: rows r and r + 1 come
    // from the window (register reads, not loads), row r + 2 is loaded, and
    // the window is shifted at the end of each iteration.
    Expr r = var("r"), x = column();
    const std::string window = "window.0.float32";
    Expr u0 = var("u.reg0", Float(32)), u1 = var("u.reg1", Float(32)), u2 = var("u.reg2", Float(32));
    Stmt tail = Block::make(store_out(u0 - u1 * 2.0f + u2, r),
                            Block::make(kir::register_store(window, u1, 0), kir::register_store(window, u2, 1)));
    auto walk = [&](const Expr &row2, const Stmt &rest) {
        return lets({{"u.reg0", kir::register_load(Float(32), window, 0)},
                     {"u.reg1", kir::register_load(Float(32), window, 1)},
                     {"u.reg2", row2}},
                    rest);
    };
    auto windowed = [&](const Stmt &loop) {
        Expr zero = make_const(Int(32), 0);
        Stmt preload = Block::make(kir::register_store(window, at(Float(32), "u", {x, zero}), 0),
                                   kir::register_store(window, at(Float(32), "u", {x, zero + 1}), 1));
        return kir::allocate_registers(window, Float(32), 2, Block::make(preload, loop));
    };
    kir::Kernel before = walk_kernel(windowed(serial("r", 0, 5, instance(walk(at(Float(32), "u", {x, r + 2}), tail)))), true);

    kir::Kernel after = before;
    prefetch_loads(after);

    // Only u.reg2 is prefetched; the issue of r + 1's row goes right after it.
    const std::string pf = "prefetch.0.float32";
    Stmt body = walk(kir::register_load(Float(32), pf, 0),
                     Block::make(kir::register_store(pf, at(Float(32), "u", {x, (r + 1) + 2}), 0), tail));
    Stmt loop = kir::allocate_registers(
        pf, Float(32), 1,
        Block::make(kir::register_store(pf, at(Float(32), "u", {x, make_const(Int(32), 0) + 2}), 0), serial("r", 0, 5, instance(body))));
    REQUIRE_SAME_IR(after.body, in_strip(windowed(loop)));

    for (uint32_t seed : {5u, 6u}) {
        INFO("seed " << seed);
        REQUIRE(test::same_outputs(before, after, walk_buffers(before, seed)) == "");
    }
}

TEST_CASE("prefetch_loads leaves kernels that do not ask for it, or have nothing to prefetch, as they are", "[passes][prefetch_loads]") {
    Expr r = var("r"), x = column();
    Expr u0 = var("u.reg0", Float(32)), u1 = var("u.reg1", Float(32));
    auto two_rows = [&](const Expr &row0, const Expr &row1, const Expr &out_row) {
        return lets({{"u.reg0", at(Float(32), "u", {x, row0})}, {"u.reg1", at(Float(32), "u", {x, row1})}},
                    store_out(u0 * 0.5f - u1, out_row));
    };
    Stmt walk = serial("r", 0, 5, instance(two_rows(r, r + 1, r)));
    struct Case {
        const char *why;
        kir::Kernel kernel;
        int out_rows = 5;  ///< the rows it writes
    };
    Expr two = make_const(Int(32), 2), three = make_const(Int(32), 3);
    std::vector<Case> cases{
        // A walk the pass would rewrite, but the kernel did not opt in.
        {"prefetch_walks off", walk_kernel(walk, false)},
        // No per-thread loop: nothing to overlap the loads with.
        {"no serial loop", walk_kernel(instance(two_rows(two, three, make_const(Int(32), 0))), true), 1},
        // A loop of one iteration: no next iteration to prefetch.
        {"one iteration", walk_kernel(serial("r", 0, 1, instance(two_rows(r, r + 1, r))), true), 1},
        // An unrolled loop: not a walk.
        {"unrolled loop", walk_kernel(serial("r", 0, 5, instance(two_rows(r, r + 1, r)), ForType::Unrolled), true)},
        // Loads that do not move with the loop: the same every iteration.
        {"loop-invariant loads", walk_kernel(serial("r", 0, 5, instance(two_rows(two, three, r))), true)},
        // Moving loads only from constant memory: operands, not registers.
        {"constant-memory loads",
         walk_kernel(serial("r", 0, 5,
                            instance(lets({{"u.reg0", kir::load(Float(32), "c", const_true(), {r})},
                                           {"u.reg1", kir::load(Float(32), "c", const_true(), {r + 1})}},
                                          store_out(u0 * 0.5f - u1, r)))),
                     true)},
    };
    for (const Case &c : cases) {
        INFO(c.why);
        kir::Kernel after = c.kernel;
        prefetch_loads(after);
        REQUIRE_SAME_IR(after.body, c.kernel.body);
        REQUIRE(test::same_outputs(c.kernel, after, walk_buffers(c.kernel, 7, c.out_rows)) == "");
    }
}

TEST_CASE("prefetch_loads issues a rolled time loop's next block's loads at the block's top", "[passes][prefetch_loads]") {
    // Inside one instance, a rolled time loop over blocks k = 0 .. 4, each
    // block loading rows 2k and 2k + 1 of u where it uses them (in a nested
    // let chain) and a row that depends on a let of the block (a gather: stays):
    //   let a = u(x, 2k); let s = a * 0.5; let b = u(x, 2k + 1); let g = v(x, k)
    //   let c = u(x, g mod 3); Out(x, k) = s + b - c
    Expr k = var("k"), x = column();
    Expr a = var("a", Float(32)), s = var("s", Float(32)), b = var("b.row", Float(32)), g = var("g"), c = var("c", Float(32));
    auto block = [&](const Expr &row_a, const Expr &row_b) {
        return lets({{"a", row_a}, {"s", a * 0.5f}, {"b.row", row_b}, {"g", at(Int(32), "v", {x, k})},
                     {"c", at(Float(32), "u", {x, g % 3})}},
                    store_out(s + b - c, k));
    };
    Expr load_a = at(Float(32), "u", {x, k * 2}), load_b = at(Float(32), "u", {x, k * 2 + 1});
    kir::Kernel before = walk_kernel(instance(serial("k", 0, 5, block(load_a, load_b))), true);
    kir::Kernel after = before;
    prefetch_loads(after);

    // The moving loads (in the order met: a, b, and v's, which reads no let of
    // the block) come from registers the block before filled; each block
    // issues the next one's first.
    const std::string pf32 = "prefetch.0.float32", pi32 = "prefetch.0.int32";
    const std::string now_a = pf32 + ".now", now_b = pf32 + ".now$1", now_g = pi32 + ".now";
    auto on = [&](const Expr &e, const Expr &at_k) { return substitute("k", at_k, e); };
    Expr load_g = at(Int(32), "v", {x, k});
    Stmt issue_next = Block::make({kir::register_store(pf32, on(load_a, k + 1), 0), kir::register_store(pf32, on(load_b, k + 1), 1),
                                   kir::register_store(pi32, on(load_g, k + 1), 0)});
    Stmt rest = lets({{"a", var(now_a, Float(32))}, {"s", a * 0.5f}, {"b.row", var(now_b, Float(32))}, {"g", var(now_g)},
                      {"c", at(Float(32), "u", {x, g % 3})}},
                     store_out(s + b - c, k));
    Stmt body = lets({{now_a, kir::register_load(Float(32), pf32, 0)}, {now_b, kir::register_load(Float(32), pf32, 1)},
                      {now_g, kir::register_load(Int(32), pi32, 0)}},
                     Block::make(issue_next, rest));
    Expr zero = make_const(Int(32), 0);
    Stmt issue_first = Block::make({kir::register_store(pf32, on(load_a, zero), 0), kir::register_store(pf32, on(load_b, zero), 1),
                                    kir::register_store(pi32, on(load_g, zero), 0)});
    Stmt expected = in_strip(instance(kir::allocate_registers(
        pi32, Int(32), 1, kir::allocate_registers(pf32, Float(32), 2, Block::make(issue_first, serial("k", 0, 5, body))))));
    REQUIRE_SAME_IR(after.body, expected);
    for (uint32_t seed : {1u, 2u}) {
        INFO("seed " << seed);
        REQUIRE(test::same_outputs(before, after, walk_buffers(before, seed)) == "");
    }
}
