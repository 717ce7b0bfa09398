// How far a long CPU evaluation (interpreter, simulator) has come, for a
// command line that must not sit silent for seconds.
#ifndef PULSE_PROGRESS_H
#define PULSE_PROGRESS_H

#include <cstdint>
#include <functional>

namespace pulse {

/// Called now and then with the work done so far and the total, in units the
/// caller names (points, array instances); the callee decides what to print.
using Progress = std::function<void(int64_t done, int64_t total)>;

}  // namespace pulse

#endif
