// Pass: rewrite how a value of a URE program travels, keeping what it computes:
// an input carrier read in place or forwarded along a direction, a reduction
// accumulated the other way along its loop (the carriers and reductions of
// analysis/FindPropagations.h). The design-space explorer (tools/Explore.h)
// builds its propagation variants with these.
//
// The rewrites change UREs' values only: the program's dependences, input
// accesses and reference order are left those of the UREs before, until
// reanalyze recomputes them.
#ifndef PULSE_PROPAGATION_REWRITES_H
#define PULSE_PROPAGATION_REWRITES_H

#include <string>
#include <vector>

#include "analysis/FindPropagations.h"
#include "ir/UreProgram.h"

namespace pulse {

/// The carrier reads its input in place: `U(x) = in(f(x))`.
void read_carrier_in_place(ir::UreProgram &program, const Carrier &carrier);

/// The carrier forwarded along `direction` (over `source_loops`, one of
/// carrier.directions): `U(x) = select(x - d outside the domain, in(f(x)), U(x - d))`,
/// a copy chain whose first points, where x - d leaves the domain, load the
/// input. d is `direction` on the source loops and 0 on the other loops.
void forward_carrier(ir::UreProgram &program, const Carrier &carrier, const std::vector<std::string> &source_loops,
                     const std::vector<int64_t> &direction);

/// The reduction accumulated the other way along its loop k: its start
/// condition and every output's condition mirrored (k -> min + max - k), its
/// self call at distance -d instead of d.
void reverse_reduction(ir::UreProgram &program, const Reduction &reduction);

/// The front passes (lower/Pipeline.h) run again on rewritten UREs: the
/// dependences, input accesses and reference order recomputed. Throws
/// CompileError where they fail, e.g. when no sequential order of the loops
/// computes the UREs (a reduction reversed against a chain that needs the
/// loop run the other way).
void reanalyze(ir::UreProgram &program);

}  // namespace pulse

#endif
