// The kernel pass list (after lower_to_kernel), run in this order by
// optimize_kernel, each in its own file:
//   1. place_uniform_inputs  (PlaceUniformInputs.h) lane-uniform inputs of a
//                            size known at generation time to constant memory.
//   2. hoist_loads           (HoistLoads.h) each load issued once, at the top
//                            of its array instance: the register window.
//   3. slide_windows         (SlideWindows.h) loads a per-thread loop's next
//                            iteration repeats stay in registers.
//   4. prefetch_loads        (PrefetchLoads.h) a per-thread loop's loads issued
//                            one iteration ahead, where the kernel asks.
//   5. peel_loops            (PeelLoops.h) a rolled time loop's first and last
//                            blocks run outside it, its middle ones without
//                            the conditions that single those out.
//   6. stage_in_shared       (StageInShared.h) inputs cached in shared memory
//                            are copied there per array instance and read there.
//   7. specialize_interior   (SpecializeInterior.h) warps whose every access is
//                            inside its buffer run a copy without guards.
//   8. exchange_across_warps (ExchangeAcrossWarps.h) an array spread over
//                            several warps moves values across them through
//                            shared memory and barriers.
// The IR is simplified after each pass.
#ifndef PULSE_KERNEL_PASSES_H
#define PULSE_KERNEL_PASSES_H

#include <iosfwd>
#include <string>
#include <vector>

#include "ir/KernelIR.h"

namespace pulse {

struct KernelPassOptions {
    std::ostream *trace = nullptr;   ///< where to print the IR after passes
    std::string print_after;         ///< a pass name, or "all"
    std::ostream *timing = nullptr;  ///< where to print each pass's time
    /// The target has a constant bank the host fills before the launch
    /// (CUDA's __constant__). Without one (CM) place_uniform_inputs is
    /// skipped: lane-uniform reads stay reads of the buffer, which the CM
    /// printer issues as scalar block reads.
    bool constant_memory = true;
    /// Loads may be kept in registers across an array instance (hoist_loads)
    /// and across a per-thread loop (slide_windows, prefetch_loads): a CUDA
    /// lane has up to 255 registers. A target whose register file is much
    /// smaller (a CM thread on Gen9: 4 KiB for all its lanes, an eighth of a
    /// warp's) skips them and loads each value where it is used.
    bool register_window = true;
};

/// lower_to_kernel, then the passes above, in order (for --print-after).
std::vector<std::string> kernel_pass_names();

/// Runs the passes above on `kernel`.
void optimize_kernel(kir::Kernel &kernel, const KernelPassOptions &options);
void optimize_kernel(kir::Kernel &kernel);

}  // namespace pulse

#endif
