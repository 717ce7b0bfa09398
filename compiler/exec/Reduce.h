// Reduction outputs on the CPU evaluators: combining two values with a
// reduction's operator, and an output's initial value, under the scalar
// semantics (the same compiled expressions as every other value).
#ifndef PULSE_REDUCE_H
#define PULSE_REDUCE_H

#include "exec/ExprCompiler.h"

namespace pulse {

/// op(a, b) of one reduction operator and type. Not safe to call from two
/// threads at once (it holds its operands while the expression runs).
class ReduceCombiner {
public:
    ReduceCombiner(ir::ReduceOp op, Halide::Type type);
    Scalar operator()(const Scalar &a, const Scalar &b) const;

private:
    Closure closure;
    struct Operands {
        Scalar a, b;
    };
    std::shared_ptr<Operands> operands = std::make_shared<Operands>();
};

/// Reduction output `u`'s initial value (its pure definition) compiled over
/// the loops of `program`: evaluated at the first point that reaches an
/// element, with the loop variables in EvalState::coords.
Closure compile_initial_value(const ir::UreProgram &program, const ir::Ure &u);

}  // namespace pulse

#endif
