// Compiling emitted kernels with Intel's offline GPU compiler, on any machine
// with Debian's packages and no Intel GPU (docs/backends.md, "Intel's
// compiler"):
//
//   CM      NAME_genx.cpp --clang++-14 -target spir64, runtime/cm_vc/cm/cm.h-->
//           LLVM IR --opt-14 + PulseGenX.so (tools/vc)--> genx IR
//           --llvm-spirv-14--> SPIR-V --ocloc -vc-codegen--> Gen ISA
//   OpenCL  NAME.cl --ocloc--> Gen ISA
//
// One binary per device, and what the compiler's ISA dump says of each kernel:
// registers, spills, instructions. Results are values; nothing here decides
// whether a spill is acceptable (the driver does).
#ifndef PULSE_TOOLS_INTEL_COMPILE_H
#define PULSE_TOOLS_INTEL_COMPILE_H

#include <string>
#include <vector>

namespace pulse {

/// The devices Pulse compiles for by default: kbl (Gen9.5, the source paper's
/// GPU), tgllp (Xe-LP), dg2 (Xe-HPG, Arc), pvc (Xe-HPC, Data Center GPU Max).
const std::vector<std::string> &intel_devices();

/// One device's compilation of one source.
struct IntelBuild {
    std::string device;
    bool compiled = false;
    std::string log;          ///< the failing step's command and output ("" when compiled)
    std::string binary;       ///< the device binary's path
    int kernels = 0;          ///< kernels the compiler emitted ISA for
    int grf_registers = 0;    ///< GRF registers a thread has (the ISA's numGRF)
    int grf_touched = 0;      ///< distinct GRF registers the instructions use
    int spill_bytes = 0;      ///< scratch memory for spilled registers (0: no spill)
    int instructions = 0;     ///< instructions in the ISA
    /// "kbl: 1 kernel, 57 of 128 GRF, 0 spill bytes, 310 instructions".
    std::string summary() const;
};

/// The programs the road of `cm` (true) or OpenCL (false) needs that this
/// machine lacks, and the fix; "" if it has them all.
std::string missing_intel_tools(bool cm);

/// Compiles the CM kernel NAME_genx.cpp (`source`) for each of `devices`,
/// writing the steps' files and NAME_genx_DEVICE.bin beside it.
std::vector<IntelBuild> compile_cm_for_intel(const std::string &source, const std::vector<std::string> &devices);

/// Compiles the OpenCL C file `source` for each of `devices`, writing
/// SOURCE_DEVICE.bin beside it.
std::vector<IntelBuild> compile_opencl_for_intel(const std::string &source, const std::vector<std::string> &devices);

}  // namespace pulse

#endif
