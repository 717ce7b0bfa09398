// Pass: the iterations of each loop where an input read is never evaluated.
#ifndef PULSE_BOUND_INPUT_READS_H
#define PULSE_BOUND_INPUT_READS_H

#include "ir/UreProgram.h"

namespace pulse {

/// Fills `InputAccess::excluded` for every input access of `program` (after
/// analyze_dependences): per loop, the first and last iterations where the
/// read's condition (the selects around it) holds nowhere, so that input
/// regions cover what is read rather than the whole box (`select(i >= 1,
/// a(i - 1), 0)` reads a from index 0). The condition's affine part is taken
/// exactly, with isl; a condition with a part that is not affine (a run-time
/// size read from an input) excludes nothing. The loops outside the array
/// have run-time extents: they are taken as unbounded above, so what is
/// excluded holds for every extent, and only their first iterations are.
void bound_input_reads(ir::UreProgram &program);

}  // namespace pulse

#endif
