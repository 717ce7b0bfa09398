// Pass: choose the sequential order in which the reference interpreter runs
// the merged UREs.
#ifndef PULSE_REFERENCE_ORDER_H
#define PULSE_REFERENCE_ORDER_H

#include "ir/UreProgram.h"

namespace pulse {

/// Fills `program.reference_nesting` and `program.reference_direction`.
///
/// The reference order is lexicographic over the loop nest, outermost loop
/// slowest, with the UREs in merge order at each point. Each loop runs upwards
/// unless the dependences it carries all point the other way (FSM reads
/// `Z(c, q + 1)`, so its `q` loop runs downwards). When the declared nesting
/// admits no such directions (BFS reads both `X(c - 1, q + 1)` and
/// `Z(c, q - 1)`), the first permutation of the loops that does is used.
/// Throws CompileError naming two conflicting dependences if none exists.
void compute_reference_order(ir::UreProgram &program);

/// Describes the order: "for b up, for c up, for q down".
std::string reference_order_text(const ir::UreProgram &program);

}  // namespace pulse

#endif
