#include "lower/SpecializeInterior.h"
#include "ir/ExactSimplify.h"
#include "ir/IndexArithmetic.h"

#include <map>
#include <set>
#include <sstream>

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// The terms of a conjunction (`c` itself if it is none).
std::vector<Expr> conjuncts(const Expr &c) {
    if (const And *a = c.as<And>()) {
        std::vector<Expr> left = conjuncts(a->a), right = conjuncts(a->b);
        left.insert(left.end(), right.begin(), right.end());
        return left;
    }
    return {c};
}

/// `e` as `value + constant` (constant 0 if `e` is no such sum).
std::pair<Expr, int64_t> split_offset(const Expr &e) {
    if (const Add *a = e.as<Add>()) {
        if (const int64_t *k = as_const_int(a->b)) return {a->a, *k};
    }
    if (const Sub *d = e.as<Sub>()) {
        if (const int64_t *k = as_const_int(d->b)) return {d->a, -*k};
    }
    return {e, 0};
}

/// Folds the bounds of one expression against one run-time size at several
/// offsets, `x < n + c` for c in [lo, hi] (a stencil's interior test, once per
/// read), into `x < n + lo && n + lo <= n + hi`. The sums wrap (the language's
/// integers), so the least bound is not simply n + lo: but where n + lo <= n +
/// hi no wrap lies between them (hi - lo is small), n + c grows with c over
/// [lo, hi], and n + lo is the least. Where the second test fails the
/// interior is not taken, which is always safe.
std::vector<Expr> merge_bounds_against_one_size(const std::vector<Expr> &tests) {
    struct Group {
        Expr first;  ///< the test as found, kept where the group has one member
        IRNodeType kind;
        Expr bounded, size;
        int64_t lo, hi;
        int members = 0;
    };
    std::vector<Group> groups;
    std::vector<Expr> others;
    for (const Expr &test : tests) {
        for (const Expr &c : conjuncts(test)) {
            const LT *lt = c.as<LT>();
            const LE *le = c.as<LE>();
            const Expr a = lt ? lt->a : le ? le->a : Expr(), b = lt ? lt->b : le ? le->b : Expr();
            if (!a.defined() || !b.type().is_int() || b.type().bits() > 32 || is_const(b)) {
                others.push_back(c);
                continue;
            }
            auto [size, offset] = split_offset(b);
            Group *g = nullptr;
            for (Group &x : groups) {
                if (x.kind == c->node_type && equal(x.bounded, a) && equal(x.size, size)) g = &x;
            }
            if (!g) g = &groups.emplace_back(Group{c, c->node_type, a, size, offset, offset});
            g->lo = std::min(g->lo, offset), g->hi = std::max(g->hi, offset);
            g->members++;
        }
    }
    for (const Group &g : groups) {
        if (g.members == 1) {
            others.push_back(g.first);
            continue;
        }
        const Expr least = g.size + make_const(g.size.type(), g.lo), most = g.size + make_const(g.size.type(), g.hi);
        others.push_back(g.kind == IRNodeType::LT ? LT::make(g.bounded, least) : LE::make(g.bounded, least));
        others.push_back(least <= most);
    }
    return others;
}

}  // namespace

