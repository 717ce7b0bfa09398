// Pass: in each array instance's straight-line code, every load that uses
// no value bound inside the instance is issued once, at its top: rows shared
// by unrolled iterations of a per-thread loop form a register window, and a
// value each lane reads at several steps is loaded once.
#ifndef PULSE_HOIST_LOADS_H
#define PULSE_HOIST_LOADS_H

#include "ir/KernelIR.h"

namespace pulse {

void hoist_loads(kir::Kernel &kernel);

}  // namespace pulse

#endif
