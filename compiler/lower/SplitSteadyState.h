// Pass: split a rolled loop inside an array instance at the ends of its
// steady state.
//
// A mesh's rolled time loop runs its first steps while the skew fills the
// array and its last ones while it drains: each PE's activity, its first
// step (no carried value yet) and its last (its output's store) are
// comparisons of the step with the lane (with the slot or the warp for the
// PEs of a lane or a block). Between the two ramps each such comparison takes
// one value on every lane and every step. The loop is split in three: the
// ramps keep the comparisons, and in the steady loop every comparison that is
// affine in the loop variable, the lane and the array's warp and takes one
// value over the steady range and all lanes is that constant (decided by
// interval arithmetic over its affine form: exact, no simplifier rule). Its
// loads then reach only where the instance's domain reads, where a ramp's
// reach past it (a lane's read before its first step), so specialize_interior
// can drop their guards. The split is made where the steady loop stores
// nothing, or only at one lane (under a test `lane == c`: a drain PE's
// store, as a pass over a query segment writes its last row): an
// output-stationary array, which stores each PE's outputs at its last steps
// (the drain), not an array that streams an output from every lane each
// step, whose tuned loop (peel_loops, a register budget) it leaves as it is.
// Runs before peel_loops, which peels each of the three loops.
#ifndef PULSE_SPLIT_STEADY_STATE_H
#define PULSE_SPLIT_STEADY_STATE_H

#include "ir/KernelIR.h"

namespace pulse {

/// A steady range of fewer iterations leaves the loop whole (three copies of
/// the body would cost more code than its few folded steps save).
constexpr int64_t min_steady_iterations = 8;

/// Splits each loop of constant bounds inside the array instances of
/// `kernel` whose comparisons single out steps near its ends, where the
/// steady range between has at least min_steady_iterations iterations.
void split_steady_state(kir::Kernel &kernel);

}  // namespace pulse

#endif