void specialize_interior(kir::Kernel &kernel) {
    kernel.body = kir::on_instances(kernel.body, [&](const Stmt &body) -> Stmt {
        // The lane varies inside a warp; everything else a guard uses (the
        // grid point, the per-thread loops, the buffer sizes) does not.
        Scope<Interval> varying;
        varying.push(kir::lane_var, Interval(make_const(Int(32), 0), make_const(Int(32), kir::warp_size - 1)));
        // An array of several warps: the warp varies too, and the test must
        // agree on all of them (their barriers are the block's).
        const bool several_warps = kernel.warps_per_array > 1;
        if (several_warps) {
            varying.push(kir::array_warp_var, Interval(make_const(Int(32), 0), make_const(Int(32), kernel.warps_per_array - 1)));
        }
        std::vector<Expr> conditions;
        // Each guard with the lanes it runs on: a store under `if (active)`
        // runs only where `active` may hold, which narrows the lane range.
        class Guards : public IRVisitor {
        public:
            Guards(const Scope<Interval> &v, const kir::Kernel &k) : varying(v), kernel(k) {}
            const Scope<Interval> &varying;
            const kir::Kernel &kernel;
            /// Accesses that keep their guards in the fast copy.
            std::set<Expr, IRDeepCompare> kept_guarded;
            /// Loops of constant bounds inside the instance (a rolled time loop): a
            /// guard must hold on every iteration.
            std::vector<std::pair<std::string, Interval>> loops;
            void visit(const For *op) override {
                const int64_t *lo = as_const_int(op->min), *n = as_const_int(op->extent);
                if (!lo || !n) return IRVisitor::visit(op);
                loops.push_back({op->name, Interval(op->min, simplify_exact(op->min + op->extent - 1))});
                IRVisitor::visit(op);
                loops.pop_back();
            }
            /// The lanes [lo, hi] that the constant bounds `conditions` put on
            /// the lane leave (empty where lo > hi: no lane runs under them).
            static std::pair<int64_t, int64_t> lanes_left(const std::vector<Expr> &conditions) {
                int64_t lo = 0, hi = kir::warp_size - 1;
                std::vector<Expr> terms;
                for (const Expr &c : conditions) {
                    for (const Expr &term : conjuncts(c)) terms.push_back(term);
                }
                for (const Expr &c : terms) {
                    // `lane == k` as k <= lane <= k (the solver leaves an equality unbounded).
                    const EQ *eq = c.as<EQ>();
                    const Variable *v = eq ? eq->a.as<Variable>() : nullptr;
                    const Interval r = v && v->name == kir::lane_var && is_const(eq->b) ? Interval::single_point(eq->b)
                                                                                          : solve_for_outer_interval(c, kir::lane_var);
                    const Expr l = r.has_lower_bound() ? simplify_exact(r.min) : Expr(), h = r.has_upper_bound() ? simplify_exact(r.max) : Expr();
                    if (const int64_t *k = l.defined() ? as_const_int(l) : nullptr) lo = std::max(lo, *k);
                    if (const int64_t *k = h.defined() ? as_const_int(h) : nullptr) hi = std::min(hi, *k);
                }
                return {lo, hi};
            }
            /// Per buffer, the box of coordinates its guarded accesses reach.
            std::map<std::string, std::vector<Interval>> boxes;
            bool unbounded = false;
            std::map<std::string, Expr> bool_lets;
            std::vector<Expr> conditions;
            using IRVisitor::visit;
            void visit(const LetStmt *op) override {
                if (op->value.type().is_bool()) bool_lets[op->name] = substitute(bool_lets, op->value);
                IRVisitor::visit(op);
            }
            void visit(const IfThenElse *op) override {
                op->condition.accept(this);
                conditions.push_back(substitute(bool_lets, op->condition));
                op->then_case.accept(this);
                conditions.pop_back();
                if (op->else_case.defined()) op->else_case.accept(this);
            }
            void visit(const Call *op) override {
                if (op->name == kir::intrinsic::load || op->name == kir::intrinsic::store) {
                    Expr guard = kir::access_of(op).guard;
                    if (!is_const_one(guard)) {
                        Scope<Interval> narrowed;
                        Interval range = varying.get(kir::lane_var);
                        // Conditions narrow the lanes of a one-warp array only (the
                        // thread index of a wider one spans two variables): a wider
                        // box is still a correct test.
                        const std::vector<Expr> &lane_conditions = varying.contains(kir::array_warp_var) ? std::vector<Expr>() : conditions;
                        for (const Expr &c : lane_conditions) {
                            range = Interval::make_intersection(range, solve_for_outer_interval(c, kir::lane_var));
                        }
                        // An access on one lane (a drain PE's store): the conditions
                        // with that lane put in pin the loops around by its activity
                        // (`lane <= 2 t` on lane 31 starts the store at t = 16).
                        const auto [lane_lo, lane_hi] = lanes_left(lane_conditions);
                        bool never_runs = lane_lo > lane_hi;
                        std::vector<Expr> loop_conditions = conditions;
                        if (lane_lo == lane_hi) {
                            for (Expr &c : loop_conditions) c = simplify_exact(substitute(kir::lane_var, make_const(Int(32), lane_lo), c));
                        }
                        // Over every iteration of the loops around: the union of the ranges.
                        // Each loop's range, narrowed where a condition pins it (a store in
                        // the last block of a rolled time loop runs only there).
                        Scope<Interval> loop_scope;
                        for (const Expr &c : loop_conditions) never_runs |= is_const_zero(c);
                        for (const auto &[var, interval] : loops) {
                            Interval r = interval;
                            for (const Expr &c : loop_conditions) {
                                Interval pinned = solve_for_outer_interval(c, var);
                                if (pinned.has_lower_bound() && is_const(simplify_exact(pinned.min))) r.min = simplify_exact(max(r.min, pinned.min));
                                if (pinned.has_upper_bound() && is_const(simplify_exact(pinned.max))) r.max = simplify_exact(min(r.max, pinned.max));
                            }
                            never_runs |= is_const_one(simplify_exact(r.max < r.min));
                            loop_scope.push(var, r);
                        }
                        // An access no lane and no iteration reaches (a drain PE's
                        // store before the wavefront arrives) widens no box: its
                        // guard stays, and costs nothing where it never runs.
                        if (never_runs) {
                            kept_guarded.insert(Expr(op));
                            return IRVisitor::visit(op);
                        }
                        if (!loops.empty()) {
                            Interval lo = range.has_lower_bound() ? bounds_of_expr_in_scope(range.min, loop_scope) : Interval::everything();
                            Interval hi = range.has_upper_bound() ? bounds_of_expr_in_scope(range.max, loop_scope) : Interval::everything();
                            range = Interval(lo.has_lower_bound() ? lo.min : Interval::neg_inf(), hi.has_upper_bound() ? hi.max : Interval::pos_inf());
                            range = Interval::make_intersection(range, varying.get(kir::lane_var));
                        }
                        narrowed.push(kir::lane_var, range);
                        if (varying.contains(kir::array_warp_var)) narrowed.push(kir::array_warp_var, varying.get(kir::array_warp_var));
                        for (const auto &[var, interval] : loops) narrowed.push(var, loop_scope.get(var));
                        // The guard is the access's bounds check: widen the box of
                        // coordinates the buffer is accessed at by this access's range.
                        kir::Access a = kir::access_of(op);
                        std::vector<Interval> ranges;
                        for (const Expr &c : a.coords) ranges.push_back(bounds_of_expr_in_scope(c, narrowed));
                        // A read that reaches, at generation-time coordinates, past
                        // what the domain reads (an idle lane's hoisted load, a read
                        // a select discards) reaches past a buffer sized as the
                        // header says: it keeps its guard in the fast copy too,
                        // and the test leaves it out, so the fast copy still runs.
                        const kir::BufferArg &buffer = kernel.buffer(a.buffer);
                        bool past_domain = false;
                        for (size_t d = 0; d < ranges.size() && d < buffer.domain_reads.size(); d++) {
                            const Expr lo = simplify_exact(ranges[d].min), hi = simplify_exact(ranges[d].max);
                            const int64_t *l = as_const_int(lo), *h = as_const_int(hi);
                            past_domain |= l && h && (*l < buffer.domain_reads[d].first || *h > buffer.domain_reads[d].second);
                        }
                        if (past_domain) {
                            kept_guarded.insert(Expr(op));
                            return IRVisitor::visit(op);
                        }
                        std::vector<Interval> &box = boxes[a.buffer];
                        for (size_t d = 0; d < ranges.size(); d++) {
                            const Interval &range_d = ranges[d];
                            if (!range_d.is_bounded()) unbounded = true;
                            if (box.size() <= d) box.push_back(range_d);
                            else box[d] = Interval::make_union(box[d], range_d);
                        }
                    }
                }
                IRVisitor::visit(op);
            }
        } guards(varying, kernel);
        body.accept(&guards);
        if (guards.unbounded) return body;
        // Selects whose condition holds on the whole instance when a bound
        // against a run-time size (an input in constant memory) does: a
        // spec's interior test, `select(inside the grid, update, hold)`, is
        // true on every cell of a tile inside the grid. The bound joins the
        // interior's test; the fast copy takes the first branch without the
        // per-cell test. Each conjunct of a condition is taken on its own.
        class UniformSelects : public IRVisitor {
        public:
            UniformSelects(const Scope<Interval> &varying, const kir::Kernel &kernel, const Stmt &body)
                : kernel(kernel), index(body) {
                for (auto it = varying.cbegin(); it != varying.cend(); ++it) domain.push(it.name(), it.value());
            }
            const kir::Kernel &kernel;
            IndexArithmetic index;
            Scope<Interval> domain;
            /// Lets bound to a load of a constant-memory input at constant
            /// coordinates (the grid size): substituted, they can be tested first.
            std::map<std::string, Expr> uniform_lets;
            /// A comparison of index arithmetic as `0 <= b - a` (`0 < b - a`), its
            /// terms cancelled: bounding each side over the domain on its own
            /// would lose that both sides move together (`21 i + 8 <= 24 i + 244 by`
            /// holds on i in [1, 85] for by >= 1, not only for by >= 8).
            /// Exact, as index arithmetic never overflows (IndexArithmetic.h).
            Expr one_side(const Expr &c) const {
                // Each variable of the domain collected into one term (the
                // simplifier alone may leave `(8 b + r) 4 - 3 r`).
                auto difference = [&](const Expr &a, const Expr &b) {
                    Expr d = simplify(b - a);
                    for (auto it = domain.cbegin(); it != domain.cend(); ++it) {
                        if (!expr_uses_var(d, it.name())) continue;
                        SolverResult solved = solve_expression(d, it.name());
                        if (solved.fully_solved) d = solved.result;
                    }
                    return d;
                };
                if (!compares_indices(c)) return c;
                if (const LE *le = c.as<LE>(); le && le->a.type().is_int()) return make_zero(le->a.type()) <= difference(le->a, le->b);
                if (const LT *lt = c.as<LT>(); lt && lt->a.type().is_int()) return make_zero(lt->a.type()) < difference(lt->a, lt->b);
                return c;
            }
            /// Whether `c` is `a < b` or `a <= b` of index arithmetic (a side may be a constant).
            bool compares_indices(const Expr &c) const {
                auto indices = [&](const Expr &a, const Expr &b) {
                    auto index_or_constant = [&](const Expr &e) { return index.is_index(e) || is_const(e); };
                    return index_or_constant(a) && index_or_constant(b) && (index.is_index(a) || index.is_index(b));
                };
                if (const LE *le = c.as<LE>()) return indices(le->a, le->b);
                if (const LT *lt = c.as<LT>()) return indices(lt->a, lt->b);
                return false;
            }
            /// Whether `test`, a condition of the grid point, holds with every grid
            /// variable far from its first value.
            bool holds_far_from_origin(const Expr &test) const {
                constexpr int far = 1 << 16;
                std::map<std::string, Expr> far_point;
                for (const kir::GridLoop &g : kernel.grid) far_point[g.var] = make_const(Int(32), g.min + far);
                return is_const_one(simplify_exact(substitute(far_point, test)));
            }
            /// Conditions found, and the test that implies each (in the order found).
            std::map<Expr, Expr, IRDeepCompare> proven;
            std::vector<Expr> proven_order;
            std::set<Expr, IRDeepCompare> seen;
            using IRVisitor::visit;
            void visit(const For *op) override {
                const int64_t *lo = as_const_int(op->min), *n = as_const_int(op->extent);
                if (!lo || !n) return IRVisitor::visit(op);
                domain.push(op->name, Interval(op->min, simplify_exact(op->min + op->extent - 1)));
                IRVisitor::visit(op);
                domain.pop(op->name);
            }
            void visit(const LetStmt *op) override {
                if (const Call *c = op->value.as<Call>()) {
                    if (c->name == kir::intrinsic::load && kernel.buffer(kir::access_of(c).buffer).placement == kir::Placement::Constant &&
                        is_const_one(kir::access_of(c).guard)) {
                        bool constant = true;
                        for (const Expr &a : kir::access_of(c).coords) constant &= is_const(a);
                        if (constant) uniform_lets[op->name] = op->value;
                    }
                }
                IRVisitor::visit(op);
            }
            void visit(const Select *op) override {
                // Each conjunct on its own: a lane range (the array's edge) may share the condition.
                for (const Expr &c : conjuncts(op->condition)) {
                    if (!seen.insert(c).second) continue;
                    // Only a bound against a run-time size: it holds on most of the
                    // grid (a test of the grid point alone, `bx == 0`, would not).
                    if (!c.as<LT>() && !c.as<LE>()) continue;
                    Expr over_domain = and_condition_over_domain(one_side(c), domain);
                    bool reads_size = false;
                    for (const auto &[name, value] : uniform_lets) reads_size |= expr_uses_var(over_domain, name);
                    // A bound of the grid point alone joins too where it holds far from the
                    // grid's origin (a lower bound, the grid's first row or column held):
                    // `bx >= 1` holds on most of the grid, `bx < 1` would not.
                    // Only index arithmetic: a comparison of values (a float's `x <= x`,
                    // false for NaN) is the spec's to evaluate, never the simplifier's.
                    if (!reads_size && (!compares_indices(c) || !holds_far_from_origin(over_domain))) continue;
                    Expr test = simplify_exact(substitute(uniform_lets, over_domain));
                    bool uniform = !is_const_zero(test);
                    for (auto it = domain.cbegin(); uniform && it != domain.cend(); ++it) uniform = !expr_uses_var(test, it.name());
                    if (uniform && proven.emplace(c, test).second) proven_order.push_back(c);
                }
                IRVisitor::visit(op);
            }
        } selects(varying, kernel, body);
        body.accept(&selects);
        if (guards.boxes.empty() && selects.proven.empty()) return body;
        // Interior: each buffer's box lies inside it (both corners in bounds).
        for (const auto &[buffer, box] : guards.boxes) {
            std::vector<Expr> lo, hi;
            for (const Interval &r : box) lo.push_back(simplify_exact(r.min)), hi.push_back(simplify_exact(r.max));
            const kir::BufferArg &b = kernel.buffer(buffer);
            conditions.push_back(kir::in_bounds(b, lo) && kir::in_bounds(b, hi));
        }
        std::vector<Expr> size_tests;
        for (const Expr &c : selects.proven_order) size_tests.push_back(selects.proven.at(c));
        for (const Expr &test : merge_bounds_against_one_size(size_tests)) conditions.push_back(test);
        Expr interior = const_true();
        for (const Expr &c : conditions) interior = interior && c;
        interior = simplify_exact(interior);
        // A condition that still varies across the lanes would split the warp
        // around its shuffles: keep the guarded code only.
        if (is_const_zero(interior) || expr_uses_var(interior, kir::lane_var) ||
            (several_warps && expr_uses_var(interior, kir::array_warp_var))) {
            return body;
        }
        // It is tested before the instance: nothing bound inside may appear.
        class Bound : public IRVisitor {
        public:
            Scope<> names;
            using IRVisitor::visit;
            void visit(const LetStmt *op) override { names.push(op->name), IRVisitor::visit(op); }
            void visit(const For *op) override { names.push(op->name), IRVisitor::visit(op); }
        } bound;
        body.accept(&bound);
        if (expr_uses_vars(interior, bound.names)) return body;
        Stmt fast = kir::replace_calls(body, [&](const Call *op) -> Expr {
            if (op->name != kir::intrinsic::load && op->name != kir::intrinsic::store) return Expr();
            if (guards.kept_guarded.count(Expr(op))) return Expr();
            std::vector<Expr> args = op->args;
            args[1] = const_true();
            for (size_t i = 2; i < args.size(); i++) args[i] = kir::replace_calls(args[i], [&](const Call *inner) -> Expr {
                if (inner->name != kir::intrinsic::load || guards.kept_guarded.count(Expr(inner))) return Expr();
                std::vector<Expr> a = inner->args;
                a[1] = const_true();
                return Call::make(inner->type, inner->name, a, inner->call_type);
            });
            return Call::make(op->type, op->name, args, op->call_type);
        });
        class TakeFirstBranch : public IRMutator {
        public:
            const std::map<Expr, Expr, IRDeepCompare> &proven;
            explicit TakeFirstBranch(const std::map<Expr, Expr, IRDeepCompare> &p) : proven(p) {}
            using IRMutator::visit;
            Expr visit(const Select *op) override {
                Expr rest = const_true();
                bool dropped = false;
                for (const Expr &c : conjuncts(op->condition)) {
                    if (proven.count(c)) dropped = true;
                    else rest = is_const_one(rest) ? c : (rest && c);
                }
                if (!dropped) return IRMutator::visit(op);
                if (is_const_one(rest)) return mutate(op->true_value);
                return Select::make(mutate(rest), mutate(op->true_value), mutate(op->false_value));
            }
        };
        if (!selects.proven.empty()) fast = TakeFirstBranch(selects.proven).mutate(fast);
        return IfThenElse::make(interior, fast, body);
    });
}

}  // namespace pulse
