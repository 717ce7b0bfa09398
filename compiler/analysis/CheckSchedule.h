// Pass: check the schedule records against the bounded loop nest.
#ifndef PULSE_CHECK_SCHEDULE_H
#define PULSE_CHECK_SCHEDULE_H

#include "ir/UreProgram.h"

namespace pulse {

/// Checks what the primitives could not check when they were called: every
/// tile factor divides its loop's extent, every staged source is an input or a
/// merged Func, every compute_at names a merged Func. Throws CompileError.
void check_schedule(const ir::UreProgram &program);

}  // namespace pulse

#endif
