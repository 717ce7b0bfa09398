// The systolic IR: a linear array of PEs running in lock step. It is what the
// space-time transform lowers a URE program to (LowerToSystolic.h), what the
// simulator executes (Simulator.h), and what the backends start from: it is
// mapped onto warps as the kernel IR (LowerToKernel.h, KernelIR.h), which the
// CUDA and CM printers print (CodeGenCudaKernel.h, CodeGenCM.h).
//
// Semantics (one array instance; every assignment of the instance loops runs
// its own array, independently):
//
//   for t in [time_min, min(time_max, last_step)]:  // the time loop
//     for all lanes l in [0, pe_count) in lock step: // p = pe_min + l
//       active(l) = has_preimage(p, t) && data_active(p, t)
//       for each statement, in merge order:
//         every lane evaluates `value` (with CheckTime only active lanes do);
//         a tap (V, dp, dt) reads the value V got on lane l - dp at step t - dt;
//         dt = 0 reads a value of this step: an earlier statement (dp = 0), or a
//           copy chain V(x) = V(x - d) along the lanes (dp != 0: a broadcast);
//         a recurrence statement writes V's value of (l, t) into V's history;
//         an output statement stores, on active lanes where its select is
//           taken, into the output at output_index.
//       Input loads and output stores happen only on active lanes, with or
//       without CheckTime; an inactive lane's other values are never read by
//       an active lane (the validator proves it: the transform is injective and
//       every tap an active lane takes reads a point of the domain).
#ifndef PULSE_SYSTOLIC_PROGRAM_H
#define PULSE_SYSTOLIC_PROGRAM_H

#include "ir/UreProgram.h"

