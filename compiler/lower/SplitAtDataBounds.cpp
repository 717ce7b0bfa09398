#include "lower/SplitAtDataBounds.h"

#include <set>
#include <vector>

#include "ir/ExactSimplify.h"
#include "ir/LaneVarying.h"
#include "lower/ShortenGuardedLoops.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// A loop that runs at most this many iterations is left whole: its tests
/// cost less than a second copy of its body (a drain's few steps).
constexpr int64_t min_split_iterations = 64;

bool is_comparison(const Expr &e) { return e.as<LT>() || e.as<LE>() || e.as<GT>() || e.as<GE>(); }

/// The comparisons of a loop body (outside its nested loops) and the names
/// the body binds.
class Comparisons : public IRVisitor {
public:
    std::vector<Expr> found;
    std::set<std::string> bound;

private:
    using IRVisitor::visit;
    void note(const Expr &e) {
        for (const Expr &f : found) {
            if (equal(f, e)) return;
        }
        found.push_back(e);
    }
    void visit(const LT *op) override { note(op), IRVisitor::visit(op); }
    void visit(const LE *op) override { note(op), IRVisitor::visit(op); }
    void visit(const GT *op) override { note(op), IRVisitor::visit(op); }
    void visit(const GE *op) override { note(op), IRVisitor::visit(op); }
    void visit(const LetStmt *op) override { bound.insert(op->name), IRVisitor::visit(op); }
    void visit(const Let *op) override { bound.insert(op->name), IRVisitor::visit(op); }
    void visit(const Allocate *op) override { bound.insert(op->name), IRVisitor::visit(op); }
    void visit(const For *op) override { bound.insert(op->name); }
};

/// True if `e` is arithmetic of variables and constants only (no load, no
/// call: nothing that differs between lanes or steps unseen).
bool plain_arithmetic(const Expr &e) {
    struct Check : IRVisitor {
        bool plain = true;
        using IRVisitor::visit;
        void visit(const Load *) override { plain = false; }
        void visit(const Call *) override { plain = false; }
        void visit(const Let *) override { plain = false; }
    } check;
    e.accept(&check);
    return check.plain;
}

/// The variables `e` reads.
std::set<std::string> variables_of(const Expr &e) {
    struct Collect : IRVisitor {
        std::set<std::string> names;
        using IRVisitor::visit;
        void visit(const Variable *op) override { names.insert(op->name); }
    } collect;
    e.accept(&collect);
    return collect.names;
}

/// Replaces each of `comparisons` by true.
class FoldTrue : public IRMutator {
public:
    explicit FoldTrue(const std::vector<Expr> &comparisons) : comparisons(comparisons) {}

private:
    const std::vector<Expr> &comparisons;
    using IRMutator::visit;
    Expr fold(const Expr &e) {
        for (const Expr &c : comparisons) {
            if (equal(c, e)) return const_true();
        }
        return IRMutator::mutate(e);
    }

public:
    Expr mutate(const Expr &e) override { return is_comparison(e) ? fold(e) : IRMutator::mutate(e); }
    Stmt mutate(const Stmt &s) override { return IRMutator::mutate(s); }
};

class Split : public IRMutator {
public:
    Split(const LaneVarying &varying, kir::NameGenerator &names) : varying(varying), names(names) {}

private:
    const LaneVarying &varying;
    kir::NameGenerator &names;
    using IRMutator::visit;

    Stmt visit(const For *op) override {
        Stmt body = mutate(op->body);
        Stmt whole = For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
        if (op->for_type != ForType::Serial || !op->min.type().is_scalar()) return whole;
        // (Its run-time values taken as anything: the bound the extent's form sets.)
        Scope<Interval> anything;
        for (const std::string &v : variables_of(op->extent)) anything.push(v, Interval::everything());
        const Interval span = bounds_of_expr_in_scope(op->extent, anything);
        const Expr upper = span.has_upper_bound() ? simplify(span.max) : Expr();
        const int64_t *most = upper.defined() ? as_const_int(upper) : nullptr;
        if (most && *most <= min_split_iterations) return whole;
        Comparisons comparisons;
        body.accept(&comparisons);
        Scope<Interval> lanes;
        lanes.push(kir::lane_var, Interval(make_zero(Int(32)), make_const(Int(32), kir::warp_size - 1)));
        std::vector<Expr> folded;
        Expr split;
        for (const Expr &c : comparisons.found) {
            if (!c.type().is_scalar() || !expr_uses_var(c, op->name) || !plain_arithmetic(c)) continue;
            bool uniform = true;
            for (const std::string &v : variables_of(c)) {
                if (v == op->name || v == kir::lane_var) continue;
                if (comparisons.bound.count(v) || varying.has(v)) uniform = false;
            }
            if (!uniform) continue;
            // Holds on every lane up to its last iteration `last`.
            const std::optional<Expr> last = last_iteration(simplify(and_condition_over_domain(c, lanes)), op->name);
            if (!last || can_prove(*last < op->min)) continue;
            folded.push_back(c);
            const Expr end = *last + 1;
            split = split.defined() ? Min::make(split, end) : end;
        }
        if (folded.empty()) return whole;
        const Expr loop_end = op->min + op->extent;
        split = simplify_exact(Max::make(Min::make(cast(op->min.type(), split), loop_end), op->min));
        FoldTrue fold(folded);
        const Stmt steady = simplify_exact(fold.mutate(body));
        const std::string at = names.fresh(op->name, "split");
        const Expr split_var = Variable::make(op->min.type(), at);
        const Stmt first = For::make(op->name, op->min, split_var - op->min, op->for_type, op->device_api, steady);
        const Stmt rest = For::make(op->name, split_var, loop_end - split_var, op->for_type, op->device_api, body);
        return LetStmt::make(at, split, Block::make(first, rest));
    }
};

}  // namespace

void split_at_data_bounds(kir::Kernel &kernel) {
    if (kernel.warps_per_array != 1) return;  // (a split point per warp would part the warps of an instance)
    const LaneVarying varying(kernel.body);
    kir::NameGenerator names(kernel);
    Split split(varying, names);
    kernel.body = kir::on_instances(kernel.body, [&](const Stmt &instance) { return split.mutate(instance); });
}

}  // namespace pulse
