#include "lower/LowerToKernel.h"

#include "analysis/RequiredInputs.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "exec/InputRegions.h"
#include "ir/Affine.h"
#include "ir/ExactSimplify.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// ---------------------------------------------------------------------------
// Taps and undefined branches of a statement's value.

bool contains_tap(const Expr &e, const sys::Tap &tap) {
    bool found = false;
    kir::for_each_call(e, [&](const Call *op) {
        sys::Tap t;
        if (sys::is_tap(Expr(op), &t) && t == tap) found = true;
    });
    return found;
}

Expr replace_tap(const Expr &e, const sys::Tap &tap, const Expr &replacement) {
    return kir::replace_calls(e, [&](const Call *op) -> Expr {
        sys::Tap t;
        if (sys::is_tap(Expr(op), &t) && t == tap) return replacement;
        return Expr();
    });
}

/// Where the select tree of `e` ends in the bare `tap` (a pure copy); nothing
/// if the tap is used any other way.
std::optional<Expr> copy_condition(const Expr &e, const sys::Tap &tap) {
    sys::Tap t;
    if (sys::is_tap(e, &t) && t == tap) return const_true();
    if (!contains_tap(e, tap)) return const_false();
    if (const Select *op = e.as<Select>()) {
        if (contains_tap(op->condition, tap)) return std::nullopt;
        std::optional<Expr> a = copy_condition(op->true_value, tap), b = copy_condition(op->false_value, tap);
        if (!a || !b) return std::nullopt;
        return simplify_exact(select(op->condition, *a, *b));
    }
    return std::nullopt;
}

/// The value a copy chain's source lanes compute: branches ending in the bare tap dropped.
Expr source_value(const Expr &e, const sys::Tap &tap) {
    if (const Select *op = e.as<Select>()) {
        std::optional<Expr> a = copy_condition(op->true_value, tap), b = copy_condition(op->false_value, tap);
        if (b && is_const_one(*b)) return source_value(op->true_value, tap);
        if (a && is_const_one(*a)) return source_value(op->false_value, tap);
        return select(op->condition, source_value(op->true_value, tap), source_value(op->false_value, tap));
    }
    return replace_tap(e, tap, make_zero(e.type()));
}

/// Whether `e`, a value over a symbolic PE at one step, is the same on every
/// PE: it names no PE (or only in sums where the PE cancels) and reads no
/// recurrence. A tap reads a value some PE
/// holds, which may differ between PEs even when the tap's expression names
/// none (a root Y(s, t) + w(t) computed in the same step), so a chain whose
/// root reads one cannot be computed in place by each PE.
bool is_same_on_every_pe(const Expr &e, const std::string &space_var) {
    return !varies_with(e, space_var) && sys::taps_in(e).empty();
}

/// Whether `e`, as above, is the same on every PE of a copy chain that moves
/// dp PEs per hop, so that each PE of the chain holds what its source
/// computes: the same on every PE; unchanged when the PE moves by dp (a 2-D
/// array's row index, s1.s2 % n2, along a chain down its other row, dp = n2);
/// or, PE by PE over the array's PEs (pe_min ...), the same as at p - dp at
/// every p that may copy (`copies_where`, over the symbolic PE): a column
/// index s1.s2 / n2 along a chain down the slots (dp = 1), which changes
/// between p - 1 and p only where a column starts and nothing copies. By
/// induction from the chain's sources, every PE's copy equals its own value.
/// A 2-D array too large for that PE-by-PE proof, with a chain along its
/// inner row (|dp| < `stride`, the outer row's stride): the same proof
/// position by position along the inner row, the outer row's index a
/// symbol y (p = pe_min + stride * y + x), so the rows are proved at once.
bool is_same_along_inner_row(const Expr &e, const std::string &space_var, int64_t dp, const Expr &copies_where, int64_t pe_min,
                             int64_t stride, int64_t inner_extent) {
    if (std::abs(dp) >= stride || dp == 0) return false;
    const Expr y = Variable::make(Int(32), space_var + ".row");
    auto at = [&](const Expr &x, int64_t position) {
        return simplify_exact(substitute(space_var, y * (int)stride + (int)(pe_min + position), x));
    };
    for (int64_t x = 0; x < inner_extent; x++) {
        const Expr copies = at(copies_where, x);
        if (is_const_zero(copies)) continue;
        if (!is_const_one(copies) || x - dp < 0 || x - dp >= inner_extent) return false;
        if (!equal(at(e, x), at(e, x - dp))) return false;
    }
    return true;
}

bool is_same_along_chain(const Expr &e, const std::string &space_var, int64_t dp, const Expr &copies_where,
                         int64_t pe_min, int64_t pe_count, const std::vector<sys::SpaceAxis> &space_axes, size_t outer_axis) {
    if (is_same_on_every_pe(e, space_var)) return true;
    if (!sys::taps_in(e).empty()) return false;
    const Expr pe = Variable::make(Int(32), space_var);
    if (equal(simplify_exact(substitute(space_var, pe - (int)dp, e)), simplify_exact(e))) return true;
    // Beyond a few thousand PEs the PE-by-PE proof is not worth its time:
    // a 2-D array's rows are proved at once.
    if (pe_count > 4096 && space_axes.size() == 2) {
        return is_same_along_inner_row(e, space_var, dp, copies_where, pe_min, space_axes[outer_axis].stride,
                                       space_axes[1 - outer_axis].extent);
    }
    if (pe_count > 4096) return false;
    for (int64_t p = pe_min; p < pe_min + pe_count; p++) {
        if (is_const_zero(simplify_exact(substitute(space_var, Expr((int)p), copies_where)))) continue;
        if (p - dp < pe_min || p - dp >= pe_min + pe_count) return false;
        if (!equal(simplify_exact(substitute(space_var, Expr((int)p), e)),
                   simplify_exact(substitute(space_var, Expr((int)(p - dp)), e))))
            return false;
    }
    return true;
}

/// `e` with every `undefined` replaced by zero (stores are guarded by
/// defined_condition; other values are never read where undefined).
Expr zero_undefined(const Expr &e) {
    return kir::replace_calls(e, [&](const Call *op) -> Expr {
        return ir::is_undefined_value(op) ? make_zero(op->type) : Expr();
    });
}

/// `e` with each select that leaves the value undefined on one side replaced
/// by its other side: where the condition fails nothing reads the value
/// (check_well_defined), so any value will do, and the defined branch
/// computes one without the test (a stencil's cone test costs nothing).
/// Evaluating that branch where its select would not is safe: loads are
/// guarded and every operation is total (docs/language.md).
Expr drop_undefined_branches(const Expr &e) {
    class Drop : public IRMutator {
    public:
        using IRMutator::visit;
        Expr visit(const Select *op) override {
            if (is_undefined(op->false_value)) return mutate(op->true_value);
            if (is_undefined(op->true_value)) return mutate(op->false_value);
            return IRMutator::visit(op);
        }

    private:
        static bool is_undefined(const Expr &e) { return ir::is_undefined_value(e); }
    };
    return zero_undefined(Drop().mutate(e));
}

// ---------------------------------------------------------------------------
// Straight-line code: a list of lets and statements, nested at the end.

struct Item {
    std::string name;  ///< a let when not empty
    Expr value;
    Stmt stmt;
};

Stmt build(const std::vector<Item> &items, Stmt tail = Stmt()) {
    Stmt body = tail.defined() ? tail : Evaluate::make(0);
    for (size_t i = items.size(); i-- > 0;) {
        const Item &it = items[i];
        if (!it.name.empty()) body = LetStmt::make(it.name, it.value, body);
        else body = Block::make(it.stmt, body);
    }
    return body;
}

// ---------------------------------------------------------------------------
// The loops outside the array.

struct SequentialLoop {
    std::string var;
    int64_t min = 0;
    Expr extent;             ///< run-time (Serial) or constant (Unrolled)
    bool unrolled = false;
};

struct LoopPlan {
    std::vector<kir::GridLoop> grid;             ///< innermost first
    std::vector<SequentialLoop> sequential;      ///< outermost first
    /// Original instance loop variable -> its value over the split loops.
    std::vector<std::pair<std::string, Expr>> definitions;
};

std::string fits_warp_hint(const ir::UreProgram &source, int64_t capacity) {
    std::ostringstream hint;
    if (!source.schedule.transform || source.schedule.transform->matrix.empty()) return "";
    const ir::SpaceTimeTransform &st = *source.schedule.transform;
    const std::vector<int64_t> &row = st.matrix.front();
    int64_t span = 0;
    for (size_t i = 0; i < row.size(); i++) span += std::abs(row[i]) * (source.loop(st.source_loops[i]).extent - 1);
    for (size_t i = 0; i < row.size(); i++) {
        if (row[i] == 0) continue;
        const ir::Loop &loop = source.loop(st.source_loops[i]);
        int64_t others = span - std::abs(row[i]) * (loop.extent - 1);
        int64_t fit = (capacity - 1 - others) / std::abs(row[i]) + 1;
        if (fit >= 1) hint << "; " << loop.var << " fits with extent <= " << fit << " (set_bounds)";
        else hint << "; " << loop.var << " cannot fit without shrinking the other space loops";
    }
    return hint.str();
}

/// `s` with each integer division or remainder by a positive constant m
/// folded where the dividend is a sum of multiples of m and a rest that lies
/// in [q m, q m + m) on every thread of an array of `warps` warps (lane in
/// [0, 31], array.warp in [0, warps - 1]): x / m is the multiples over m
/// plus q, x % m is the rest minus q m. A tile's PE index (lane + 32 c +
/// stride * row) divided by its stride leaves (lane + 32 c) / stride, which
/// the simplifier cannot fold without the lane's range.
Stmt fold_thread_bounded_divisions(const Stmt &s, int warps) {
    class Fold : public IRMutator {
    public:
        explicit Fold(int warps) {
            threads.push(kir::lane_var, Interval(make_const(Int(32), 0), make_const(Int(32), kir::warp_size - 1)));
            threads.push(kir::array_warp_var, Interval(make_const(Int(32), 0), make_const(Int(32), warps - 1)));
        }
        using IRMutator::visit;
        Expr visit(const Div *op) override {
            Split x;
            if (!split(op->a, op->b, &x)) return IRMutator::visit(op);
            return simplify(x.multiples / op->b + make_const(op->type, x.q));
        }
        Expr visit(const Mod *op) override {
            Split x;
            if (!split(op->a, op->b, &x)) return IRMutator::visit(op);
            return simplify(x.rest - make_const(op->type, x.q * *as_const_int(op->b)));
        }

    private:
        Scope<Interval> threads;
        struct Split {
            Expr multiples, rest;
            int64_t q = 0;
        };
        /// x = multiples + rest, multiples a sum of multiples of m, and
        /// rest / m = q on every thread.
        bool split(const Expr &x, const Expr &m, Split *out) {
            const int64_t *divisor = as_const_int(m);
            if (!divisor || *divisor <= 0 || !x.type().is_int()) return false;
            // x as a sum of terms times constant factors (products of sums by
            // constants distributed).
            std::vector<std::pair<Expr, int64_t>> terms;
            std::function<void(const Expr &, int64_t)> add_terms = [&](const Expr &e, int64_t factor) {
                const Mul *mul = e.as<Mul>();
                const int64_t *by = mul ? as_const_int(mul->b) : nullptr;
                if (const Add *a = e.as<Add>()) {
                    add_terms(a->a, factor);
                    add_terms(a->b, factor);
                } else if (by) {
                    add_terms(mul->a, factor * *by);
                } else if (const int64_t *c = as_const_int(e)) {
                    terms.emplace_back(make_one(e.type()), factor * *c);
                } else {
                    terms.emplace_back(e, factor);
                }
            };
            add_terms(x, 1);
            out->multiples = make_zero(x.type());
            out->rest = make_zero(x.type());
            for (const auto &[t, factor] : terms) {
                const Expr term = factor == 1 ? t : t * make_const(x.type(), factor);
                if (factor % *divisor == 0) out->multiples = out->multiples + term;
                else out->rest = out->rest + term;
            }
            const Interval r = bounds_of_expr_in_scope(out->rest, threads);
            if (!r.is_bounded()) return false;
            const Expr lo_e = simplify(r.min), hi_e = simplify(r.max);
            const int64_t *lo = as_const_int(lo_e), *hi = as_const_int(hi_e);
            if (!lo || !hi) return false;
            const int64_t q = *lo >= 0 ? *lo / *divisor : -((-*lo + *divisor - 1) / *divisor);  // floor
            if (*hi >= (q + 1) * *divisor) return false;
            out->q = q;
            return true;
        }
    };
    return Fold(warps).mutate(s);
}

