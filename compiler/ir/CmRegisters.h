// The register footprint of a CM kernel printed from the kernel IR
// (CodeGenCM.h). A CM thread keeps its vectors in the general register file
// (GRF); a kernel that needs more spills to memory, which defeats a systolic
// design, so the backend rejects it with what is live at the peak.
#ifndef PULSE_IR_CM_REGISTERS_H
#define PULSE_IR_CM_REGISTERS_H

#include <string>
#include <vector>

#include "ir/KernelIR.h"
#include "ir/Target.h"

namespace pulse {

/// One entry of a kernel's register footprint.
struct CmRegisterUse {
    std::string what;
    int64_t bytes = 0;  ///< rounded up to whole registers
};

/// The register footprint of the printed kernel: the most bytes of vectors
/// and register arrays live at one point of the body, and a reserve (thread
/// payload and scalars, the lane indices, one I/O staging pair, expression
/// temporaries).
struct CmRegisterPlan {
    std::vector<CmRegisterUse> uses;  ///< the reserve, then what is live at the peak, by variable
    int64_t bytes = 0;                ///< total
    int64_t available = 0;            ///< the target's GRF
};

/// Lanes of the CM vectors that print `kernel`: the lanes its PEs occupy,
/// rounded up to a multiple of 8 (a dword scattered message moves 8 or 16
/// elements), at most a warp.
int cm_lanes(const kir::Kernel &kernel);

/// Estimates the GRF bytes the printed kernel needs on `target` by a
/// liveness scan of the kernel IR: each lane-varying value a vector of
/// cm_lanes, each register array N of them.
CmRegisterPlan plan_cm_registers(const kir::Kernel &kernel, const CmTarget &target);
/// The CompileError text for a plan over the target's GRF: the total, the
/// largest uses and the fix.
std::string cm_register_error(const kir::Kernel &kernel, const CmRegisterPlan &plan, const CmTarget &target);

}  // namespace pulse

#endif
