#include "lower/LowerToSystolic.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "ir/KernelIR.h"
#include "analysis/IslModel.h"
#include "analysis/ReverseTransform.h"
#include "ir/ExactSimplify.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// The tap a read of `producer` at distance `distance` (one entry per loop)
/// is: (P·d, s·d) over the source loops (P·d in the linear PE index: each
/// space row's distance times its stride, SpaceAxis), and the distance in the instance
/// loops when it crosses instances (di; empty when it does not).
sys::Tap tap_of(const ir::UreProgram &program, const std::vector<int64_t> &space_strides, const std::string &producer,
               const std::vector<int64_t> &distance) {
    const ir::SpaceTimeTransform &t = *program.schedule.transform;
    sys::Tap tap{producer, 0, 0, {}};
    bool crosses = false;
    for (size_t l = 0; l < program.loops.size(); l++) {
        const auto column = std::find(t.source_loops.begin(), t.source_loops.end(), program.loops[l].var);
        if (column == t.source_loops.end()) {
            tap.di.push_back(distance[l]);
            crosses |= distance[l] != 0;
            continue;
        }
        for (size_t r = 0; r < space_strides.size(); r++) {
            tap.dp += space_strides[r] * t.matrix[r][column - t.source_loops.begin()] * distance[l];
        }
        tap.dt += t.matrix.back()[column - t.source_loops.begin()] * distance[l];
    }
    if (!crosses) tap.di.clear();
    return tap;
}

/// Replaces recurrence calls `V(x - d)` by taps (V, P·d, s·d).
class ReplaceCalls : public IRMutator {
public:
    ReplaceCalls(const ir::UreProgram &p, const std::vector<int64_t> &strides, const ir::Ure &u)
        : program(p), space_strides(strides), ure(u) {}

protected:
    using IRMutator::visit;
    Expr visit(const Call *op) override {
        std::string callee = ir::recurrence_callee(op);
        if (callee.empty()) return IRMutator::visit(op);
        const ir::SpaceTimeTransform &t = *program.schedule.transform;
        const ir::Ure &producer = program.ure(callee);
        std::vector<int64_t> distance(program.loops.size(), 0);
        for (size_t i = 0; i < op->args.size(); i++) {
            const Expr d = simplify_exact(Variable::make(Int(32), producer.args[i]) - op->args[i]);  // owns what k points to
            const int64_t *k = as_const_int(d);
            if (!k) compile_error("call ", ir::to_source(Expr(op)), " in ", ure.name, " is not at a constant distance");
            distance[program.loop_index(producer.args[i])] = *k;
        }
        for (size_t l = 0; l < program.loops.size(); l++) {
            bool in_transform = std::count(t.source_loops.begin(), t.source_loops.end(), program.loops[l].var) > 0;
            if (in_transform) continue;
            const std::vector<std::string> &blocks = program.schedule.gpu_blocks;
            const bool synchronised = program.schedule.gpu_grid_sync &&
                                      std::count(blocks.begin(), blocks.end(), program.loops[l].var) > 0;
            if (distance[l] != 0 && !synchronised) {
                compile_error("call ", ir::to_source(Expr(op)), " in the definition of ", ure.name,
                              " has distance ", distance[l], " in loop '", program.loops[l].var,
                              "', which is not a source loop of the space-time transform: it would read another array "
                              "instance; add '", program.loops[l].var, "' to the transform's source loops");
            }
        }
        return sys::make_tap(op->type, tap_of(program, space_strides, callee, distance));
    }

private:
    const ir::UreProgram &program;
    const std::vector<int64_t> &space_strides;
    const ir::Ure &ure;
};