/// Thrown by a lowering that interleaves a 2-D array's columns over the lanes
/// when a value would cross lanes: lower_to_kernel lowers it blocked instead.
struct NeedsBlockedColumns {};

class KernelLowering {
public:
    /// `interleave`: a 2-D array on register slots with several columns per
    /// lane interleaves them (Kernel::interleaved_rows), as long as no value
    /// moves between PEs (else NeedsBlockedColumns).
    KernelLowering(const sys::SystolicProgram &p, const std::string &n, const std::vector<std::string> &order,
                   const KernelOptions &o, bool interleave)
        : program(p), source(p.source), name(n), options(o), interleave(interleave) {
        kernel.name = n;
        kernel.pe_count = p.pe_count;
        kernel.pe_min = p.pe_min;
        const auto regions = infer_input_regions(source);
        for (const std::string &in : order) {
            const ir::InputDecl &d = source.input(in);
            // A table is read at data-dependent indices: where it is used, through L1.
            kernel.buffers.push_back(kir::BufferArg{d.name, d.type, d.dimensions, false, kir::Placement::Global,
                                                    d.is_table() ? kir::InputCache::L1 : kir::InputCache::Registers, d.is_table(), {}, {}});
            auto it = regions.find(in);
            if (it == regions.end()) continue;
            for (const IndexRange &r : it->second) kernel.buffers.back().domain_reads.push_back({r.min, r.max});
        }
        for (const ir::Ure *u : source.outputs()) {
            kernel.buffers.push_back(kir::BufferArg{u->name, u->type, (int)u->output_index().size(), true,
                                                    kir::Placement::Global, kir::InputCache::Registers, false, {}, {}});
        }
    }

    kir::Kernel run() {
        plan_pes_per_lane();
        check_stagings();
        // A tile reads its staged operands' consecutive columns as one
        // vector load (Kernel::warp_columns_blocked).
        if (kernel.warp_rows) {
            for (const kir::BufferArg &b : kernel.buffers) {
                kernel.warp_columns_blocked |= !b.is_output && !b.table && b.cache == kir::InputCache::Shared;
            }
        }
        plan_loops();
        // What each input must cover for the outputs given at run time.
        if (options.plan_required_inputs) {
            const auto required = required_input_ranges(source);
            for (kir::BufferArg &b : kernel.buffers) {
                if (!b.is_output && required.count(b.name)) b.required = required.at(b.name);
            }
        }
        check_staging_levels();
        // Every name the lowering binds is minted by `names`, which knows the
        // buffers, their run-time sizes, the lane and warp variables and the loops.
        names = kir::NameGenerator(kernel);
        for (const kir::GridLoop &g : plan.grid) names.reserve(g.var);
        for (const SequentialLoop &l : plan.sequential) names.reserve(l.var);
        for (const auto &definition : plan.definitions) names.reserve(definition.first);
        // gpu_grid_sync: every instance resident at once, a block of its own
        // (no warp of a block may leave early: all meet at the grid barriers).
        kernel.grid_sync = source.schedule.gpu_grid_sync;
        if (kernel.grid_sync) kernel.warps_per_block = 1;
        // The marker tells later passes where one array instance's straight-line code starts.
        plan_reductions();
        Stmt instance = with_reductions(instance_body());
        Stmt body = ProducerConsumer::make_produce(kir::array_instance_marker, with_data_bounds(instance));
        // Per-thread serial loops, innermost built first.
        for (size_t i = plan.sequential.size(); i-- > 0;) {
            const SequentialLoop &l = plan.sequential[i];
            if (!l.unrolled) body = For::make(l.var, (int)l.min, cast(Int(32), l.extent), ForType::Serial, DeviceAPI::None, body);
        }
        // The warp's grid point, innermost fastest.
        std::vector<Item> decode;
        Expr rest = kir::warp_index();
        for (size_t i = 0; i < plan.grid.size(); i++) {
            const kir::GridLoop &g = plan.grid[i];
            Expr extent = max(cast(Int(64), g.extent), 1);
            Expr value = i + 1 < plan.grid.size() ? rest % extent : rest;
            decode.push_back({g.var, cast(Int(32), value + make_const(Int(64), g.min)), Stmt()});
            if (i + 1 < plan.grid.size()) {
                std::string r = names.fresh("warp", "rest", (int64_t)i);
                decode.push_back({r, rest / extent, Stmt()});
                rest = Variable::make(Int(64), r);
            }
        }
        kernel.grid = plan.grid;
        if (source.schedule.vectorize) {
            // pack_instances packs the innermost grid loop's instances.
            const auto &[var, lanes] = *source.schedule.vectorize;
            if (plan.grid.empty() || plan.grid[0].var != var) {
                compile_error("kernel ", name, ": vectorize(", var, ", ", lanes, "): '", var,
                              "' is not the innermost gpu_blocks loop; packs the instances of that loop only");
            }
            kernel.packed_lanes = lanes;
        }
        body = build(decode, body);
        kernel.body = simplify_exact(body);
        if (kernel.warp_rows) kernel.body = simplify_exact(fold_thread_bounded_divisions(kernel.body, kernel.warps_per_array));
        kernel.description = describe();
        return kernel;
    }

private:
    const sys::SystolicProgram &program;
    const ir::UreProgram &source;
    std::string name;
    KernelOptions options;
    const bool interleave;
    /// is_same_along_chain's answers: every slot of a step asks the same
    /// question (the value over a symbolic PE), and its PE-by-PE proof costs
    /// two simplifications per PE.
    std::map<Expr, bool, IRDeepCompare> same_along_chain_answers;
    bool same_along_chain(const Expr &root, int64_t dp, const Expr &copies_where) {
        const Expr key = Call::make(Bool(), "same_along_chain", {root, copies_where, make_const(Int(64), dp)}, Call::PureExtern);
        auto it = same_along_chain_answers.find(key);
        if (it == same_along_chain_answers.end()) {
            it = same_along_chain_answers
                     .emplace(key, is_same_along_chain(root, program.space_var, dp, copies_where, program.pe_min, program.pe_count,
                                                program.space_axes, program.outer_axis))
                     .first;
        }
        return it->second;
    }
    kir::Kernel kernel;
    LoopPlan plan;
    kir::NameGenerator names;  ///< the names of the kernel's lets, loops and register arrays

    /// An array wider than a warp runs several PEs per lane (blocked, so a
    /// move of dp PEs crosses lanes only at the ends of a lane's block), or,
    /// with gpu_threads on the space loop, one PE per thread over the warps
    /// of a block (moves across warps through shared memory).
    void plan_pes_per_lane() {
        const ir::Schedule &s = source.schedule;
        const std::string &space = s.transform->destination_loops.front();
        bool threads = !s.gpu_threads.empty();
        for (const std::string &v : s.gpu_threads) {
            bool space_row = std::any_of(program.space_axes.begin(), program.space_axes.end(),
                                         [&](const sys::SpaceAxis &a) { return a.var == v; });
            if (!space_row) {
                compile_error("kernel ", name, ": gpu_threads(", v, "): only the array's space loop",
                              program.is_two_dimensional() ? "s '" + program.space_axes[0].var + "' and '" + program.space_axes[1].var + "' map"
                                                           : " '" + space + "' maps",
                              " to threads (one PE per thread, across the warps of a block); loops outside the ",
                              "array map to arrays of warps with gpu_blocks");
            }
        }
        if (program.is_two_dimensional()) {
            plan_two_dimensional_array();
        } else {
            plan_linear_array(threads);
        }
        kernel.prefetch_walks = options.prefetch_walks;
        kernel.dense_first_dimension = options.dense_first_dimension;
        kernel.min_blocks_per_sm = options.min_blocks_per_sm;
        if (options.max_shared_bytes < 1 || options.max_shared_bytes > kir::max_opt_in_shared_bytes) {
            compile_error("kernel ", name, ": max_shared_bytes ", options.max_shared_bytes, " is outside [1, ",
                          kir::max_opt_in_shared_bytes, "] (the most a block may opt in to on sm_90)");
        }
        kernel.max_shared_bytes = options.max_shared_bytes;
        if (options.shared_steps < 0) compile_error("kernel ", name, ": shared_steps ", options.shared_steps, " is negative");
        kernel.shared_steps = options.shared_steps;
        if (options.shared_double_buffer && options.shared_steps == 0) {
            compile_error("kernel ", name, ": double buffering (--double-buffer) loads a run of staged steps during the run ",
                          "before; name the run's length with --shared-steps=N, or drop --double-buffer");
        }
        kernel.shared_double_buffer = options.shared_double_buffer;
    }

