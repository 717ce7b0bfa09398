#include "exec/Reduce.h"

namespace pulse {

ReduceCombiner::ReduceCombiner(ir::ReduceOp op, Halide::Type type) {
    const Halide::Expr a = ir::make_recurrence_call(type, "reduce.a", {}), b = ir::make_recurrence_call(type, "reduce.b", {});
    ExprCompilerHooks hooks;
    hooks.variable_slot = [](const std::string &v) -> int { internal_error("a reduction operator reads variable ", v); };
    std::shared_ptr<Operands> held = operands;
    hooks.recurrence_call = [held](const Halide::Internal::Call *call, std::vector<Closure>) -> Closure {
        if (ir::recurrence_callee(call) == "reduce.a") return [held](EvalState &) { return held->a; };
        return [held](EvalState &) { return held->b; };
    };
    closure = compile_expr(ir::reduce_combine(op, a, b), hooks);
}

Scalar ReduceCombiner::operator()(const Scalar &a, const Scalar &b) const {
    operands->a = a;
    operands->b = b;
    EvalState state;
    return closure(state);
}

Closure compile_initial_value(const ir::UreProgram &program, const ir::Ure &u) {
    internal_assert(u.reduction.has_value(), "output ", u.name, " is not a reduction");
    ExprCompilerHooks hooks;
    hooks.variable_slot = [&program](const std::string &v) { return program.loop_index(v); };
    return compile_expr(u.reduction->initial, hooks);
}

}  // namespace pulse
