// Running a kernel at run-time sizes smaller than its spec's: every output
// cropped, the cropped-off part of its storage poisoned and watched.
#ifndef PULSE_TEST_CROPPED_RUN_H
#define PULSE_TEST_CROPPED_RUN_H

#include <string>

#include "exec/Interpreter.h"
#include "ir/KernelIR.h"

namespace pulse::test {

/// Runs `kernel` on `inputs` with each output of `expected` (the reference at
/// the spec's sizes) cropped by `crop` elements in every dimension wider than
/// `crop`, outputs poisoned first. Returns "" if every cropped output equals
/// the reference inside its extents and its storage outside them stayed
/// poisoned, else what differs (or the executor's error).
std::string run_cropped_against_reference(const kir::Kernel &kernel, const Buffers &inputs, const Buffers &expected, int crop);

}  // namespace pulse::test

#endif