namespace pulse {
namespace sys {

/// A read of a recurrence variable at a constant offset in lanes and steps.
struct Tap {
    std::string var;
    int64_t dp = 0;  ///< lanes: reads lane l - dp
    int64_t dt = 0;  ///< steps: reads step t - dt
    /// Instances: reads the instance i - di (one entry per instance loop);
    /// empty for the tap's own instance. Only with gpu_grid_sync.
    std::vector<int64_t> di;
    bool operator==(const Tap &o) const { return var == o.var && dp == o.dp && dt == o.dt && di == o.di; }
    bool crosses_instances() const { return !di.empty(); }
};

/// A value read by another array instance (a tap with di, gpu_grid_sync):
/// the producing PE writes it to global memory in the step it computes it,
/// and the reading PE loads it dt steps later, past the grid barriers
/// between. The guards are the read's condition (the conjuncts of its
/// selects over the loops alone, and the reader's point in the array),
/// over the space, time and instance variables: `reader_guard` at the
/// reading PE, `writer_guard` the same condition at the PE the value goes
/// to, so a PE writes only what another instance reads.
struct GridMove {
    Tap tap;
    Halide::Expr reader_guard, writer_guard;
};

/// Dataflow classes of Jo et al.: inputs/weights are Broadcast, Forwarded or
/// Stay; partial sums are Aggregated, Migrate or are Sedimented.
enum class Dataflow { Broadcast, Forwarded, Stays, Aggregated, Migrates, Sedimented };
const char *to_string(Dataflow d);
/// The one-letter code used in design names (B, F, S, A, M, S).
char dataflow_letter(Dataflow d);

/// A recurrence variable of the array: one register history per lane.
struct Variable {
    std::string name;
    Halide::Type type;
    int64_t history = 0;             ///< max dt over its taps: registers of past values per lane
    std::vector<Tap> taps;           ///< every distinct (dp, dt) at which it is read
    bool is_partial_sum = false;     ///< reads itself (accumulates); otherwise an input/weight carrier
    Dataflow dataflow = Dataflow::Stays;
};

/// One URE of the loop body, rewritten over (space, time, instance loops).
struct Statement {
    std::string ure;
    Halide::Type type;
    bool is_output = false;
    /// The value: source loop variables replaced by the reverse map (over the
    /// space and time variables), recurrence calls replaced by taps (make_tap).
    Halide::Expr value;
    /// For outputs: the element stored, one index per output argument, over
    /// the space, time and instance variables.
    std::vector<Halide::Expr> output_index;
    /// For reduction outputs: the operator, and the initial value over the
    /// same variables; `value` is what each active PE step contributes
    /// where it is defined.
    std::optional<ir::Reduction> reduction;
};

/// A read of an input, as a function of the space, time and instance variables.
struct InputRead {
    std::string input;
    std::string consumer;
    std::vector<Halide::Expr> index;
    bool stationary = false;         ///< depends on space (and instance) only: loaded once per lane
    bool broadcast = false;          ///< depends on time (and instance) only: one value for all lanes
};

/// One space row of the transform and its place in the linear PE index. A
/// two-dimensional array (two space rows) runs as a linear array whose PE
/// p = pe_min + sum over rows of stride * (s - min): the inner row has
/// stride 1, the outer row a stride of at least the inner row's extent, so
/// a move of (d_outer, d_inner) PEs is a move of d_outer * stride + d_inner
/// in p. Which row is inner follows the mapping: the row on a thread's
/// register slots (the default), or the row on the lanes when the rows map
/// to (lanes, warps) (gpu_threads naming both).
struct SpaceAxis {
    std::string var;        ///< the destination loop (s1, s2)
    int64_t min = 0, extent = 0;
    int64_t stride = 1;     ///< in the linear PE index
};

struct SystolicProgram {
    ir::UreProgram source;                   ///< the program it was lowered from
    /// The time loop and the linear PE variable: the space loop of a linear
    /// array, or, for a 2-D array, a variable named after both rows (s1.s2)
    /// whose value is the linear PE index p (SpaceAxis).
    std::string space_var, time_var;
    int64_t pe_min = 0, pe_count = 0;        ///< lanes l = p - pe_min in [0, pe_count)
    /// The space rows, in the transform's order: one for a linear array
    /// (stride 1, [pe_min, pe_min + pe_count)), two for a 2-D array.
    std::vector<SpaceAxis> space_axes;
    /// A 2-D array: the index in space_axes of the outer row (the larger
    /// stride), and whether the rows run on (lanes, warps) (gpu_threads(x, y))
    /// rather than (lanes, register slots).
    size_t outer_axis = 0;
    bool rows_on_warps = false;
    int64_t time_min = 0, time_max = -1;     ///< steps
    std::vector<ir::Loop> instance_loops;    ///< loops outside the transform, innermost first
    /// Source loop values at (p, t), one per source loop in the order of
    /// SpaceTimeTransform::source_loops (quasi-affine: may use / and %).
    std::vector<Halide::Expr> reverse;
    /// True iff (p, t) is the image of a point of the domain.
    Halide::Expr has_preimage;
    /// How `reverse` was obtained (ReverseMap::how): "unimodular inverse",
    /// "isl quasi-affine inverse" or "user reverse transform (verified)".
    /// Added after the first version of this header; printed by the report.
    std::string reverse_how;
    /// The data bounds (UreProgram::data_bounds), one value per instance
    /// each: `data_bounds[k]` over the instance loops, reading inputs,
    /// clamped into the bounded loop's [min, max + 1]; the
    /// variable data_bound_var(k) holds it in `data_active`, what they add to
    /// has_preimage at (p, t), and in `last_step`, the instance's last step
    /// with an active PE (at most time_max: every step after it is idle).
    /// Both undefined if there is none.
    std::vector<Halide::Expr> data_bounds;
    Halide::Expr data_active, last_step;
    bool check_time = false;
    std::vector<Variable> variables;         ///< merge order, recurrence UREs only
    std::vector<Statement> statements;       ///< merge order, all UREs
    std::vector<InputRead> input_reads;
    /// Taps that read another instance (gpu_grid_sync), with their guards.
    std::vector<GridMove> grid_moves;

    int64_t steps() const { return time_max - time_min + 1; }
    bool is_two_dimensional() const { return space_axes.size() == 2; }
    const SpaceAxis &outer_space_axis() const { return space_axes[outer_axis]; }
    const SpaceAxis &inner_space_axis() const { return space_axes[1 - outer_axis]; }
    const Variable &variable(const std::string &name) const;
};

/// The variable of SystolicProgram::data_bounds[k] (Int(32)): `data.bound.K`.
std::string data_bound_var(size_t k);

/// A tap as an Expr inside Statement::value.
Halide::Expr make_tap(Halide::Type type, const Tap &tap);
/// If `e` is a tap, returns true and fills `tap`.
bool is_tap(const Halide::Expr &e, Tap *tap = nullptr);
/// The taps `e` reads, each once, in the order met.
std::vector<Tap> taps_in(const Halide::Expr &e);

/// Prints the lowered program: time loop, lanes, statements with guards and taps.
void print(std::ostream &out, const SystolicProgram &program);

}  // namespace sys
}  // namespace pulse

#endif
