// Pass: peel the first and the last iteration off each loop of constant
// bounds inside an array instance (a rolled time loop).
//
// A rolled time loop's blocks differ only at the ends: the first block reads
// no carried values (selects on `block == 0`), the last one stores the
// outputs (stores under `block == last`). Peeled, the middle iterations run
// with those conditions folded away (the simplifier knows the loop's range),
// and the ends become straight-line code with constants: three copies of one
// block instead of every block unrolled. What the simplifier cannot prove from
// the range, an integer or boolean expression of the loop variable alone that
// is constant over the middle iterations (at most 256 of them, each
// evaluated), is folded too.
#ifndef PULSE_PEEL_LOOPS_H
#define PULSE_PEEL_LOOPS_H

#include "ir/KernelIR.h"

namespace pulse {

/// Peels loops of constant bounds and at least three iterations inside the
/// array instances of `kernel`.
void peel_loops(kir::Kernel &kernel);

}  // namespace pulse

#endif
