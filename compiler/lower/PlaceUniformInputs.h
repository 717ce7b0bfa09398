// Pass: an input read only at coordinates that are the same on every lane
// and bounded at generation time (constants, or loops of constant bounds: a
// filter) moves to constant memory, within constant_memory_budget (and all
// inputs together within constant_memory_total_budget, in argument order). Its reads
// become constant-bank operands, one broadcast for the warp; their guards go
// (the region is inside by construction). The host function copies the
// region in before each launch.
#ifndef PULSE_PLACE_UNIFORM_INPUTS_H
#define PULSE_PLACE_UNIFORM_INPUTS_H

#include "ir/KernelIR.h"

namespace pulse {

/// Largest region, in bytes, an input may have to be placed in constant memory.
constexpr int64_t constant_memory_budget = 32 * 1024;
/// Most bytes all of a kernel's inputs may place there together: CUDA's 64 KiB
/// constant bank less room for what the compiler puts there itself.
constexpr int64_t constant_memory_total_budget = 48 * 1024;

void place_uniform_inputs(kir::Kernel &kernel);

}  // namespace pulse

#endif
