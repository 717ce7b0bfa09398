// The kernel IR: what one warp of a GPU (or one hardware thread of CM) runs,
// between the systolic IR (what each PE computes at each step) and the text
// of a backend. Mapping decisions live here, made once by passes
// (LowerToKernel.h, the pass list in lower/Pipeline.h); the CUDA printer (CodeGenCudaKernel.h)
// only prints, and the CPU executor (KernelExecutor.h) runs the same IR.
//
// The body is a Halide Stmt, so Halide's IRPrinter, IRMutator, simplifier and
// substitution work on it unchanged. Every lane of a warp runs the body in lock
// step; the conventions on top of Halide's nodes are:
//   - LetStmt, Block, For (Serial or Unrolled; bounds are the same on every
//     lane), IfThenElse (a guard: lanes where it is false skip the branch).
//   - Register arrays: Allocate with MemoryType::Register, read and written by
//     Load/Store with constant indices only (so they stay in registers).
//   - Vectors (Halide's vector types, two lanes: several array instances'
//     values in one register, e.g. two instances' int16 packed in 32 bits):
//     a vector's lanes are independent, each with the language's semantics;
//     a load or store of a vector reads or writes each lane's element under
//     that lane's guard; a register array read as vectors is read only so,
//     at dense ramps from a multiple of the lanes (an array of vectors); a
//     lane exchange moves a vector whole, and a warp vote of a vector is
//     each lane's own vote. An if's condition and a loop's bounds are
//     scalars. pack_instances makes vectors of array instances; the CUDA
//     printer packs int16 pairs (runtime/emitted/pulse_vectors.cuh); CM
//     refuses vectors.
//   - Intrinsic calls (names below). Lane exchanges (shfl_*, ballot,
//     chain_source) read other lanes, so they appear only as the value of a
//     LetStmt outside any guard: every lane takes part.
//   - Global buffers are read by `load` and written by `store`, each with its
//     own bounds guard (the element lies inside the buffer), so a load is safe
//     wherever it is evaluated and passes may move or merge loads freely. A
//     table's loads (InputDecl::table_extents) have none: their indices are
//     clamped into the table, which every buffer given holds (BufferArg::required).
//   - Run-time sizes are variables BUFFER.min.D, BUFFER.extent.D and
//     BUFFER.stride.D (Int(64)); the array instance's index in the grid is
//     warp.index, the lane in its warp `lane`, and the warp in the array
//     `array.warp`. An array runs on Kernel::warps_per_array warps (one CUDA
//     block when more than one); its thread t = array.warp * 32 + lane runs
//     Kernel::pes_per_lane PEs (slots j = 0, 1, ...: PE pe_min +
//     t * pes_per_lane + j, or interleaved: Kernel::interleaved_rows); the
//     lowering writes each slot's PE index out, so the body names no PE variable.
//   - Arrays of several warps: `array_shift` moves values between the
//     array's threads; exchange_across_warps (ExchangeAcrossWarps.h) lowers
//     it to warp shuffles plus shared memory (Allocate with
//     MemoryType::GPUShared: one copy per array, Load/Store at run-time
//     indices) and `barrier`s. Between two barriers, no element of shared
//     memory is written by one warp and read or written by another.
//   - Block arrays (Kernel::block_arrays): shared memory one block fills
//     once (Kernel::block_setup, every warp of the block, before any array
//     instance runs) and its instances only read, by Load, at any index,
//     a vector index included (each lane its own element): a table staged
//     whole.
//   - A Func held in shared memory (`F.store_in(MemoryType::Shared)`,
//     Kernel::shared_state): its moves are array_shifts marked "through
//     shared", of any distance below the array's threads; each step's values
//     are written to shared memory by every thread and read back by their
//     neighbours (a tile of the grid over the threads of a block).
//   - A grid-synchronised kernel (Kernel::grid_sync, the schedule's
//     gpu_grid_sync): every array instance runs at once, one per block, and
//     `grid_barrier`s (under no guard that differs between the threads of
//     a block, the same number on every instance) separate its steps. Values read by another instance go
//     through the grid exchange arrays (Kernel::grid_exchanges: global
//     memory, read and written by Load and Store at run-time indices):
//     written in one step, read only after a grid barrier. No pass moves an
//     access to an exchange array across a grid barrier.
#ifndef PULSE_KERNEL_IR_H
#define PULSE_KERNEL_IR_H