    /// A 2-D array (sys::SpaceAxis): its first space row on the lanes and its
    /// second on each thread's register slots (moves along the second row
    /// are register moves; a first row wider than a warp runs a block of
    /// several of its values per lane, so that its moves cross lanes only at
    /// the block's edge), or, with gpu_threads(x, y), x on the lanes and y on
    /// the warps of a block (moves along y go through shared memory).
    void plan_two_dimensional_array() {
        const ir::Schedule &s = source.schedule;
        const sys::SpaceAxis &first = program.space_axes[0], &second = program.space_axes[1];
        auto row_text = [](const sys::SpaceAxis &a) {
            return a.var + " (" + std::to_string(a.extent) + " values, " + std::to_string(a.min) + " .. " +
                   std::to_string(a.min + a.extent - 1) + ")";
        };
        if (!s.gpu_threads.empty()) {
            if (s.gpu_threads.size() != 2) {
                compile_error("kernel ", name, ": gpu_threads(", s.gpu_threads[0], ") on a 2-D array: name both space loops, ",
                              "gpu_threads(", first.var, ", ", second.var, ") to put ", first.var, " on the lanes and ", second.var,
                              " on the warps of a block, or drop gpu_threads to run ", second.var, " on each lane's register slots");
            }
            if (!program.rows_on_warps) {
                internal_error("kernel ", name, ": the 2-D array was lowered with its rows on (lanes, slots), but the schedule ",
                               "has gpu_threads: lower the program again (lower_to_systolic plans the PE index per mapping)");
            }
            const sys::SpaceAxis &warps = program.outer_space_axis(), &lanes = program.inner_space_axis();
            // Several values of the warps' row per warp (pes_per_thread), or
            // of the lanes' row per lane (past 32): a tile of PEs per thread
            // (Kernel::warp_rows), which holds only where nothing moves
            // between PEs (move_between_pes refuses a move).
            const int64_t rows = options.pes_per_thread > 0 ? options.pes_per_thread : 1;
            const int64_t columns = (lanes.extent + kir::warp_size - 1) / kir::warp_size;
            const int64_t warp_count = (warps.extent + rows - 1) / rows;
            if (warp_count > kir::max_warps_per_array) {
                refuse(Refusal::TooManyPes, "", "kernel ", name, ": gpu_threads(", s.gpu_threads[0], ", ", s.gpu_threads[1], ") puts ",
                       row_text(warps), " on the warps of a block", rows > 1 ? ", " + std::to_string(rows) + " per warp (--pes-per-thread)" : "",
                       "; a block has at most ", kir::max_warps_per_array, " warps: shrink the loops of ", warps.var,
                       "'s row with set_bounds, or run several of its values on each warp (--pes-per-thread=N, where nothing moves between PEs)");
            }
            if (columns * rows > max_pes_per_lane_two_dimensional) {
                refuse(Refusal::TooManyPes, "", "kernel ", name, ": gpu_threads(", s.gpu_threads[0], ", ", s.gpu_threads[1], ") gives each thread ",
                       columns, " values of ", row_text(lanes), " and ", rows, " of ", row_text(warps), ": ", columns * rows,
                       " PEs per thread, more than ", max_pes_per_lane_two_dimensional,
                       ": shrink the loops of a row with set_bounds, or ask for fewer per thread (--pes-per-thread)");
            }
            kernel.warps_per_array = (int)warp_count;
            if (columns > 1 || rows > 1) {
                kernel.pes_per_lane = columns * rows;
                kernel.warp_rows = rows;
            }
            return;
        }
        if (program.rows_on_warps) {
            internal_error("kernel ", name, ": the 2-D array was lowered with its rows on (lanes, warps), but the schedule ",
                           "has no gpu_threads: lower the program again (lower_to_systolic plans the PE index per mapping)");
        }
        if (options.pes_per_thread > 0) {
            compile_error("kernel ", name, ": pes_per_thread (--pes-per-thread=", options.pes_per_thread, ") sets the values of ", second.var,
                          " each warp of a 2-D array on the lanes and warps of a block runs; this array runs ", second.var,
                          " on each lane's register slots already: add gpu_threads(", first.var, ", ", second.var,
                          ") to the schedule, or drop the option");
        }
        // A lane runs a block of the grid: `columns` values of the first row
        // (the PE index is blocked by lane), every value of the second.
        const int64_t columns = (first.extent + kir::warp_size - 1) / kir::warp_size;
        if (columns * second.extent > max_pes_per_lane_two_dimensional) {
            refuse(Refusal::TooManyPes, "", "kernel ", name, ": a 2-D array runs its first space row on the lanes of a warp (",
                   row_text(first), ": ", columns, " per lane) and its second on each lane's register slots (", row_text(second),
                   "): ", columns * second.extent, " PEs per lane, more than ", max_pes_per_lane_two_dimensional,
                   ": shrink the loops of a row with set_bounds, or spread the second over the warps of a block with gpu_threads(",
                   first.var, ", ", second.var, ")");
        }
        kernel.pes_per_lane = columns * second.extent;
        if (interleave && columns > 1) kernel.interleaved_rows = second.extent;
    }

    void plan_linear_array(bool threads) {
        const std::string &space = source.schedule.transform->destination_loops.front();
        // Warps of the array (gpu_threads), or PEs per lane of one warp.
        const int64_t groups = (program.pe_count + kir::warp_size - 1) / kir::warp_size;
        const std::string pes = std::to_string(program.pe_count) + " PEs (" + program.space_var + " in [" +
                                std::to_string(program.pe_min) + ", " + std::to_string(program.pe_min + program.pe_count - 1) + "])";
        if (options.pes_per_thread > 0 && !threads) {
            compile_error("kernel ", name, ": pes_per_thread (--pes-per-thread=", options.pes_per_thread, ") sets the PEs of each thread of an ",
                          "array over the warps of a block; this array runs on one warp (", groups, " PEs per lane): add gpu_threads(", space,
                          ") to the schedule, or drop the option");
        }
        if (threads && options.pes_per_thread > max_pes_per_lane) {
            refuse(Refusal::TooManyPes, "", "kernel ", name, ": --pes-per-thread=", options.pes_per_thread, ": a linear array over the ",
                   "warps of a block (gpu_threads(", space, ")) runs at most ", max_pes_per_lane, " PEs per thread (up to ",
                   max_pes_per_lane_two_dimensional, " only as a 2-D tile, gpu_threads(x, y)); ask for at most ", max_pes_per_lane);
        }
        if (threads) {
            // One PE per thread up to a block's threads, else the fewest PEs
            // per thread that fit a block; or as many as the option asks.
            const int64_t block = kir::max_warps_per_array * kir::warp_size;
            const int64_t per_thread = options.pes_per_thread > 0 ? options.pes_per_thread : (program.pe_count + block - 1) / block;
            const int64_t warps = (program.pe_count + kir::warp_size * per_thread - 1) / (kir::warp_size * per_thread);
            if (per_thread > max_pes_per_lane || warps > kir::max_warps_per_array) {
                refuse(Refusal::TooManyPes, "", "kernel ", name, ": gpu_threads(", space, "): the array has ", pes, "; a block runs at most ",
                       max_pes_per_lane * block, " (", kir::max_warps_per_array, " warps, ", max_pes_per_lane, " PEs per thread)",
                       options.pes_per_thread > 0 ? "; with " + std::to_string(per_thread) + " PEs per thread (--pes-per-thread), " +
                                                        std::to_string(warps) + " warps: give each thread more PEs (up to " +
                                                        std::to_string(max_pes_per_lane) + ")"
                                                  : fits_warp_hint(source, max_pes_per_lane * block));
            }
            kernel.warps_per_array = (int)warps;
            kernel.pes_per_lane = per_thread;
        } else {
            if (groups > max_pes_per_lane) {
                refuse(Refusal::TooManyPes, "", "kernel ", name, ": the array has ", pes, "; a warp runs at most ", max_pes_per_lane * kir::warp_size,
                              " (", max_pes_per_lane, " per lane)", fits_warp_hint(source, max_pes_per_lane * kir::warp_size),
                              "; or spread it over the warps of a block with gpu_threads(", space, ") (up to ",
                              kir::max_warps_per_array * kir::warp_size, " PEs)");
            }
            kernel.pes_per_lane = groups;
        }
    }

    /// `value` as the PE (thread) dp below holds it: a warp shuffle, or a
    /// move across the array's warps.
    Expr shift(const Expr &value, int64_t dp, bool through_shared) const {
        if (through_shared) return kir::array_shift(value, dp, true);
        return kernel.warps_per_array > 1 ? kir::array_shift(value, dp) : kir::lane_shift(value, dp);
    }

    /// Stagings the mapping honours: an input's cache placement
    /// (kir::InputCache) by its store_in: Register (or none) keeps it in
    /// registers (a window of a per-thread loop, or a small lane-uniform input
    /// in the constant bank), Global reads it where used through L1, Shared
    /// stages the box an array instance reads in shared memory.
    void check_stagings() {
        for (const ir::Staging &s : source.schedule.stagings) {
            bool is_input = false;
            for (const ir::InputDecl &in : source.inputs) is_input |= in.name == s.source;
            if (!is_input && s.source == s.consumer && is_recurrence(s.source)) {
                hold_in_shared_memory(s);
                continue;
            }
            if (!is_input) {
                compile_error("kernel ", name, ": ", s.source, ".in(", s.consumer, "): staging a Func is not supported; ",
                              "stage an input instead, or hold the Func's own values in shared memory with ", s.source,
                              ".store_in(MemoryType::Shared)");
            }
            if (source.input(s.source).is_table() && s.memory != MemoryType::Shared) {
                compile_error("kernel ", name, ": ", s.source, ".in(", s.consumer, "): ", s.source,
                              " is a table, read at data-dependent indices: it is read through L1 where it is used, or staged whole "
                              "in shared memory with .store_in(MemoryType::Shared); drop the staging or stage it in shared memory");
            }
            kir::BufferArg &b = kernel.buffer(s.source);
            kir::InputCache cache = !s.memory || *s.memory == MemoryType::Register ? kir::InputCache::Registers
                                    : *s.memory == MemoryType::Shared            ? kir::InputCache::Shared
                                                                                 : kir::InputCache::L1;
            b.cache = cache;
        }
    }

    bool is_recurrence(const std::string &func) const {
        for (const sys::Variable &v : program.variables) {
            if (v.name == func) return true;
        }
        return false;
    }

    /// `F.store_in(MemoryType::Shared)` on a recurrence: its values move
    /// between the array's threads through shared memory, at any distance
    /// within the block (a tile of the grid over the threads of a block).
    /// Register is the default; Global has no meaning for a value that
    /// never leaves the chip.
    void hold_in_shared_memory(const ir::Staging &s) {
        const std::string what = "kernel " + name + ": " + s.source + ".store_in(MemoryType::" +
                                 (s.memory ? to_string(*s.memory) : "Register") + ")";
        if (!s.memory || *s.memory == MemoryType::Register) return;
        if (*s.memory == MemoryType::Global) {
            compile_error(what, ": a recurrence's values stay on chip; hold them in registers (the default) or in ",
                          "shared memory (MemoryType::Shared)");
        }
        if (s.compute_at_loop) {
            compile_error(what, ": a Func held in shared memory lives for one array instance; drop compute_at(",
                          *s.compute_at_func, ", ", *s.compute_at_loop, ")");
        }
        if (kernel.warps_per_array <= 1) {
            const std::string &space = source.schedule.transform->destination_loops.front();
            compile_error(what, ": shared memory holds values for the threads of a block, but the array's ", program.pe_count,
                          " PEs run on one warp, where shuffles move them: ",
                          source.schedule.gpu_threads.empty() ? "spread the PEs over the threads of a block with gpu_threads(" + space + ")"
                                                              : "give the array more than " + std::to_string(kir::warp_size) + " PEs",
                          ", or drop store_in");
        }
        kernel.shared_state.push_back(s.source);
    }

    bool in_shared_memory(const std::string &func) const {
        return std::find(kernel.shared_state.begin(), kernel.shared_state.end(), func) != kernel.shared_state.end();
    }

