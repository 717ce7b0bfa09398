// Pass: a value that one let of a straight-line stretch binds and an earlier
// let of the stretch computes again inside its own expression is computed
// once: the let that binds it moves up to just before the first value that
// contains it, and every value that contains it reads the let.
//
// The systolic lowering computes a same-step chain along a lane's register
// slots statement by statement: every slot's F before any slot's H. Where F
// of slot v + 1 reads H of slot v at the same step (Gotoh's F from the H
// above), the lowering inlines H's definition into F, and H's own let then
// computes the same expression again (two more instructions a cell in the
// packed aligner: docs/benchmarks.md). nvcc merges equal expressions only
// where it can see they are equal; here one is wrapped in the relu that the
// let's simplification stripped. Lets of one chain have no store between
// them, and the IR's loads are safe anywhere, so a let moves up whenever
// every variable it reads is bound there.
#ifndef PULSE_SHARE_RECOMPUTED_VALUES_H
#define PULSE_SHARE_RECOMPUTED_VALUES_H

#include "ir/KernelIR.h"

namespace pulse {

/// In each chain of LetStmts of `kernel`'s body: where the value of a let
/// (not a variable, constant or lane exchange) appears inside the value of
/// an earlier let of the chain, and every variable of the chain it reads is
/// bound before that earlier let, the let moves to just before it, and each
/// occurrence of its value in the chain's values reads the let instead.
void share_recomputed_values(kir::Kernel &kernel);

}  // namespace pulse

#endif
