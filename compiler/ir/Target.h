// The GPU a kernel is generated for: built once (from the command line, or by
// a test), read by the pass list (which passes run for it) and by the printers
// (what they print). Decisions that differ between backends live here, not in
// a printer.
#ifndef PULSE_IR_TARGET_H
#define PULSE_IR_TARGET_H

#include <cstdint>
#include <string>

namespace pulse {

/// The register file of an Intel GPU a CM kernel is generated for. A CM
/// kernel keeps every vector in the general register file (GRF); one that
/// does not fit spills to memory, which defeats the systolic design, so
/// Pulse rejects it.
struct CmTarget {
    std::string name = "Gen9";
    int grf_registers = 128;  ///< registers per hardware thread
    int grf_bytes = 32;       ///< bytes per register
    int64_t bytes() const { return (int64_t)grf_registers * grf_bytes; }
    /// Gen9 (Skylake and later integrated graphics): 128 registers of 32 bytes.
    static CmTarget gen9() { return CmTarget{}; }
};

struct Target {
    enum class Backend { Cuda, CM };
    Backend backend = Backend::Cuda;
    int cuda_arch = 90;  ///< sm_XX the CUDA kernel is built and measured for
    CmTarget cm;         ///< the GRF, for Backend::CM

    /// CUDA for sm_`arch`.
    static Target cuda(int arch = 90);
    /// C for Metal on a Gen9 GPU.
    static Target cm_gen9();

    bool is_cuda() const { return backend == Backend::Cuda; }
    bool is_cm() const { return backend == Backend::CM; }
    /// "cuda-sm_90", "cm-gen9": what --target names.
    std::string name() const;

    /// A constant bank the host fills before the launch (CUDA's
    /// __constant__): lane-uniform inputs of a size known at generation time
    /// go there (place_uniform_inputs). CM has none: such reads stay reads of
    /// the buffer, which the CM printer issues as scalar block reads.
    bool has_constant_bank() const { return is_cuda(); }
    /// Loads may be kept in registers across an array instance (hoist_loads)
    /// and across a per-thread loop (slide_windows, prefetch_loads): a CUDA
    /// lane has up to 255 registers. A CM thread on Gen9 has 4 KiB for all
    /// its lanes, an eighth of a warp's, so CM loads each value where it is
    /// used.
    bool keeps_register_windows() const { return is_cuda(); }
    /// A warp vote (CUDA's __all_sync) the compiler takes as a promise that
    /// the warp stays whole inside the branch it guards (vote_uniform_tests).
    bool has_warp_vote() const { return is_cuda(); }
};

}  // namespace pulse

#endif