    /// Where a copy in shared memory is made: once per array instance, so its
    /// compute_at may name a grid loop or the innermost per-thread serial loop
    /// (each iteration is an instance), nothing else; an input read through L1
    /// has no copy to place. Runs after plan_loops.
    void check_staging_levels() const {
        for (const ir::Staging &s : source.schedule.stagings) {
            if (!s.compute_at_loop || !s.memory || *s.memory == MemoryType::Register) continue;
            const std::string where = s.source + ".in(" + s.consumer + ").compute_at(" + s.consumer + ", " + *s.compute_at_loop + ")";
            if (*s.memory == MemoryType::Global) {
                compile_error("kernel ", name, ": ", where, ".store_in(MemoryType::Global): an input read through L1 is loaded ",
                              "where it is used, no copy is made: drop compute_at");
            }
            bool per_instance = false;
            for (const kir::GridLoop &g : plan.grid) per_instance |= g.var == *s.compute_at_loop;
            const SequentialLoop *innermost = nullptr;
            for (const SequentialLoop &l : plan.sequential) if (!l.unrolled) innermost = &l;
            per_instance |= innermost && innermost->var == *s.compute_at_loop;
            if (!per_instance) {
                compile_error("kernel ", name, ": ", where, ".store_in(MemoryType::Shared): a copy in shared memory is made ",
                              "once per array instance; compute it at a grid loop",
                              innermost ? " or at the innermost per-thread loop '" + innermost->var + "'" : std::string(),
                              ", not at '", *s.compute_at_loop, "' (a loop of the array, an unrolled loop, or one with ",
                              "per-thread loops inside)");
            }
        }
    }

    /// Every output is indexed by every instance loop. An instance loop's extent
    /// comes from the output extents at run time, so an output written at only
    /// some of its values (`Out2(j) = select(i == 2, ...)`) would be written or
    /// not depending on the other outputs' extents, and left unwritten in
    /// silence where they are small.
    void require_outputs_indexed_by_instance_loops() const {
        for (const ir::Loop &v : program.instance_loops) {
            const int vi = source.loop_index(v.var);
            for (const ir::Ure *u : source.outputs()) {
                bool indexed = false;
                for (const Expr &index : u->output_index()) {
                    std::optional<AffineForm> f = to_affine(index, source.loops);
                    indexed |= f ? f->coefficient[vi] != 0 : expr_uses_var(index, v.var);
                }
                if (!indexed) {
                    refuse(Refusal::OutputNotPerInstance, u->name, "kernel ", name, ": output ", u->name, " is not indexed by loop '", v.var,
                                  "', which lies outside the array and takes its extent from the outputs at run time; ",
                                  u->name, " would be written or not depending on the other outputs' extents. Index ",
                                  u->name, " by '", v.var, "' (one value per instance), or bring '", v.var,
                                  "' into the array (a source loop of the space-time transform)");
                }
            }
        }
    }

    /// The run-time extent of instance loop `v`, from the output extents.
    Expr derived_extent(const ir::Loop &v) const {
        Expr best;
        int vi = source.loop_index(v.var);
        for (const ir::Ure *u : source.outputs()) {
            std::vector<Expr> index = u->output_index();
            const std::vector<ir::Loop> written_loops = source.output_loops(*u);
            for (size_t d = 0; d < index.size(); d++) {
                std::optional<AffineForm> f = to_affine(index[d], source.loops);
                if (!f || f->coefficient[vi] <= 0) continue;
                int64_t a = f->coefficient[vi], lo = f->constant;
                bool bounded = true;
                for (size_t i = 0; i < source.loops.size(); i++) {
                    if ((int)i == vi || f->coefficient[i] == 0) continue;
                    const ir::Loop &l = written_loops[i];
                    bool is_instance = false;
                    for (const ir::Loop &il : program.instance_loops) is_instance |= il.var == l.var;
                    if (is_instance && f->coefficient[i] < 0) bounded = false;
                    lo += std::min(f->coefficient[i] * l.min, f->coefficient[i] * l.max());
                    if (is_instance) lo += 0;
                }
                if (!bounded) continue;
                // Largest v with a*v + lo <= min + extent - 1.
                Expr top = kir::buffer_min(u->name, (int)d) + kir::buffer_extent(u->name, (int)d) - make_const(Int(64), 1 + lo);
                Expr e = max(top / make_const(Int(64), a) - make_const(Int(64), v.min - 1), make_const(Int(64), 0));
                best = best.defined() ? max(best, e) : e;
            }
        }
        if (!best.defined()) {
            refuse(Refusal::OutputNotPerInstance, v.var, "kernel ", name, ": the extent of loop '", v.var, "' (outside the array) is a run-time size, taken from ",
                          "an output index of the form a*", v.var, " + ..., a > 0; no output is indexed so: index an output ",
                          "by '", v.var, "'");
        }
        return simplify_exact(best);
    }

    void plan_loops() {
        const ir::Schedule &s = source.schedule;
        // Instance loops after tiling, innermost first, and their extents.
        // `constant`: an unrolled loop (the inner loop of a tile).
        struct Piece { std::string var; int64_t min; Expr extent; bool constant; };
        std::vector<Piece> pieces;
        std::set<std::string> transform_loops(s.transform->source_loops.begin(), s.transform->source_loops.end());
        for (const ir::Tile &t : s.tiles) {
            if (transform_loops.count(t.var)) {
                compile_error("kernel ", name, ": tile(", t.var, ", ...): '", t.var, "' is a source loop of the space-time ",
                              "transform; tile only loops outside the array (choose the array's size with set_bounds)");
            }
        }
        // A loop, split by the tiles and splits on it and on the loops they make.
        // Each tile applies once, in the order given: a tile may name one of
        // its pieces like the loop it splits (tile(c, c, ci, 2)).
        std::set<const ir::Tile *> applied;
        std::function<void(const std::string &, int64_t, Expr)> split = [&](const std::string &var, int64_t min, Expr extent) {
            const ir::Tile *tile = nullptr;
            for (const ir::Tile &t : s.tiles) {
                if (!tile && t.var == var && !applied.count(&t)) tile = &t;
            }
            if (tile) applied.insert(tile);
            if (!tile) {
                pieces.push_back({var, min, extent, false});
                return;
            }
            if (tile->factor < 1) compile_error("kernel ", name, ": tile(", var, ") factor ", tile->factor, " must be positive");
            pieces.push_back({tile->inner, 0, make_const(Int(64), tile->factor), tile->unroll_inner});
            // The outer loop's definition first: this one is written over it.
            split(tile->outer, 0, simplify_exact((extent + make_const(Int(64), tile->factor - 1)) / make_const(Int(64), tile->factor)));
            Expr value = Variable::make(Int(32), tile->outer) * (int)tile->factor + Variable::make(Int(32), tile->inner) + (int)min;
            plan.definitions.push_back({var, value});
        };
        for (const ir::Loop &l : program.instance_loops) split(l.var, l.min, derived_extent(l));
        require_outputs_indexed_by_instance_loops();
        std::set<std::string> known;
        for (const Piece &p : pieces) known.insert(p.var);
        for (const std::string &g : s.gpu_blocks) {
            if (!known.count(g)) {
                compile_error("kernel ", name, ": gpu_blocks(", g, "): '", g, "' is not a loop outside the array (",
                              "the loops outside are the instance loops and the loops tile makes of them)");
            }
        }
        auto is_grid = [&](const Piece &p) {
            if (s.gpu_blocks.empty()) return !p.constant;  // every loop that is not unrolled
            return std::find(s.gpu_blocks.begin(), s.gpu_blocks.end(), p.var) != s.gpu_blocks.end();
        };
        // Grid loops in gpu_blocks order (innermost first) when given.
        if (!s.gpu_blocks.empty()) {
            for (const std::string &g : s.gpu_blocks) {
                for (const Piece &p : pieces) {
                    if (p.var == g) plan.grid.push_back({p.var, p.min, p.extent});
                }
            }
        } else {
            for (const Piece &p : pieces) if (is_grid(p)) plan.grid.push_back({p.var, p.min, p.extent});
        }
        // Sequential loops: reorder's order if given, else the nest's; serial
        // loops outside unrolled ones.
        std::vector<Piece> seq;
        for (const Piece &p : pieces) if (!is_grid(p)) seq.push_back(p);
        if (!s.reorder.empty()) {
            std::vector<Piece> ordered;
            for (const std::string &r : s.reorder) {
                for (const Piece &p : seq) if (p.var == r) ordered.push_back(p);
            }
            for (const Piece &p : seq) {
                if (std::find(s.reorder.begin(), s.reorder.end(), p.var) == s.reorder.end()) ordered.push_back(p);
            }
            seq = ordered;
        }
        for (size_t i = seq.size(); i-- > 0;) {
            if (!seq[i].constant) plan.sequential.push_back({seq[i].var, seq[i].min, seq[i].extent, false});
        }
        for (size_t i = seq.size(); i-- > 0;) {
            if (seq[i].constant) plan.sequential.push_back({seq[i].var, seq[i].min, seq[i].extent, true});
        }
        for (size_t i = 0; i + 1 < plan.sequential.size(); i++) {
            if (plan.sequential[i].unrolled && !plan.sequential[i + 1].unrolled) {
                internal_error("kernel ", name, ": a serial loop inside an unrolled one");
            }
        }
    }

    // ---- the array's steps ------------------------------------------------

    /// One unrolled copy of the array body: the values of its per-thread loops.
    struct Copy {
        std::string tag;
        std::map<std::string, Expr> values;  ///< substitution for the statements
        int64_t index = 0;                   ///< among the copies
    };

    /// The SSA name of `var` at step `position` (of the straight-line block
    /// being built) in one unrolled copy, on one slot of the lane: VAR.TAG.vSLOT.tPOSITION,
    /// minted on its first use.
    std::string ssa(const std::string &var, const Copy &copy, int64_t position, int64_t slot) {
        const auto key = std::make_tuple(var, copy.index, position, slot);
        auto it = ssa_names.find(key);
        if (it != ssa_names.end()) return it->second;
        std::string base = var + copy.tag;
        if (kernel.pes_per_lane > 1) base = kir::NameGenerator::spell(base, "v", slot);
        return ssa_names.emplace(key, names.fresh(base, "t", position)).first->second;
    }
    std::map<std::tuple<std::string, int64_t, int64_t, int64_t>, std::string> ssa_names;  ///< (var, copy, position, slot) -> name

    // ---- a rolled time loop -------------------------------------------------
    // Beyond options.max_unrolled_steps the time loop runs as a serial loop
    // over blocks of `period` steps (t = time_min + period * i + k, k
    // unrolled): the values a block reads from earlier blocks are carried in
    // a register array per variable, indexed by constants.
    int64_t period = 0;                       ///< 0: the time loop is unrolled fully
    std::string block_var;                    ///< the serial loop over blocks
    int64_t copy_count = 1;
    /// Positions below `boundary` in the block being built are read from the
    /// carried registers (or are zero where nothing is carried: before the first step).
    int64_t boundary = 0;
    bool carried = false;
    std::map<std::string, std::string> carry_names;  ///< variable -> its carried register array

    /// The register array that carries `var`'s values across blocks: VAR.carry.
    std::string carry_name(const std::string &var) {
        auto it = carry_names.find(var);
        if (it == carry_names.end()) it = carry_names.emplace(var, names.fresh(var, "carry")).first;
        return it->second;
    }

    int64_t carry_index(const std::string &var, const Copy &copy, int64_t slot, int64_t lag) const {
        int64_t h = program.variable(var).history;
        return ((copy.index * kernel.pes_per_lane) + slot) * h + (lag - 1);
    }

