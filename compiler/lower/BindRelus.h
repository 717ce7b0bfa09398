// Pass: a vector let that the kernel reads only as its relu, max(v, 0), binds
// the relu itself, and its reads read the let.
//
// Halide's simplifier strips a let's max(value, 0) into every read of the
// let (H's relu in the aligners: the carry, the best score, H - OPEN for E
// and F). On packed int16 the relu is free inside the let's own tree of
// maxima (__vimax3_s16x2_relu, __viaddmax's relu forms) but an instruction of
// its own at the reads, one a cell (docs/benchmarks.md). Last in the pass
// list: a simplification after it would strip the relu again.
#ifndef PULSE_BIND_RELUS_H
#define PULSE_BIND_RELUS_H

#include "ir/KernelIR.h"

namespace pulse {

/// Rebinds every vector LetStmt `v = e` of `kernel`'s body whose every read
/// (in the whole body) is max(v, 0) as `v = max(e, 0)`, and each max(v, 0)
/// as v.
void bind_relus(kir::Kernel &kernel);

}  // namespace pulse

#endif
