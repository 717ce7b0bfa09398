// Pass: on a target whose indices are 32-bit, compare 64-bit index
// arithmetic in 32 bits.
//
// The kernel IR guards loads and stores with 64-bit comparisons (a buffer's
// min and extent are 64-bit fields). An Intel GPU has no 64-bit vector
// compare worth the name (Xe-LP and Xe-HPG emulate 64-bit integers; on Gen9
// each 64-bit vector of 16 lanes takes four registers), and a CM kernel's
// indices are 32-bit anyway: surfaces take 32-bit element offsets and the
// buffer fields are int kernel arguments (CmArguments.h). Measured through
// Intel's compiler, conv1d_ffs's 64-bit guards were what made it spill
// (docs/backends.md, "Intel's compiler"). For targets with 32-bit indices
// (Target::has_32_bit_indices).
#ifndef PULSE_NARROW_INDEX_COMPARISONS_H
#define PULSE_NARROW_INDEX_COMPARISONS_H

#include "ir/KernelIR.h"

namespace pulse {

/// Rewrites each comparison of two Int(64) operands that are index
/// arithmetic (IndexArithmetic.h) or constants in 32-bit range as the same
/// comparison of Int(32) operands: a widening cast is taken off, anything
/// else is cast to Int(32). The result equals the original wherever the
/// indices fit 32 bits, which the target guarantees.
void narrow_index_comparisons(kir::Kernel &kernel);

}  // namespace pulse

#endif