/// A same-step read of a variable the step computes at or after the reader
/// (a copy chain through several variables: W(c) = V(c - 1), V(c) = W(c))
/// would read the value before it is computed. Each such read is replaced by
/// the variable's definition at the PE it reads from (its taps moved by the
/// read's dp, the PE index shifted), until every same-step read is of a value
/// computed earlier in the step or of the reader itself (a one-variable chain).
void inline_same_step_reads(sys::SystolicProgram &p) {
    std::map<std::string, size_t> position;
    for (size_t i = 0; i < p.statements.size(); i++) position[p.statements[i].ure] = i;
    for (size_t i = 0; i < p.statements.size(); i++) {
        sys::Statement &reader = p.statements[i];
        for (size_t round = 0;; round++) {
            bool changed = false;
            reader.value = simplify_exact(kir::replace_calls(reader.value, [&](const Call *op) -> Expr {
                sys::Tap tap;
                if (!sys::is_tap(Expr(op), &tap) || tap.dt != 0 || tap.var == reader.ure) return Expr();
                auto at = position.find(tap.var);
                if (at == position.end() || at->second < i) return Expr();
                changed = true;
                // The definition at PE s - dp: its taps move by dp, its PE index shifts.
                Expr shifted = substitute(p.space_var, Variable::make(Int(32), p.space_var) - (int)tap.dp,
                                          p.statements[at->second].value);
                return kir::replace_calls(shifted, [&](const Call *inner) -> Expr {
                    sys::Tap t;
                    if (!sys::is_tap(Expr(inner), &t)) return Expr();
                    return sys::make_tap(inner->type, sys::Tap{t.var, t.dp + tap.dp, t.dt, t.di});
                });
            }));
            if (!changed) break;
            if (round > p.statements.size()) {
                refuse(Refusal::SameStepCycle, reader.ure, p.source.name, ": the same-step reads of ", reader.ure, " form a cycle through other variables ",
                              "(each reads the next at the same step): no order of the step computes them");
            }
        }
    }
}

/// The conjuncts of `e` over the loops alone (a select's test on where the
/// point lies; not on inputs or recurrences), and'ed: a condition the writer
/// of a value can evaluate for its reader, cheaply. Dropping the others
/// makes writer and reader agree on a superset of the reads.
Expr loop_conjuncts(const Expr &e) {
    if (const And *op = e.as<And>()) return loop_conjuncts(op->a) && loop_conjuncts(op->b);
    bool calls = false;
    kir::for_each_call(e, [&](const Call *) { calls = true; });
    return calls ? const_true() : e;
}

/// The taps that read another instance (gpu_grid_sync), each with the
/// condition under which it is read, at the reader and at the writer.
std::vector<sys::GridMove> plan_grid_moves(const ir::UreProgram &program, const std::vector<int64_t> &space_strides,
                                           const std::function<Expr(const Expr &)> &rewrite) {
    const ir::SpaceTimeTransform &t = *program.schedule.transform;
    std::vector<sys::GridMove> moves;
    for (const ir::Dependence &dep : program.dependences) {
        const sys::Tap tap = tap_of(program, space_strides, dep.producer, dep.distance);
        if (!tap.crosses_instances()) continue;
        // The reader's point lies in the array, and its selects take the read.
        Expr condition = loop_conjuncts(dep.condition);
        for (const std::string &var : t.source_loops) {
            const ir::Loop &loop = program.loop(var);
            Expr v = Variable::make(Int(32), var);
            condition = condition && v >= (int)loop.min && v <= (int)loop.max();
        }
        // At the writer, the reader is the point d further on.
        std::map<std::string, Expr> reader_of_writer;
        for (size_t l = 0; l < program.loops.size(); l++) {
            const std::string &var = program.loops[l].var;
            reader_of_writer[var] = Variable::make(Int(32), var) + (int)dep.distance[l];
        }
        Expr reader = rewrite(condition), writer = rewrite(substitute(reader_of_writer, condition));
        auto same = std::find_if(moves.begin(), moves.end(), [&](const sys::GridMove &m) { return m.tap == tap; });
        if (same == moves.end()) {
            moves.push_back({tap, reader, writer});
        } else {
            same->reader_guard = simplify_exact(same->reader_guard || reader);
            same->writer_guard = simplify_exact(same->writer_guard || writer);
        }
    }
    return moves;
}

/// True if `e` mentions the variable `name`.
bool uses_var(const Expr &e, const std::string &name) { return Halide::Internal::expr_uses_var(e, name); }

/// Smallest and largest value of row r of the transform (row · x) over the
/// domain of the source loops: on the box directly, with constraints by isl.
/// The range of row `r` of the transform over the box of the source loops.
std::pair<int64_t, int64_t> row_range_of_box(const ir::UreProgram &program, size_t r) {
    const ir::SpaceTimeTransform &t = *program.schedule.transform;
    const std::vector<int64_t> &row = t.matrix[r];
    int64_t lo = 0, hi = 0;
    for (size_t c = 0; c < row.size(); c++) {
        const ir::Loop &l = program.loop(t.source_loops[c]);
        int64_t a = row[c] * l.min, b = row[c] * l.max();
        lo += std::min(a, b);
        hi += std::max(a, b);
    }
    return {lo, hi};
}

