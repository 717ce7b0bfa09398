#include "lower/SplitSteadyState.h"

#include <algorithm>
#include <cmath>

#include "ir/Affine.h"
#include "ir/ExactSimplify.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// The comparison `op` as (a - b, kind), kind one of <, <=, ==, != (a > b is
/// b < a, a >= b is b <= a); nothing for another node or non-integer operands.
struct Comparison {
    Expr difference;  ///< a - b
    char kind = '<';  ///< '<': a - b < 0; 'l': a - b <= 0; '=': == 0; '!': != 0
};

std::optional<Comparison> comparison_of(const Expr &e) {
    auto make = [](const Expr &a, const Expr &b, char kind) -> std::optional<Comparison> {
        if (!a.type().is_scalar() || !a.type().is_int() || a.type().bits() != 32) return std::nullopt;
        return Comparison{a - b, kind};
    };
    if (const LT *op = e.as<LT>()) return make(op->a, op->b, '<');
    if (const LE *op = e.as<LE>()) return make(op->a, op->b, 'l');
    if (const GT *op = e.as<GT>()) return make(op->b, op->a, '<');
    if (const GE *op = e.as<GE>()) return make(op->b, op->a, 'l');
    if (const EQ *op = e.as<EQ>()) return make(op->a, op->b, '=');
    if (const NE *op = e.as<NE>()) return make(op->a, op->b, '!');
    return std::nullopt;
}

/// The value of the comparison where its difference ranges over [lo, hi], if one.
std::optional<bool> decided(char kind, int64_t lo, int64_t hi) {
    switch (kind) {
    case '<': return hi < 0 ? std::optional<bool>(true) : lo >= 0 ? std::optional<bool>(false) : std::nullopt;
    case 'l': return hi <= 0 ? std::optional<bool>(true) : lo > 0 ? std::optional<bool>(false) : std::nullopt;
    case '=': return lo == 0 && hi == 0 ? std::optional<bool>(true) : (lo > 0 || hi < 0) ? std::optional<bool>(false) : std::nullopt;
    default: return lo == 0 && hi == 0 ? std::optional<bool>(false) : (lo > 0 || hi < 0) ? std::optional<bool>(true) : std::nullopt;
    }
}

/// The variables a comparison may be affine in: the loop's, the lane and
/// the array's warp, with their ranges (the loop's is set per use).
struct Space {
    std::vector<ir::Loop> vars;  ///< [0]: the loop variable
    /// The range of `form` over the box of `vars`, the loop variable in [lo, hi].
    std::pair<int64_t, int64_t> range(const AffineForm &form, int64_t lo, int64_t hi) const {
        std::vector<ir::Loop> box = vars;
        box[0].min = lo;
        box[0].extent = hi - lo + 1;
        return form.range(box);
    }
};

/// Every comparison in `s` affine in the space's variables with a non-zero
/// coefficient of the loop variable.
class CollectComparisons : public IRVisitor {
public:
    explicit CollectComparisons(const Space &space) : space(space) {}
    std::vector<AffineForm> forms;

private:
    const Space &space;
    using IRVisitor::visit;
    void check(const Expr &e) {
        if (auto c = comparison_of(e)) {
            if (auto f = to_affine(c->difference, space.vars); f && f->coefficient[0] != 0) forms.push_back(*f);
        }
    }
    void visit(const LT *op) override { check(op), IRVisitor::visit(op); }
    void visit(const LE *op) override { check(op), IRVisitor::visit(op); }
    void visit(const GT *op) override { check(op), IRVisitor::visit(op); }
    void visit(const GE *op) override { check(op), IRVisitor::visit(op); }
    void visit(const EQ *op) override { check(op), IRVisitor::visit(op); }
    void visit(const NE *op) override { check(op), IRVisitor::visit(op); }
};

/// Replaces each comparison affine in the space's variables that takes one
/// value with the loop variable in [lo, hi] (and every lane, warp) by it.
class FoldComparisons : public IRMutator {
public:
    FoldComparisons(const Space &space, int64_t lo, int64_t hi) : space(space), lo(lo), hi(hi) {}
    int folded = 0;
    using IRMutator::mutate;
    Expr mutate(const Expr &e) override {
        if (auto c = comparison_of(e)) {
            if (auto f = to_affine(c->difference, space.vars)) {
                auto [min, max] = space.range(*f, lo, hi);
                if (auto value = decided(c->kind, min, max)) {
                    folded++;
                    return make_bool(*value);
                }
            }
        }
        return IRMutator::mutate(e);
    }

private:
    const Space &space;
    int64_t lo, hi;
};

/// The steps of [lo, hi] where the comparison of `form` may differ between
/// lanes or change with the step: around the steps where its difference
/// crosses zero on some lane, one step wider on each side.
std::pair<int64_t, int64_t> unsteady_steps(const Space &space, const AffineForm &form) {
    AffineForm rest = form;
    const int64_t coefficient = rest.coefficient[0];
    rest.coefficient[0] = 0;
    auto [rmin, rmax] = space.range(rest, 0, 0);
    // The step v where coefficient * v + rest == 0, over rest in [rmin, rmax].
    const double a = -(double)rmin / (double)coefficient, b = -(double)rmax / (double)coefficient;
    return {(int64_t)std::floor(std::min(a, b)) - 1, (int64_t)std::ceil(std::max(a, b)) + 1};
}

