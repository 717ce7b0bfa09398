// Runs the kernel IR on the CPU exactly as a GPU would run the printed code:
// every warp of the grid in turn, its 32 lanes in lock step, lane exchanges
// reading the other lanes' values, loads and stores through the buffers'
// run-time sizes, integer arithmetic in the IR's types (wrap-around, Halide's
// division), float32 rounded after every operation. It also checks what the
// hardware would not: a lane exchange inside divergent code, a loop whose
// bounds differ between lanes, a load or store outside its buffer.
#ifndef PULSE_KERNEL_EXECUTOR_H
#define PULSE_KERNEL_EXECUTOR_H

#include "exec/Progress.h"
#include "ir/KernelIR.h"
#include "ir/UreProgram.h"

namespace pulse {

/// Runs `kernel` over `buffers` (inputs, and outputs allocated by the caller:
/// poison them first to see an element that is never written). The buffers'
/// mins, extents and strides are the run-time sizes. Throws EvaluationError
/// on a violation listed above. `progress`, if given, hears the warps run so far.
void execute_kernel(const kir::Kernel &kernel, Buffers &buffers, const Progress &progress = {});

/// Runs `kernel` on random inputs of `program` (from `seed`) at the program's
/// sizes, outputs poisoned first, and compares with the reference
/// interpreter: "" if every output element agrees, else the first mismatch.
/// The progress callbacks, if given, hear the reference's points and the kernel's warps.
std::string execute_against_reference(const kir::Kernel &kernel, const ir::UreProgram &program, uint32_t seed,
                                      const Progress &reference_progress = {}, const Progress &kernel_progress = {});

/// Fills `buffer` with values no kernel computes by accident: NaN for floats,
/// 0x5A bytes for integers.
void poison(Halide::Buffer<> &buffer);

}  // namespace pulse

#endif
