// Pass: split a loop where the comparisons of its body stop holding on
// every lane.
//
// A ragged batch's instance runs its steady loop into the drain: each PE's
// activity is `step < the instance's length + lane`, a comparison with a
// value read from the inputs (lengths(b)), so split_steady_state, which
// decides comparisons over constant ranges, keeps it in every step. Up to
// the first step where such a comparison can fail on some lane (solved for
// the loop variable, Halide's and_condition_over_domain over the lanes and
// solve_for_inner_interval), it holds on every lane: the loop is split
// there, the first part with those comparisons folded to true, the second
// as it was. A scalar kernel saves a test a step; a packed one
// (pack_instances) its masked register writes in the common iterations of
// the first part. Only comparisons of the loop variable, the lane and
// values the same on every lane and outside the loop are taken (the split
// point is then one for the warp). Runs after shorten_guarded_loops (the
// loop's run-time end), before pack_instances.
#ifndef PULSE_SPLIT_AT_DATA_BOUNDS_H
#define PULSE_SPLIT_AT_DATA_BOUNDS_H

#include "ir/KernelIR.h"

namespace pulse {

/// Splits each serial loop inside the array instances of `kernel` (one warp
/// an instance) at the first iteration where a comparison of its body with
/// a run-time value may fail on some lane, when that is not already the
/// loop's first iteration.
void split_at_data_bounds(kir::Kernel &kernel);

}  // namespace pulse

#endif
