// The analysis report of a systolic design (--report, --report=json).
#ifndef PULSE_REPORT_H
#define PULSE_REPORT_H

#include <iosfwd>

#include "SystolicProgram.h"

namespace pulse {

/// Text for a user (json = false) or JSON for scripts (json = true): PE range
/// and count, time range and steps, per variable dp/dt/history/dataflow class,
/// each input read as a function of (p, t), registers per PE, outputs per
/// step, PE utilization.
void print_report(std::ostream &out, const sys::SystolicProgram &program, bool json);

}  // namespace pulse

#endif
