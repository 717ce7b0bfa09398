// The embedded language: Func, FuncRef, Input, Stage and the schedule
// primitives. Each primitive checks its arguments when it is called, so a
// misuse is reported at the line that made it.
#include <algorithm>
#include <functional>
#include <optional>
#include <set>

#include "FuncContents.h"
#include "exec/Interpreter.h"
#include "ir/ExactSimplify.h"

namespace pulse {

using internal::FuncContents;
using internal::UreGroup;

namespace {

/// The variables `e` uses, in order of first appearance.
std::vector<std::string> variables_in(const Expr &e) {
    class Collect : public Halide::Internal::IRVisitor {
    public:
        std::vector<std::string> names;
        using IRVisitor::visit;
        void visit(const Halide::Internal::Variable *op) override {
            if (std::find(names.begin(), names.end(), op->name) == names.end()) names.push_back(op->name);
        }
    } collect;
    e.accept(&collect);
    return collect.names;
}

int next_func_id = 0;

std::string join_names(const std::vector<std::string> &names) {
    std::string s;
    for (size_t i = 0; i < names.size(); i++) s += (i ? ", " : "") + names[i];
    return s;
}

std::vector<std::string> var_names(const std::vector<Var> &vars) {
    std::vector<std::string> names;
    for (const Var &v : vars) names.push_back(v.name());
    return names;
}

/// The loops of a group as they stand now; a group whose owner has no declared
/// arguments has none.
std::vector<std::string> &current_loops(UreGroup &group) {
    if (group.loop_names.empty() && !group.funcs.empty() && group.funcs[0]->declared) {
        group.loop_names = group.funcs[0]->args;
    }
    return group.loop_names;
}

/// A loop is bounded once, by a constant or a dependent bound.
void require_unbounded(const UreGroup &group, const std::string &var) {
    bool bounded = std::any_of(group.bounds.begin(), group.bounds.end(), [&](const auto &b) { return b.first == var; }) ||
                   std::any_of(group.dependent_bounds.begin(), group.dependent_bounds.end(),
                               [&](const UreGroup::DependentBound &b) { return b.var == var; });
    if (bounded) compile_error(group.owner(), ".set_bounds: loop '", var, "' is bounded twice");
}

/// set_bounds' checks: a recurrence's nest, one of its loops, not bounded yet.
void require_unbounded_loop(const FuncContents &f, const UreGroup &group, const std::string &var) {
    if (!f.declared) compile_error(f.name, ".set_bounds: bounds belong to the loop nest of a recurrence Func");
    if (std::find(f.args.begin(), f.args.end(), var) == f.args.end()) {
        compile_error(f.name, ".set_bounds: unknown loop variable '", var, "'; the loops of ", f.name, " are (", join_names(f.args), ")");
    }
    require_unbounded(group, var);
}

void require_loop(UreGroup &group, const std::string &primitive, const std::string &var) {
    const std::vector<std::string> &loops = current_loops(group);
    if (std::find(loops.begin(), loops.end(), var) == loops.end()) {
        compile_error(group.owner(), ".", primitive, ": unknown loop variable '", var, "'; the loops of ",
                      group.owner(), " are (", join_names(loops), ") (innermost first)");
    }
}

void require_distinct(UreGroup &group, const std::string &primitive, const std::vector<std::string> &vars) {
    std::set<std::string> seen;
    for (const std::string &v : vars) {
        if (!seen.insert(v).second) {
            compile_error(group.owner(), ".", primitive, ": loop variable '", v, "' is repeated");
        }
    }
}

}  // namespace

Expr select(Expr condition, Expr value) {
    if (!condition.defined() || !value.defined()) compile_error("select(condition, value): both arguments must be defined");
    return Halide::select(condition, value, ir::undefined_value(value.type()));
}

// ---------------------------------------------------------------- Input

Input::Input(Type type, int dimensions, const std::string &name) {
    if (dimensions < 1) compile_error("Input ", name, ": an input needs at least one dimension, not ", dimensions);
    if (name.empty()) compile_error("Input: an input needs a name");
    param = Halide::Internal::Parameter(type, /*is_buffer=*/true, dimensions, name);
}

Input::Input(Type type, const std::vector<int> &table, const std::string &name) : Input(type, (int)table.size(), name) {
    for (size_t d = 0; d < table.size(); d++) {
        if (table[d] < 1) compile_error("table ", name, ": extent ", table[d], " of dimension ", d, " is not positive");
        // The extents travel with the parameter into the compiler's IR (InputDecl::table_extents).
        param.set_min_constraint((int)d, 0);
        param.set_extent_constraint((int)d, table[d]);
    }
    extents = table;
}

Expr Input::operator()(const std::vector<Expr> &index) const {
    if ((int)index.size() != param.dimensions()) {
        compile_error("input ", name(), " has ", param.dimensions(), " dimension(s) but is read with ", index.size(),
                      " index(es)");
    }
    for (size_t i = 0; i < index.size(); i++) {
        if (!index[i].type().is_int() && !index[i].type().is_uint()) {
            compile_error("input ", name(), " is read with a non-integer index ", ir::to_source(index[i]));
        }
    }
    std::vector<Expr> args;
    for (size_t d = 0; d < index.size(); d++) {
        // A table's index is clamped into it: any value reads an element.
        args.push_back(extents.empty() ? cast<int>(index[d]) : Halide::clamp(cast<int>(index[d]), 0, extents[d] - 1));
    }
    return Halide::Internal::Call::make(param, args);
}

const std::string &Input::name() const { return param.name(); }
Type Input::type() const { return param.type(); }
int Input::dimensions() const { return param.dimensions(); }

// ---------------------------------------------------------------- FuncRef

FuncRef::FuncRef(std::shared_ptr<FuncContents> f, std::vector<Expr> a) : func(std::move(f)), args(std::move(a)) {}

namespace {

/// The operator and the other operand of an update `op(self, e)` or
/// `op(e, self)`, where `self` is `is_self`; nullopt if `value` is not one.
std::optional<std::pair<ir::ReduceOp, Expr>> split_update(const Expr &value, const std::function<bool(const Expr &)> &is_self) {
    using namespace Halide::Internal;
    Expr a, b;
    std::optional<ir::ReduceOp> op;
    if (const Max *m = value.as<Max>()) op = ir::ReduceOp::Max, a = m->a, b = m->b;
    if (const Min *m = value.as<Min>()) op = ir::ReduceOp::Min, a = m->a, b = m->b;
    if (const Add *m = value.as<Add>()) op = ir::ReduceOp::Add, a = m->a, b = m->b;
    if (const Mul *m = value.as<Mul>()) op = ir::ReduceOp::Mul, a = m->a, b = m->b;
    if (const And *m = value.as<And>()) op = ir::ReduceOp::And, a = m->a, b = m->b;
    if (const Or *m = value.as<Or>()) op = ir::ReduceOp::Or, a = m->a, b = m->b;
    if (!op) return std::nullopt;
    if (is_self(a)) return std::make_pair(*op, b);
    if (is_self(b)) return std::make_pair(*op, a);
    return std::nullopt;
}

/// True if `e` calls the recurrence or output `name` ("": any), or an input.
bool calls(const Expr &e, const std::string &name) {
    class Find : public Halide::Internal::IRVisitor {
    public:
        explicit Find(const std::string &n) : name(n) {}
        const std::string &name;
        bool found = false;
        using IRVisitor::visit;
        void visit(const Halide::Internal::Call *op) override {
            const std::string callee = ir::recurrence_callee(op);
            found |= name.empty() ? !callee.empty() || !ir::input_callee(op).empty() : callee == name;
            IRVisitor::visit(op);
        }
    } find(name);
    e.accept(&find);
    return find.found;
}

/// An update of an output that has its pure definition: a reduction.
void define_reduction(FuncContents &f, const std::vector<Expr> &args, const Expr &value) {
    const std::string lhs = ir::to_source(ir::make_recurrence_call(f.type, f.name, args));
    if (f.reduction) compile_error("output ", f.name, " has an update already; an output takes one pure definition and at most one update");
    std::vector<Expr> pure = f.index;
    if (pure.empty()) {
        for (const std::string &a : f.args) pure.push_back(Halide::Internal::Variable::make(Int(32), a));
    }
    bool same_lhs = args.size() == pure.size();
    for (size_t i = 0; same_lhs && i < args.size(); i++) same_lhs = equal(simplify_exact(cast<int>(args[i])), simplify_exact(cast<int>(pure[i])));
    const std::string pure_lhs = ir::to_source(ir::make_recurrence_call(f.type, f.name, pure));
    if (!same_lhs) {
        compile_error("update of ", f.name, ": ", lhs, " is not the element its pure definition ", pure_lhs,
                      " names; an update reduces into the same element (", pure_lhs, " = max(", pure_lhs, ", ...))");
    }
    auto is_self = [&](const Expr &e) {
        const Halide::Internal::Call *c = e.as<Halide::Internal::Call>();
        if (!c || ir::recurrence_callee(e) != f.name || c->args.size() != pure.size()) return false;
        for (size_t i = 0; i < pure.size(); i++) {
            if (!equal(simplify_exact(c->args[i]), simplify_exact(cast<int>(pure[i])))) return false;
        }
        return true;
    };
    std::optional<std::pair<ir::ReduceOp, Expr>> update = split_update(value, is_self);
    if (!update || calls(update->second, f.name)) {
        compile_error("update of ", f.name, ": ", ir::to_source(value), " is not a reduction; write ", pure_lhs, " = op(", pure_lhs,
                      ", value) with op one of max, min, +, * (&&, || for bools) and ", f.name, " read nowhere else");
    }
    const std::string why = ir::reduce_refusal(update->first, f.type);
    if (!why.empty()) compile_error("update of ", f.name, ": ", pure_lhs, " = ", ir::to_source(value), ": ", why);
    if (update->second.type() != f.type) {
        compile_error("update of ", f.name, ": its operand ", ir::to_source(update->second), " has type ", update->second.type(),
                      " but ", f.name, " has type ", f.type, " (its pure definition's); cast one to the other");
    }
    for (const std::string &v : variables_in(f.value)) {
        if (std::find(f.args.begin(), f.args.end(), v) == f.args.end()) {
            compile_error("output ", f.name, ": its pure definition uses '", v, "', which is not one of its arguments (", join_names(f.args), ")");
        }
    }
    if (!f.index.empty() && !variables_in(f.value).empty()) {
        compile_error("output ", f.name, ": written at ", pure_lhs, ", its pure definition ", ir::to_source(f.value),
                      " must be a constant (an element may be reached from several values of the loops)");
    }
    if (calls(f.value, "")) {
        compile_error("output ", f.name, ": its pure definition ", ir::to_source(f.value), " reads a Func or an input; the initial value of a reduction is an expression of its arguments");
    }
    f.reduction = ir::Reduction{update->first, f.value};
    f.value = update->second;
}

}  // namespace

void FuncRef::operator=(const Expr &value) {
    FuncContents &f = *func;
    if (f.value.defined() && !f.declared) {
        define_reduction(f, args, value);
        return;
    }
    if (f.value.defined()) compile_error("Func ", f.name, " is defined twice; a URE has exactly one definition");
    if (!value.defined()) compile_error("Func ", f.name, " is defined with an undefined expression");
    std::vector<std::string> lhs;
    bool affine_index = false;
    for (const Expr &a : args) {
        const Halide::Internal::Variable *v = a.as<Halide::Internal::Variable>();
        if (!v) {
            affine_index = true;
            continue;
        }
        lhs.push_back(v->name);
    }
    if (affine_index) {
        // An output may be written at affine indices of the loops: its
        // arguments are then the loop variables those indices use.
        if (f.declared) {
            compile_error("definition of ", f.name, ": argument '", ir::to_source(args[0]),
                          "' on the left-hand side must be a plain loop variable (only outputs may be written at affine indices)");
        }
        lhs.clear();
        for (const Expr &a : args) {
            if (!a.type().is_int() && !a.type().is_uint()) {
                compile_error("definition of ", f.name, ": index '", ir::to_source(a), "' is not an integer expression");
            }
            for (const std::string &v : variables_in(a)) {
                if (std::find(lhs.begin(), lhs.end(), v) == lhs.end()) lhs.push_back(v);
            }
        }
        f.index = args;
    }
    std::set<std::string> distinct(lhs.begin(), lhs.end());
    if (distinct.size() != lhs.size()) compile_error("definition of ", f.name, "(", join_names(lhs), "): a loop variable is repeated");
    if (f.declared) {
        if (lhs.size() != f.args.size()) {
            compile_error("definition of ", f.name, ": wrong number of arguments: ", lhs.size(), " given, ", f.name,
                          " is declared with ", f.args.size(), " (", join_names(f.args), ")");
        }
        if (lhs != f.args) {
            compile_error("definition of ", f.name, ": defined as ", f.name, "(", join_names(lhs), ") but declared as ",
                          f.name, "(", join_names(f.args), ")");
        }
        if (value.type() != f.type) {
            compile_error("definition of ", f.name, ": mismatched types: ", f.name, " is declared ", f.type,
                          " but its value ", ir::to_source(value), " has type ", value.type(),
                          "; cast the value, e.g. cast(", f.type, ", ...)");
        }
    } else {
        f.args = lhs;
        f.type = value.type();
    }
    f.value = value;
}

FuncRef::operator Expr() const {
    const FuncContents &f = *func;
    if (!f.declared && f.value.defined()) {
        // An output read in its own update (`Best(b) = max(Best(b), e)`);
        // any other read is refused where the loop nest is built.
        std::vector<Expr> int_args;
        for (const Expr &a : args) int_args.push_back(cast<int>(a));
        return ir::make_recurrence_call(f.type, f.name, int_args);
    }
    if (!f.declared) {
        compile_error("call ", f.name, "(...): ", f.name,
                      " has no declared type and arguments, so it cannot be read by a URE; declare it as "
                      "Func(type, {args...}, place) (an output reduced by an update takes its pure definition first: ",
                      f.name, "(b) = 0; ", f.name, "(b) = max(", f.name, "(b), value))");
    }
    if (args.size() != f.args.size()) {
        compile_error("call to ", f.name, ": wrong number of arguments: ", args.size(), " given, ", f.name, " has ",
                      f.args.size(), " (", join_names(f.args), ")");
    }
    for (const Expr &a : args) {
        if (!a.defined() || !(a.type().is_int() || a.type().is_uint())) {
            compile_error("call to ", f.name, ": argument '", ir::to_source(a), "' is not an integer expression");
        }
    }
    std::vector<Expr> int_args;
    for (const Expr &a : args) int_args.push_back(cast<int>(a));
    return ir::make_recurrence_call(f.type, f.name, int_args);
}

// ---------------------------------------------------------------- Stage

Stage::Stage(std::shared_ptr<UreGroup> g, size_t i) : group(std::move(g)), index(i) {}

Stage &Stage::compute_at(const Func &func, const Var &loop) {
    UreGroup &target = *func.contents()->group;
    require_loop(target, "compute_at", loop.name());
    ir::Staging &s = group->schedule.stagings[index];
    s.compute_at_func = func.name();
    s.compute_at_loop = loop.name();
    return *this;
}

Stage &Stage::store_in(MemoryType memory) {
    group->schedule.stagings[index].memory = memory;
    return *this;
}

namespace {
Stage make_stage(const std::shared_ptr<UreGroup> &group, const std::string &source, const Func &consumer) {
    group->schedule.stagings.push_back(ir::Staging{source, consumer.name(), {}, {}, {}});
    return Stage(group, group->schedule.stagings.size() - 1);
}
}  // namespace

Stage Input::in(const Func &consumer) const { return make_stage(consumer.contents()->group, name(), consumer); }

// ---------------------------------------------------------------- Func

namespace {
std::shared_ptr<FuncContents> new_func(const std::string &name, Place place) {
    auto f = std::make_shared<FuncContents>();
    f->name = name.empty() ? "f" + std::to_string(next_func_id++) : name;
    f->place = place;
    f->group = std::make_shared<UreGroup>();
    f->group->funcs.push_back(f);
    return f;
}
}  // namespace

Func::Func(Place place, const std::string &name) : func(new_func(name, place)) {}
Func::Func() : Func(Place::Host) {}

Func::Func(Type type, const std::vector<Var> &args, Place place, const std::string &name) : func(new_func(name, place)) {
    if (args.empty()) compile_error("Func ", func->name, ": a recurrence Func needs at least one argument");
    func->declared = true;
    func->type = type;
    func->args = var_names(args);
    std::set<std::string> distinct(func->args.begin(), func->args.end());
    if (distinct.size() != func->args.size()) {
        compile_error("Func ", func->name, "(", join_names(func->args), "): an argument is repeated");
    }
}

Func::Func(Type type, const std::vector<Var> &args, const std::string &name) : Func(type, args, Place::Host, name) {}

FuncRef Func::operator()(const std::vector<Expr> &args) const { return FuncRef(func, args); }

const std::string &Func::name() const { return func->name; }
bool Func::defined() const { return func->value.defined(); }
std::shared_ptr<UreGroup> Func::group() const { return func->group; }

Func &Func::merge_ures(const std::vector<Func> &others) {
    UreGroup &g = *group();
    if (!func->declared) {
        compile_error(name(), ".merge_ures: ", name(), " is an output, which cannot own a loop nest: call merge_ures ",
                      "on the first recurrence Func (declared with a type and arguments) and list ", name(),
                      " among its arguments, e.g. X.merge_ures(W, Z, ", name(), ")");
    }
    for (const Func &o : others) {
        auto &of = o.func;
        if (of == func) compile_error(name(), ".merge_ures: ", name(), " cannot be merged into itself");
        if (of->group == func->group) compile_error(name(), ".merge_ures: ", of->name, " is merged twice");
        if (of->group->funcs.size() > 1) {
            compile_error(name(), ".merge_ures: ", of->name, " is already merged into the loop nest of ",
                          of->group->owner());
        }
        for (const auto &existing : g.funcs) {
            if (existing->name == of->name) compile_error(name(), ".merge_ures: two Funcs are named ", of->name);
        }
        of->group = func->group;
        g.funcs.push_back(of);
    }
    return *this;
}

Func &Func::set_bounds(const Var &var, int64_t min, int64_t extent) {
    UreGroup &g = *group();
    require_unbounded_loop(*func, g, var.name());
    if (extent < 1) compile_error(name(), ".set_bounds: loop '", var.name(), "' has extent ", extent, "; it must be at least 1");
    g.bounds.push_back({var.name(), {min, extent}});
    return *this;
}

Func &Func::set_bounds(const Var &var, const Expr &min, const Expr &extent) {
    const Expr min_value = simplify_exact(cast(Int(64), min)), extent_value = simplify_exact(cast(Int(64), extent));
    const int64_t *constant_min = Halide::Internal::as_const_int(min_value);
    const int64_t *constant_extent = Halide::Internal::as_const_int(extent_value);
    if (constant_min && constant_extent) return set_bounds(var, *constant_min, *constant_extent);
    UreGroup &g = *group();
    require_unbounded_loop(*func, g, var.name());
    for (const Expr &e : {min, extent}) {
        if (!e.type().is_int_or_uint()) {
            compile_error(name(), ".set_bounds(", var.name(), ", ", ir::to_source(min), ", ", ir::to_source(extent),
                          "): a bound must be an integer expression, not ", e.type());
        }
        for (const std::string &v : variables_in(e)) {
            if (v == var.name() || std::find(func->args.begin(), func->args.end(), v) == func->args.end()) {
                compile_error(name(), ".set_bounds(", var.name(), ", ", ir::to_source(min), ", ", ir::to_source(extent), "): '", v,
                              "' is ", v == var.name() ? "the bounded loop itself" : "not a loop of " + name() + "(" + join_names(func->args) + ")",
                              "; a bound may use only the other loops");
            }
        }
    }
    g.dependent_bounds.push_back({var.name(), min, extent});
    return *this;
}

Func &Func::where(const Expr &condition) {
    UreGroup &g = *group();
    if (!func->declared) compile_error(name(), ".where: the domain belongs to the loop nest of a recurrence Func");
    if (!condition.defined() || !condition.type().is_bool()) {
        compile_error(name(), ".where(", condition.defined() ? ir::to_source(condition) : std::string("undefined"),
                      "): the condition must be a boolean expression of the loops, like where(j <= i)");
    }
    for (const std::string &v : variables_in(condition)) {
        if (std::find(func->args.begin(), func->args.end(), v) == func->args.end()) {
            compile_error(name(), ".where(", ir::to_source(condition), "): '", v, "' is not a loop of ", name(), "(",
                          join_names(func->args), "); a domain condition may use only the loops");
        }
    }
    g.constraints.push_back(condition);
    return *this;
}

Func &Func::tile(const Var &var, const Var &outer, const Var &inner, int64_t factor) {
    return split_loop("tile", var, outer, inner, factor, true);
}

Func &Func::split(const Var &var, const Var &outer, const Var &inner, int64_t factor) {
    return split_loop("split", var, outer, inner, factor, false);
}

Func &Func::split_loop(const char *what, const Var &var, const Var &outer, const Var &inner, int64_t factor, bool unroll_inner) {
    UreGroup &g = *group();
    require_loop(g, what, var.name());
    require_distinct(g, what, {outer.name(), inner.name()});
    std::vector<std::string> &loops = current_loops(g);
    for (const std::string &v : {outer.name(), inner.name()}) {
        if (v != var.name() && std::find(loops.begin(), loops.end(), v) != loops.end()) {
            compile_error(name(), ".", what, ": loop variable '", v, "' is repeated: it already names a loop of ", name());
        }
    }
    if (factor < 1) compile_error(name(), ".", what, "(", var.name(), "): the factor must be positive, not ", factor);
    auto it = std::find(loops.begin(), loops.end(), var.name());
    it = loops.erase(it);
    loops.insert(it, {inner.name(), outer.name()});
    g.schedule.tiles.push_back(ir::Tile{var.name(), outer.name(), inner.name(), factor, unroll_inner});
    return *this;
}

Func &Func::reorder(const std::vector<Var> &vars) {
    UreGroup &g = *group();
    std::vector<std::string> names = var_names(vars);
    for (const std::string &v : names) require_loop(g, "reorder", v);
    require_distinct(g, "reorder", names);
    // The named loops take, in the given order, the positions they occupied (Halide's rule).
    std::vector<std::string> &loops = current_loops(g);
    std::vector<size_t> positions;
    for (size_t i = 0; i < loops.size(); i++) {
        if (std::find(names.begin(), names.end(), loops[i]) != names.end()) positions.push_back(i);
    }
    for (size_t i = 0; i < names.size(); i++) loops[positions[i]] = names[i];
    g.schedule.reorder = names;
    return *this;
}

namespace {
void set_gpu_loops(UreGroup &g, const std::string &primitive, std::vector<std::string> &slot,
                   const std::vector<std::string> &names) {
    for (const std::string &v : names) {
        // gpu_threads may name the array's space loops: its PEs become the threads of a block.
        bool space_loop = false;
        if (primitive == "gpu_threads" && g.schedule.transform) {
            const std::vector<std::string> &dst = g.schedule.transform->destination_loops;
            space_loop = std::find(dst.begin(), dst.end() - 1, v) != dst.end() - 1;
        }
        if (!space_loop) require_loop(g, primitive, v);
    }
    require_distinct(g, primitive, names);
    std::vector<std::string> all = g.schedule.gpu_blocks;
    all.insert(all.end(), g.schedule.gpu_threads.begin(), g.schedule.gpu_threads.end());
    for (const std::string &v : names) {
        if (std::find(all.begin(), all.end(), v) != all.end()) {
            compile_error(g.owner(), ".", primitive, ": loop variable '", v, "' is repeated: it is already mapped to the GPU");
        }
    }
    slot = names;
}
}  // namespace

Func &Func::gpu_blocks(const Var &x) { set_gpu_loops(*group(), "gpu_blocks", group()->schedule.gpu_blocks, {x.name()}); return *this; }
Func &Func::gpu_blocks(const Var &x, const Var &y) { set_gpu_loops(*group(), "gpu_blocks", group()->schedule.gpu_blocks, {x.name(), y.name()}); return *this; }
Func &Func::gpu_blocks(const Var &x, const Var &y, const Var &z) { set_gpu_loops(*group(), "gpu_blocks", group()->schedule.gpu_blocks, {x.name(), y.name(), z.name()}); return *this; }
Func &Func::gpu_threads(const Var &x) { set_gpu_loops(*group(), "gpu_threads", group()->schedule.gpu_threads, {x.name()}); return *this; }
Func &Func::gpu_threads(const Var &x, const Var &y) { set_gpu_loops(*group(), "gpu_threads", group()->schedule.gpu_threads, {x.name(), y.name()}); return *this; }
Func &Func::gpu_threads(const Var &x, const Var &y, const Var &z) { set_gpu_loops(*group(), "gpu_threads", group()->schedule.gpu_threads, {x.name(), y.name(), z.name()}); return *this; }

Func &Func::vectorize(const Var &x, int lanes) {
    UreGroup &g = *group();
    require_loop(g, "vectorize", x.name());
    if (lanes != 2) {
        compile_error(g.owner(), ".vectorize(", x.name(), ", ", lanes, "): two instances are packed to a warp (lanes = 2), not ", lanes);
    }
    if (g.schedule.vectorize) compile_error(g.owner(), ".vectorize: given twice (", g.schedule.vectorize->first, " and ", x.name(), ")");
    g.schedule.vectorize = std::make_pair(x.name(), lanes);
    return *this;
}

Func &Func::gpu_grid_sync() {
    group()->schedule.gpu_grid_sync = true;
    return *this;
}

Stage Func::in(const Func &consumer) const { return make_stage(consumer.contents()->group, name(), consumer); }

Func &Func::compute_at(const Func &consumer, const Var &loop) {
    Stage s = make_stage(consumer.contents()->group, name(), consumer);
    s.compute_at(consumer, loop);
    return *this;
}

Func &Func::store_in(MemoryType memory) {
    UreGroup &g = *group();
    for (auto it = g.schedule.stagings.rbegin(); it != g.schedule.stagings.rend(); ++it) {
        if (it->source == name() && !it->memory) {
            it->memory = memory;
            return *this;
        }
    }
    g.schedule.stagings.push_back(ir::Staging{name(), name(), {}, {}, memory});
    return *this;
}

Func &Func::space_time_transform(const std::vector<Var> &source, const std::vector<Var> &destination,
                                  const std::vector<int> &matrix, const std::vector<Expr> &reverse) {
    UreGroup &g = *group();
    const std::string what = name() + ".space_time_transform";
    if (g.schedule.transform) compile_error(what, ": ", g.owner(), " already has a space-time transform");
    std::vector<std::string> src = var_names(source), dst = var_names(destination);
    if (src.empty()) compile_error(what, ": no source loops given");
    for (const std::string &v : src) require_loop(g, "space_time_transform", v);
    require_distinct(g, "space_time_transform", src);
    require_distinct(g, "space_time_transform", dst);
    for (const std::string &v : dst) {
        const std::vector<std::string> &loops = current_loops(g);
        if (std::find(loops.begin(), loops.end(), v) != loops.end()) {
            compile_error(what, ": destination loop '", v, "' is repeated: it already names a loop of ", g.owner());
        }
    }
    if (dst.size() != 2 && dst.size() != 3) {
        compile_error(what, ": Pulse builds linear and two-dimensional arrays: give one or two space loops, then the time "
                            "loop, as destination loops, not ",
                      dst.size());
    }
    if (matrix.size() != src.size() * dst.size()) {
        compile_error(what, ": the transform matrix has the wrong shape: ", matrix.size(), " entries given, but ",
                      dst.size(), " destination loops x ", src.size(), " source loops need ", dst.size() * src.size(),
                      " (one row per destination loop, space rows first, time row last)");
    }
    if (!reverse.empty() && reverse.size() != src.size()) {
        compile_error(what, ": the reverse transform has ", reverse.size(), " expressions; it needs one per source loop (",
                      src.size(), ")");
    }
    ir::SpaceTimeTransform t;
    t.source_loops = src;
    t.destination_loops = dst;
    for (size_t r = 0; r < dst.size(); r++) {
        t.matrix.emplace_back(matrix.begin() + r * src.size(), matrix.begin() + (r + 1) * src.size());
    }
    t.reverse = reverse;
    g.schedule.transform = t;
    return *this;
}

Func &Func::space_time_transform(const std::vector<Var> &source, const std::vector<Var> &destination,
                                  const std::vector<int> &matrix, SpaceTimeTransform flag) {
    return space_time_transform(source, destination, matrix, std::vector<Expr>{}, flag);
}

Func &Func::space_time_transform(const std::vector<Var> &source, const std::vector<Var> &destination,
                                  const std::vector<int> &matrix, const std::vector<Expr> &reverse,
                                  SpaceTimeTransform flag) {
    space_time_transform(source, destination, matrix, reverse);
    group()->schedule.transform->check_time = (flag == SpaceTimeTransform::CheckTime);
    return *this;
}

Buffers Func::realize(const Buffers &inputs) const { return ir::realize(lower(), inputs); }

}  // namespace pulse