    /// The value of `var` at `position` on `slot` of this lane.
    Expr value_at(const std::string &var, const Copy &copy, int64_t position, int64_t slot, std::string *key) {
        const sys::Variable &v = program.variable(var);
        if (position >= boundary) {
            *key = ssa(var, copy, position, slot);
            return Variable::make(v.type, *key);
        }
        int64_t lag = boundary - position;
        if (!carried || lag > v.history) {
            *key = "";
            return make_zero(v.type);  // before the first step: never read where it matters (validator)
        }
        // A key for the shuffles of this value (bound only as their base).
        *key = carry_name(var) + copy.tag;
        if (kernel.pes_per_lane > 1) *key = kir::NameGenerator::spell(*key, "v", slot);
        *key = kir::NameGenerator::spell(*key, "lag", lag);
        return Load::make(v.type, carry_name(var), make_const(Int(32), carry_index(var, copy, slot, lag)), Buffer<>(), Parameter(),
                          const_true(), ModulusRemainder());
    }

    /// The time loop's period: the largest time coefficient of a source loop
    /// (advancing that loop by one advances time by it, every other loop
    /// unchanged, so every block of that many steps runs the same code). A
    /// block must hold every value read across it: where a variable's history
    /// is longer, the period is the smallest multiple of the coefficient of
    /// the loop spanning the most steps (its coefficient times its extent: a
    /// wavefront's plane loop, not its few time steps) that holds it.
    int64_t time_period() const {
        const ir::SpaceTimeTransform &st = *source.schedule.transform;
        int64_t best = 0, history = 0, widest = 0, widest_span = 0;
        for (const sys::Variable &v : program.variables) history = std::max(history, v.history);
        for (size_t i = 0; i < st.source_loops.size(); i++) {
            const int64_t a = std::abs(st.matrix.back()[i]), extent = source.loop(st.source_loops[i]).extent;
            if (extent <= 1 || a == 0 || a >= program.steps()) continue;
            best = std::max(best, a);
            if (a * extent > widest_span) widest_span = a * extent, widest = a;
        }
        if (history > best) best = widest ? (history + widest - 1) / widest * widest : 0;
        return best && program.steps() >= 2 * best ? best : 0;
    }

    /// The PE index of `slot` on this thread.
    Expr pe_of_slot(int64_t slot) const {
        if (const int64_t rows = kernel.warp_rows) {
            const int64_t column = slot / rows, row = slot % rows, columns = kernel.pes_per_lane / rows;
            const Expr lane = Variable::make(Int(32), kir::lane_var), warp = Variable::make(Int(32), kir::array_warp_var);
            const Expr x = kernel.warp_columns_blocked ? lane * (int)columns + (int)column : lane + (int)(column * kir::warp_size);
            return simplify_exact(x + (int)program.pe_min + (warp * (int)rows + (int)row) * (int)program.outer_space_axis().stride);
        }
        if (const int64_t rows = kernel.interleaved_rows) {
            const int64_t column_block = slot / rows, row = slot % rows;
            return simplify_exact((kir::array_thread(kernel) + (int)(column_block * kernel.array_threads())) * (int)rows +
                                  (int)(row + program.pe_min));
        }
        return simplify_exact(kir::array_thread(kernel) * (int)kernel.pes_per_lane + (int)(slot + program.pe_min));
    }

    const kir::BufferArg &buffer(const std::string &n) const { return kernel.buffer(n); }

    // ---- values across instances (gpu_grid_sync) ---------------------------

    std::map<std::string, std::string> exchange_names;  ///< variable -> its grid exchange array

    /// One grid exchange array per variable another instance reads, kept as
    /// long as its longest read.
    void plan_grid_exchanges() {
        for (const sys::GridMove &m : program.grid_moves) {
            auto it = exchange_names.find(m.tap.var);
            if (it == exchange_names.end()) {
                it = exchange_names.emplace(m.tap.var, names.fresh(m.tap.var, "grid")).first;
                kernel.grid_exchanges.push_back(
                    {it->second, program.variable(m.tap.var).type, 1, copy_count * program.pe_count});
            }
            for (kir::GridExchange &x : kernel.grid_exchanges) {
                if (x.name == it->second) x.slots = std::max(x.slots, m.tap.dt + 1);
            }
        }
    }

    const kir::GridExchange &exchange_of(const std::string &var) const {
        return *kernel.grid_exchange(exchange_names.at(var));
    }

    const sys::GridMove &grid_move(const sys::Tap &tap) const {
        for (const sys::GridMove &m : program.grid_moves) {
            if (m.tap == tap) return m;
        }
        internal_error("kernel ", name, ": no grid move for a tap of ", tap.var, " across instances");
    }

    /// The number of array instances (Int(32): a grid-synchronised launch is
    /// resident on one GPU).
    Expr instance_count() const {
        Expr n = make_const(Int(32), 1);
        for (const kir::GridLoop &g : plan.grid) n = n * cast(Int(32), g.extent);
        return n;
    }

    /// The element of exchange `x` that holds, for the instance numbered
    /// `instance`, the value of `pe` in unrolled copy `copy` at step index `step`.
    Expr exchange_index(const kir::GridExchange &x, const Expr &step, const Expr &instance, const Copy &copy, const Expr &pe) const {
        Expr slot = step % (int)x.slots;
        return simplify_exact((slot * instance_count() + instance) * (int)x.per_instance +
                              (int)(copy.index * program.pe_count - program.pe_min) + pe);
    }

    /// The instance `tap` reads (its number, and whether it is in the grid):
    /// di back along each grid loop.
    std::pair<Expr, Expr> instance_read(const sys::Tap &tap) const {
        Expr instance = cast(Int(32), kir::warp_index()), inside = const_true(), stride = make_const(Int(32), 1);
        std::set<size_t> crossed;
        for (const kir::GridLoop &g : plan.grid) {
            for (size_t k = 0; k < program.instance_loops.size(); k++) {
                if (program.instance_loops[k].var != g.var || tap.di[k] == 0) continue;
                crossed.insert(k);
                Expr at = Variable::make(Int(32), g.var) - (int)tap.di[k];
                inside = inside && at >= (int)g.min && at < cast(Int(32), g.extent) + (int)g.min;
                instance = instance - stride * (int)tap.di[k];
            }
            stride = stride * cast(Int(32), g.extent);
        }
        for (size_t k = 0; k < tap.di.size(); k++) {
            if (tap.di[k] == 0) continue;
            for (const auto &definition : plan.definitions) {
                if (definition.first == program.instance_loops[k].var) {
                    compile_error("kernel ", name, ": ", tap.var, " is read across loop '", definition.first,
                                  "', which a tile splits: with gpu_grid_sync, values move between the instances of ",
                                  "gpu_blocks loops that are not tiled");
                }
            }
            if (!crossed.count(k)) {
                compile_error("kernel ", name, ": ", tap.var, " is read across loop '", program.instance_loops[k].var,
                              "', which is not a grid loop: with gpu_grid_sync, values move between the instances of gpu_blocks loops only");
            }
        }
        return {instance, inside};
    }

    /// Replaces input reads by guarded loads: inside the buffer and, where
    /// given, at a point of the domain (`in_domain`: a PE whose point the
    /// domain's constraints exclude loads nothing; its values are never read).
    Expr lower_loads(const Expr &e, const Expr &in_domain = Expr()) const {
        return kir::replace_calls(e, [&](const Call *op) -> Expr {
            std::string in = ir::input_callee(Expr(op));
            if (in.empty()) return Expr();
            std::vector<Expr> coords;
            for (const Expr &a : op->args) coords.push_back(lower_loads(a, in_domain));
            const kir::BufferArg &b = buffer(in);
            // A table's indices are clamped into it, and the host function
            // (and the executor) refuse a buffer that does not hold all of it
            // (BufferArg::required): its reads need no bounds test.
            Expr guard = source.input(in).is_table() ? const_true() : kir::in_bounds(b, coords);
            if (in_domain.defined()) guard = simplify_exact(in_domain && guard);
            return kir::load(op->type, in, guard, coords);
        });
    }

    Stmt instance_body() {
        // The unrolled copies: every combination of the unrolled loops' values.
        std::vector<Copy> copies{Copy{"", {}}};
        for (const SequentialLoop &l : plan.sequential) {
            if (!l.unrolled) continue;
            const int64_t *n = as_const_int(l.extent);
            internal_assert(n != nullptr, "unrolled loop ", l.var, " has no constant extent");
            std::vector<Copy> next;
            for (const Copy &c : copies) {
                for (int64_t k = 0; k < *n; k++) {
                    Copy d = c;
                    d.tag = kir::NameGenerator::spell(d.tag, l.var, k);
                    d.values[l.var] = make_const(Int(32), l.min + k);
                    next.push_back(d);
                }
            }
            copies = next;
        }
        for (size_t i = 0; i < copies.size(); i++) copies[i].index = (int64_t)i;
        copy_count = (int64_t)copies.size();
        instance_copies = copies;
        plan_grid_exchanges();
        // gpu_grid_sync: the instances wait for each other after every step,
        // so what a step wrote is there for the next; after the last too when
        // a per-thread loop runs the instance again (its first step writes
        // the slots the last one read).
        bool repeated = false;
        for (const SequentialLoop &l : plan.sequential) repeated |= !l.unrolled;
        auto end_step = [&](std::vector<Item> &items, bool last) {
            if (kernel.grid_sync && (!last || repeated)) items.push_back({"", Expr(), kir::grid_barrier()});
        };
        const int64_t per_step = copy_count * kernel.pes_per_lane;
        if (program.steps() * per_step > options.max_unrolled_steps) period = time_period();
        const int64_t unrolled = period ? period * per_step : program.steps() * per_step;
        if (unrolled > kernel_unroll_limit) {
            refuse(Refusal::TooManySteps, "", "kernel ", name, ": the array runs ", period ? period : program.steps(), period ? " steps per block of its rolled time loop" : " steps",
                          copies.size() > 1 ? " times " : "",
                          copies.size() > 1 ? std::to_string(copies.size()) + " unrolled iterations" : std::string(),
                          kernel.pes_per_lane > 1 ? " on " + std::to_string(kernel.pes_per_lane) + " PEs per lane" : std::string(),
                          "; the kernel unrolls them and holds at most ", kernel_unroll_limit,
                          ": shrink the loops of the transform (set_bounds) or the tile factor");
        }
        for (Copy &c : copies) {
            for (const auto &[var, value] : plan.definitions) {
                if (value.defined()) c.values[var] = simplify_exact(substitute(c.values, value));
            }
        }
        bind_data_bounds(copies);
        instance_copies = copies;
        if (!period) {
            std::vector<Item> items;
            for (int64_t t = program.time_min; t <= program.time_max; t++) {
                for (const Copy &c : copies) lower_step(make_const(Int(32), t), t - program.time_min, c, items);
                end_step(items, t == program.time_max);
            }
            return build(items);
        }
        // Rolled: blocks of `period` steps in a serial loop, then the steps left.
        block_var = names.fresh(program.time_var, "block");
        const int64_t blocks = program.steps() / period;
        Expr block = Variable::make(Int(32), block_var);
        carried = true;
        boundary = 0;
        std::vector<Item> items;
        for (int64_t k = 0; k < period; k++) {
            for (const Copy &c : copies) lower_step(simplify_exact(block * (int)period + (int)(program.time_min + k)), k, c, items);
            end_step(items, false);
        }
        // Each carried variable's last `history` values, for the next block.
        std::vector<Stmt> keep, init;
        for (const sys::Variable &v : program.variables) {
            for (const Copy &c : copies) {
                for (int64_t j = 0; j < kernel.pes_per_lane; j++) {
                    for (int64_t lag = 1; lag <= v.history; lag++) {
                        Expr index = make_const(Int(32), carry_index(v.name, c, j, lag));
                        keep.push_back(Store::make(carry_name(v.name), Variable::make(v.type, ssa(v.name, c, period - lag, j)), index,
                                                   Parameter(), const_true(), ModulusRemainder()));
                        init.push_back(Store::make(carry_name(v.name), make_zero(v.type), index, Parameter(), const_true(),
                                                   ModulusRemainder()));
                    }
                }
            }
        }
        auto sequence = [](const std::vector<Stmt> &stmts) { return stmts.empty() ? Stmt(Evaluate::make(0)) : Block::make(stmts); };
        Stmt loop = For::make(block_var, 0, (int)blocks, ForType::Serial, DeviceAPI::None,
                              until_last_step(block * (int)period + (int)program.time_min, build(items, sequence(keep))));
        std::vector<Item> tail;
        boundary = blocks * period;
        for (int64_t position = boundary; position < program.steps(); position++) {
            for (const Copy &c : copies) lower_step(make_const(Int(32), program.time_min + position), position, c, tail);
            end_step(tail, position + 1 == program.steps());
        }
        Stmt rest = tail.empty() ? Stmt(Evaluate::make(0)) : until_last_step(make_const(Int(32), program.time_min + boundary), build(tail));
        Stmt body = sequence({sequence(init), loop, rest});
        for (const sys::Variable &v : program.variables) {
            if (v.history == 0) continue;
            body = Allocate::make(carry_name(v.name), v.type, Halide::MemoryType::Register,
                                  {make_const(Int(32), copy_count * kernel.pes_per_lane * v.history)}, const_true(), body);
        }
        return body;
    }

