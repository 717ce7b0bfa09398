// Pass: check the domain's constraints (`where`, dependent bounds).
#ifndef PULSE_CHECK_DOMAIN_H
#define PULSE_CHECK_DOMAIN_H

#include "ir/UreProgram.h"

namespace pulse {

/// Checks each of `program.constraints`: affine in the loops, and, once a
/// space-time transform is given, in the array's loops only (the loops
/// outside it run array instances of one shape; their extents may change at
/// run time). The domain must keep at least one point of the box. Each data
/// bound (`where(j < lengths(b))`) bounds a loop of the array that advances
/// time only, by an expression of the loops outside it, and no dependence
/// reads that loop at a higher value (each instance's domain is then a prefix
/// of the box, on which everything proved on the box holds); the outputs
/// are then reductions.
/// Throws CompileError naming the constraint and the fix.
void check_domain(const ir::UreProgram &program);

}  // namespace pulse

#endif
