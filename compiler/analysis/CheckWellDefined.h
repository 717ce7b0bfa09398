// Pass: prove, with isl, that a URE program is well defined on its bounded
// domain before any code is made from it:
//   - every read of a recurrence lands inside the domain, at a point where
//     the producer's value is defined (a recurrence with no base case reads
//     outside; a select without a false value leaves points undefined);
//   - every output element is written exactly once: the points where the
//     output is defined map one-to-one onto its box.
// Parts of a condition isl cannot express (non-affine) are not judged here:
// the reference interpreter still refuses what it meets at run time.
#ifndef PULSE_CHECK_WELL_DEFINED_H
#define PULSE_CHECK_WELL_DEFINED_H

#include "ir/UreProgram.h"

namespace pulse {

/// Throws CompileError naming the read, the point and the fix, or the output
/// element written twice or never.
void check_well_defined(const ir::UreProgram &program);

}  // namespace pulse

#endif
