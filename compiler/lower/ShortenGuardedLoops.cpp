#include "lower/ShortenGuardedLoops.h"

#include <optional>

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

class Shorten : public IRMutator {
public:
    explicit Shorten(const LaneVarying &varying) : varying(varying) {}
    using IRMutator::visit;

    Stmt visit(const For *op) override {
        Stmt body = mutate(op->body);
        const IfThenElse *guard = body.as<IfThenElse>();
        if (op->for_type != ForType::Serial || !guard || guard->else_case.defined()) {
            return For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
        }
        const std::optional<Expr> last = last_iteration(guard->condition, op->name);
        // A bound that differs between the array's threads (a copy's loop
        // over the elements thread t copies) stays a guard: every thread runs
        // a loop the same number of times, as the kernel executor does.
        if (!last || varying.varies(*last) || expr_uses_var(*last, kir::array_warp_var)) {
            return For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
        }
        const Expr extent = simplify_exact(max(0, min(op->extent, cast(op->extent.type(), *last - op->min + 1))));
        return For::make(op->name, op->min, extent, op->for_type, op->device_api, guard->then_case);
    }

private:
    const LaneVarying &varying;
};

}  // namespace

void shorten_guarded_loops(kir::Kernel &kernel) {
    kernel.body = kir::on_instances(kernel.body, [&](const Stmt &instance) {
        const LaneVarying varying(instance);
        return Shorten(varying).mutate(instance);
    });
}

}  // namespace pulse