/// The range of row `r` of the transform over the domain.
std::pair<int64_t, int64_t> row_range(const ir::UreProgram &program, size_t r) {
    const ir::SpaceTimeTransform &t = *program.schedule.transform;
    if (program.constraints.empty()) return row_range_of_box(program, r);
    isl_model::Context context;
    isl::set image = isl_model::forward_map(t, isl_model::iteration_domain(context, program, t.source_loops)).range();
    return {isl_val_get_num_si(image.dim_min_val((int)r).get()), isl_val_get_num_si(image.dim_max_val((int)r).get())};
}

/// The linear PE variable of a 2-D array: the two rows' names joined (s1.s2),
/// made distinct from every loop's name.
std::string linear_pe_name(const ir::UreProgram &program) {
    const ir::SpaceTimeTransform &t = *program.schedule.transform;
    std::string name = t.destination_loops[0] + "." + t.destination_loops[1];
    auto taken = [&](const std::string &n) {
        return std::any_of(program.loops.begin(), program.loops.end(), [&](const ir::Loop &l) { return l.var == n; });
    };
    while (taken(name)) name += ".pe";
    return name;
}

/// True if the schedule maps both space rows of a 2-D array onto threads
/// (gpu_threads(x, y): x on the lanes, y on the warps of a block).
bool space_rows_on_threads(const ir::UreProgram &program) {
    const ir::SpaceTimeTransform &t = *program.schedule.transform;
    const std::vector<std::string> &threads = program.schedule.gpu_threads;
    if (t.matrix.size() != 3 || threads.size() != 2) return false;
    auto is_space = [&](const std::string &v) { return v == t.destination_loops[0] || v == t.destination_loops[1]; };
    return is_space(threads[0]) && is_space(threads[1]);
}

/// Each space row's range on the domain and its stride in the linear PE
/// index (sys::SpaceAxis), into `p`: for a 2-D array, the second row on a thread's
/// register slots (stride 1) and the first on its lanes (stride: the second
/// row's extent), or, with gpu_threads(x, y), x on the lanes (stride 1) and y
/// on the warps (stride: x's extent rounded up to a multiple of 32).
void plan_space_axes(const ir::UreProgram &program, sys::SystolicProgram &p) {
    const ir::SpaceTimeTransform &t = *program.schedule.transform;
    std::vector<sys::SpaceAxis> &axes = p.space_axes;
    for (size_t r = 0; r + 1 < t.matrix.size(); r++) {
        auto [lo, hi] = row_range(program, r);
        axes.push_back({t.destination_loops[r], lo, hi - lo + 1, 1});
    }
    if (axes.size() == 1) return;
    if (space_rows_on_threads(program)) {
        const std::vector<std::string> &threads = program.schedule.gpu_threads;
        sys::SpaceAxis &lanes = axes[0].var == threads[0] ? axes[0] : axes[1];
        sys::SpaceAxis &warps = axes[0].var == threads[0] ? axes[1] : axes[0];
        // A lanes' row wider than a warp holds every 32nd value per lane
        // (lower_to_kernel checks that nothing then moves along it): the
        // warps' row's stride is the lanes' row rounded up to whole warps.
        lanes.stride = 1;
        warps.stride = (lanes.extent + kir::warp_size - 1) / kir::warp_size * kir::warp_size;
        p.outer_axis = &warps == &axes[0] ? 0 : 1;
        p.rows_on_warps = true;
        return;
    }
    axes[0].stride = axes[1].extent;
    axes[1].stride = 1;
    p.outer_axis = 0;
}

/// The dataflow class of a variable from the taps at which it reads itself
/// (docs/glossary.md) and, for a carrier loaded from an input, that input's index.
sys::Dataflow classify(const sys::Variable &v, const std::vector<sys::Tap> &self_taps, const sys::SystolicProgram &p) {
    if (v.is_partial_sum) {
        for (const sys::Tap &t : self_taps) {
            if (t.dt == 0 && t.dp != 0) return sys::Dataflow::Aggregated;
        }
        for (const sys::Tap &t : self_taps) {
            if (t.dp != 0) return sys::Dataflow::Migrates;
        }
        return sys::Dataflow::Sedimented;
    }
    for (const sys::Tap &t : self_taps) {
        if (t.dt == 0 && t.dp != 0) return sys::Dataflow::Broadcast;
    }
    for (const sys::Tap &t : self_taps) {
        if (t.dp != 0 && t.dt >= 1) return sys::Dataflow::Forwarded;
    }
    if (self_taps.empty()) {
        // Loaded afresh at every point: one value for all lanes if the index
        // depends on time only.
        bool all_broadcast = false;
        for (const sys::InputRead &r : p.input_reads) {
            if (r.consumer != v.name) continue;
            if (!r.broadcast || r.stationary) return sys::Dataflow::Stays;
            all_broadcast = true;
        }
        if (all_broadcast) return sys::Dataflow::Broadcast;
    }
    return sys::Dataflow::Stays;
}

}  // namespace