#include <algorithm>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/UreProgram.h"

namespace pulse {
namespace kir {

constexpr int warp_size = 32;
/// The lane in the warp (Int(32)), bound by the printer and the executor.
constexpr const char *lane_var = "lane";
/// The array instance's index in the grid (Int(64)), bound by the printer and the executor.
constexpr const char *warp_index_var = "warp.index";
/// The warp's index in its array, 0 .. warps_per_array - 1 (Int(32)).
constexpr const char *array_warp_var = "array.warp";
/// The warp's index in its block, 0 .. Kernel::block_warps() - 1 (Int(32)),
/// bound in Kernel::block_setup only.
constexpr const char *block_warp_var = "block.warp";
/// The most warps one array may span (one CUDA block of 1024 threads).
constexpr int max_warps_per_array = 32;
/// Static shared memory of one block (CUDA's limit without opting in to
/// more): the default of Kernel::max_shared_bytes.
constexpr int64_t shared_bytes_per_block = 48 * 1024;
/// The most shared memory one block may opt in to on sm_90 (H100, H200):
/// 227 KiB. Past shared_bytes_per_block the CUDA printer declares the
/// arrays in dynamic shared memory, and the host function checks the
/// device's opt-in limit before it launches.
constexpr int64_t max_opt_in_shared_bytes = 227 * 1024;

/// Where a buffer's elements live while the kernel runs.
enum class Placement {
    Global,    ///< device memory, read through the cache hierarchy
    Constant,  ///< a generation-time-sized region copied to constant memory at launch
};

/// Where an input's values stay between their load and their uses: the
/// schedule's `x.in(F).store_in(MemoryType)` (GPU-UniCache's choice).
enum class InputCache {
    Registers,  ///< loaded once per array instance into registers (hoist_loads, slide_windows): the default
    L1,         ///< loaded where used, through the L1 cache (store_in(MemoryType::Global))
    Shared,     ///< the box an array instance reads, staged in shared memory (stage_in_shared)
};
const char *to_string(InputCache cache);

/// The indices [min, max] of one dimension of an input that the outputs'
/// run-time extents need, where `when` holds (the outputs' sizes at which the
/// input is read at all): expressions over the buffers' sizes (buffer_min,
/// buffer_extent of the outputs).
struct RequiredRange {
    Halide::Expr when, min, max;
};

/// A buffer argument of the kernel: an input of the spec or an output URE.
struct BufferArg {
    std::string name;
    Halide::Type type;
    int dimensions = 0;
    bool is_output = false;
    Placement placement = Placement::Global;
    InputCache cache = InputCache::Registers;  ///< inputs only
    /// A table input (InputDecl::table_extents): read at clamped indices,
    /// with no bounds test; `required` asks for the whole table.
    bool table = false;
    /// For Placement::Constant: the region [min, min + extent) per dimension
    /// the kernel reads, known at generation time; stored dense, dimension 0
    /// innermost.
    std::vector<int64_t> region_min, region_extent;
    /// For an input: per dimension, [min, max] of the indices the spec's
    /// domain reads (infer_input_regions), which every buffer given covers.
    std::vector<std::pair<int64_t, int64_t>> domain_reads;
    /// For an input, per dimension: what it must cover for the outputs given
    /// at run time (required_input_ranges); none where that is not known (the
    /// host function then checks nothing there).
    std::vector<std::optional<RequiredRange>> required;
    int64_t region_elements() const;
};

/// A loop mapped onto the warps of the grid (the warp index decodes into
/// these, innermost fastest).
struct GridLoop {
    std::string var;
    int64_t min = 0;
    Halide::Expr extent;  ///< over the buffers' run-time sizes
};

/// Global memory of a grid-synchronised kernel where a PE writes the values
/// that PEs of other array instances read in later steps; the host function
/// allocates it for each launch. Element ((slot * instances + instance) *
/// per_instance + element): slot = the step's index % slots, instance =
/// warp.index, element = unrolled copy * pe_count + PE - pe_min.
struct GridExchange {
    std::string name;
    Halide::Type type;
    int64_t slots = 1;         ///< steps a value is kept: the longest read's dt + 1
    int64_t per_instance = 0;  ///< elements of one instance in one slot
    /// Elements for `instances` array instances.
    Halide::Expr elements(const Halide::Expr &instances) const;
};

/// A shared array of a block that Kernel::block_setup fills and the body
/// only reads (one copy for all the arrays of the block).
struct BlockArray {
    std::string name;
    Halide::Type type;
    int64_t elements = 0;
};

struct Kernel {
    std::string name;
    std::vector<BufferArg> buffers;  ///< inputs in the spec's order, then outputs
    std::vector<GridLoop> grid;      ///< innermost first
    int warps_per_block = 8;
    int64_t pe_count = 0;            ///< PEs of the array; lanes (slots) past them idle
    int64_t pe_min = 0;              ///< PE of lane 0, slot 0
    int64_t pes_per_lane = 1;        ///< PEs each thread runs (blocked: thread t holds PEs t*n .. t*n + n - 1)
    /// A 2-D array on register slots whose values never cross lanes: the
    /// PEs per column (its second row's extent), and thread t's slot
    /// j = c * rows + r runs the PE of column c * 32 + t, row r (columns
    /// interleaved over the lanes, so a warp's lanes hold consecutive columns
    /// and read consecutive addresses). 0: blocked, as above.
    int64_t interleaved_rows = 0;
    /// A 2-D array on (lanes, warps) (gpu_threads(x, y)) whose values never
    /// cross PEs, run as a tile of several PEs per thread: warp w runs the
    /// values w * warp_rows + r of y (r < warp_rows), lane l the values
    /// l + 32 c of x, and thread (w, l)'s slot j = c * warp_rows + r the PE
    /// of that pair. 0: not this mapping.
    int64_t warp_rows = 0;
    /// With warp_rows: lane l runs the values l C .. l C + C - 1 of x (C =
    /// pes_per_lane / warp_rows), not l + 32 c: chosen where the operands are
    /// staged in shared memory (whole or in runs), from which a thread's
    /// consecutive columns are one vector load, while unstaged ones coalesce
    /// in global memory across the lanes.
    bool warp_columns_blocked = false;
    int warps_per_array = 1;         ///< warps one array instance spans (a block of its own when > 1)
    bool prefetch_walks = false;     ///< per-thread loops issue their next iteration's loads early (prefetch_loads)
    /// Dimension 0 of every buffer in global memory is dense (stride 1, as in
    /// Halide by default): indexed without its stride, and the host function
    /// and the executor refuse a buffer with another. False: indexed by its
    /// run-time stride, any accepted (ptxas then makes other register and
    /// occupancy choices, which some kernels run faster with).
    bool dense_first_dimension = true;
    int min_blocks_per_sm = 0;       ///< blocks an SM must hold at once (CUDA __launch_bounds__); 0: no bound
    /// Instances of the grid loop each warp runs as the lanes of vectors (the
    /// schedule's vectorize; pack_instances): 1, or 2, when grid[0] counts
    /// pairs of instances after that pass.
    int packed_lanes = 1;
    /// Shared memory one block's arrays may take (staged inputs, moves across
    /// warps): shared_bytes_per_block unless the schedule opts in to more,
    /// up to max_opt_in_shared_bytes.
    int64_t max_shared_bytes = shared_bytes_per_block;
    /// Inputs cached in shared memory (InputCache::Shared, not tables) are
    /// staged per run of this many iterations of each rolled loop that reads
    /// them (stage_in_shared): the box a run reads, copied before it, so that
    /// a long time loop's operands need only a run's worth of shared memory.
    /// 0: the box of the whole array instance.
    int64_t shared_steps = 0;
    /// With shared_steps: two copies of each staged box, so that a run's
    /// copy is loaded while the run before computes (one barrier a run).
    bool shared_double_buffer = false;
    /// Funcs whose values move between the array's threads through shared
    /// memory (`F.store_in(MemoryType::Shared)`), in the order declared.
    std::vector<std::string> shared_state;
    /// gpu_grid_sync: every instance resident at once (a cooperative
    /// launch), grid_barriers between steps, values across instances in
    /// grid_exchanges.
    bool grid_sync = false;
    std::vector<GridExchange> grid_exchanges;
    /// Shared arrays filled once per block, before any of its array
    /// instances runs (a table staged whole: stage_in_shared), then only
    /// read: every warp of the block runs `block_setup` (`lane` and
    /// `block.warp` bound; no lane exchanges), all of them before the
    /// warps past the grid leave, and the block then waits at a barrier.
    /// The body reads the arrays by Load; nothing stores to them there.
    std::vector<BlockArray> block_arrays;
    Halide::Internal::Stmt block_setup;
    /// Run by every warp; lanes in lock step.
    Halide::Internal::Stmt body;
    /// What the kernel computes, for the comment block of printed code.
    std::string description;

