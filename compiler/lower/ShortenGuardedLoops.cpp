#include "lower/ShortenGuardedLoops.h"

#include <optional>
#include <set>

#include "ir/ExactSimplify.h"
#include "ir/LaneVarying.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

std::optional<Expr> last_iteration(const Expr &condition, const std::string &var) {
    const SolverResult solved = solve_expression(condition, var);
    if (!solved.fully_solved || !solved.result.defined()) return std::nullopt;
    Expr lhs, rhs;
    bool strict = false;
    if (const LE *op = solved.result.as<LE>()) lhs = op->a, rhs = op->b;
    else if (const LT *op = solved.result.as<LT>()) lhs = op->a, rhs = op->b, strict = true;
    else return std::nullopt;
    if (expr_uses_var(rhs, var)) return std::nullopt;
    int64_t k = 1;
    if (const Mul *m = lhs.as<Mul>()) {
        const int64_t *c = as_const_int(m->b);
        if (!c || *c <= 0) return std::nullopt;
        k = *c;
        lhs = m->a;
    }
    const Variable *v = lhs.as<Variable>();
    if (!v || v->name != var || !lhs.type().is_int()) return std::nullopt;
    // var * k <= e  <=>  var <= floor(e / k) (Halide's division rounds down).
    const Expr bound = strict ? rhs - 1 : rhs;
    return simplify_exact(k == 1 ? bound : bound / make_const(bound.type(), k));
}

namespace {

/// The buffers and register arrays an expression reads (`reads`) or a
/// statement writes (`writes`).
class Accesses : public IRVisitor {
public:
    std::set<std::string> reads, writes;
    bool reads_arrays = false;  ///< reads a register or shared array (a Load)
    using IRVisitor::visit;
    void visit(const Load *op) override {
        reads.insert(op->name);
        reads_arrays = true;
        IRVisitor::visit(op);
    }
    void visit(const Store *op) override {
        writes.insert(op->name);
        IRVisitor::visit(op);
    }
    void visit(const Call *op) override {
        if (op->name == kir::intrinsic::load) reads.insert(kir::access_of(op).buffer);
        if (op->name == kir::intrinsic::store) writes.insert(kir::access_of(op).buffer);
        IRVisitor::visit(op);
    }
};

/// Whether `s` writes a buffer or register array that `e` reads.
bool writes_what_is_read(const Stmt &s, const Expr &e) {
    Accesses read, written;
    e.accept(&read);
    s.accept(&written);
    for (const std::string &name : read.reads) {
        if (written.writes.count(name)) return true;
    }
    return false;
}

class Shorten : public IRMutator {
public:
    explicit Shorten(const LaneVarying &varying) : varying(varying) {}
    using IRMutator::visit;

    Stmt visit(const LetStmt *op) override {
        if (differs_between_threads(op->value)) thread_varying.insert(op->name);
        return IRMutator::visit(op);
    }

    Stmt visit(const For *op) override {
        Stmt body = mutate(op->body);
        const IfThenElse *guard = body.as<IfThenElse>();
        if (op->for_type != ForType::Serial || !guard || guard->else_case.defined()) {
            return For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
        }
        const std::optional<Expr> last = last_iteration(guard->condition, op->name);
        // A bound that differs between the array's threads (a copy's loop
        // over the elements thread t copies) stays a guard: every thread runs
        // a loop the same number of times, as the kernel executor does. So
        // does one the loop's body may change (read once, it would be stale).
        if (!last || differs_between_threads(*last) || writes_what_is_read(guard->then_case, *last)) {
            return For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
        }
        const Expr extent = simplify_exact(max(0, min(op->extent, cast(op->extent.type(), *last - op->min + 1))));
        return For::make(op->name, op->min, extent, op->for_type, op->device_api, guard->then_case);
    }

private:
    const LaneVarying &varying;
    std::set<std::string> thread_varying;  ///< lets computed from the warp's index (LaneVarying follows the lane)

    /// Through the lane (LaneVarying), the warp's index, a let of either, or
    /// a register array (which LaneVarying follows for the lane only).
    bool differs_between_threads(const Expr &e) const {
        if (varying.varies(e) || expr_uses_var(e, kir::array_warp_var)) return true;
        Accesses read;
        e.accept(&read);
        if (read.reads_arrays) return true;
        for (const std::string &name : thread_varying) {
            if (expr_uses_var(e, name)) return true;
        }
        return false;
    }
};

}  // namespace

void shorten_guarded_loops(kir::Kernel &kernel) {
    kernel.body = kir::on_instances(kernel.body, [&](const Stmt &instance) {
        const LaneVarying varying(instance);
        return Shorten(varying).mutate(instance);
    });
}

}  // namespace pulse
