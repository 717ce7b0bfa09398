#include "KernelPasses.h"

#include "PeelLoops.h"
#include "SlideWindows.h"

#include <map>
#include <ostream>
#include <set>
#include <sstream>

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// Applies `fn` to the body of every array-instance marker.
Stmt on_instances(const Stmt &s, const std::function<Stmt(const Stmt &)> &fn) {
    class Finder : public IRMutator {
    public:
        explicit Finder(const std::function<Stmt(const Stmt &)> &f) : fn(f) {}
        const std::function<Stmt(const Stmt &)> &fn;
        using IRMutator::visit;
        Stmt visit(const ProducerConsumer *op) override {
            if (op->name != kir::array_instance_marker) return IRMutator::visit(op);
            return ProducerConsumer::make(op->name, op->is_producer, fn(op->body));
        }
    } finder(fn);
    return finder.mutate(s);
}

std::string key_of(const Expr &e) {
    std::ostringstream s;
    s << e;
    return s.str();
}

}  // namespace

void place_uniform_inputs(kir::Kernel &kernel) {
    for (kir::BufferArg &b : kernel.buffers) {
        if (b.is_output || b.placement != kir::Placement::Global) continue;
        bool uniform = true, read = false;
        std::vector<int64_t> lo(b.dimensions, INT64_MAX), hi(b.dimensions, INT64_MIN);
        // Each load of b with the ranges of the loops of constant bounds around it.
        class Collect : public IRVisitor {
        public:
            const std::string &buffer;
            explicit Collect(const std::string &n) : buffer(n) {}
            Scope<Interval> loops;
            std::vector<std::pair<const Call *, std::vector<Interval>>> loads;
            using IRVisitor::visit;
            void visit(const For *op) override {
                const int64_t *lo = as_const_int(op->min), *n = as_const_int(op->extent);
                if (lo && n) {
                    ScopedBinding<Interval> bind(loops, op->name, Interval(op->min, simplify(op->min + op->extent - 1)));
                    IRVisitor::visit(op);
                } else {
                    IRVisitor::visit(op);
                }
            }
            void visit(const Call *op) override {
                if (op->name == kir::intrinsic::load && kir::access_of(op).buffer == buffer) {
                    std::vector<Interval> ranges;
                    for (const Expr &c : kir::access_of(op).coords) ranges.push_back(bounds_of_expr_in_scope(simplify(c), loops));
                    loads.push_back({op, ranges});
                }
                IRVisitor::visit(op);
            }
        } collect(b.name);
        kernel.body.accept(&collect);
        // Uniform: every coordinate is a constant, or ranges over constants
        // with the loops around it (the same on every lane).
        for (const auto &[op, ranges] : collect.loads) {
            read = true;
            for (int d = 0; d < b.dimensions; d++) {
                const int64_t *l = ranges[d].is_bounded() ? as_const_int(simplify(ranges[d].min)) : nullptr;
                const int64_t *h = ranges[d].is_bounded() ? as_const_int(simplify(ranges[d].max)) : nullptr;
                if (!l || !h) {
                    uniform = false;
                    break;
                }
                lo[d] = std::min(lo[d], *l), hi[d] = std::max(hi[d], *h);
            }
        }
        if (!read || !uniform) continue;
        int64_t elements = 1;
        for (int d = 0; d < b.dimensions; d++) elements *= hi[d] - lo[d] + 1;
        if (elements * b.type.bytes() > constant_memory_budget) continue;
        b.placement = kir::Placement::Constant;
        b.region_min = lo;
        for (int d = 0; d < b.dimensions; d++) b.region_extent.push_back(hi[d] - lo[d] + 1);
        // Inside the region by construction: no guard.
        kernel.body = kir::replace_calls(kernel.body, [&](const Call *op) -> Expr {
            if (op->name != kir::intrinsic::load) return Expr();
            kir::Access a = kir::access_of(op);
            if (a.buffer != b.name) return Expr();
            return kir::load(op->type, a.buffer, const_true(), a.coords);
        });
    }
}

