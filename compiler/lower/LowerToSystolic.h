// Pass: lower a validated URE program to the systolic IR.
#ifndef PULSE_LOWER_TO_SYSTOLIC_H
#define PULSE_LOWER_TO_SYSTOLIC_H

#include "ir/SystolicProgram.h"

namespace pulse {

/// Inverts the transform (ReverseTransform.h) and rewrites every URE over
/// (space, time, instance loops) with taps. The transform must already be
/// valid (Validate.h; compile_to_systolic in Pipeline.h runs both).
sys::SystolicProgram lower_to_systolic(const ir::UreProgram &program);

}  // namespace pulse

#endif