    const BufferArg &buffer(const std::string &name) const;
    BufferArg &buffer(const std::string &name);
    /// The grid exchange array `name`; nullptr if there is none.
    const GridExchange *grid_exchange(const std::string &name) const;
    /// The block array `name`; nullptr if there is none.
    const BlockArray *block_array(const std::string &name) const;
    /// Number of array instances the grid runs (each on warps_per_array
    /// warps): the product of the grid extents.
    Halide::Expr warp_count() const;
    /// Threads of one array: 32 * warps_per_array.
    int array_threads() const { return warps_per_array * warp_size; }
    /// The threads of an array that run at least one PE (blocked: the first
    /// ceil(pe_count / pes_per_lane); interleaved: one per column, up to the
    /// array's threads; tiles over warps: every thread).
    int64_t threads_in_use() const {
        if (warp_rows > 0) return array_threads();
        if (interleaved_rows > 0) return std::min<int64_t>((pe_count + interleaved_rows - 1) / interleaved_rows, array_threads());
        return (pe_count + pes_per_lane - 1) / std::max<int64_t>(pes_per_lane, 1);
    }
    /// Arrays one CUDA block runs: an array of several warps is a block of
    /// its own; arrays of one warp pack warps_per_block to a block.
    int arrays_per_block() const { return warps_per_array > 1 ? 1 : warps_per_block; }
    /// Warps of one CUDA block.
    int block_warps() const { return arrays_per_block() * warps_per_array; }
    /// Bytes of one block's shared memory: the body's arrays (one copy per
    /// array of the block) and the block arrays.
    int64_t block_shared_bytes() const;
};

/// Name of the ProducerConsumer node that wraps the straight-line code of one
/// array instance (inside the per-thread serial loops): passes that work on
/// straight-line code (load hoisting, interior specialization) start there.
constexpr const char *array_instance_marker = "pulse.array_instance";

// ---- intrinsics -----------------------------------------------------------
namespace intrinsic {
constexpr const char *shfl_up = "pulse.shfl_up";           ///< (v, d): v on lane - d (own v if lane < d)
constexpr const char *shfl_down = "pulse.shfl_down";       ///< (v, d): v on lane + d (own v past the warp)
constexpr const char *shfl_idx = "pulse.shfl_idx";         ///< (v, l): v on lane l
/// (cond, dp): the nearest lane l - k*dp (k >= 0) where cond holds, -1 if none.
constexpr const char *chain_source = "pulse.chain_source";
/// (v, d[, through_shared]): v on the array's thread t - d (d of either
/// sign; own v outside the array). With a third argument `true`, the move
/// goes through shared memory whatever its distance (a Func in shared memory).
constexpr const char *array_shift = "pulse.array_shift";
/// (): every thread of the array waits until all have arrived (Evaluate).
constexpr const char *barrier = "pulse.barrier";
/// (): every thread of every array instance waits until all have arrived,
/// and their writes to global memory are seen by all (Evaluate; grid_sync).
constexpr const char *grid_barrier = "pulse.grid_barrier";
/// (cond): true if cond holds on every lane of the warp (a warp vote). Put
/// by vote_uniform_tests around tests the same on every lane, where the vote
/// tells the compiler the warp stays whole (VoteUniformTests.h).
constexpr const char *warp_all = "pulse.warp_all";
/// (buffer, guard, coords...): guard ? buffer(coords) : 0
constexpr const char *load = "pulse.load";
/// (buffer, guard, value, coords...): if guard, buffer(coords) = value
constexpr const char *store = "pulse.store";
}  // namespace intrinsic

Halide::Expr shuffle(const char *which, const Halide::Expr &value, const Halide::Expr &amount);
/// `value` as lane l - dp holds it (shfl_up for dp > 0, shfl_down for dp < 0).
Halide::Expr lane_shift(const Halide::Expr &value, int64_t dp);
/// `value` as the array's thread t - dp holds it (array_shift), moved
/// through shared memory if `through_shared`.
Halide::Expr array_shift(const Halide::Expr &value, int64_t dp, bool through_shared = false);
/// Whether `s` computes with vector types (several array instances' values in
/// one register: the CUDA printer's packed lanes; CM refuses them).
bool uses_vectors(const Halide::Internal::Stmt &s);
/// Bytes of the shared arrays (MemoryType::GPUShared, constant size) `s` allocates.
int64_t shared_bytes(const Halide::Internal::Stmt &s);
/// True if the array_shift `shift` is marked through shared memory.
bool shifts_through_shared(const Halide::Internal::Call *shift);
/// A barrier over the array's threads.
Halide::Internal::Stmt barrier();
/// A barrier over every thread of the grid (Kernel::grid_sync).
Halide::Internal::Stmt grid_barrier();
/// True if `condition` holds on every lane of the warp.
Halide::Expr warp_all(const Halide::Expr &condition);
Halide::Expr chain_source(const Halide::Expr &condition, int64_t dp);
/// Element `coords` of `buffer`, or 0 where `guard` is false. Coordinates
/// stay unflattened until printing: the placement decides the layout.
Halide::Expr load(Halide::Type type, const std::string &buffer, const Halide::Expr &guard,
                  const std::vector<Halide::Expr> &coords);
Halide::Internal::Stmt store(const std::string &buffer, const Halide::Expr &guard, const Halide::Expr &value,
                             const std::vector<Halide::Expr> &coords);
/// Parts of a load or store call.
struct Access {
    std::string buffer;
    Halide::Expr guard, value;  ///< value: stores only
    std::vector<Halide::Expr> coords;
};
Access access_of(const Halide::Internal::Call *load_or_store);

/// The constant number of elements of register array `op`, and the constant
/// index `index` of an access to `array` (the IR's promise; a CompileError if
/// broken).
int64_t register_extent(const Halide::Internal::Allocate *op);
int64_t register_index(const Halide::Expr &index, const std::string &array);

/// Element `slot` of register array `array`, read and written; and `body`
/// inside the allocation of `count` elements of type `type` named `array`.
Halide::Expr register_load(Halide::Type type, const std::string &array, int slot);
Halide::Internal::Stmt register_store(const std::string &array, const Halide::Expr &value, int slot);
Halide::Internal::Stmt allocate_registers(const std::string &array, Halide::Type type, int count,
                                          const Halide::Internal::Stmt &body);

/// Fields of an intrinsic call; nullptr if `e` is not that intrinsic.
const Halide::Internal::Call *as_intrinsic(const Halide::Expr &e, const char *name);
/// True for intrinsics that read other lanes.
bool is_lane_exchange(const Halide::Internal::Call *call);
/// The named vector value v of `max(v, 0)` (the relu of a let: bind_relus,
/// and the CUDA printer's trees of maxima), or null.
const Halide::Internal::Variable *relu_of_variable(const Halide::Internal::Max *m);

/// A run-time size of a buffer argument: its min, extent or stride in one
/// dimension, the Int(64) variable BUFFER.FIELD.D in the IR. Built here and
/// recognised here (`match`), so no printer or evaluator parses the name.
struct BufferField {
    enum Kind { Min, Extent, Stride };
    std::string buffer;
    Kind kind = Min;
    int dimension = 0;

