// The CM backend: prints a systolic program (SystolicProgram.h) as an Intel C
// for Metal kernel in which each SIMD lane of a `vector<T, NPE>` is one PE,
// with host code that runs it through Level Zero, and a harness that runs it on
// Pulse's CPU emulation of CM (runtime/cm_emu/cm/cm.h).
#ifndef PULSE_CODEGEN_CM_H
#define PULSE_CODEGEN_CM_H

#include <string>
#include <vector>

#include "ir/SystolicProgram.h"

namespace pulse {

/// The register file of the GPU a kernel is generated for. A CM kernel keeps
/// every vector in the general register file (GRF); one that does not fit
/// spills to memory, which defeats the systolic design, so Pulse rejects it.
struct CmTarget {
    std::string name = "Gen9";
    int grf_registers = 128;  ///< registers per hardware thread
    int grf_bytes = 32;       ///< bytes per register
    int64_t bytes() const { return (int64_t)grf_registers * grf_bytes; }
    /// Gen9 (Skylake and later integrated graphics): 128 registers of 32 bytes.
    static CmTarget gen9() { return CmTarget{}; }
};

/// One entry of a kernel's register footprint.
struct CmRegisterUse {
    std::string what;
    int64_t bytes = 0;  ///< rounded up to whole registers
};

/// The register footprint of the kernel emit_cm would print for `program`:
/// histories, current values, taps, loaded inputs, I/O staging, lane indices
/// and a reserve for the thread payload and scalars.
struct CmRegisterPlan {
    std::vector<CmRegisterUse> uses;
    int64_t bytes = 0;      ///< total
    int64_t available = 0;  ///< the target's GRF
};

/// Estimates the GRF bytes the generated kernel needs on `target`.
CmRegisterPlan plan_cm_registers(const sys::SystolicProgram &program, const CmTarget &target);

/// The kernel source, NAME_genx.cpp. Throws CompileError if the design does not
/// fit the target's GRF or uses something the CM backend cannot print.
std::string emit_cm_kernel(const sys::SystolicProgram &program, const std::string &name,
                           const std::vector<std::string> &input_order, const CmTarget &target);

/// The host program, NAME_host.cpp: runs the kernel through Level Zero on
/// random inputs and checks it against the emitted reference.
std::string emit_cm_host(const sys::SystolicProgram &program, const std::string &name,
                         const std::vector<std::string> &input_order);

/// The CPU harness, NAME_emu.cpp: the kernel on the CM emulation, the emitted
/// reference, random non-zero inputs, NaN-poisoned outputs; prints PASS or the
/// first mismatch. Takes the instance count and a seed on its command line.
std::string emit_cm_emulation_harness(const sys::SystolicProgram &program, const std::string &name,
                                      const std::vector<std::string> &input_order);

/// Writes NAME_genx.cpp, NAME_host.cpp and NAME_reference.h into `directory`
/// (created if missing).
void emit_cm(const sys::SystolicProgram &program, const std::string &name, const std::vector<std::string> &input_order,
             const std::string &directory, const CmTarget &target);

/// emit_cm, plus NAME_emu.cpp and the CM emulation it includes
/// (write_cm_emulation_header), so the directory builds on its own.
void emit_cm_emulation(const sys::SystolicProgram &program, const std::string &name,
                       const std::vector<std::string> &input_order, const std::string &directory, const CmTarget &target);

/// The host C++ compiler: $CXX if set, else c++.
std::string host_cxx_compiler();

/// Writes Pulse's CPU emulation of CM (runtime/cm_emu/cm/cm.h, carried in the
/// library) as DIRECTORY/cm_emu/cm/cm.h; returns DIRECTORY/cm_emu, the
/// directory to add to the include path.
std::string write_cm_emulation_header(const std::string &directory);

/// The command that compiles `source` into `binary` against the CM emulation
/// in the cm_emu folder beside `source` (write_cm_emulation_header).
std::string cm_emulation_compile_command(const std::string &source, const std::string &binary);

/// Runs a shell command; returns its exit status and fills `output` with its
/// standard output and error.
int run_command(const std::string &command, std::string *output);

}  // namespace pulse

#endif
