// Pass: refuse, before anything is printed, a kernel the CM backend has no
// form for on its target (Target::is_cm). The CM printer takes a kernel this
// pass accepted and only prints it.
//
// Refused (Refusal::UnsupportedByTarget, or Refusal::ResourceLimit for the
// registers): an array over several warps (a CM array is one hardware thread),
// inputs cached in shared memory or placed in a constant bank, buffers whose
// elements are not 32 bits (the dword scattered messages), element types
// with no CM equivalent, math functions (sqrt, exp, floor, ...),
// floating-point %, and a kernel whose register plan
// (plan_cm_registers) exceeds the target's GRF: it would spill.
#ifndef PULSE_CHECK_CM_SUPPORT_H
#define PULSE_CHECK_CM_SUPPORT_H

#include "ir/KernelIR.h"
#include "ir/Target.h"

namespace pulse {

/// Throws a CompileError (a refusal) naming what `kernel` uses that CM on
/// `target` cannot run, and the fix; returns if nothing.
void check_cm_support(const kir::Kernel &kernel, const CmTarget &target);

}  // namespace pulse

#endif
