// Affine forms of loop-variable expressions: the bridge from Halide Exprs to
// integer linear algebra (bounds of input reads, the isl model).
#ifndef PULSE_AFFINE_H
#define PULSE_AFFINE_H

#include <optional>

#include "ir/UreProgram.h"

namespace pulse {

/// constant + sum_i coefficient[i] * loop_i, loops as in UreProgram::loops.
struct AffineForm {
    int64_t constant = 0;
    std::vector<int64_t> coefficient;

    int64_t evaluate(const std::vector<int64_t> &point) const;
    /// Smallest and largest value over the box of the loops' bounds.
    std::pair<int64_t, int64_t> range(const std::vector<ir::Loop> &loops) const;
};

/// The affine form of `e` over `loops`, or nothing if `e` is not affine in them.
std::optional<AffineForm> to_affine(const Halide::Expr &e, const std::vector<ir::Loop> &loops);

/// Whether the value of `e` may change with the variable `var`: false when
/// `var` appears only in integer sums and products by constants in which its
/// coefficient cancels (s*2 + (t - s*2), which Halide's simplifier leaves
/// as written). The integers wrap, so a cancelled coefficient leaves the
/// value independent of `var` even where the sum overflows.
bool varies_with(const Halide::Expr &e, const std::string &var);

}  // namespace pulse

#endif
