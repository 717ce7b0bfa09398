// The OpenCL backend: prints the kernel IR (KernelIR.h) of an Intel target
// (lower_to_target for Target::cm_gen9(), the kernel the CM backend prints)
// as OpenCL C with Intel's sub-group extension (cl_intel_subgroups), so that
// any Intel GPU runs it through the distribution's OpenCL runtime. A
// sub-group is a warp of the kernel IR, a work-item a lane, a lane exchange
// a sub-group shuffle; each work-group is one sub-group. The sub-group size
// is the smallest of 8, 16 and 32 that holds the array's lanes, raised to a
// device's least size with -DPULSE_MIN_SUB_GROUP_SIZE=16 (pvc has no 8);
// lanes past the array idle, as in the CM kernel.
//
// OpenCL C has no templates: the language's scalar semantics are its own
// rendition of pulse/ScalarSemantics.h, one function per type
// (runtime/emitted/opencl_helpers.cl).
#ifndef PULSE_CODEGEN_OPENCL_H
#define PULSE_CODEGEN_OPENCL_H

#include <string>
#include <vector>

#include "codegen/GeneratedFile.h"
#include "ir/KernelIR.h"
#include "ir/UreProgram.h"

namespace pulse {

/// NAME.cl for `kernel`, the finished kernel IR of a CM target. Its
/// arguments: a __global pointer per buffer (kernel.buffers' order), then the
/// CM kernel's scalars (cm_scalar_parameters).
std::string print_opencl_kernel(const kir::Kernel &kernel);

/// The least sub-group size that holds `kernel`'s lanes: 8, 16 or 32.
int opencl_sub_group_size(const kir::Kernel &kernel);

/// NAME_opencl_host.cpp: runs NAME.cl (or a device binary) through the
/// OpenCL API on the first GPU and checks it against NAME_reference.h.
std::string print_opencl_host(const kir::Kernel &kernel);

/// NAME.cl, NAME_opencl_host.cpp and NAME_reference.h (from `source`,
/// inputs in `input_order`).
std::vector<GeneratedFile> print_opencl(const kir::Kernel &kernel, const ir::UreProgram &source,
                                        const std::vector<std::string> &input_order);

}  // namespace pulse

#endif
