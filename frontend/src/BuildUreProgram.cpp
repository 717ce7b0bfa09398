// Func::lower: turns the language's handles into the compiler's URE program,
// checking what can only be checked once the whole spec is known (every
// merged Func defined, every loop bounded, every call resolvable), then runs
// the front of the pass list (Pipeline.h).
#include <algorithm>
#include <set>

#include "FuncContents.h"
#include "ir/ExactSimplify.h"
#include "lower/Pipeline.h"

namespace pulse {

using internal::FuncContents;
using internal::UreGroup;
using namespace Halide::Internal;

namespace {

std::string join_names(const std::vector<std::string> &names) {
    std::string s;
    for (size_t i = 0; i < names.size(); i++) s += (i ? ", " : "") + names[i];
    return s;
}

/// Collects the inputs, recurrence callees and free variables of a definition.
class CollectUses : public IRVisitor {
public:
    std::map<std::string, ir::InputDecl> inputs;
    std::vector<std::string> callees;
    std::set<std::string> variables;

protected:
    using IRVisitor::visit;
    void visit(const Call *op) override {
        if (op->call_type == Call::Image) {
            ir::InputDecl decl{op->name, op->type, (int)op->args.size(), ir::table_extents_of(op->param)};
            auto it = inputs.find(op->name);
            if (it != inputs.end() && (it->second.type != decl.type || it->second.dimensions != decl.dimensions ||
                                       it->second.table_extents != decl.table_extents)) {
                compile_error("two different inputs are named ", op->name);
            }
            inputs[op->name] = decl;
        }
        if ((op->is_intrinsic(Call::saturating_add) || op->is_intrinsic(Call::saturating_sub)) && !op->type.is_int() && !op->type.is_uint()) {
            compile_error(ir::to_source(Expr(op)), ": ", op->name, " of ", op->type, " values; saturating arithmetic takes integers (a ",
                          "float's + and - already saturate to infinity): write + or -");
        }
        std::string callee = ir::recurrence_callee(op);
        if (!callee.empty()) callees.push_back(callee);
        IRVisitor::visit(op);
    }
    void visit(const Variable *op) override { variables.insert(op->name); }
};

/// A `where` condition that reads an input, as a data bound: `j < e`,
/// `j <= e`, `e > j` or `e >= j` with `j` a loop and `e` not using it.
ir::DataBound data_bound_of(const std::string &owner, const Expr &condition, const std::vector<std::string> &loops) {
    auto as_loop = [&](const Expr &e) -> std::string {
        const Variable *v = e.as<Variable>();
        return v && std::count(loops.begin(), loops.end(), v->name) ? v->name : std::string();
    };
    Expr loop, upper;
    bool inclusive = false;
    if (const LT *op = condition.as<LT>()) loop = op->a, upper = op->b;
    else if (const LE *op = condition.as<LE>()) loop = op->a, upper = op->b, inclusive = true;
    else if (const GT *op = condition.as<GT>()) loop = op->b, upper = op->a;
    else if (const GE *op = condition.as<GE>()) loop = op->b, upper = op->a, inclusive = true;
    const std::string var = loop.defined() ? as_loop(loop) : std::string();
    if (var.empty() || expr_uses_var(upper, var) || !upper.type().is_int_or_uint()) {
        compile_error(owner, ".where(", ir::to_source(condition), "): a condition that reads an input bounds one loop from above by ",
                      "an integer read at the loops outside the array, like where(j < lengths(b)) (a batch of sequences of ",
                      "different lengths); write an affine condition of the loops, or one such bound per where");
    }
    upper = Halide::cast(Halide::Int(32), upper);
    return ir::DataBound{var, simplify_exact(inclusive ? upper + 1 : upper)};
}

/// Every loop's box: constant bounds as given; a dependent bound's box is the
/// range of its min and last value over the boxes of the loops it uses
/// (resolved in turn, so a bound may use a loop whose own bound depends on
/// another), and it adds `min <= var < min + extent` to `constraints`.
std::map<std::string, ir::Loop> resolve_bounds(const UreGroup &g, std::vector<Expr> &constraints) {
    std::map<std::string, ir::Loop> box;
    for (const auto &b : g.bounds) box[b.first] = ir::Loop{b.first, b.second.first, b.second.second};
    std::vector<UreGroup::DependentBound> pending = g.dependent_bounds;
    while (!pending.empty()) {
        bool progress = false;
        for (auto it = pending.begin(); it != pending.end();) {
            Scope<Interval> scope;
            bool ready = true;
            for (const Expr &e : {it->min, it->extent}) {
                CollectUses uses;
                e.accept(&uses);
                for (const std::string &v : uses.variables) {
                    auto known = box.find(v);
                    if (known == box.end()) {
                        ready = false;
                        continue;
                    }
                    scope.push(v, Interval(make_const(Int(64), known->second.min), make_const(Int(64), known->second.max())));
                }
            }
            if (!ready) {
                ++it;
                continue;
            }
            // Simplified first, so that a min and extent that cancel (k and N - k) give
            // the tight range, not the sum of two intervals.
            const Expr min = cast(Int(64), simplify(it->min));
            const Expr last = cast(Int(64), simplify(it->min + it->extent - 1));
            const Interval lo = bounds_of_expr_in_scope(min, scope), hi = bounds_of_expr_in_scope(last, scope);
            // Keep the simplified bounds alive: as_const_int points into them.
            const Expr lo_simplified = lo.has_lower_bound() ? simplify(lo.min) : Expr();
            const Expr hi_simplified = hi.has_upper_bound() ? simplify(hi.max) : Expr();
            const int64_t *lo_min = lo_simplified.defined() ? as_const_int(lo_simplified) : nullptr;
            const int64_t *hi_max = hi_simplified.defined() ? as_const_int(hi_simplified) : nullptr;
            const std::string text = it->var + ", " + ir::to_source(it->min) + ", " + ir::to_source(it->extent);
            if (!lo_min || !hi_max) {
                compile_error(g.owner(), ".set_bounds(", text, "): the bound's range over the other loops is not known; ",
                              "give a min and extent that are affine in loops with bounds");
            }
            if (*hi_max < *lo_min) {
                compile_error(g.owner(), ".set_bounds(", text, "): loop '", it->var, "' is empty at every point of the other loops");
            }
            box[it->var] = ir::Loop{it->var, *lo_min, *hi_max - *lo_min + 1};
            const Expr v32 = Variable::make(Int(32), it->var);
            constraints.push_back(simplify_exact(v32 >= it->min));
            constraints.push_back(simplify_exact(v32 < it->min + it->extent));
            it = pending.erase(it);
            progress = true;
        }
        if (!progress) {
            std::string names;
            for (const auto &b : pending) names += (names.empty() ? "" : ", ") + b.var;
            compile_error(g.owner(), ": the bounds of loops ", names, " depend on each other (or on a loop with no bound); ",
                          "bound at least one of them by constants");
        }
    }
    return box;
}

}  // namespace

ir::UreProgram Func::lower() const {
    const UreGroup &g = *func->group;
    const FuncContents &owner = *g.funcs[0];
    ir::UreProgram p;
    p.name = owner.name;
    if (!owner.declared) {
        // An output owns a nest only alone (Func::merge_ures refuses it as
        // owner): it was left out of the merge_ures call.
        CollectUses uses;
        owner.value.accept(&uses);
        std::set<std::string> callees(uses.callees.begin(), uses.callees.end());
        std::string reads;
        for (const std::string &c : callees) reads += (reads.empty() ? "" : ", ") + c;
        compile_error("output ", owner.name, " is not merged into a loop nest", reads.empty() ? "" : " (it reads " + reads + ")",
                      ": add it to the merge_ures call of the nest that computes it, after the Funcs it reads, e.g. ",
                      "X.merge_ures(W, Z, ", owner.name, ")");
    }
    // Loops: the owner's arguments, each bounded; a dependent bound becomes
    // the box of its range and the domain's constraints.
    std::map<std::string, ir::Loop> bounded = resolve_bounds(g, p.constraints);
    for (const std::string &v : owner.args) {
        auto it = bounded.find(v);
        if (it == bounded.end()) {
            compile_error("missing bound for loop '", v, "' of ", owner.name, ": add ", owner.name, ".set_bounds(", v,
                          ", min, extent)");
        }
        p.loops.push_back(it->second);
    }
    std::set<std::string> names;
    std::map<std::string, ir::InputDecl> inputs;
    // A condition that reads an input is a data bound; the others are affine constraints.
    for (const Expr &c : g.constraints) {
        CollectUses uses;
        c.accept(&uses);
        if (!uses.callees.empty()) {
            compile_error(owner.name, ".where(", ir::to_source(c), "): it reads ", uses.callees[0],
                          ", a Func; a domain condition reads the loops and inputs only");
        }
        if (uses.inputs.empty()) {
            p.constraints.push_back(c);
            continue;
        }
        p.data_bounds.push_back(data_bound_of(owner.name, c, owner.args));
        for (const auto &in : uses.inputs) inputs[in.first] = in.second;
    }
    for (const auto &f : g.funcs) {
        if (!f->value.defined()) {
            compile_error("Func ", f->name, " is merged into the loop nest of ", owner.name, " but never defined");
        }
        if (f->declared && f->args != owner.args) {
            compile_error("Func ", f->name, "(", join_names(f->args), ") is merged into ", owner.name, "(",
                          join_names(owner.args), "): merged UREs must have the same arguments in the same order");
        }
        for (const std::string &a : f->args) {
            if (std::find(owner.args.begin(), owner.args.end(), a) == owner.args.end()) {
                compile_error("output ", f->name, "(", join_names(f->args), "): '", a, "' is not a loop of ", owner.name,
                              "(", join_names(owner.args), ")");
            }
        }
        names.insert(f->name);
        ir::Ure u;
        u.name = f->name;
        u.type = f->type;
        u.args = f->args;
        u.value = f->value;
        u.is_output = !f->declared;
        u.index = f->index;
        u.reduction = f->reduction;
        u.place = f->place;
        p.ures.push_back(u);
    }
    for (const auto &f : g.funcs) {
        CollectUses uses;
        f->value.accept(&uses);
        for (const std::string &v : uses.variables) {
            if (std::find(owner.args.begin(), owner.args.end(), v) == owner.args.end()) {
                compile_error("definition of ", f->name, " uses variable '", v, "', which is not a loop of ", owner.name,
                              "(", join_names(owner.args), ")");
            }
        }
        for (const std::string &c : uses.callees) {
            if (!names.count(c)) {
                compile_error(f->name, " calls ", c, ", which is not merged into the loop nest of ", owner.name, ": add it to ",
                              owner.name, ".merge_ures(...)");
            }
            const ir::Ure &callee = p.ure(c);
            if (callee.is_output) {
                compile_error(f->name, " calls the output ", c, "; outputs are stored, not read by UREs");
            }
        }
        for (const auto &in : uses.inputs) {
            if (names.count(in.first)) compile_error("input ", in.first, " has the same name as a Func");
            auto it = inputs.find(in.first);
            if (it != inputs.end() && (it->second.type != in.second.type || it->second.dimensions != in.second.dimensions)) {
                compile_error("two different inputs are named ", in.first);
            }
            inputs[in.first] = in.second;
        }
    }
    for (const auto &in : inputs) p.inputs.push_back(in.second);
    p.schedule = g.schedule;
    run_front_passes(p);
    return p;
}

}  // namespace pulse
