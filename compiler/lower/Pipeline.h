// The pass list, from the URE program to the finished kernel IR of a target.
// Each pass is a free function in its own file pair; this is the one place
// that says in which order they run, for which targets, and that times and
// prints them (--time-passes, --print-after).
//
// Front passes, on every spec when it is lowered (Func::lower):
//   analyze_dependences     (AnalyzeDependences.h) uniform dependences, input accesses
//   compute_reference_order (ReferenceOrder.h)     loop directions of the reference order
//   check_schedule          (CheckSchedule.h)      tile factors, stagings
// To the systolic IR (compile_to_systolic):
//   check_well_defined      (CheckWellDefined.h) reads inside the domain and defined, outputs written once
//   validate_transform      (Validate.h)         data and processor availability, with isl
//   lower_to_systolic       (LowerToSystolic.h)  reverse map (ReverseTransform.h), taps, guards
// To the kernel IR of a target (lower_to_target): lower_to_kernel
// (LowerToKernel.h), then the kernel passes, each followed by simplify_exact:
//   place_uniform_inputs  (PlaceUniformInputs.h) lane-uniform inputs of a size known at
//                         generation time to constant memory   [targets with a constant bank]
//   hoist_loads           (HoistLoads.h) each load issued once, at the top of its array
//                         instance: the register window        [targets keeping register windows]
//   slide_windows         (SlideWindows.h) loads a per-thread loop's next iteration
//                         repeats stay in registers            [targets keeping register windows]
//   prefetch_loads        (PrefetchLoads.h) a per-thread loop's loads issued one iteration
//                         ahead, where the kernel asks         [targets keeping register windows]
//   split_steady_state    (SplitSteadyState.h) a rolled loop's ramps (the skew filling and
//                         draining the array) split off, its steady middle without the
//                         comparisons of step and lane that single them out
//   peel_loops            (PeelLoops.h) a rolled time loop's first and last blocks run
//                         outside it, its middle ones without the conditions that single those out
//   stage_in_shared       (StageInShared.h) inputs cached in shared memory are copied there
//                         per array instance and read there
//   specialize_interior   (SpecializeInterior.h) warps whose every access is inside its
//                         buffer run a copy without guards
//   exchange_across_warps (ExchangeAcrossWarps.h) an array spread over several warps moves
//                         values across them through shared memory and barriers
#ifndef PULSE_PIPELINE_H
#define PULSE_PIPELINE_H

#include <iosfwd>
#include <string>
#include <vector>

#include "analysis/Validate.h"
#include "ir/KernelIR.h"
#include "ir/SystolicProgram.h"
#include "ir/Target.h"
#include "ir/UreProgram.h"
#include "lower/LowerToKernel.h"

namespace pulse {

/// What the pass runner reports as it goes.
struct PassTrace {
    std::ostream *timing = nullptr;  ///< one line per pass with its time ("pass NAME: T ms")
    std::ostream *ir = nullptr;      ///< where to print the IR after the passes print_after names
    std::string print_after;         ///< a pass of the lists above (from lower_to_systolic on), or "all"
};

/// The front passes: analyze_dependences, bound_input_reads,
/// compute_reference_order, check_schedule.
void run_front_passes(ir::UreProgram &program);

/// check_well_defined, validate_transform and lower_to_systolic. Throws
/// CompileError if the program has no space-time transform or it is invalid.
/// `validation`, when given, receives what the validator checked (per
/// dependence).
sys::SystolicProgram compile_to_systolic(const ir::UreProgram &program, std::vector<DependenceTiming> *validation = nullptr,
                                         const PassTrace &trace = {});

/// lower_to_kernel, then the kernel passes that apply to `target`: the
/// finished kernel IR its printer prints.
kir::Kernel lower_to_target(const sys::SystolicProgram &program, const std::string &name,
                            const std::vector<std::string> &input_order, const KernelOptions &options, const Target &target,
                            const PassTrace &trace = {});

/// The kernel passes that apply to `target`, on a kernel from lower_to_kernel.
void optimize_kernel(kir::Kernel &kernel, const Target &target, const PassTrace &trace = {});
/// optimize_kernel for CUDA.
void optimize_kernel(kir::Kernel &kernel);

/// The passes --print-after can name, in order: lower_to_systolic,
/// lower_to_kernel and the kernel passes.
std::vector<std::string> printable_pass_names();

}  // namespace pulse

#endif
