// Pass: take a test that is the same on every lane and encloses lane
// exchanges (the interior test of specialize_interior) as a warp vote.
//
// With `if (warp_all(c))` the CUDA compiler knows the warp stays whole inside
// the branch and compiles the shuffles there without reconvergence code
// (WARPSYNC, ENDCOLLECTIVE); the vote's value is the test's, since the test is
// the same on every lane. Not inside a serial loop (a warp walking instances):
// there the vote measured slower than the reconvergence code it saves
// (docs/benchmarks.md). For targets with warp votes (Target::has_warp_vote).
#ifndef PULSE_VOTE_UNIFORM_TESTS_H
#define PULSE_VOTE_UNIFORM_TESTS_H

#include "ir/KernelIR.h"

namespace pulse {

/// Wraps in kir::warp_all the condition of each IfThenElse outside serial
/// loops whose condition is the same on every lane (LaneVarying) and whose
/// branches exchange values between lanes.
void vote_uniform_tests(kir::Kernel &kernel);

}  // namespace pulse

#endif
