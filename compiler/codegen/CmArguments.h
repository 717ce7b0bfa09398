// The argument list of a CM kernel printed from the kernel IR, shared by the
// kernel printer (CodeGenCM.cpp) and the host programs that launch it
// (CodeGenCMHost.cpp), so the two always agree: a surface per buffer, then
// each buffer's min, extent and stride per dimension, then the thread count.
#ifndef PULSE_CODEGEN_CM_ARGUMENTS_H
#define PULSE_CODEGEN_CM_ARGUMENTS_H

#include <string>
#include <vector>

#include "ir/KernelIR.h"

namespace pulse {

/// The element offset of `coords` in buffer `b` as a 32-bit expression: a
/// surface's offsets are 32-bit element offsets, and the Intel targets'
/// indices fit 32 bits (Target::has_32_bit_indices); the OpenCL kernel
/// indexes its pointers with it too (64-bit addressing is emulated there).
Halide::Expr intel_element_offset(const kir::BufferArg &b, const std::vector<Halide::Expr> &coords);

/// The kernel argument that holds the buffer field named `v` (BUFFER.min.D ->
/// BUFFER_minD), or "" if `v` is no buffer field of `kernel`.
std::string cm_field_argument(const kir::Kernel &kernel, const std::string &v);

/// The kernel's parameters, as declared by the _GENX_MAIN_ function.
std::vector<std::string> cm_kernel_parameters(const kir::Kernel &k);

/// The parameters after the surfaces: each buffer's min, extent and stride
/// per dimension (BUFFER_minD, ...), then `int warps`; the OpenCL kernel's too.
std::vector<std::string> cm_scalar_parameters(const kir::Kernel &k);
/// The same arguments (after the surfaces) as host expressions over the harness's arrays.
std::vector<std::string> cm_host_scalar_arguments(const kir::Kernel &k);

}  // namespace pulse

#endif
