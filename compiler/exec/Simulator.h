// The systolic simulator: executes a SystolicProgram exactly as a SIMD machine
// would (all lanes read, then all write, each step).
#ifndef PULSE_SIMULATOR_H
#define PULSE_SIMULATOR_H

#include "exec/Progress.h"
#include "ir/SystolicProgram.h"

namespace pulse {

/// Runs every array instance on the CPU and returns each output's buffer.
/// `progress`, if given, hears the array instances done so far.
Buffers simulate(const sys::SystolicProgram &program, const Buffers &inputs, const Progress &progress = {});

/// Compares two sets of output buffers; returns "" if equal within a relative
/// tolerance (float types; a computed NaN equals a computed NaN, the poison
/// of InputRegions.h's poison() the poison only) or exactly (integers), else
/// the first mismatch.
std::string compare_outputs(const Buffers &expected, const Buffers &actual, double tolerance = 1e-5);

}  // namespace pulse

#endif
