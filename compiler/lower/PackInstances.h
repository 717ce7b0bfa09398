// Pass: pack consecutive array instances into the lanes of vectors
// (the schedule's `vectorize(b, 2)` on the gpu_blocks loop `b`).
//
// Every warp runs two instances, b = 2 p and 2 p + 1, instead of one: each
// value that depends on b becomes a vector of two lanes (Halide's vector
// types), lane k the value instance 2 p + k would have had, and values of 16
// bits pack into one 32-bit register, so one SIMD or DPX instruction
// computes both instances (runtime/emitted/pulse_vectors.cuh). The grid loop
// then counts pairs.
//
// The kernel IR's ifs and loops take scalars (KernelIR.h), and two instances
// may disagree on them (a ragged batch: each instance's loops end at its own
// length). Where they do, both run, and each effect of the branch or
// iteration - a register write, a store, a load's reach - is masked to the
// lanes where it happens:
//   - `if (c)` with c a vector runs the branch unmasked where every lane
//     takes it, nothing where none does, and otherwise both branches under
//     masks c and !c;
//   - a loop whose bounds are vectors runs its iterations that every lane
//     takes unmasked, and those before and after, which some lanes take,
//     masked by each lane's own range (in order: each lane sees its own
//     iterations in sequence, and nothing else);
//   - under a mask a register write keeps the old value in the lanes
//     outside (a register array written so holds vectors), a store's and a
//     load's guard gain the mask (a table's loads, clamped, need none).
// So every lane runs exactly its instance's program: the kernel executor
// runs the packed kernel against the reference as it runs any other.
#ifndef PULSE_PACK_INSTANCES_H
#define PULSE_PACK_INSTANCES_H

#include "ir/KernelIR.h"

namespace pulse {

/// Packs Kernel::packed_lanes consecutive instances of the kernel's grid
/// loop into each warp (nothing if packed_lanes is 1). A CompileError names
/// what the pass cannot pack (a grid of several loops, a grid-synchronised
/// kernel, shared memory that would hold per-instance values).
void pack_instances(kir::Kernel &kernel);

}  // namespace pulse

#endif