    // ---- data bounds (a ragged batch) ---------------------------------------
    // Each copy reads its instance's bounds once, at the top of the instance
    // (lets named after the bounded loops); a PE's activity tests them, and
    // a rolled time loop's blocks past the instance's last step are skipped
    // (shorten_guarded_loops then ends the loop there).

    std::vector<std::pair<std::string, Expr>> bound_lets;  ///< in order, around the instance
    std::string last_step_name;                            ///< the instance's last step (all copies), if any bound

    void bind_data_bounds(std::vector<Copy> &copies) {
        if (program.data_bounds.empty()) return;
        Expr last;
        for (Copy &c : copies) {
            for (size_t k = 0; k < program.data_bounds.size(); k++) {
                const std::string n = names.fresh(source.data_bounds[k].loop + c.tag, "bound");
                bound_lets.push_back({n, simplify_exact(lower_loads(substitute(c.values, program.data_bounds[k])))});
                c.values[sys::data_bound_var(k)] = Variable::make(Int(32), n);
            }
            const Expr copy_last = simplify_exact(substitute(c.values, program.last_step));
            last = last.defined() ? max(last, copy_last) : copy_last;
        }
        last_step_name = names.fresh(program.time_var, "last");
        bound_lets.push_back({last_step_name, simplify_exact(last)});
    }

    /// `s`, the steps from `first_step` on, run only up to the instance's last step.
    Stmt until_last_step(const Expr &first_step, const Stmt &s) const {
        if (last_step_name.empty()) return s;
        return IfThenElse::make(first_step <= Variable::make(Int(32), last_step_name), s);
    }

    Stmt with_data_bounds(Stmt body) const {
        for (size_t i = bound_lets.size(); i-- > 0;) body = LetStmt::make(bound_lets[i].first, bound_lets[i].second, body);
        return body;
    }

    // ---- reduction outputs ----------------------------------------------------

    /// Reduction output -> its register array: one accumulator per unrolled
    /// copy (each copy is an instance of its own), combined over the copy's slots.
    std::map<std::string, std::string> accumulators;
    std::vector<Copy> instance_copies;

    /// Names each reduction's accumulator; refuses what is not lowered: an
    /// element that depends on the array's loops (PEs would share it across
    /// steps and lanes) or an array over several warps.
    void plan_reductions() {
        const std::vector<std::string> &array = source.schedule.transform->source_loops;
        for (const sys::Statement &st : program.statements) {
            if (!st.reduction) continue;
            const ir::Ure &u = source.ure(st.ure);
            for (const std::string &a : u.args) {
                if (std::find(array.begin(), array.end(), a) != array.end()) {
                    refuse(Refusal::ReductionNotLowered, u.name, "kernel ", name, ": reduction output ", u.lhs_text(), " is indexed by '", a,
                           "', a loop of the array; a reduction is lowered where each array instance reduces into its own elements: "
                           "index it by loops outside the array only (reduce over every loop of the space-time transform)");
                }
            }
            accumulators[st.ure] = names.fresh(st.ure, "reduce");
        }
        if (kernel.warps_per_array == 1) plan_thresholds();
        if (kernel.warps_per_array > 1) {
            for (const auto &[ure, acc] : accumulators) warp_totals[ure] = names.fresh(acc, "warps");
        }
    }

    /// A reduction that tests each contribution against a constant beside
    /// another that takes the extremum of the same values (`Overflow(b) =
    /// Overflow(b) || H > c` beside `Best(b) = max(Best(b), H)`) is that test of
    /// the extremum: OR over the points of (c < x) is c < max over them (the
    /// identity included: no point gives false either way). It is computed once,
    /// from the other's total over the lanes, and accumulates nothing per step.
    struct Threshold {
        std::string extremum;  ///< the reduction whose raw total it tests
        Expr test;             ///< the test, of the variable `threshold_total`
    };
    std::map<std::string, Threshold> thresholds;
    static constexpr const char *threshold_total = "threshold.total";

    /// Finds the thresholds (integer values only: a float extremum is not
    /// the test's witness where NaN enters).
    void plan_thresholds() {
        for (const sys::Statement &r : program.statements) {
            if (!r.reduction || (r.reduction->op != ir::ReduceOp::Or && r.reduction->op != ir::ReduceOp::And)) continue;
            // (What each point contributes where it is defined; both must be
            // defined at the same points.)
            const Expr test = simplify_exact(drop_undefined_branches(r.value));
            Expr a, b;
            if (const LT *lt = test.as<LT>()) a = lt->a, b = lt->b;
            else if (const LE *le = test.as<LE>()) a = le->a, b = le->b;
            else continue;
            for (const sys::Statement &m : program.statements) {
                if (!m.reduction || m.ure == r.ure || thresholds.count(m.ure)) continue;
                const ir::ReduceOp op = m.reduction->op;
                if ((op != ir::ReduceOp::Max && op != ir::ReduceOp::Min) || !(m.type.is_int() || m.type.is_uint())) continue;
                const Expr x = simplify_exact(drop_undefined_branches(m.value));
                if (!equal(simplify_exact(ir::defined_condition(m.value)), simplify_exact(ir::defined_condition(r.value)))) continue;
                // The extremum that decides the test: Or of (c < x) by max, of
                // (x < c) by min; And the other way round.
                const bool x_right = equal(b, x) && is_const(a), x_left = equal(a, x) && is_const(b);
                if (!x_right && !x_left) continue;
                const bool wants_max = x_right == (r.reduction->op == ir::ReduceOp::Or);
                if (wants_max != (op == ir::ReduceOp::Max)) continue;
                const Expr total = Variable::make(m.type, threshold_total);
                const Expr of_total = x_right ? Expr(test.as<LT>() ? LT::make(a, total) : LE::make(a, total))
                                              : Expr(test.as<LT>() ? LT::make(total, b) : LE::make(total, b));
                // With no point, the extremum's identity must give the test's.
                const Expr empty = simplify_exact(substitute(threshold_total, ir::reduce_identity(op, m.type), of_total));
                if (!equal(empty, ir::reduce_identity(r.reduction->op, r.type))) continue;
                thresholds[r.ure] = {m.ure, of_total};
                break;
            }
        }
    }

    /// An array of several warps: reduction output -> the shared array where
    /// lane 0 of each warp leaves its warp's totals (an element per copy and warp).
    std::map<std::string, std::string> warp_totals;

    /// The instance's steps between the accumulators' identities and each
    /// copy's reduction over the lanes (a tree of shuffles down, threads past
    /// those in use adding the identity), which lane 0 combines with the
    /// element's initial value and stores. On an array of several warps,
    /// lane 0 of each warp leaves its warp's total in shared memory, and
    /// thread 0 folds them in warp order after a barrier (a second barrier
    /// keeps the next instance's totals from overwriting them early).
    Stmt with_reductions(const Stmt &steps) {
        if (accumulators.empty()) return steps;
        std::vector<Stmt> first, last, folds;
        const Expr lane = Variable::make(Int(32), kir::lane_var);
        const Expr thread = kir::array_thread(kernel);
        const int warps = kernel.warps_per_array;
        const int64_t threads = kernel.threads_in_use();
        int64_t span = 1;
        while (span < std::min<int64_t>(threads, kir::warp_size)) span *= 2;
        for (const sys::Statement &st : program.statements) {
            if (!st.reduction || thresholds.count(st.ure)) continue;
            const std::string &acc = accumulators.at(st.ure);
            const Expr identity = ir::reduce_identity(st.reduction->op, st.type);
            for (const Copy &c : instance_copies) {
                first.push_back(kir::register_store(acc, identity, (int)c.index));
                std::vector<Item> items;
                Expr total = kir::register_load(st.type, acc, (int)c.index);
                for (int64_t d = span / 2; d >= 1; d /= 2) {
                    const std::string moved = names.fresh(acc + c.tag, "down", d), sum = names.fresh(acc + c.tag, "tree", d);
                    items.push_back({moved, kir::shuffle(kir::intrinsic::shfl_down, total, make_const(Int(32), d)), Stmt()});
                    // (Lane 0's total never takes a value from past its warp's end.)
                    const Expr in_use = simplify_exact(thread + (int)d < (int)threads);
                    Expr from = select(in_use, Variable::make(st.type, moved), identity);
                    items.push_back({sum, ir::reduce_combine(st.reduction->op, total, from), Stmt()});
                    total = Variable::make(st.type, sum);
                }
                std::vector<Expr> coords;
                for (const Expr &i : st.output_index) coords.push_back(simplify_exact(substitute(c.values, i)));
                const Expr initial = simplify_exact(substitute(c.values, st.reduction->initial));
                if (warps == 1) {
                    const Expr value = ir::reduce_combine(st.reduction->op, initial, total);
                    std::vector<Stmt> stores{kir::store(st.ure, kir::in_bounds(buffer(st.ure), coords), value, coords)};
                    // The tests of this total, stored beside it.
                    for (const sys::Statement &r : program.statements) {
                        const auto found = thresholds.find(r.ure);
                        if (found == thresholds.end() || found->second.extremum != st.ure) continue;
                        std::vector<Expr> at;
                        for (const Expr &i : r.output_index) at.push_back(simplify_exact(substitute(c.values, i)));
                        const Expr test = substitute(threshold_total, total, found->second.test);
                        const Expr tested = simplify_exact(
                            ir::reduce_combine(r.reduction->op, substitute(c.values, r.reduction->initial), test));
                        stores.push_back(kir::store(r.ure, kir::in_bounds(buffer(r.ure), at), tested, at));
                    }
                    last.push_back(build(items, IfThenElse::make(lane == 0, Block::make(stores))));
                    continue;
                }
                const Expr warp = Variable::make(Int(32), kir::array_warp_var);
                const std::string &shared = warp_totals.at(st.ure);
                const int base = (int)c.index * warps;
                last.push_back(build(items, IfThenElse::make(lane == 0, Store::make(shared, total, warp + base, Parameter(),
                                                                                    const_true(), ModulusRemainder()))));
                Expr value = initial;
                for (int w = 0; w < warps; w++) {
                    const Expr partial = Load::make(st.type, shared, make_const(Int(32), base + w), Buffer<>(), Parameter(),
                                                    const_true(), ModulusRemainder());
                    value = ir::reduce_combine(st.reduction->op, value, partial);
                }
                folds.push_back(kir::store(st.ure, kir::in_bounds(buffer(st.ure), coords), simplify_exact(value), coords));
            }
        }
        if (warps > 1) {
            last.push_back(kir::barrier());
            last.push_back(IfThenElse::make(thread == 0, Block::make(folds)));
            last.push_back(kir::barrier());
        }
        Stmt body = Block::make(Block::make(first), Block::make({steps, Block::make(last)}));
        for (const sys::Statement &st : program.statements) {
            if (!st.reduction || thresholds.count(st.ure)) continue;
            body = kir::allocate_registers(accumulators.at(st.ure), st.type, (int)copy_count, body);
            if (warps > 1) {
                body = Allocate::make(warp_totals.at(st.ure), st.type, Halide::MemoryType::GPUShared,
                                      {make_const(Int(32), copy_count * warps)}, const_true(), body);
            }
        }
        return body;
    }

