#include "analysis/AnalyzeDependences.h"
#include "ir/ExactSimplify.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// True if `e` is affine in the loop variables with integer coefficients.
bool is_affine(const Expr &e) {
    if (e.as<IntImm>() || e.as<UIntImm>() || e.as<Variable>()) return true;
    if (const Cast *c = e.as<Cast>()) return c->type.is_int_or_uint() && c->value.type().is_int_or_uint() && is_affine(c->value);
    if (const Add *a = e.as<Add>()) return is_affine(a->a) && is_affine(a->b);
    if (const Sub *s = e.as<Sub>()) return is_affine(s->a) && is_affine(s->b);
    if (const Mul *m = e.as<Mul>()) {
        return (is_const(m->a) && is_affine(m->b)) || (is_const(m->b) && is_affine(m->a));
    }
    return false;
}

/// Walks a definition, tracking the select branches that lead to each call.
class FindCalls : public IRVisitor {
public:
    FindCalls(ir::UreProgram &p, const ir::Ure &u) : program(p), ure(u) {}

protected:
    using IRVisitor::visit;

    void visit(const Select *op) override {
        op->condition.accept(this);
        conditions.push_back(op->condition);
        op->true_value.accept(this);
        conditions.back() = !op->condition;
        op->false_value.accept(this);
        conditions.pop_back();
    }

    void visit(const Call *op) override {
        std::string callee = ir::recurrence_callee(op);
        if (!callee.empty()) {
            record_dependence(op, callee);
        } else if (op->call_type == Call::Image && !program.input(op->name).is_table()) {
            // A table's reads are at data-dependent indices, clamped into it: its
            // region is the whole table (InputDecl::table_extents), not an access's.
            record_input_access(op);
        }
        IRVisitor::visit(op);
    }

private:
    ir::UreProgram &program;
    const ir::Ure &ure;
    std::vector<Expr> conditions;

    Expr current_condition() const {
        Expr c = const_true();
        for (const Expr &e : conditions) c = is_const_one(c) ? e : (c && e);
        return c;
    }

    void record_dependence(const Call *op, const std::string &callee) {
        const ir::Ure &producer = program.ure(callee);
        std::string call_text = ir::to_source(Expr(op));
        ir::Dependence d;
        d.consumer = ure.name;
        d.producer = callee;
        d.call_text = call_text;
        d.condition = current_condition();
        d.distance.assign(program.loops.size(), 0);
        for (size_t i = 0; i < op->args.size(); i++) {
            const std::string &arg = producer.args[i];
            Expr diff = simplify_exact(Variable::make(Int(32), arg) - op->args[i]);
            const int64_t *k = as_const_int(diff);
            if (!k) {
                compile_error("call ", call_text, " in the definition of ", ure.name, ": argument ", i + 1, " '",
                              ir::to_source(op->args[i]), "' is not '", arg,
                              "' plus a constant, so this is not a uniform recurrence; read ", callee,
                              " at a constant distance, or read an Input instead");
            }
            d.distance[program.loop_index(arg)] = *k;
        }
        bool zero = std::all_of(d.distance.begin(), d.distance.end(), [](int64_t v) { return v == 0; });
        if (zero && program.ure_index(callee) >= program.ure_index(ure.name)) {
            refuse(Refusal::ReadBeforeDefinition, ure.name, "call ", call_text, " in the definition of ", ure.name, " reads ", callee,
                          " at the same point, but ", callee, " does not come before ", ure.name,
                          " in merge order; merge ", callee, " earlier, or read it at a nonzero distance");
        }
        // A pure copy: the selected branch is the call itself.
        d.is_copy = branch_is_call(ure.value, op);
        program.dependences.push_back(d);
    }

    void record_input_access(const Call *op) {
        std::vector<Expr> index;
        for (const Expr &a : op->args) {
            Expr e = a;
            if (const Cast *c = e.as<Cast>()) {
                if (c->value.type().is_int_or_uint()) e = c->value;
            }
            if (!is_affine(e)) {
                compile_error("read ", ir::to_source(Expr(op)), " in the definition of ", ure.name, ": index '",
                              ir::to_source(a), "' is not affine in the loop variables");
            }
            index.push_back(e);
        }
        program.input_accesses.push_back(ir::InputAccess{ure.name, op->name, index, current_condition()});
    }

    /// True if `call` is a whole branch of the definition (through selects only).
    static bool branch_is_call(const Expr &value, const Call *call) {
        if (value.get() == call) return true;
        if (const Select *s = value.as<Select>()) return branch_is_call(s->true_value, call) || branch_is_call(s->false_value, call);
        return false;
    }
};

}  // namespace

void analyze_dependences(ir::UreProgram &program) {
    program.dependences.clear();
    program.input_accesses.clear();
    for (const ir::Ure &u : program.ures) {
        FindCalls finder(program, u);
        u.value.accept(&finder);
    }
    // A data bound's reads, at the instance, by the loop nest's owner: their
    // region is planned as any read's (every instance reads its bound).
    for (const ir::DataBound &b : program.data_bounds) {
        FindCalls finder(program, program.ure(program.name));
        b.upper.accept(&finder);
    }
}

}  // namespace pulse
