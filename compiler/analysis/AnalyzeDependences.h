// Pass: find the uniform dependences and input accesses of the merged UREs.
#ifndef PULSE_ANALYZE_DEPENDENCES_H
#define PULSE_ANALYZE_DEPENDENCES_H

#include "ir/UreProgram.h"

namespace pulse {

/// Fills `program.dependences` and `program.input_accesses`.
///
/// Every recurrence call `V(e_1, ..., e_n)` inside the definition of `U` must
/// have `e_i = arg_i - d_i` for a constant `d_i` (a uniform dependence of
/// distance d); each call records the conjunction of the `select` branches
/// that lead to it. A call at distance 0 must read a URE that comes earlier in
/// merge order. Input indices must be affine in the loop variables.
/// Throws CompileError naming the URE and the call otherwise.
void analyze_dependences(ir::UreProgram &program);

}  // namespace pulse

#endif
