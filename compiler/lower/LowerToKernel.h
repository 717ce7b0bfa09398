// Pass: map a systolic program onto GPU warps, producing the kernel IR.
//
// One warp runs one array instance at a time; lane l runs PEs pe_min + l*n
// .. pe_min + l*n + n - 1, n = ceil(PEs / 32) (one PE per lane when the
// array fits a warp; a move of dp PEs is a register copy inside a lane's
// block and a shuffle across its ends). The
// loops outside the array (instance loops) become either grid loops (each
// grid point a warp: gpu_blocks, or every instance loop when the schedule
// names none) or per-thread loops the warp runs in sequence; `tile` splits an
// instance loop, and the inner loop of a tile is unrolled, so the array runs
// of consecutive iterations sit in one straight-line block where later passes
// share their loads (a register window) and interleave their steps.
//
// Sizes: the extent of every instance loop is derived, at run time, from the
// extents of the output buffers (the loop must appear in an output index as
// a*v + terms of other loops, a > 0); stores are guarded by the output's
// bounds, so tails of every size are correct. The time loop is unrolled
// fully (histories become values of earlier steps) up to
// KernelOptions::max_unrolled_steps; a longer one is rolled into a serial
// loop over blocks of its period, each block unrolled, the values read
// across blocks carried in register arrays indexed by constants.
#ifndef PULSE_LOWER_TO_KERNEL_H
#define PULSE_LOWER_TO_KERNEL_H

#include "ir/KernelIR.h"
#include "ir/SystolicProgram.h"

namespace pulse {

/// Largest number of array steps (time steps times unrolled per-thread
/// iterations) the unrolled kernel body may hold.
constexpr int64_t kernel_unroll_limit = 8192;

/// Most PEs one lane runs (an array of up to 8 * 32 PEs fits a warp).
constexpr int64_t max_pes_per_lane = 8;
/// The most PEs one lane runs of a 2-D array on register slots: a block of
/// its grid (several values of the first row, every value of the second), so
/// that a move along either row crosses lanes only at the block's edge. 64
/// holds an 8 x 8 register tile of outputs, a GEMM thread's usual share.
constexpr int64_t max_pes_per_lane_two_dimensional = 64;

/// Mapping choices that are not part of the schedule.
struct KernelOptions {
    /// Most array steps (times unrolled per-thread iterations and PEs per
    /// lane) the kernel unrolls; beyond it the time loop is rolled by its
    /// period (see lower_to_kernel) where it has one.
    int64_t max_unrolled_steps = 1024;
    /// Per-thread loops over array instances issue each iteration's loads
    /// during the one before (prefetch_loads), at the cost of a second set
    /// of registers for the loaded values.
    bool prefetch_walks = false;
    /// Blocks of the kernel each SM must be able to hold at once (0: the
    /// compiler's choice): `__launch_bounds__(threads, n)` caps the registers
    /// per thread at what n blocks leave, spilling if the kernel needs more.
    /// CUDA only.
    int min_blocks_per_sm = 0;
    /// Shared memory a block's arrays may take (Kernel::max_shared_bytes):
    /// past 48 KiB the kernel uses dynamic shared memory, up to
    /// kir::max_opt_in_shared_bytes; larger runs of moves across warps and
    /// larger staged boxes fit, fewer blocks share an SM.
    int64_t max_shared_bytes = 48 * 1024;
    /// Inputs cached in shared memory are staged this many steps of a
    /// rolled loop at a time (Kernel::shared_steps) rather than whole per
    /// array instance. 0: whole.
    int64_t shared_steps = 0;
    /// With shared_steps: each run's copy loaded during the run before, into
    /// a second copy (Kernel::shared_double_buffer).
    bool shared_double_buffer = false;
    /// Plans BufferArg::required, what each input must cover (isl work of up
    /// to a fraction of a second); false where the kernel is only a probe of
    /// whether the mapping succeeds (the explorer's designs).
    bool plan_required_inputs = true;
    /// Kernel::dense_first_dimension: dimension 0 of every buffer in global
    /// memory indexed as dense (the host function refuses other strides);
    /// false (--strided-first-dimension) indexes it by its run-time stride.
    bool dense_first_dimension = true;
    /// PEs each thread of a linear array over the warps of a block
    /// (gpu_threads) runs, blocked as on one warp: fewer threads, fewer
    /// moves through shared memory and more registers per thread. 0: one
    /// per thread up to a block's 1024 threads, else the fewest that fit.
    /// On a 2-D array over the warps of a block (gpu_threads(x, y)): the
    /// values of y each warp runs on its threads' register slots
    /// (Kernel::warp_rows; nothing may move between PEs). 0: one.
    int64_t pes_per_thread = 0;
};

/// Lowers `program` to a kernel named `name` whose inputs come in
/// `input_order`. Throws CompileError when the array does not fit a warp,
/// when a schedule primitive cannot be honoured, or when an instance loop's
/// extent cannot be derived from the outputs.
kir::Kernel lower_to_kernel(const sys::SystolicProgram &program, const std::string &name,
                            const std::vector<std::string> &input_order, const KernelOptions &options = {});

}  // namespace pulse

#endif
