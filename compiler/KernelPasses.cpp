#include "KernelPasses.h"

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
        class Collect : public IRVisitor {
        public:
            std::vector<const Call *> loads;
            using IRVisitor::visit;
            void visit(const Call *op) override {
                if (op->name == kir::intrinsic::load) loads.push_back(op);
                IRVisitor::visit(op);
            }
        } collect;
        kernel.body.accept(&collect);
        for (const Call *op : collect.loads) {
            kir::Access a = kir::access_of(op);
            if (a.buffer != b.name) continue;
            read = true;
            for (int d = 0; d < b.dimensions; d++) {
                const int64_t *c = as_const_int(simplify(a.coords[d]));
                if (!c) {
                    uniform = false;
                    break;
                }
                lo[d] = std::min(lo[d], *c), hi[d] = std::max(hi[d], *c);
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
        std::set<std::string> seen;
        bool any_guard = false;
        // Each guard with the lanes it runs on: a store under `if (active)`
        // runs only where `active` may hold, which narrows the lane range.
        class Guards : public IRVisitor {
        public:
            Guards(const Scope<Interval> &v, const kir::Kernel &k) : varying(v), kernel(k) {}
            const Scope<Interval> &varying;
            const kir::Kernel &kernel;
            std::vector<Expr> sufficient;
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
                        narrowed.push(kir::lane_var, range);
                        sufficient.push_back(simplify(and_condition_over_domain(guard, narrowed)));
                    }
                }
                IRVisitor::visit(op);
            }
        } guards(varying, kernel);
        body.accept(&guards);
        for (const Expr &c : guards.sufficient) {
            any_guard = true;
            if (seen.insert(key_of(c)).second) conditions.push_back(c);
        }
        if (!any_guard) return body;
        Expr interior = const_true();
        for (const Expr &c : conditions) interior = interior && c;
        interior = simplify(interior);
        // A condition that still varies across the lanes would split the warp
        // around its shuffles: keep the guarded code only.
        if (is_const_zero(interior) || expr_uses_var(interior, kir::lane_var)) {
            return body;
        }
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
    step("specialize_interior", specialize_interior);
}

}  // namespace

void optimize_kernel(kir::Kernel &kernel, std::ostream *trace) {
    kir::on_large_stack([&] { run_kernel_passes(kernel, trace); });
}

}  // namespace pulse