    void lower_step(const Expr &t, int64_t position, const Copy &copy, std::vector<Item> &items) {
        const int64_t slots = kernel.pes_per_lane;
        Expr lane = Variable::make(Int(32), kir::lane_var);
        std::vector<std::map<std::string, Expr>> at(slots, copy.values);
        std::vector<std::string> active_name(slots);  // minted where first used
        std::vector<bool> active_used(slots, false);
        std::vector<Expr> active_value(slots);
        for (int64_t j = 0; j < slots; j++) {
            at[j][program.time_var] = t;
            at[j][program.space_var] = pe_of_slot(j);
            Expr on_array = pe_of_slot(j) < (int)(program.pe_min + program.pe_count);
            Expr preimage = program.has_preimage;
            if (program.data_active.defined()) preimage = preimage && program.data_active;
            active_value[j] = simplify_exact(on_array && substitute(at[j], preimage));
        }
        // The domain's constraints at slot j's point (undefined for a box): a
        // load there is skipped where they exclude the point.
        Expr domain_over_array;
        if (!program.source.constraints.empty()) {
            std::map<std::string, Expr> source_of;
            const ir::SpaceTimeTransform &transform = *program.source.schedule.transform;
            for (size_t i = 0; i < transform.source_loops.size(); i++) source_of[transform.source_loops[i]] = program.reverse[i];
            domain_over_array = substitute(source_of, program.source.domain_condition());
        }
        auto in_domain = [&](int64_t j) {
            return domain_over_array.defined() ? simplify_exact(substitute(at[j], domain_over_array)) : Expr();
        };
        // Whether slot j's PE runs this step: the let activeTAG.vSLOT.tPOSITION.
        auto active = [&](int64_t j) {
            if (!active_used[j]) {
                std::string base = "active" + copy.tag;
                if (slots > 1) base = kir::NameGenerator::spell(base, "v", j);
                active_name[j] = names.fresh(base, "t", position);
                active_used[j] = true;
            }
            return Variable::make(Bool(), active_name[j]);
        };
        std::vector<Item> step;
        std::map<std::string, std::string> shuffled;  // a value moved by lanes -> its let in this step

        // The value of `var` at step `when` on the PE dp below slot j's: a
        // register of this lane, or of the lane the PE lives on (a shuffle).
        // The value of `var` at step `when` (a position) on the PE dp below
        // slot j's: a register of this lane, or of the lane the PE lives on (a shuffle).
        auto neighbour = [&](const std::string &var, int64_t when, int64_t dp, int64_t j) -> Expr {
            if (kernel.interleaved_rows && dp != 0) throw NeedsBlockedColumns();
            if (kernel.warp_rows && dp != 0) {
                refuse(Refusal::TapBeyondWarp, var, "kernel ", name, ": ", var, " moves ", dp, " PEs, but the array runs a tile of ",
                       kernel.pes_per_lane, " PEs per thread on the lanes and warps of a block (", program.inner_space_axis().var,
                       " past 32 values, or --pes-per-thread), which holds only where no value moves between PEs: ",
                       "drop --pes-per-thread and keep ", program.inner_space_axis().var, " within 32 values, or broadcast ", var,
                       " (a transform that gives its copy chain no time)");
            }
            int64_t source = j - dp;
            int64_t source_slot = ((source % slots) + slots) % slots;
            int64_t lanes_up = (source - source_slot) / slots;  // the source lane is lane + lanes_up
            std::string key;
            Expr value = value_at(var, copy, when, source_slot, &key);
            if (lanes_up == 0 || key.empty()) return value;
            // A 2-D array's move along its row on the warps spans whole warps: through shared memory.
            const bool across_warps = program.is_two_dimensional() && std::abs(lanes_up) >= kir::warp_size;
            const bool through_shared = in_shared_memory(var) || across_warps;
            if (through_shared && std::abs(lanes_up) >= kernel.array_threads()) {
                refuse(Refusal::TapBeyondWarp, var, "kernel ", name, ": a tap of ", var, " moves ", dp, " PEs, further than the ",
                       kernel.array_threads(), " threads of its block");
            }
            if (!through_shared && std::abs(lanes_up) >= kir::warp_size) {
                refuse(Refusal::TapBeyondWarp, var, "kernel ", name, ": a tap of ", var, " moves ", dp, " PEs, further than a warp",
                       kernel.warps_per_array > 1 ? "; hold " + var + " in shared memory (" + var +
                                                        ".store_in(MemoryType::Shared)) to move it across the block"
                                                  : std::string());
            }
            const char *direction = lanes_up < 0 ? "up" : "down";
            const std::string moved = kir::NameGenerator::spell(key, direction, std::abs(lanes_up));
            auto it = shuffled.find(moved);
            if (it == shuffled.end()) {
                // Steps read one value at several distances in time: the let of
                // a later step is still inside an earlier one's, and `names` gives it its own name.
                std::string n = names.fresh(key, direction, std::abs(lanes_up));
                step.push_back({n, shift(value, -lanes_up, through_shared), Stmt()});
                it = shuffled.emplace(moved, n).first;
            }
            return Variable::make(value.type(), it->second);
        };
        // gpu_grid_sync: the index of this step, and the value of another
        // instance dt steps back, loaded from its grid exchange array where
        // the read is taken (its writer stored it there under the same condition).
        const Expr step_index = simplify_exact(t - (int)program.time_min);
        auto on_array = [&](const Expr &pe) { return pe >= (int)program.pe_min && pe < (int)(program.pe_min + program.pe_count); };
        auto from_grid = [&](const sys::Tap &tap, int64_t j) -> Expr {
            const sys::GridMove &m = grid_move(tap);
            const kir::GridExchange &x = exchange_of(tap.var);
            const Expr pe = simplify_exact(pe_of_slot(j) - (int)tap.dp);
            auto [instance, inside] = instance_read(tap);
            Expr guard = substitute(at[j], m.reader_guard) && inside && on_array(pe) && step_index >= (int)tap.dt;
            Expr index = exchange_index(x, step_index - (int)tap.dt, instance, copy, pe);
            return select(simplify_exact(guard), Load::make(x.type, x.name, index, Buffer<>(), Parameter(), const_true(), ModulusRemainder()),
                          make_zero(x.type));
        };
        // ... and the store of this step's value of `var` for the instances that read it.
        auto to_grid = [&](const std::string &var, const std::string &value, int64_t j) {
            if (!exchange_names.count(var)) return;
            const kir::GridExchange &x = exchange_of(var);
            Expr guard = const_false();
            for (const sys::GridMove &m : program.grid_moves) {
                if (m.tap.var == var) guard = guard || substitute(at[j], m.writer_guard);
            }
            guard = simplify_exact(lower_loads(guard) && on_array(pe_of_slot(j)));
            Expr index = exchange_index(x, step_index, cast(Int(32), kir::warp_index()), copy, pe_of_slot(j));
            Stmt store = Store::make(x.name, Variable::make(x.type, value), index, Parameter(), const_true(), ModulusRemainder());
            step.push_back({"", Expr(), IfThenElse::make(guard, store)});
        };
        std::set<std::string> computed;  // the variables this step has computed so far
        // Taps of earlier steps, and same-step taps of this PE, resolved.
        auto resolve_earlier = [&](Expr e, int64_t j) {
            for (const sys::Tap &tap : sys::taps_in(e)) {
                if (tap.crosses_instances()) {
                    e = replace_tap(e, tap, from_grid(tap, j));
                } else if (tap.dt >= 1) {
                    e = replace_tap(e, tap, neighbour(tap.var, position - tap.dt, tap.dp, j));
                } else if (tap.dt == 0 && tap.dp == 0 && !computed.count(tap.var)) {
                    // A read of this PE's value of this step before it is computed:
                    // as for a later step, the validator accepts it only where the
                    // dependence is never taken on the domain.
                    e = replace_tap(e, tap, make_zero(program.variable(tap.var).type));
                } else if (tap.dt == 0 && tap.dp == 0) {
                    e = replace_tap(e, tap, Variable::make(program.variable(tap.var).type, ssa(tap.var, copy, position, j)));
                } else if (tap.dt < 0) {
                    // A read of a later step: the validator accepts it only where the
                    // dependence is never taken on the domain, so its value never matters.
                    e = replace_tap(e, tap, make_zero(program.variable(tap.var).type));
                }
            }
            return e;
        };

        for (const sys::Statement &st : program.statements) {
            for (int64_t j = 0; j < slots; j++) {
                Expr value = simplify_exact(substitute(at[j], st.value));
                if (st.reduction) {
                    if (thresholds.count(st.ure)) continue;  // a test of another's total
                    // acc = op(acc, value) where this PE runs a point where the value is defined.
                    const std::string &acc = accumulators.at(st.ure);
                    Expr contribution = lower_loads(resolve_earlier(drop_undefined_branches(value), j), in_domain(j));
                    Expr combined = ir::reduce_combine(st.reduction->op, kir::register_load(st.type, acc, (int)copy.index), contribution);
                    Expr cond = simplify_exact(active(j) && ir::defined_condition(value));
                    step.push_back({"", Expr(), IfThenElse::make(cond, kir::register_store(acc, combined, (int)copy.index))});
                    continue;
                }
                if (st.is_output) {
                    Expr defined = ir::defined_condition(value);
                    Expr stored = lower_loads(resolve_earlier(drop_undefined_branches(value), j), in_domain(j));
                    std::vector<Expr> coords;
                    for (const Expr &i : st.output_index) coords.push_back(simplify_exact(substitute(at[j], i)));
                    const kir::BufferArg &out = buffer(st.ure);
                    Expr cond = simplify_exact(active(j) && defined);
                    step.push_back({"", Expr(), IfThenElse::make(cond, kir::store(st.ure, kir::in_bounds(out, coords), stored, coords))});
                    continue;
                }
                // Where a select leaves the value undefined, nothing reads it
                // (check_well_defined): any value will do, and the kernel must compute one.
                const Expr with_undefined = value;
                value = zero_undefined(value);
                // Chains are planned on the value over a symbolic PE: one
                // slot may hold no source of a chain that others do.
                std::map<std::string, Expr> over_any_pe = copy.values;
                over_any_pe[program.time_var] = t;
                Expr generic = zero_undefined(simplify_exact(substitute(over_any_pe, st.value)));
                std::vector<sys::Tap> chains;
                for (const sys::Tap &tap : sys::taps_in(generic)) {
                    if (tap.dt == 0 && tap.dp != 0) chains.push_back(tap);
                }
                // A 2-D array's chain along its register slots (the validator
                // accepts dt = 0 from a lower slot of the same lane): the
                // slots run in ascending order, so each source is a value of
                // this step already computed.
                std::vector<sys::Tap> here;
                bool along_slots = false;
                if (!chains.empty() && slots > 1 && program.is_two_dimensional() && !program.rows_on_warps) {
                    for (const sys::Tap &tap : sys::taps_in(value)) {
                        if (tap.dt == 0 && tap.dp != 0 && !tap.crosses_instances()) here.push_back(tap);
                    }
                    // (A copy chain of one value along the chain, a broadcast, is computed in place below.)
                    auto broadcast = [&] {
                        if (chains.size() != 1 || chains[0].var != st.ure) return false;
                        std::optional<Expr> where = copy_condition(generic, chains[0]);
                        return where && same_along_chain(simplify_exact(source_value(generic, chains[0])), chains[0].dp, *where);
                    };
                    along_slots = std::all_of(here.begin(), here.end(), [&](const sys::Tap &tap) { return tap.dp > 0 && tap.dp <= j; }) &&
                                  !broadcast();
                }
                Expr result;
                const std::string own_name = ssa(st.ure, copy, position, j);
                if (along_slots) {
                    for (const sys::Tap &tap : here) value = replace_tap(value, tap, neighbour(tap.var, position, tap.dp, j));
                    result = lower_loads(resolve_earlier(value, j), in_domain(j));
                } else if (chains.empty()) {
                    // A copy chain is planned on where the value is defined; without one
                    // the undefined side's test can go.
                    result = lower_loads(resolve_earlier(drop_undefined_branches(with_undefined), j), in_domain(j));
                } else if (chains.size() != 1 || chains[0].var != st.ure) {
                    // A same-step read of another variable along the PEs: that
                    // variable is final already (every slot of it is).
                    for (const sys::Tap &tap : chains) {
                        if (tap.var == st.ure) refuse(Refusal::SeveralSameStepChains, st.ure, "kernel ", name, ": ", st.ure, " has several same-step copy chains; not supported");
                        value = replace_tap(value, tap, neighbour(tap.var, position, tap.dp, j));
                    }
                    result = lower_loads(resolve_earlier(value, j), in_domain(j));
                } else {
                    const sys::Tap tap = chains[0];
                    std::optional<Expr> copies_where = copy_condition(generic, tap);
                    Expr from_source = copies_where ? simplify_exact(source_value(generic, tap)) : Expr();
                    if (copies_where && same_along_chain(from_source, tap.dp, *copies_where)) {
                        // A copy chain of a value that is the same on every PE
                        // of the chain (a broadcast): each PE computes it in place.
                        result = lower_loads(resolve_earlier(simplify_exact(substitute(at[j], from_source)), j), in_domain(j));
                    } else if (slots > 1 || kernel.warps_per_array > 1) {
                        refuse(Refusal::SameStepChain, st.ure, "kernel ", name, ": ", st.ure, " is a same-step chain along the PEs of a value that differs ",
                                      "between them, and the array (", program.pe_count, " PEs) is wider than a warp; such chains ",
                                      "run on one warp with one PE per lane only: shrink the space loops (set_bounds) to at most ",
                                      kir::warp_size, " PEs");
                    } else if (copies_where) {
                        // Each lane takes the value of the nearest source lane
                        // l - k*dp; the validator guarantees the lanes between
                        // are active copies.
                        Expr own = lower_loads(resolve_earlier(replace_tap(value, tap, make_zero(st.type)), j), in_domain(j));
                        std::string own_n = names.fresh(own_name, "own"), from_n = names.fresh(own_name, "from");
                        step.push_back({own_n, own, Stmt()});
                        Expr copies_here = substitute(at[j], *copies_where);  // planned over a symbolic PE
                        step.push_back({from_n, kir::chain_source(simplify_exact(active(j) && !copies_here), tap.dp), Stmt()});
                        Expr from = Variable::make(Int(32), from_n);
                        result = kir::shuffle(kir::intrinsic::shfl_idx, Variable::make(st.type, own_n), select(from < 0, lane, from));
                    } else {
                        // The chain flows through arithmetic: one hop per round
                        // until the longest chain of the array is covered.
                        int64_t rounds = (program.pe_count - 1) / std::abs(tap.dp) + 1;
                        Expr body = lower_loads(resolve_earlier(value, j), in_domain(j));
                        std::string prev = names.fresh(own_name, "round", 0);
                        step.push_back({prev, make_zero(st.type), Stmt()});
                        for (int64_t r = 1; r <= rounds; r++) {
                            std::string heard = names.fresh(own_name, "heard", r);
                            step.push_back({heard, shift(Variable::make(st.type, prev), tap.dp, in_shared_memory(tap.var)), Stmt()});
                            std::string next = names.fresh(own_name, "round", r);
                            step.push_back({next, replace_tap(body, tap, Variable::make(st.type, heard)), Stmt()});
                            prev = next;
                        }
                        result = Variable::make(st.type, prev);
                    }
                }
                if (program.check_time) result = select(active(j), result, make_zero(st.type));
                step.push_back({own_name, result, Stmt()});
                to_grid(st.ure, own_name, j);
            }
            computed.insert(st.ure);
        }
        for (int64_t j = 0; j < slots; j++) {
            if (active_used[j]) items.push_back({active_name[j], active_value[j], Stmt()});
        }
        items.insert(items.end(), step.begin(), step.end());
    }

