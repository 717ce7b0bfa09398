// Runs the kernel IR on the CPU exactly as a GPU would run the printed code:
// every array instance of the grid in turn, its 32 * warps_per_array threads
// in lock step (thread t is lane t % 32 of warp t / 32 in the array), warp
// shuffles and chain_source reading the other lanes of the thread's own
// warp, array_shift the other threads of the array, loads and stores through
// the buffers' run-time sizes, integer arithmetic in the IR's types
// (wrap-around, Halide's division), float32 rounded after every operation.
// Register arrays are per thread; a shared (GPUShared) array is one per
// instance. It also checks what the hardware would not: a lane exchange or a
// barrier inside divergent code (any thread of the array masked off), a loop
// whose bounds differ between threads, a load or store outside its buffer or
// array, a read of shared memory never written, and a race on shared memory:
// an element written by one thread and read or written by another, or read
// by one and written by another, with no barrier between.
#ifndef PULSE_KERNEL_EXECUTOR_H
#define PULSE_KERNEL_EXECUTOR_H

#include "exec/InputRegions.h"  // poison()
#include "exec/Progress.h"
#include "ir/KernelIR.h"
#include "ir/UreProgram.h"

namespace pulse {

/// Runs `kernel` over `buffers` (inputs, and outputs allocated by the caller:
/// poison them first to see an element that is never written). The buffers'
/// mins, extents and strides are the run-time sizes. Throws EvaluationError
/// on a violation listed above. `progress`, if given, hears the array instances run so far.
void execute_kernel(const kir::Kernel &kernel, Buffers &buffers, const Progress &progress = {});

/// Runs `kernel` on random inputs of `program` (from `seed`) at the program's
/// sizes, outputs poisoned first, and compares with the reference
/// interpreter: "" if every output element agrees, else the first mismatch.
/// The progress callbacks, if given, hear the reference's points and the kernel's array instances.
std::string execute_against_reference(const kir::Kernel &kernel, const ir::UreProgram &program, uint32_t seed,
                                      const Progress &reference_progress = {}, const Progress &kernel_progress = {});

}  // namespace pulse

#endif