sys::SystolicProgram lower_to_systolic(const ir::UreProgram &program) {
    if (!program.schedule.transform) {
        compile_error(program.name, " has no space-time transform: add ", program.name,
                      ".space_time_transform(source loops, destination loops, matrix)");
    }
    const ir::SpaceTimeTransform &t = *program.schedule.transform;
    // Tiles of loops outside the array shape the kernel's loops (LowerToKernel);
    // the array itself is not tiled.
    for (const ir::Tile &tile : program.schedule.tiles) {
        if (std::count(t.source_loops.begin(), t.source_loops.end(), tile.var)) {
            compile_error(program.name, ".tile(", tile.var, ", ", tile.outer, ", ", tile.inner, ", ", tile.factor, "): '", tile.var,
                          "' is a source loop of the space-time transform; the array is not tiled: bound the loop to the "
                          "array's size with set_bounds and tile only loops outside the array");
        }
    }
    if (t.destination_loops.size() != t.matrix.size() || t.matrix.size() < 2 || t.matrix.size() > 3) {
        compile_error("the space-time transform of ", program.name, " has ", t.matrix.size(),
                      " destination loops; Pulse lowers linear and two-dimensional arrays: one or two space rows, then the time row");
    }
    sys::SystolicProgram p;
    p.source = program;
    plan_space_axes(program, p);
    p.space_var = p.is_two_dimensional() ? linear_pe_name(program) : t.destination_loops[0];
    p.time_var = t.destination_loops.back();
    p.check_time = t.check_time;
    std::vector<int64_t> strides;
    for (const sys::SpaceAxis &a : p.space_axes) strides.push_back(a.stride);
    for (const ir::Loop &l : program.loops) {
        if (std::find(t.source_loops.begin(), t.source_loops.end(), l.var) == t.source_loops.end()) {
            p.instance_loops.push_back(l);
        }
    }
    auto [tmin, tmax] = row_range(program, t.matrix.size() - 1);
    p.time_min = tmin;
    p.time_max = tmax;

    ReverseMap reverse = compute_reverse_map(program);
    p.reverse = reverse.source_of;
    p.has_preimage = reverse.has_preimage;
    p.reverse_how = reverse.how;
    if (!p.is_two_dimensional()) {
        p.pe_min = p.space_axes[0].min;
        p.pe_count = p.space_axes[0].extent;
    } else {
        // PE p = stride_outer * (s_outer - min) + (s_inner - min), from 0: the
        // reverse map and the preimage test over (s1, s2, t) read p instead.
        const sys::SpaceAxis &outer = p.outer_space_axis(), &inner = p.inner_space_axis();
        p.pe_min = 0;
        p.pe_count = outer.stride * (outer.extent - 1) + inner.extent;
        const Expr pe = Variable::make(Int(32), p.space_var);
        const std::map<std::string, Expr> rows{{outer.var, (int)outer.min + pe / (int)outer.stride},
                                               {inner.var, (int)inner.min + pe % (int)outer.stride}};
        for (Expr &e : p.reverse) e = simplify_exact(substitute(rows, e));
        Expr on_grid = outer.stride > inner.extent ? pe % (int)outer.stride < (int)inner.extent : const_true();
        p.has_preimage = simplify_exact(on_grid && substitute(rows, p.has_preimage));
    }
    std::map<std::string, Expr> substitution;
    for (size_t c = 0; c < t.source_loops.size(); c++) substitution[t.source_loops[c]] = p.reverse[c];
    auto rewrite = [&](const Expr &e) { return simplify_exact(substitute(substitution, e)); };
    if (!program.data_bounds.empty()) {
        // An instance ends where its bounded loops do: the box's last step
        // less the time their unused values would take (check_domain: the
        // loop advances time only, by a positive coefficient).
        const int64_t box_last = row_range_of_box(program, t.matrix.size() - 1).second;
        p.data_active = const_true();
        p.last_step = make_const(Int(32), p.time_max);
        for (size_t k = 0; k < program.data_bounds.size(); k++) {
            const ir::DataBound &b = program.data_bounds[k];
            const Expr bound = Variable::make(Int(32), sys::data_bound_var(k));
            const int64_t c = t.matrix.back()[std::find(t.source_loops.begin(), t.source_loops.end(), b.loop) - t.source_loops.begin()];
            // The bound clamped into the loop's range (the same domain): the
            // arithmetic on it then stays near the loop's values, with no
            // wrap-around at a length near the type's ends.
            const ir::Loop &l = program.loop(b.loop);
            p.data_bounds.push_back(simplify_exact(clamp(b.upper, (int)l.min, (int)l.max() + 1)));
            p.data_active = p.data_active && rewrite(Variable::make(Int(32), b.loop)) < bound;
            p.last_step = min(p.last_step, (int)box_last - (int)c * ((int)l.max() + 1 - bound));
        }
        p.data_active = simplify_exact(p.data_active);
        p.last_step = simplify_exact(p.last_step);
    }

    // Statements, and every tap each variable is read at.
    std::map<std::string, std::vector<sys::Tap>> taps_of, self_taps_of;
    for (const ir::Ure &u : program.ures) {
        ReplaceCalls replace(program, strides, u);
        sys::Statement s;
        s.ure = u.name;
        s.type = u.type;
        s.is_output = u.is_output;
        s.value = rewrite(replace.mutate(u.value));
        if (u.is_output) {
            for (const Expr &e : u.output_index()) s.output_index.push_back(rewrite(e));
        }
        if (u.reduction) s.reduction = ir::Reduction{u.reduction->op, rewrite(u.reduction->initial)};
        p.statements.push_back(s);
    }
    inline_same_step_reads(p);
    p.grid_moves = plan_grid_moves(program, strides, rewrite);
    for (const sys::Statement &s : p.statements) {
        for (const sys::Tap &tap : sys::taps_in(s.value)) {
            if (!tap.crosses_instances()) continue;
            bool planned = std::any_of(p.grid_moves.begin(), p.grid_moves.end(), [&](const sys::GridMove &m) { return m.tap == tap; });
            if (!planned) {
                compile_error(program.name, ": ", s.ure, " reads ", tap.var, " of another instance through a same-step read of ",
                              "another variable; a value crossing instances must be read by the URE that names it");
            }
        }
    }
    for (const sys::Statement &s : p.statements) {
        for (const sys::Tap &tap : sys::taps_in(s.value)) {
            std::vector<sys::Tap> &all = taps_of[tap.var];
            if (std::find(all.begin(), all.end(), tap) == all.end()) all.push_back(tap);
            std::vector<sys::Tap> &own = self_taps_of[tap.var];
            if (tap.var == s.ure && std::find(own.begin(), own.end(), tap) == own.end()) own.push_back(tap);
        }
    }
    for (const ir::InputAccess &a : program.input_accesses) {
        sys::InputRead r;
        r.input = a.input;
        r.consumer = a.consumer;
        for (const Expr &e : a.index) r.index.push_back(rewrite(e));
        r.stationary = r.broadcast = true;
        for (const Expr &e : r.index) {
            if (uses_var(e, p.time_var)) r.stationary = false;
            if (uses_var(e, p.space_var)) r.broadcast = false;
        }
        p.input_reads.push_back(r);
    }
    for (const ir::Ure &u : program.ures) {
        if (u.is_output) continue;
        sys::Variable v;
        v.name = u.name;
        v.type = u.type;
        v.taps = taps_of[u.name];
        std::sort(v.taps.begin(), v.taps.end(),
                  [](const sys::Tap &a, const sys::Tap &b) { return std::tie(a.dt, a.dp) < std::tie(b.dt, b.dp); });
        for (const sys::Tap &tap : v.taps) v.history = std::max(v.history, tap.dt);
        for (const ir::Dependence &d : program.dependences) {
            if (d.consumer == u.name && d.producer == u.name && !d.is_copy) v.is_partial_sum = true;
        }
        v.dataflow = classify(v, self_taps_of[u.name], p);
        p.variables.push_back(v);
    }
    return p;
}

}  // namespace pulse