/// Whether `condition` holds on one lane at most: a conjunct `lane == c`.
bool pins_one_lane(const Expr &condition) {
    if (const And *a = condition.as<And>()) return pins_one_lane(a->a) || pins_one_lane(a->b);
    if (const EQ *e = condition.as<EQ>()) {
        auto is_lane = [](const Expr &x) { return x.as<Variable>() && x.as<Variable>()->name == kir::lane_var; };
        return (is_lane(e->a) && is_const(e->b)) || (is_lane(e->b) && is_const(e->a));
    }
    return false;
}

/// Whether `s` streams an output: stores to a global buffer other than under
/// a test that pins the lane (`lane == 31`: a drain PE's row, one store a
/// step), as an array that stores from many lanes each step does.
bool streams_output(const Stmt &s) {
    class Find : public IRVisitor {
    public:
        bool streams = false;

    private:
        int lane_tests = 0;  ///< enclosing IfThenElses whose condition pins the lane
        using IRVisitor::visit;
        void visit(const IfThenElse *op) override {
            const bool lane = pins_one_lane(op->condition);
            lane_tests += lane;
            op->then_case.accept(this);
            lane_tests -= lane;
            if (op->else_case.defined()) op->else_case.accept(this);
        }
        void visit(const Call *op) override {
            streams |= op->name == kir::intrinsic::store && lane_tests == 0;
            IRVisitor::visit(op);
        }
    } find;
    s.accept(&find);
    return find.streams;
}

class Split : public IRMutator {
public:
    explicit Split(const kir::Kernel &kernel) : names(kernel) {
        lanes = {{kir::lane_var, 0, kir::warp_size}, {kir::array_warp_var, 0, std::max(1, kernel.warps_per_array)}};
    }

    using IRMutator::visit;

    Stmt visit(const For *op) override {
        Stmt body = mutate(op->body);
        const int64_t *min = as_const_int(op->min), *extent = as_const_int(op->extent);
        auto whole = [&] { return For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body); };
        if (!min || !extent || *extent < min_steady_iterations) return whole();
        const int64_t lo = *min, hi = *min + *extent - 1;
        Space space;
        space.vars = {{op->name, lo, *extent}};
        space.vars.insert(space.vars.end(), lanes.begin(), lanes.end());
        CollectComparisons collect(space);
        body.accept(&collect);
        if (collect.forms.empty()) return whole();
        // The steady range: the longest run of [lo, hi] no comparison's unsteady steps touch.
        std::vector<std::pair<int64_t, int64_t>> unsteady;
        for (const AffineForm &f : collect.forms) unsteady.push_back(unsteady_steps(space, f));
        std::sort(unsteady.begin(), unsteady.end());
        int64_t best_lo = 0, best_hi = -1, from = lo;
        for (const auto &[a, b] : unsteady) {
            if (a > from && std::min(a - 1, hi) - from > best_hi - best_lo) best_lo = from, best_hi = std::min(a - 1, hi);
            from = std::max(from, b + 1);
        }
        if (hi - from > best_hi - best_lo) best_lo = from, best_hi = hi;
        if (best_hi - best_lo + 1 < min_steady_iterations) return whole();
        FoldComparisons fold(space, best_lo, best_hi);
        Stmt steady_body = simplify_exact(fold.mutate(body));
        if (fold.folded == 0 || streams_output(steady_body)) return whole();
        // The steady loop's variable has a name of its own, so that its
        // accesses are not the ramps' (specialize_interior keeps an access
        // guarded by what it is: a ramp's may reach past the domain).
        const std::string steady = names.fresh(op->name, "steady");
        steady_body = substitute(op->name, Variable::make(op->min.type(), steady), steady_body);
        auto loop = [&](const std::string &var, int64_t first, int64_t last, const Stmt &s) {
            return For::make(var, make_const(op->min.type(), first), make_const(op->extent.type(), last - first + 1),
                             op->for_type, op->device_api, s);
        };
        std::vector<Stmt> parts;
        if (best_lo > lo) parts.push_back(loop(op->name, lo, best_lo - 1, body));
        parts.push_back(loop(steady, best_lo, best_hi, steady_body));
        if (best_hi < hi) parts.push_back(loop(op->name, best_hi + 1, hi, body));
        return Block::make(parts);
    }

private:
    kir::NameGenerator names;
    std::vector<ir::Loop> lanes;
};

}  // namespace

void split_steady_state(kir::Kernel &kernel) {
    Split split(kernel);
    kernel.body = kir::on_instances(kernel.body, [&](const Stmt &instance) { return split.mutate(instance); });
}

}  // namespace pulse