    const char *field() const;  ///< "min", "extent", "stride"
    std::string name() const;   ///< the variable's name
    Halide::Expr variable() const;
    /// The field `name` is, if it is one of `kernel`'s buffers' fields.
    static std::optional<BufferField> match(const Kernel &kernel, const std::string &name);
};

/// BUFFER.min.D, BUFFER.extent.D, BUFFER.stride.D.
Halide::Expr buffer_min(const std::string &buffer, int d);
Halide::Expr buffer_extent(const std::string &buffer, int d);
Halide::Expr buffer_stride(const std::string &buffer, int d);
/// The warp's index in the grid.
Halide::Expr warp_index();
/// The thread's index in its array: lane, or array.warp * 32 + lane.
Halide::Expr array_thread(const Kernel &kernel);

/// The flat element index of `coords` in `buffer`: sum (c_d - min_d) * stride_d
/// (Int(64)), with stride_0 = 1 where `dense_first_dimension`
/// (Kernel::dense_first_dimension); for a constant-memory buffer, the dense
/// offset into its region.
Halide::Expr flat_index(const BufferArg &buffer, const std::vector<Halide::Expr> &coords, bool dense_first_dimension);
/// True where `coords` lies inside the buffer (its run-time extents, or its region).
Halide::Expr in_bounds(const BufferArg &buffer, const std::vector<Halide::Expr> &coords);

// ---- small IR helpers over Call nodes ------------------------------------

/// Calls `fn(call)` for every Call in `e`, outermost first.
void for_each_call(const Halide::Expr &e, const std::function<void(const Halide::Internal::Call *)> &fn);

/// `e` with calls replaced: `fn` sees each Call, outermost first, and returns
/// its replacement, or an undefined Expr to keep it (its arguments are then
/// visited in turn).
Halide::Expr replace_calls(const Halide::Expr &e, const std::function<Halide::Expr(const Halide::Internal::Call *)> &fn);
Halide::Internal::Stmt replace_calls(const Halide::Internal::Stmt &s,
                                     const std::function<Halide::Expr(const Halide::Internal::Call *)> &fn);

/// Prints the kernel: buffers, grid and the body (Halide's IR syntax).
void print(std::ostream &out, const Kernel &kernel);

/// `s` with the body of every array-instance marker replaced by fn(body).
Halide::Internal::Stmt on_instances(const Halide::Internal::Stmt &s,
                                    const std::function<Halide::Internal::Stmt(const Halide::Internal::Stmt &)> &fn);

// ---- fresh names ------------------------------------------------------------

/// The one source of the names the kernel lowering and the kernel passes bind
/// (lets, loops, register and shared arrays), in the style of Halide's
/// unique_name: a name is spelled BASE.ROLE (or BASE.ROLE<index>) after what it
/// holds (`Z.t3`, `Z.t3.own`, `x.reg0`, `A.t2.in_warp`), and keeps that spelling
/// unless the name was minted before or is already used in the kernel; then it
/// gets the first free BASE.ROLE$N (N = 1, 2, ...), as unique_name does. A
/// lowering or pass holds one generator for its run, seeded with every name
/// the kernel already has (the constructor from a Kernel), and mints each
/// name it binds through it: no two minted names are equal, none equals a
/// name the kernel held when the pass started, and every name minted from a
/// base begins with `BASE.`.
class NameGenerator {
public:
    NameGenerator() = default;
    /// Seeded with every name `kernel` uses: those of its body (reserve(Stmt)),
    /// its buffers and their run-time sizes, its grid loops, `lane`,
    /// `warp.index` and `array.warp`.
    explicit NameGenerator(const Kernel &kernel);

