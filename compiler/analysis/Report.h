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

/// The figures of merit of a systolic design, as data: what --report prints
/// and what the design-space explorer ranks by.
struct DesignMetrics {
    std::string design_class;          ///< one letter per variable, merge order (e.g. SBM)
    std::vector<std::pair<std::string, sys::Dataflow>> dataflow;  ///< every variable's class
    std::vector<std::string> forward;  ///< "s = c + q", "t = q"
    int64_t pe_count = 0, steps = 0;
    int64_t domain_points = 0;         ///< iteration points of one array instance
    double utilization = 0;            ///< domain points / (PEs x steps)
    int64_t registers_per_pe = 0;      ///< sum over variables of history + 1
    /// Output stores of one array instance and the most in one step; -1 where
    /// PEs x steps exceeds report_enumeration_limit (not estimated).
    int64_t outputs = -1, outputs_per_step = -1;
    double outturn = -1;               ///< outputs / steps: outputs per step on average (-1: not counted)
    /// Per output (-1: outputs not counted): lane exchanges (reads of a
    /// value from another lane) and input loads (a stationary read once per
    /// PE, a broadcast one once per step, any other once per point).
    double exchanges_per_output = -1, loads_per_output = -1;
    /// Lane exchanges each lane makes in one step: a tap with dp != 0 counts
    /// one; on a 2-D array of n PEs per lane, min(|dp|, n) (its slots whose
    /// source is on another lane).
    int64_t exchanges_per_step = 0;
    int64_t warps = 0;                 ///< warps of 32 lanes one array instance needs
    bool fits_warp() const { return pe_count <= 32; }
};

DesignMetrics analyze_design(const sys::SystolicProgram &program);

void print_report(std::ostream &out, const sys::SystolicProgram &program, bool json);

}  // namespace pulse

#endif