    std::string describe() const {
        std::ostringstream s;
        s << name << ": a software systolic array generated by Pulse.\n\n";
        s << "UREs (loops, innermost first:";
        for (const ir::Loop &l : source.loops) s << " " << l.var << " in [" << l.min << ", " << l.max() << "]";
        s << "):\n";
        for (const ir::Ure &u : source.ures) {
            // An output at affine indices shows them (Out(b*C + c, r)).
            std::vector<std::string> index;
            if (u.index.empty()) index = u.args;
            else for (const Expr &e : u.output_index()) index.push_back(ir::to_source(e));
            s << "  " << u.name << "(";
            for (size_t i = 0; i < index.size(); i++) s << (i ? ", " : "") << index[i];
            s << ") = " << ir::to_source(u.value) << "\n";
        }
        const ir::SpaceTimeTransform &st = *source.schedule.transform;
        s << "Space-time transform" << (st.check_time ? " (CheckTime)" : "") << ":\n";
        for (size_t r = 0; r < st.matrix.size(); r++) {
            s << "  " << st.destination_loops[r] << " =";
            bool first = true;
            for (size_t i = 0; i < st.matrix[r].size(); i++) {
                int64_t a = st.matrix[r][i];
                if (a == 0) continue;
                s << (first ? (a < 0 ? " -" : " ") : (a < 0 ? " - " : " + "));
                if (std::abs(a) != 1) s << std::abs(a) << "*";
                s << st.source_loops[i];
                first = false;
            }
            if (first) s << " 0";
            s << "\n";
        }
        s << "Array: " << program.pe_count << " PEs (";
        if (const int64_t rows = kernel.warp_rows) {
            s << kernel.warps_per_array << " warps of a block, a tile of " << kernel.pes_per_lane << " PEs per thread: "
              << program.outer_space_axis().var << " = " << rows << " * warp + r (r < " << rows << "), "
              << program.inner_space_axis().var
              << (kernel.warp_columns_blocked ? " = " + std::to_string(kernel.pes_per_lane / rows) + " lane + c" : std::string(" = lane + 32 c"))
              << "; nothing moves between PEs";
        } else if (kernel.warps_per_array > 1 && kernel.pes_per_lane > 1) {
            s << kernel.warps_per_array << " warps of a block, " << kernel.pes_per_lane << " PEs per thread: 32 * warp + lane = ("
              << program.space_var << " - " << program.pe_min << ") / " << kernel.pes_per_lane << "; moves across warps through shared memory";
        } else if (kernel.warps_per_array > 1) {
            s << kernel.warps_per_array << " warps of a block, one PE per thread: 32 * warp + lane = " << program.space_var << " - "
              << program.pe_min << "; moves across warps through shared memory";
        } else if (kernel.interleaved_rows) {
            const int64_t rows = kernel.interleaved_rows;
            s << kernel.pes_per_lane << " per lane, columns of " << rows << " interleaved: lane = ((" << program.space_var << " - "
              << program.pe_min << ") / " << rows << ") % 32";
        } else if (kernel.pes_per_lane > 1) {
            s << kernel.pes_per_lane << " per lane: lane = (" << program.space_var << " - " << program.pe_min << ") / " << kernel.pes_per_lane;
        } else {
            s << "lane = " << program.space_var << " - " << program.pe_min;
        }
        s << "), " << program.steps() << " steps, ";
        if (period) s << "rolled: a loop over blocks of " << period << " steps.\n";
        else s << "unrolled.\n";
        s << (kernel.warps_per_array > 1 ? "Grid: one block per" : "Grid: one warp per");
        if (plan.grid.empty()) s << " kernel (a single instance)";
        for (const kir::GridLoop &g : plan.grid) s << " " << g.var;
        if (source.schedule.vectorize) {
            s << " pair (vectorize: " << source.schedule.vectorize->first << " = 2 p + k on lane k of the vectors)";
        }
        s << "; per-thread loops:";
        if (plan.sequential.empty()) s << " none";
        for (const SequentialLoop &l : plan.sequential) s << " " << l.var << (l.unrolled ? " (unrolled)" : "");
        s << ".\nRegisters per lane: the values of earlier steps each tap reads (dp lanes away by a shuffle):\n";
        for (const sys::Variable &v : program.variables) {
            s << "  " << v.name << ": " << sys::to_string(v.dataflow) << ", history " << v.history << ";";
            for (const sys::Tap &t : v.taps) s << " (dp " << t.dp << ", dt " << t.dt << ")";
            s << "\n";
        }
        return s.str();
    }
};

}  // namespace

kir::Kernel lower_to_kernel(const sys::SystolicProgram &program, const std::string &name,
                            const std::vector<std::string> &input_order, const KernelOptions &options) {
    kir::Kernel kernel;
    kir::on_large_stack([&] {
        try {
            kernel = KernelLowering(program, name, input_order, options, true).run();
        } catch (const NeedsBlockedColumns &) {
            kernel = KernelLowering(program, name, input_order, options, false).run();
        }
    });
    return kernel;
}

}  // namespace pulse