void hoist_loads(kir::Kernel &kernel) {
    kernel.body = on_instances(kernel.body, [&](const Stmt &body) {
        // Names the straight-line code binds: a load using one stays put.
        std::set<std::string> bound;
        class Names : public IRVisitor {
        public:
            std::set<std::string> &names;
            explicit Names(std::set<std::string> &n) : names(n) {}
            using IRVisitor::visit;
            void visit(const LetStmt *op) override {
                names.insert(op->name);
                IRVisitor::visit(op);
            }
            void visit(const Let *op) override {
                names.insert(op->name);
                IRVisitor::visit(op);
            }
            void visit(const For *op) override {
                names.insert(op->name);
                IRVisitor::visit(op);
            }
        } names(bound);
        body.accept(&names);
        std::map<std::string, std::string> hoisted;  // load text -> let name
        std::vector<std::pair<std::string, Expr>> lets;
        Stmt rewritten = kir::replace_calls(body, [&](const Call *op) -> Expr {
            if (op->name != kir::intrinsic::load) return Expr();
            bool movable = true;
            for (const Expr &a : op->args) {
                kir::for_each_call(a, [&](const Call *c) { movable &= !kir::is_lane_exchange(c); });
                if (!movable) break;
            }
            class Free : public IRVisitor {
            public:
                const std::set<std::string> &bound;
                bool uses_bound = false;
                explicit Free(const std::set<std::string> &b) : bound(b) {}
                using IRVisitor::visit;
                void visit(const Variable *op) override { uses_bound |= bound.count(op->name) > 0; }
            } free(bound);
            Expr(op).accept(&free);
            if (!movable || free.uses_bound) return Expr();
            std::string key = key_of(op);
            auto it = hoisted.find(key);
            if (it == hoisted.end()) {
                kir::Access a = kir::access_of(op);
                std::string n = a.buffer + ".reg" + std::to_string(lets.size());
                it = hoisted.emplace(key, n).first;
                lets.push_back({n, Expr(op)});
            }
            return Variable::make(op->type, it->second);
        });
        for (size_t i = lets.size(); i-- > 0;) rewritten = LetStmt::make(lets[i].first, lets[i].second, rewritten);
        return rewritten;
    });
}

