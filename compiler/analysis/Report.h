// The analysis report of a systolic design (--report, --report=json).
#ifndef PULSE_REPORT_H
#define PULSE_REPORT_H

#include <iosfwd>

#include "ir/SystolicProgram.h"

namespace pulse {

/// Text for a user (json = false) or JSON for scripts (json = true): PE range
/// and count, time range and steps, per variable dp/dt/history/dataflow class,
/// each input read as a function of (p, t), registers per PE, outputs per
/// step, PE utilization.
/// Most PE-steps of one array instance the report enumerates to count the
/// outputs stored per step; beyond it that count is left out (not estimated).
constexpr int64_t report_enumeration_limit = int64_t(1) << 22;

void print_report(std::ostream &out, const sys::SystolicProgram &program, bool json);

}  // namespace pulse

#endif
