// batch_exchanges: for arrays spread over the warps of a block, gathers the
// moves between threads (array_shift lets) into as few runs as the
// dependences allow, so that exchange_across_warps, which gives each run of
// independent moves one barrier, needs fewer barriers. In a wavefront a
// value crosses to its neighbours several steps after it is computed: the
// moves of a whole period are ready together, and one barrier serves the
// group of steps instead of one barrier per step.
//
// A move is only hoisted, never sunk: up, within its run of straight-line
// code (lets and statements), to the start of the run of moves before it,
// past nothing that binds a name its value reads or its own name, uses its
// name, or writes an array it reads. Its readers then see the same value;
// a move that reads another's result stays below it. A run takes no more
// values than the shared memory of a block holds (two halves of one element
// per thread for each value, beside the shared arrays already allocated):
// past that a new run starts.
#ifndef PULSE_BATCH_EXCHANGES_H
#define PULSE_BATCH_EXCHANGES_H

#include "ir/KernelIR.h"

namespace pulse {

/// Hoists `kernel`'s array_shift lets into runs as above; nothing to do for
/// an array of one warp.
void batch_exchanges(kir::Kernel &kernel);

}  // namespace pulse

#endif
