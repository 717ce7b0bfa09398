// Pass: software-pipeline the loads of a per-thread loop by one iteration.
//
// Around a serial loop v whose body is one array instance, the loads still
// issued at the top of the instance (after slide_windows, those of rows no
// earlier iteration read) are issued one iteration ahead: iteration v reads
// registers filled by iteration v - 1 (the first from a preload before the
// loop) and, before its arithmetic, issues the loads of v + 1 into them. A
// warp that walks a column strip or a stack of planes then has the next
// block's loads in flight while it computes the current one, instead of
// waiting for them at the top of every block. The loads of the iteration past
// the loop's end are issued too (inside the buffer, by their guards), which
// costs one extra block of reads per walk.
//
// The kernel opts in (kir::Kernel::prefetch_walks, KernelOptions::prefetch_walks,
// the generator's --prefetch): the loaded rows take a second set of registers.
#ifndef PULSE_PREFETCH_LOADS_H
#define PULSE_PREFETCH_LOADS_H

#include "ir/KernelIR.h"

namespace pulse {

/// Rewrites the serial loops around array instances of `kernel` to issue each
/// iteration's loads during the one before, if kernel.prefetch_walks.
void prefetch_loads(kir::Kernel &kernel);

}  // namespace pulse

#endif
