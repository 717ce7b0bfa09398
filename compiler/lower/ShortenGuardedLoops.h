// Pass: a loop whose whole body runs under a condition that holds on a
// prefix of its iterations runs that prefix only.
//
// A ragged batch's instance (a data bound, `where(j < lengths(b))`) ends
// before the box's last step: the lowering runs each block of its rolled time
// loop under `first step of the block <= the instance's last step`. Solved
// for the loop variable (Halide's solve_for_inner_interval), that is an upper
// bound on it, read once per instance; the loop's extent is cut to it, so a
// short sequence takes its own steps, not the longest one's. Runs after the
// passes that split and peel those loops (split_steady_state, peel_loops),
// which need constant bounds.
#ifndef PULSE_SHORTEN_GUARDED_LOOPS_H
#define PULSE_SHORTEN_GUARDED_LOOPS_H

#include "ir/KernelIR.h"

namespace pulse {

/// Cuts each serial loop inside an array instance whose body is one
/// IfThenElse (no else) true on a prefix of its iterations to that prefix.
void shorten_guarded_loops(kir::Kernel &kernel);

}  // namespace pulse

#endif
