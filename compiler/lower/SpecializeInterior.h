// Pass: warps whose every access is inside its buffer run a copy of the
// instance with no bounds guards; the others (image borders, tails) keep
// them. The test is one box per buffer: the coordinates its guarded accesses
// reach, over the lanes that can reach each access (narrowed by the
// conditions around it) and the iterations of the loops around it. A read
// that reaches past what the domain reads (BufferArg::domain_reads) at
// generation-time coordinates keeps its guard in both copies and stays out
// of the box: no buffer sized as the header says would pass a test with it. A select
// whose condition bounds a coordinate by a run-time size read from constant
// memory (a spec's `select(inside the grid, update, hold)`) joins the test
// too where it holds on the whole instance, and the fast copy takes its first
// branch without testing each cell.
#ifndef PULSE_SPECIALIZE_INTERIOR_H
#define PULSE_SPECIALIZE_INTERIOR_H

#include "ir/KernelIR.h"

namespace pulse {

void specialize_interior(kir::Kernel &kernel);

}  // namespace pulse

#endif
