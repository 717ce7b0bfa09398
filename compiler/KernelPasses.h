// Passes over the kernel IR (KernelIR.h), run in this order by
// optimize_kernel (Pipeline.h lists them too):
//   1. place_uniform_inputs  an input read only at constant coordinates (a
//                            filter, after the time loop is unrolled) moves to
//                            constant memory: its reads become constant-bank
//                            operands, the same on every lane, no load issued.
//   2. hoist_loads           in each array instance's straight-line code, every
//                            load is issued once, at the top: rows shared by
//                            unrolled iterations of a per-thread loop form a
//                            register window; a lane-only read is loaded once.
//   3. slide_windows         (SlideWindows.h) loads a per-thread loop's next
//                            iteration repeats stay in registers.
//   4. peel_loops            (PeelLoops.h) a rolled time loop's first and last
//                            blocks run outside it, its middle ones without
//                            the conditions that single those out.
//   5. specialize_interior   warps whose every access is inside its buffer run
//                            a copy of the code with no bounds guards; the
//                            others (image borders, tails) keep them.
#ifndef PULSE_KERNEL_PASSES_H
#define PULSE_KERNEL_PASSES_H

#include "KernelIR.h"

namespace pulse {

/// Largest region, in bytes, an input may have to be placed in constant memory.
constexpr int64_t constant_memory_budget = 32 * 1024;

void place_uniform_inputs(kir::Kernel &kernel);
void hoist_loads(kir::Kernel &kernel);
void specialize_interior(kir::Kernel &kernel);

/// Runs the passes above; prints the IR after each one to `trace` when given.
void optimize_kernel(kir::Kernel &kernel, std::ostream *trace = nullptr);

}  // namespace pulse

#endif
