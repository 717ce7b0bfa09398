// Which values of a kernel body (KernelIR.h) differ between the lanes of a
// warp. A printer for a SIMD target (CodeGenCM.h) keeps those in vectors and
// the rest, the same on every lane, in scalars.
#ifndef PULSE_IR_LANE_VARYING_H
#define PULSE_IR_LANE_VARYING_H

#include <set>
#include <string>

#include "ir/KernelIR.h"

namespace pulse {

/// The lets and register arrays of a kernel body that may differ between
/// lanes: those computed from `lane`, from a chain source (a lane index), or
/// from another such value; a register array also when it is written under a
/// guard that differs between lanes. A shuffle of a value the same on every
/// lane is that value. A name bound more than once (peeled iterations) is
/// varying if any binding is.
class LaneVarying {
public:
    explicit LaneVarying(const Halide::Internal::Stmt &body);

    /// True if the let or register array `name` may differ between lanes.
    bool has(const std::string &name) const { return names.count(name) > 0; }

    /// True if `e` may differ between lanes.
    bool varies(const Halide::Expr &e) const;

private:
    std::set<std::string> names;
    void walk(const Halide::Internal::Stmt &s, bool under_varying_guard);
};

}  // namespace pulse

#endif