void specialize_interior(kir::Kernel &kernel) {
    kernel.body = on_instances(kernel.body, [&](const Stmt &body) -> Stmt {
        // The lane varies inside a warp; everything else a guard uses (the
        // grid point, the per-thread loops, the buffer sizes) does not.
        Scope<Interval> varying;
        varying.push(kir::lane_var, Interval(make_const(Int(32), 0), make_const(Int(32), kir::warp_size - 1)));
        std::vector<Expr> conditions;
        // Each guard with the lanes it runs on: a store under `if (active)`
        // runs only where `active` may hold, which narrows the lane range.
        class Guards : public IRVisitor {
        public:
            Guards(const Scope<Interval> &v, const kir::Kernel &k) : varying(v), kernel(k) {}
            const Scope<Interval> &varying;
            const kir::Kernel &kernel;
            /// Loops of constant bounds inside the instance (a rolled time loop): a
            /// guard must hold on every iteration.
            std::vector<std::pair<std::string, Interval>> loops;
            void visit(const For *op) override {
                const int64_t *lo = as_const_int(op->min), *n = as_const_int(op->extent);
                if (!lo || !n) return IRVisitor::visit(op);
                loops.push_back({op->name, Interval(op->min, simplify(op->min + op->extent - 1))});
                IRVisitor::visit(op);
                loops.pop_back();
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
                        for (const Expr &c : conditions) {
                            range = Interval::make_intersection(range, solve_for_outer_interval(c, kir::lane_var));
                        }
                        // Over every iteration of the loops around: the union of the ranges.
                        // Each loop's range, narrowed where a condition pins it (a store in
                        // the last block of a rolled time loop runs only there).
                        Scope<Interval> loop_scope;
                        for (const auto &[var, interval] : loops) {
                            Interval r = interval;
                            for (const Expr &c : conditions) {
                                Interval pinned = solve_for_outer_interval(c, var);
                                if (pinned.has_lower_bound() && is_const(simplify(pinned.min))) r.min = simplify(max(r.min, pinned.min));
                                if (pinned.has_upper_bound() && is_const(simplify(pinned.max))) r.max = simplify(min(r.max, pinned.max));
                            }
                            loop_scope.push(var, r);
                        }
                        if (!loops.empty()) {
                            Interval lo = range.has_lower_bound() ? bounds_of_expr_in_scope(range.min, loop_scope) : Interval::everything();
                            Interval hi = range.has_upper_bound() ? bounds_of_expr_in_scope(range.max, loop_scope) : Interval::everything();
                            range = Interval(lo.has_lower_bound() ? lo.min : Interval::neg_inf(), hi.has_upper_bound() ? hi.max : Interval::pos_inf());
                            range = Interval::make_intersection(range, varying.get(kir::lane_var));
                        }
                        narrowed.push(kir::lane_var, range);
                        for (const auto &[var, interval] : loops) narrowed.push(var, loop_scope.get(var));
                        // The guard is the access's bounds check: widen the box of
                        // coordinates the buffer is accessed at by this access's range.
                        kir::Access a = kir::access_of(op);
                        std::vector<Interval> &box = boxes[a.buffer];
                        for (size_t d = 0; d < a.coords.size(); d++) {
                            Interval range_d = bounds_of_expr_in_scope(a.coords[d], narrowed);
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
        if (guards.boxes.empty() || guards.unbounded) return body;
        // Interior: each buffer's box lies inside it (both corners in bounds).
        for (const auto &[buffer, box] : guards.boxes) {
            std::vector<Expr> lo, hi;
            for (const Interval &r : box) lo.push_back(simplify(r.min)), hi.push_back(simplify(r.max));
            const kir::BufferArg &b = kernel.buffer(buffer);
            conditions.push_back(kir::in_bounds(b, lo) && kir::in_bounds(b, hi));
        }
        Expr interior = const_true();
        for (const Expr &c : conditions) interior = interior && c;
        interior = simplify(interior);
        // A condition that still varies across the lanes would split the warp
        // around its shuffles: keep the guarded code only.
        if (is_const_zero(interior) || expr_uses_var(interior, kir::lane_var)) {
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
            std::vector<Expr> args = op->args;
            args[1] = const_true();
            for (size_t i = 2; i < args.size(); i++) args[i] = kir::replace_calls(args[i], [&](const Call *inner) -> Expr {
                if (inner->name != kir::intrinsic::load) return Expr();
                std::vector<Expr> a = inner->args;
                a[1] = const_true();
                return Call::make(inner->type, inner->name, a, inner->call_type);
            });
            return Call::make(op->type, op->name, args, op->call_type);
        });
        return IfThenElse::make(interior, fast, body);
    });
}

namespace {

void run_kernel_passes(kir::Kernel &kernel, std::ostream *trace) {
    auto step = [&](const char *name, void (*pass)(kir::Kernel &)) {
        pass(kernel);
        kernel.body = simplify(kernel.body);
        if (trace) {
            *trace << "// ---- kernel IR after " << name << "\n";
            kir::print(*trace, kernel);
        }
    };
    step("place_uniform_inputs", place_uniform_inputs);
    step("hoist_loads", hoist_loads);
    step("slide_windows", slide_windows);
    step("peel_loops", peel_loops);
    step("specialize_interior", specialize_interior);
}

}  // namespace

void optimize_kernel(kir::Kernel &kernel, std::ostream *trace) {
    kir::on_large_stack([&] { run_kernel_passes(kernel, trace); });
}

}  // namespace pulse
