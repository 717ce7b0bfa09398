// The pass list. Each pass is a free function in its own file pair; this is
// the one place that says in which order they run.
#ifndef PULSE_PIPELINE_H
#define PULSE_PIPELINE_H

#include <iosfwd>
#include <vector>

#include "ir/SystolicProgram.h"
#include "ir/UreProgram.h"
#include "analysis/Validate.h"

namespace pulse {

/// The passes that every spec goes through when it is lowered (Func::lower):
///   1. analyze_dependences   (AnalyzeDependences.h) uniform dependences, input accesses
///   2. compute_reference_order (ReferenceOrder.h)   loop directions of the reference order
///   3. check_schedule        (CheckSchedule.h)      tile factors, stagings
void run_front_passes(ir::UreProgram &program);

/// The passes from a lowered URE program to the systolic IR:
///   4. check_well_defined    (CheckWellDefined.h) reads inside the domain and defined, outputs written once
///   5. validate_transform    (Validate.h)         data and processor availability, with isl
///   6. lower_to_systolic     (LowerToSystolic.h)  reverse map (ReverseTransform.h), taps, guards
/// Throws CompileError if the program has no space-time transform or it is invalid.
/// `validation`, when given, receives what the validator checked (per
/// dependence); `timing`, when given, one line per pass with its time.
sys::SystolicProgram compile_to_systolic(const ir::UreProgram &program, std::vector<DependenceTiming> *validation = nullptr,
                                         std::ostream *timing = nullptr);

}  // namespace pulse

#endif
