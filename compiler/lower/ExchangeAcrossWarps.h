// exchange_across_warps: the last kernel pass, for arrays spread over the
// warps of a block (gpu_threads on the space loop, Kernel::warps_per_array
// > 1). Each move of values between the array's threads (`array_shift` by d,
// |d| < 32) becomes a warp shuffle for the threads whose source is in their
// own warp, and, for the |d| threads at each warp's edge whose source is in
// the neighbouring warp, a write to shared memory, a barrier and a read. A
// run of moves that do not read one another (one array step's) shares one
// barrier.
// A move marked through shared memory (a Func held there,
// `F.store_in(MemoryType::Shared)`) may span any number of warps below the
// array's threads: every thread writes the value (once per run, whatever
// the number of moves that read it), and every thread whose source lies
// inside the array reads its source's element after the barrier.
// Consecutive runs use the two halves of the shared array in turn (a phase
// kept in a register), so a half is written again only after a later
// barrier that every reader of it has passed: one barrier per run suffices.
// A run takes no more moves than a block's shared memory holds.
#ifndef PULSE_EXCHANGE_ACROSS_WARPS_H
#define PULSE_EXCHANGE_ACROSS_WARPS_H

#include "ir/KernelIR.h"

namespace pulse {

/// The shared memory one run of moves takes, as exchange_across_warps lays
/// it out: a slot per distinct value moved through shared memory and one per
/// other move across warps (none for a move by 0), each two halves of an
/// element per thread of the array. A run is cut where the next move would
/// take it past `budget` bytes (a run holds at least one move).
class ExchangeRunSize {
public:
    ExchangeRunSize(int threads, int64_t budget) : threads(threads), budget(budget) {}
    /// True if the run still fits with the move `shift` (an array_shift call) in it.
    bool fits(const Halide::Internal::Call *shift) const;
    void add(const Halide::Internal::Call *shift);

private:
    int threads;
    int64_t budget, bytes = 0;
    std::vector<Halide::Expr> published;
    int64_t bytes_with(const Halide::Internal::Call *shift) const;
};

/// The bytes of shared memory a block has for the runs of moves of `kernel`
/// (its static limit less the arrays already allocated: staged inputs).
int64_t exchange_budget(const kir::Kernel &kernel);

/// Lowers every array_shift of `kernel` as above; nothing to do for an array
/// of one warp. Throws CompileError for a move of 32 threads or more (of the
/// array's threads or more through shared memory), and a ResourceLimit
/// refusal where the shared arrays outgrow a block's static shared memory.
void exchange_across_warps(kir::Kernel &kernel);

}  // namespace pulse

#endif
