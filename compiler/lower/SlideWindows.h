// Pass: keep inputs re-read by consecutive iterations of a per-thread loop in
// registers (a sliding window; SSAM's register cache).
//
// Around a serial loop v whose body is one array instance, a hoisted load A
// whose coordinates at v + 1 are those of another load B at v reads, at each
// iteration, the value B loaded at the one before. A is then read from a
// register array (preloaded before the loop for the first iteration) and B's
// value stored there at the end of each iteration: for a 2-D convolution
// whose warp walks down a column strip RT rows at a time, K - 1 of the
// RT + K - 1 rows it reads come from registers instead of memory.
#ifndef PULSE_SLIDE_WINDOWS_H
#define PULSE_SLIDE_WINDOWS_H

#include "ir/KernelIR.h"

namespace pulse {

/// Rewrites the serial loops around array instances of `kernel` to carry
/// re-read loads in register arrays.
void slide_windows(kir::Kernel &kernel);

}  // namespace pulse

#endif
