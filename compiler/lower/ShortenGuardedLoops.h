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
// which need constant bounds. A bound that differs between the threads of
// an array stays a guard (the kernel executor runs the threads in lock step).
#ifndef PULSE_SHORTEN_GUARDED_LOOPS_H
#define PULSE_SHORTEN_GUARDED_LOOPS_H

#include "ir/KernelIR.h"

#include <optional>

namespace pulse {

/// The last value of `var` where `condition` holds, if the condition is
/// `var * k <= e` or `var * k < e` with k > 0 and e free of var once solved
/// for it (Halide's solver): it then holds exactly up to there.
std::optional<Halide::Expr> last_iteration(const Halide::Expr &condition, const std::string &var);

/// Cuts each serial loop inside an array instance whose body is one
/// IfThenElse (no else) true on a prefix of its iterations to that prefix.
void shorten_guarded_loops(kir::Kernel &kernel);

}  // namespace pulse

#endif