    /// `base.role`, or, if that name is taken, the first free `base.role$N`;
    /// taken from then on.
    std::string fresh(const std::string &base, const std::string &role);
    /// The same for `base.role<index>` (`x.reg3`, `Z.t12`).
    std::string fresh(const std::string &base, const std::string &role, int64_t index);

    /// Marks `name` as used: fresh never returns it.
    void reserve(const std::string &name);
    /// Marks every name `s` binds or reads as used: LetStmt, Let, For and
    /// Allocate names, Variables, the arrays of Loads and Stores, and the
    /// buffers of kir::load and kir::store.
    void reserve(const Halide::Internal::Stmt &s);
    /// Whether `name` was minted or reserved.
    bool is_used(const std::string &name) const { return used.count(name) > 0; }

    /// The natural spelling, `base.role` and `base.role<index>`, without
    /// minting it: for the parts of a name (an unrolled copy's tag, a slot)
    /// and for keys that are not bound in the kernel.
    static std::string spell(const std::string &base, const std::string &role);
    static std::string spell(const std::string &base, const std::string &role, int64_t index);

private:
    std::set<std::string> used;
    std::map<std::string, int64_t> last_suffix;  ///< wanted name -> the last N tried
    std::string mint(const std::string &wanted);
};

/// Runs `action` on a stack deep enough for kernel bodies of thousands of
/// nested lets (every pass, printer and the executor recurse through them);
/// an exception thrown inside comes out to the caller.
void on_large_stack(const std::function<void()> &action);

}  // namespace kir
}  // namespace pulse

#endif
