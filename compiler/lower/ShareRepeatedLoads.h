// Pass: a load from a buffer that one straight-line stretch of the kernel
// reads more than once at the same coordinates under the same guard (every
// PE of a lane reading its step's subject residue, in the steps where the
// lane may be outside the subject) is read once, into a let ahead of the
// first value that reads it, and the others read the let.
//
// nvcc merges repeated unguarded loads itself, but not guarded ones: each
// `guard ? buffer[i] : 0` is a branch of its own, so a ramp of skewed steps
// loaded the same element once per PE (docs/benchmarks.md). Buffers are only
// read between a kernel's stores, and a stretch of lets holds no store, so
// reading once is reading the same value.
#ifndef PULSE_SHARE_REPEATED_LOADS_H
#define PULSE_SHARE_REPEATED_LOADS_H

#include "ir/KernelIR.h"

namespace pulse {

/// In each chain of LetStmts of `kernel`'s body, binds every kir::load that
/// the chain's values read twice or more (equal buffer, guard and
/// coordinates) to a let before the first of those values, and reads it
/// there. Loads bound inside an expression's own Let stay where they are.
void share_repeated_loads(kir::Kernel &kernel);

}  // namespace pulse

#endif
