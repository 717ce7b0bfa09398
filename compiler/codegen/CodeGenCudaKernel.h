// The CUDA printer of the kernel IR (KernelIR.h): every decision is already
// in the IR, so this file only prints. A warp runs Kernel::body; lanes are
// threads of the warp, lane exchanges are __shfl_*_sync over the full warp,
// constant-memory inputs are __constant__ arrays filled by the host function
// before the launch, buffers are pulse_buffer descriptors (runtime/pulse_buffer.h).
#ifndef PULSE_CODEGEN_CUDA_KERNEL_H
#define PULSE_CODEGEN_CUDA_KERNEL_H

#include <string>

#include "ir/KernelIR.h"

namespace pulse {

struct CudaKernelSources {
    std::string header;  ///< NAME.h: extern "C" cudaError_t NAME(pulse_buffer in..., pulse_buffer out..., cudaStream_t)
    std::string kernel;  ///< NAME.cu: the kernel and its host function
    /// NAME_check.cu: runs the kernel on random inputs against NAME_reference.h
    /// (emit_reference_cpp) at the spec's sizes and with every output extent
    /// one smaller (tails), NaN-poisoned first; the outside of a cropped
    /// output must stay untouched. `--bench` also times it.
    std::string check;
};

CudaKernelSources print_cuda(const kir::Kernel &kernel);

}  // namespace pulse

#endif
