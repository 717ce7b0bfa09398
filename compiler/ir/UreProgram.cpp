#include "ir/UreProgram.h"

#include <algorithm>
#include <limits>

#include "ir/ReferenceOrder.h"
#include "ir/ExactSimplify.h"

#include <ostream>
#include <sstream>

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

const char *to_string(Place place) { return place == Place::Host ? "Host" : "Device"; }

const char *to_string(MemoryType memory) {
    switch (memory) {
    case MemoryType::Register: return "Register";
    case MemoryType::Shared: return "Shared";
    case MemoryType::Global: return "Global";
    }
    return "?";
}

namespace ir {

namespace {
const char *const undefined_name = "pulse.undefined";

/// Halide's printer, with calls written as the user wrote them.
class SourcePrinter : public IRPrinter {
public:
    using IRPrinter::IRPrinter;

protected:
    using IRPrinter::visit;
    void visit(const Call *op) override {
        if (op->name == undefined_name) {
            stream << "undefined";
            return;
        }
        std::string name = op->name;
        std::string prefix = recurrence_call_prefix();
        if (name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
        if (op->call_type == Call::Image || name != op->name) {
            stream << name << "(";
            for (size_t i = 0; i < op->args.size(); i++) {
                if (i) stream << ", ";
                print_no_parens(op->args[i]);
            }
            stream << ")";
            return;
        }
        IRPrinter::visit(op);
    }
};
}  // namespace

Expr undefined_value(Type type) {
    return Call::make(type, undefined_name, {}, Call::PureIntrinsic);
}

bool is_undefined_value(const Expr &e) {
    const Call *call = e.as<Call>();
    return call && call->name == undefined_name;
}

Halide::Expr defined_condition(const Halide::Expr &e) {
    using namespace Halide::Internal;
    if (is_undefined_value(e)) return const_false();
    if (const Select *op = e.as<Select>()) {
        return simplify_exact(select(op->condition, defined_condition(op->true_value), defined_condition(op->false_value)));
    }
    return const_true();
}

Expr make_recurrence_call(Type type, const std::string &func, const std::vector<Expr> &args) {
    return Call::make(type, recurrence_call_prefix() + func, args, Call::PureExtern);
}

std::string recurrence_callee(const Expr &e) {
    const Call *call = e.as<Call>();
    std::string prefix = recurrence_call_prefix();
    if (call && call->call_type == Call::PureExtern && call->name.rfind(prefix, 0) == 0) {
        return call->name.substr(prefix.size());
    }
    return "";
}

std::string input_callee(const Expr &e) {
    const Call *call = e.as<Call>();
    if (call && call->call_type == Call::Image) return call->name;
    return "";
}

std::string to_source(const Expr &e) {
    if (!e.defined()) return "<none>";
    if (e.type().is_bool() && is_const_one(e)) return "true";
    std::ostringstream out;
    SourcePrinter printer(out);
    printer.print_no_parens(e);
    return out.str();
}

std::vector<Loop> less_excluded(const std::vector<Loop> &loops, const std::vector<std::pair<int64_t, int64_t>> &excluded) {
    std::vector<Loop> box = loops;
    for (size_t i = 0; i < box.size() && i < excluded.size(); i++) {
        const int64_t cut = std::min(excluded[i].first + excluded[i].second, box[i].extent);
        box[i].min += std::min(excluded[i].first, box[i].extent);
        box[i].extent -= cut;
    }
    return box;
}

const Loop &UreProgram::loop(const std::string &var) const {
    int i = loop_index(var);
    if (i < 0) compile_error("'", var, "' is not a loop of the nest of ", name);
    return loops[i];
}

int UreProgram::loop_index(const std::string &var) const {
    for (size_t i = 0; i < loops.size(); i++) {
        if (loops[i].var == var) return (int)i;
    }
    return -1;
}

const Ure &UreProgram::ure(const std::string &n) const {
    int i = ure_index(n);
    if (i < 0) compile_error("'", n, "' is not one of the merged UREs of ", name);
    return ures[i];
}

int UreProgram::ure_index(const std::string &n) const {
    for (size_t i = 0; i < ures.size(); i++) {
        if (ures[i].name == n) return (int)i;
    }
    return -1;
}

const InputDecl &UreProgram::input(const std::string &n) const {
    for (const InputDecl &in : inputs) {
        if (in.name == n) return in;
    }
    compile_error("'", n, "' is not an input of ", name);
}

int64_t UreProgram::domain_size() const {
    int64_t size = 1;
    for (const Loop &l : loops) size *= l.extent;
    return size;
}

Expr UreProgram::domain_condition() const {
    Expr all = Halide::Internal::const_true();
    for (const Expr &c : constraints) all = all && c;
    return simplify_exact(all);
}

Expr UreProgram::data_condition() const {
    Expr all = Halide::Internal::const_true();
    for (const DataBound &b : data_bounds) all = all && Variable::make(Int(32), b.loop) < b.upper;
    return all;
}

const char *to_string(ReduceOp op) {
    switch (op) {
    case ReduceOp::Add: return "+";
    case ReduceOp::Mul: return "*";
    case ReduceOp::Min: return "min";
    case ReduceOp::Max: return "max";
    case ReduceOp::And: return "&&";
    case ReduceOp::Or: return "||";
    }
    return "?";
}

Expr reduce_combine(ReduceOp op, const Expr &a, const Expr &b) {
    switch (op) {
    case ReduceOp::Add: return a + b;
    case ReduceOp::Mul: return a * b;
    case ReduceOp::Min: return Halide::min(a, b);
    case ReduceOp::Max: return Halide::max(a, b);
    case ReduceOp::And: return a && b;
    case ReduceOp::Or: return a || b;
    }
    return Expr();
}

Expr reduce_identity(ReduceOp op, Halide::Type type) {
    switch (op) {
    case ReduceOp::Add: return make_zero(type);
    case ReduceOp::Mul: return make_one(type);
    case ReduceOp::Min:
        // Under the scalar semantics min(NaN, x) = x: NaN is min's identity.
        return type.is_float() ? make_const(type, std::numeric_limits<double>::quiet_NaN()) : type.max();
    case ReduceOp::Max: return type.is_float() ? make_const(type, std::numeric_limits<double>::quiet_NaN()) : type.min();
    case ReduceOp::And: return const_true();
    case ReduceOp::Or: return const_false();
    }
    return Expr();
}

std::string reduce_refusal(ReduceOp op, Halide::Type type) {
    const bool logical = op == ReduceOp::And || op == ReduceOp::Or;
    if (type.is_float() && (op == ReduceOp::Add || op == ReduceOp::Mul)) {
        return std::string("a float ") + (op == ReduceOp::Add ? "sum" : "product") +
               " depends on the order of its operands, which differs between the evaluators and the GPU's lanes; reduce an "
               "integer type, or use min or max";
    }
    if (logical && !type.is_bool()) {
        std::ostringstream why;
        why << "'" << to_string(op) << "' takes bools; reduce " << type << " with max, min, + or *";
        return why.str();
    }
    if (!logical && type.is_bool() && (op == ReduceOp::Add || op == ReduceOp::Mul)) {
        return std::string("'") + to_string(op) + "' of bools is not a reduction Pulse has; use && (all), || (any), min or max";
    }
    return "";
}

std::vector<int64_t> table_extents_of(const Halide::Internal::Parameter &param) {
    std::vector<int64_t> extents;
    if (!param.defined() || !param.is_buffer()) return extents;
    for (int d = 0; d < param.dimensions(); d++) {
        const int64_t *e = as_const_int(param.extent_constraint(d));
        if (!e) return {};
        extents.push_back(*e);
    }
    return extents;
}

std::vector<Expr> Ure::output_index() const {
    if (!index.empty()) return index;
    std::vector<Expr> vars;
    for (const std::string &a : args) vars.push_back(Variable::make(Int(32), a));
    return vars;
}

std::string Ure::lhs_text() const {
    std::string s = name + "(";
    std::vector<Expr> written = output_index();
    for (size_t i = 0; i < written.size(); i++) s += (i ? ", " : "") + to_source(written[i]);
    return s + ")";
}

std::vector<Loop> UreProgram::output_loops(const Ure &u) const {
    using namespace Halide::Internal;
    std::vector<Loop> narrowed = loops;
    if (!schedule.transform) return narrowed;
    const std::vector<std::string> &array = schedule.transform->source_loops;
    // Conjuncts of the defined condition of the form `v op c`.
    std::vector<Expr> conjuncts, pending{defined_condition(u.value)};
    while (!pending.empty()) {
        Expr e = pending.back();
        pending.pop_back();
        if (const And *a = e.as<And>()) {
            pending.push_back(a->a);
            pending.push_back(a->b);
        } else {
            conjuncts.push_back(e);
        }
    }
    auto narrow = [&](const Expr &var, const Expr &bound, int64_t lo_shift, int64_t hi_shift, bool lower, bool upper) {
        const Variable *v = var.as<Variable>();
        const int64_t *c = as_const_int(bound);
        if (!v || !c || std::find(array.begin(), array.end(), v->name) == array.end()) return;
        int i = loop_index(v->name);
        if (i < 0) return;
        Loop &l = narrowed[i];
        int64_t lo = l.min, hi = l.max();
        if (lower) lo = std::max(lo, *c + lo_shift);
        if (upper) hi = std::min(hi, *c + hi_shift);
        if (lo > hi) return;  // an empty output: keep the loop (the checks report it)
        l.min = lo;
        l.extent = hi - lo + 1;
    };
    for (const Expr &c : conjuncts) {
        if (const LT *op = c.as<LT>()) narrow(op->a, op->b, 0, -1, false, true), narrow(op->b, op->a, 1, 0, true, false);
        if (const LE *op = c.as<LE>()) narrow(op->a, op->b, 0, 0, false, true), narrow(op->b, op->a, 0, 0, true, false);
        if (const GT *op = c.as<GT>()) narrow(op->a, op->b, 1, 0, true, false), narrow(op->b, op->a, 0, -1, false, true);
        if (const GE *op = c.as<GE>()) narrow(op->a, op->b, 0, 0, true, false), narrow(op->b, op->a, 0, 0, false, true);
        if (const EQ *op = c.as<EQ>()) narrow(op->a, op->b, 0, 0, true, true), narrow(op->b, op->a, 0, 0, true, true);
    }
    return narrowed;
}

std::vector<const Ure *> UreProgram::outputs() const {
    std::vector<const Ure *> result;
    for (const Ure &u : ures) {
        if (u.is_output) result.push_back(&u);
    }
    return result;
}

namespace {
std::string join(const std::vector<std::string> &items) {
    std::string s;
    for (size_t i = 0; i < items.size(); i++) s += (i ? ", " : "") + items[i];
    return s;
}

std::string distance_text(const UreProgram &p, const std::vector<int64_t> &d) {
    std::ostringstream out;
    out << "(";
    for (size_t i = 0; i < d.size(); i++) out << (i ? ", " : "") << p.loops[i].var << ":" << d[i];
    out << ")";
    return out.str();
}
}  // namespace

void print(std::ostream &out, const UreProgram &p) {
    out << "UREs of " << p.name << "\n";
    out << "  loops (outermost first):";
    for (auto it = p.loops.rbegin(); it != p.loops.rend(); ++it) {
        out << "  " << it->var << " in [" << it->min << ", " << it->max() << "]";
    }
    if (!p.constraints.empty()) {
        out << "\n  where:";
        for (size_t i = 0; i < p.constraints.size(); i++) out << (i ? " and " : " ") << to_source(p.constraints[i]);
    }
    if (!p.data_bounds.empty()) {
        out << "\n  bounded by the inputs:";
        for (size_t i = 0; i < p.data_bounds.size(); i++) out << (i ? " and " : " ") << p.data_bounds[i].loop << " < " << to_source(p.data_bounds[i].upper);
    }
    out << "\n  inputs:";
    for (const InputDecl &in : p.inputs) out << "  " << in.name << " (" << in.type << ", " << in.dimensions << "-D)";
    out << "\n";
    for (const Ure &u : p.ures) {
        if (u.reduction) {
            out << "  output " << u.lhs_text() << " = " << to_source(u.reduction->initial) << "; " << u.lhs_text() << " = "
                << to_source(reduce_combine(u.reduction->op, make_recurrence_call(u.type, u.name, u.output_index()), u.value))
                << "    [" << u.type << ", " << to_string(u.place) << ", reduction]\n";
            continue;
        }
        out << "  " << (u.is_output ? "output " : "") << u.lhs_text() << " = "
            << to_source(u.value) << "    [" << u.type << ", " << to_string(u.place) << "]\n";
    }
    if (!p.reference_nesting.empty()) out << "  reference order: " << reference_order_text(p) << "\n";
    out << "  dependences:\n";
    for (const Dependence &d : p.dependences) {
        out << "    " << d.consumer << " <- " << d.call_text << "  d = " << distance_text(p, d.distance)
            << (d.is_copy ? "  copy" : "") << "  when " << to_source(d.condition) << "\n";
    }
    const Schedule &s = p.schedule;
    for (const Tile &t : s.tiles) {
        out << "  " << (t.unroll_inner ? "tile " : "split ") << t.var << " -> " << t.outer << " * " << t.factor << " + " << t.inner
            << "\n";
    }
    if (!s.reorder.empty()) out << "  reorder (innermost first): " << join(s.reorder) << "\n";
    if (!s.gpu_blocks.empty()) out << "  gpu_blocks: " << join(s.gpu_blocks) << "\n";
    if (!s.gpu_threads.empty()) out << "  gpu_threads: " << join(s.gpu_threads) << "\n";
    if (s.gpu_grid_sync) out << "  gpu_grid_sync\n";
    for (const Staging &st : s.stagings) {
        out << "  " << st.source << ".in(" << st.consumer << ")";
        if (st.compute_at_func) out << ".compute_at(" << *st.compute_at_func << ", " << *st.compute_at_loop << ")";
        if (st.memory) out << ".store_in(" << to_string(*st.memory) << ")";
        out << "\n";
    }
    if (s.transform) {
        const SpaceTimeTransform &t = *s.transform;
        out << "  space_time_transform (" << join(t.source_loops) << ") -> (" << join(t.destination_loops) << ")";
        for (size_t r = 0; r < t.matrix.size(); r++) {
            out << "\n    " << t.destination_loops[r] << " =";
            bool first = true;
            for (size_t c = 0; c < t.matrix[r].size(); c++) {
                int64_t k = t.matrix[r][c];
                if (k == 0) continue;
                out << (first ? " " : (k > 0 ? " + " : " - ")) << (first && k < 0 ? "-" : "");
                int64_t a = k < 0 ? -k : k;
                if (a != 1) out << a << "*";
                out << t.source_loops[c];
                first = false;
            }
            if (first) out << " 0";
        }
        if (!t.reverse.empty()) {
            out << "\n    reverse:";
            for (size_t i = 0; i < t.reverse.size(); i++) out << " " << t.source_loops[i] << " = " << to_source(t.reverse[i]) << ";";
        }
        out << (t.check_time ? "\n    CheckTime" : "") << "\n";
    }
}

}  // namespace ir
}  // namespace pulse
