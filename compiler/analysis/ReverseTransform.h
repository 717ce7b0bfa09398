// Pass: invert the space-time transform on the bounded domain.
#ifndef PULSE_REVERSE_TRANSFORM_H
#define PULSE_REVERSE_TRANSFORM_H

#include "ir/UreProgram.h"

namespace pulse {

struct ReverseMap {
    /// One Expr per source loop (SpaceTimeTransform::source_loops order), over
    /// Variables named after the destination loops (space, time).
    std::vector<Halide::Expr> source_of;
    /// True iff (space, time) has a preimage in the bounded domain.
    Halide::Expr has_preimage;
    std::string how;  ///< "unimodular inverse", "isl quasi-affine inverse", "user reverse transform (verified)"
};

/// Square unimodular matrices are inverted exactly; other matrices are
/// inverted as a quasi-affine map with isl on the bounded domain; a user's
/// reverse transform is verified to invert the forward map on the domain
/// (CompileError with a witness point if not).
ReverseMap compute_reverse_map(const ir::UreProgram &program);

}  // namespace pulse

#endif
