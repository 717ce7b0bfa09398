// stage_in_shared: an input the schedule caches in shared memory
// (`x.in(F).store_in(MemoryType::Shared)`, kir::InputCache::Shared) is
// staged per array instance: the box of coordinates the instance reads it at
// (over its lanes, warps and the loops of constant bounds inside it) is
// copied into a shared array by all of the array's threads, coalesced, 0
// outside the buffer; a barrier; the instance then reads the copy; a last
// barrier keeps the next instance's copy from overwriting values still being
// read. A table (read at data-dependent indices, clamped into it) is the
// same for every instance: it is staged whole, once per block, in a block
// array (Kernel::block_setup), laid out so that a warp's reads of a lane's
// consecutive entries fall on distinct banks (stage_table). The box's size must be known at generation time (its position may
// move with the grid point and the per-thread loops), and the copies of the
// arrays of a block must fit its static shared memory. The shared array is
// allocated once, around the whole body, so the interior and border copies
// of an instance (specialize_interior) share it. With Kernel::shared_steps
// = N, a long loop's operands are staged a run of N steps at a time
// instead: each rolled loop of constant bounds and at least N iterations
// that reads such an input runs in runs of N iterations, and each run copies
// the box it reads (its position moving with the run), laid out with the
// steps' dimensions outermost so that a thread's slots of one step lie side
// by side (16-byte loads).
#ifndef PULSE_STAGE_IN_SHARED_H
#define PULSE_STAGE_IN_SHARED_H

#include "ir/KernelIR.h"

namespace pulse {

/// Stages every input of `kernel` cached in shared memory, as above. Throws
/// CompileError naming the input where its box has no constant size, and
/// where shared_steps finds no input or no loop to stage in runs.
void stage_in_shared(kir::Kernel &kernel);

}  // namespace pulse

#endif
