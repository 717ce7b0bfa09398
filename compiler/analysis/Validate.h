// Pass: prove a space-time transform legal with isl, on the bounded domain.
#ifndef PULSE_VALIDATE_H
#define PULSE_VALIDATE_H

#include "ir/UreProgram.h"

namespace pulse {

/// The timing of one dependence under the transform.
struct DependenceTiming {
    const ir::Dependence *dependence = nullptr;
    int64_t dp = 0;  ///< lanes: P . d
    int64_t dt = 0;  ///< steps: s . d
    bool taken = true;  ///< false if the dependence is empty on the bounded domain (its branch never reads a domain point)
};

/// Checks the transform of `program` (which must have one):
///  - every dependence lies within the transform's source loops (a nonzero
///    distance in another loop would cross array instances);
///  - data availability: dt >= 1 for a computed value, dt >= 0 for a copy
///    chain (dt = 0 with dp != 0 is a broadcast);
///  - processor availability: x -> (P x, s x) is injective on the bounded
///    domain (isl; a rejection names two colliding points).
/// Returns the timing of every dependence; throws CompileError naming the
/// condition, the URE, the dependence, dp/dt and the bounds otherwise.
std::vector<DependenceTiming> validate_transform(const ir::UreProgram &program);

}  // namespace pulse

#endif
