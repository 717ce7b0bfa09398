#include "analysis/Report.h"

#include <algorithm>
#include <cstdlib>
#include <iomanip>
#include <set>
#include <ostream>
#include <sstream>

#include <isl/set.h>
#include <isl/val.h>

#include "analysis/IslModel.h"
#include "exec/ExprCompiler.h"
#include "ir/ExactSimplify.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// An Expr of the lowered program as text, with taps written `Z[s-1, t-1]`.
std::string text(const Expr &e) {
    if (!e.defined()) return "<none>";
    if (e.type().is_bool() && is_const_one(e)) return "true";
    return ir::to_source(e);
}

/// Counts, per step of the first array instance, the lanes that store an
/// output: active lanes whose output select is taken. Tap values and input
/// loads do not decide whether a store happens, so they evaluate to 0 here.
struct OutputCount {
    int64_t total = 0, most_in_a_step = 0;
    int64_t loads = 0;  ///< input loads, as DesignMetrics::loads_per_output counts them
};

/// Counts, per step of the first array instance, the lanes that store an
/// output (active lanes whose output select is taken) and the input loads
/// active lanes make. Tap values and input values do not decide whether a
/// store or a load happens, so they evaluate to 0 here.
OutputCount count_outputs(const sys::SystolicProgram &p) {
    std::vector<int64_t> coords(2 + p.instance_loops.size());
    for (size_t i = 0; i < p.instance_loops.size(); i++) coords[2 + i] = p.instance_loops[i].min;
    ExprCompilerHooks hooks;
    hooks.variable_slot = [&](const std::string &v) -> int {
        if (v == p.space_var) return 0;
        if (v == p.time_var) return 1;
        for (size_t i = 0; i < p.instance_loops.size(); i++) {
            if (p.instance_loops[i].var == v) return 2 + (int)i;
        }
        compile_error("report: unknown variable ", v, " in the lowered program");
    };
    hooks.recurrence_call = [](const Call *, std::vector<Closure>) -> Closure { return [](EvalState &) { return 0.0; }; };
    // One load per execution of a read site, except that a read whose index
    // does not depend on the lane is one load per step (a broadcast), one not
    // depending on the step one per lane (stationary), and one on neither
    // one per instance.
    struct Site {
        bool by_lane = false, by_step = false;
        std::set<int64_t> loaded;  ///< the lanes (stationary) or steps (broadcast) that loaded it
    };
    std::vector<Site> sites;
    OutputCount result;
    hooks.input_call = [&](const Call *op, std::vector<Closure>) -> Closure {
        Site site;
        for (const Expr &e : op->args) {
            site.by_lane = site.by_lane || expr_uses_var(e, p.space_var);
            site.by_step = site.by_step || expr_uses_var(e, p.time_var);
        }
        sites.push_back(site);
        size_t k = sites.size() - 1;
        return [&sites, &result, k](EvalState &s) {
            Site &site = sites[k];
            if (site.by_lane && site.by_step) result.loads++;
            else if (site.loaded.insert(site.by_lane ? s.coords[0] : site.by_step ? s.coords[1] : 0).second) result.loads++;
            return Scalar(0.0);
        };
    };
    // Taps are not recurrence calls: rewrite them to zeros of their type first.
    class ZeroTaps : public IRMutator {
        using IRMutator::visit;
        Expr visit(const Call *op) override { return sys::is_tap(op) ? make_zero(op->type) : IRMutator::visit(op); }
    };
    Closure active = compile_expr(p.has_preimage, hooks);
    std::vector<Closure> stores, values;
    for (const sys::Statement &s : p.statements) {
        (s.is_output ? stores : values).push_back(compile_expr(ZeroTaps().mutate(s.value), hooks));
    }
    EvalState state;
    state.coords = coords.data();
    for (int64_t t = p.time_min; t <= p.time_max; t++) {
        coords[1] = t;
        int64_t count = 0;
        for (int64_t l = 0; l < p.pe_count; l++) {
            coords[0] = p.pe_min + l;
            if (!active(state).is_true()) continue;
            for (const Closure &c : values) {
                state.undefined = false;
                c(state);
            }
            for (const Closure &c : stores) {
                state.undefined = false;
                c(state);
                if (!state.undefined) count++;
            }
        }
        result.total += count;
        result.most_in_a_step = std::max(result.most_in_a_step, count);
    }
    return result;
}

std::string json_string(const std::string &s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out + "\"";
}

std::string percent(double v) {
    std::ostringstream out;
    out << std::fixed << std::setprecision(1) << 100.0 * v << "%";
    return out.str();
}

std::string read_text(const sys::InputRead &r) {
    std::string s = r.input + "(";
    for (size_t i = 0; i < r.index.size(); i++) s += (i ? ", " : "") + text(r.index[i]);
    return s + ")";
}

void print_text(std::ostream &out, const sys::SystolicProgram &p, const DesignMetrics &a) {
    const ir::SpaceTimeTransform &t = *p.source.schedule.transform;
    out << "systolic design " << p.source.name << ": class " << a.design_class << " (";
    for (size_t i = 0; i < p.variables.size(); i++) {
        out << (i ? ", " : "") << p.variables[i].name << " " << sys::to_string(p.variables[i].dataflow);
    }
    out << ")\n";
    out << "  transform: (";
    for (size_t i = 0; i < t.source_loops.size(); i++) out << (i ? ", " : "") << t.source_loops[i];
    out << ") -> (" << p.space_var << ", " << p.time_var << "): ";
    for (size_t i = 0; i < a.forward.size(); i++) out << (i ? ", " : "") << a.forward[i];
    out << "\n";
    if (p.is_two_dimensional()) {
        // Where each row runs: the row with the larger stride is on the lanes
        // (slots inner) or on the warps (gpu_threads(x, y): lanes inner).
        const bool on_warps = p.rows_on_warps;
        const sys::SpaceAxis &outer = p.outer_space_axis(), &inner = p.inner_space_axis();
        auto row = [&](const sys::SpaceAxis &x, const char *where) {
            return x.var + " in [" + std::to_string(x.min) + ", " + std::to_string(x.min + x.extent - 1) + "] on " + where;
        };
        out << "  PEs:   2-D, " << p.space_axes[0].extent << " x " << p.space_axes[1].extent << " = "
            << p.space_axes[0].extent * p.space_axes[1].extent << " PEs: " << row(outer, on_warps ? "the warps" : "the lanes") << ", "
            << row(inner, on_warps ? "the lanes" : "each lane's register slots") << " (linear index " << p.space_var << " = "
            << outer.stride << " * " << outer.var << " + " << inner.var << ", from the rows' minima)\n";
    } else {
        out << "  PEs:   " << p.space_var << " in [" << p.pe_min << ", " << p.pe_min + p.pe_count - 1 << "], " << p.pe_count
            << " PEs (lane = " << p.space_var << (p.pe_min ? " - " + std::to_string(p.pe_min) : "") << ")\n";
    }
    out << "  time:  " << p.time_var << " in [" << p.time_min << ", " << p.time_max << "], " << p.steps() << " steps\n";
    if (!p.instance_loops.empty()) {
        int64_t n = 1;
        out << "  array instances:";
        for (size_t i = p.instance_loops.size(); i-- > 0;) {
            const ir::Loop &l = p.instance_loops[i];
            out << " " << l.var << " in [" << l.min << ", " << l.max() << "]";
            n *= l.extent;
        }
        out << " (" << n << " independent arrays)\n";
    }
    out << "  reverse map (" << p.reverse_how << "): ";
    for (size_t i = 0; i < t.source_loops.size(); i++) out << (i ? ", " : "") << t.source_loops[i] << " = " << text(p.reverse[i]);
    out << "\n  active PE steps: " << text(p.has_preimage) << "\n";
    out << "  CheckTime: " << (p.check_time ? "on (inactive PEs skip each step)" : "off (every PE runs every step)") << "\n";
    out << "  variables (dp: lanes, dt: steps; a read is the value PE p - dp produced dt steps ago):\n";
    for (const sys::Variable &v : p.variables) {
        out << "    " << v.name << ": " << sys::to_string(v.dataflow) << " (" << sys::dataflow_letter(v.dataflow) << "), "
            << (v.is_partial_sum ? "recurrence (reads its own earlier values)" : "input/weight carrier") << ", history " << v.history
            << ", taps";
        if (v.taps.empty()) out << " (never read)";
        for (const sys::Tap &tap : v.taps) out << " (dp " << tap.dp << ", dt " << tap.dt << ")";
        out << "\n";
    }
    out << "  input reads:\n";
    for (const sys::InputRead &r : p.input_reads) {
        out << "    " << r.consumer << " <- " << read_text(r);
        if (r.stationary && r.broadcast) out << "  (same for all PEs and steps)";
        else if (r.stationary) out << "  (stationary: loaded once per PE)";
        else if (r.broadcast) out << "  (broadcast: one value per step for all PEs)";
        out << "\n";
    }
    out << "  registers per PE: " << a.registers_per_pe << " (sum over variables of history + 1)\n";
    if (a.outputs_per_step >= 0) out << "  outputs per step: at most " << a.outputs_per_step << "\n";
    else out << "  outputs per step: not counted (" << p.pe_count * p.steps() << " PE-steps, more than " << report_enumeration_limit << ")\n";
    if (a.outputs >= 0) {
        out << "  outturn: " << a.outputs << " outputs / " << p.steps() << " steps = " << a.outturn
            << " outputs per step\n";
        out << "  per output: " << a.exchanges_per_output << " lane exchanges, " << a.loads_per_output << " input loads\n";
    }
    out << "  warp widths: " << a.warps << " (the PEs in units of 32 lanes: "
        << (a.fits_warp() ? "fits a warp)" : "wider than a warp: several PEs per lane, or gpu_threads)") << "\n";
    out << "  PE utilization: " << a.domain_points << " points / (" << a.pe_count << " PEs x " << p.steps()
        << " steps) = " << percent(a.utilization) << "\n";
}

void print_json(std::ostream &out, const sys::SystolicProgram &p, const DesignMetrics &a) {
    const ir::SpaceTimeTransform &t = *p.source.schedule.transform;
    out << "{\n";
    out << "  \"name\": " << json_string(p.source.name) << ",\n";
    out << "  \"class\": " << json_string(a.design_class) << ",\n";
    out << "  \"space_var\": " << json_string(p.space_var) << ", \"time_var\": " << json_string(p.time_var) << ",\n";
    out << "  \"transform\": [";
    for (size_t i = 0; i < a.forward.size(); i++) out << (i ? ", " : "") << json_string(a.forward[i]);
    out << "],\n";
    out << "  \"pe_min\": " << p.pe_min << ", \"pe_max\": " << p.pe_min + p.pe_count - 1 << ", \"pe_count\": " << p.pe_count
        << ",\n";
    out << "  \"space_axes\": [";
    for (size_t i = 0; i < p.space_axes.size(); i++) {
        const sys::SpaceAxis &x = p.space_axes[i];
        out << (i ? ", " : "") << "{\"var\": " << json_string(x.var) << ", \"min\": " << x.min << ", \"extent\": " << x.extent
            << ", \"stride\": " << x.stride << "}";
    }
    out << "],\n";
    out << "  \"time_min\": " << p.time_min << ", \"time_max\": " << p.time_max << ", \"steps\": " << p.steps() << ",\n";
    out << "  \"instance_loops\": [";
    for (size_t i = 0; i < p.instance_loops.size(); i++) {
        const ir::Loop &l = p.instance_loops[i];
        out << (i ? ", " : "") << "{\"var\": " << json_string(l.var) << ", \"min\": " << l.min << ", \"extent\": " << l.extent
            << "}";
    }
    out << "],\n";
    out << "  \"reverse\": {\"how\": " << json_string(p.reverse_how) << ", \"source_of\": {";
    for (size_t i = 0; i < t.source_loops.size(); i++) {
        out << (i ? ", " : "") << json_string(t.source_loops[i]) << ": " << json_string(text(p.reverse[i]));
    }
    out << "}, \"has_preimage\": " << json_string(text(p.has_preimage)) << "},\n";
    out << "  \"check_time\": " << (p.check_time ? "true" : "false") << ",\n";
    out << "  \"variables\": [\n";
    for (size_t i = 0; i < p.variables.size(); i++) {
        const sys::Variable &v = p.variables[i];
        out << "    {\"name\": " << json_string(v.name) << ", \"dataflow\": " << json_string(sys::to_string(v.dataflow))
            << ", \"letter\": \"" << sys::dataflow_letter(v.dataflow) << "\", \"partial_sum\": "
            << (v.is_partial_sum ? "true" : "false") << ", \"history\": " << v.history << ", \"taps\": [";
        for (size_t k = 0; k < v.taps.size(); k++) {
            out << (k ? ", " : "") << "{\"dp\": " << v.taps[k].dp << ", \"dt\": " << v.taps[k].dt << "}";
        }
        out << "]}" << (i + 1 < p.variables.size() ? "," : "") << "\n";
    }
    out << "  ],\n";
    out << "  \"input_reads\": [\n";
    for (size_t i = 0; i < p.input_reads.size(); i++) {
        const sys::InputRead &r = p.input_reads[i];
        out << "    {\"input\": " << json_string(r.input) << ", \"consumer\": " << json_string(r.consumer)
            << ", \"index\": [";
        for (size_t k = 0; k < r.index.size(); k++) out << (k ? ", " : "") << json_string(text(r.index[k]));
        out << "], \"stationary\": " << (r.stationary ? "true" : "false")
            << ", \"broadcast\": " << (r.broadcast ? "true" : "false") << "}" << (i + 1 < p.input_reads.size() ? "," : "")
            << "\n";
    }
    out << "  ],\n";
    out << "  \"registers_per_pe\": " << a.registers_per_pe << ",\n";
    out << "  \"outputs_per_step\": " << (a.outputs_per_step >= 0 ? std::to_string(a.outputs_per_step) : std::string("null")) << ",\n";
    out << "  \"domain_points\": " << a.domain_points << ",\n";
    out << "  \"utilization\": " << a.utilization << ",\n";
    auto number = [](double v) { return v >= 0 ? std::to_string(v) : std::string("null"); };
    out << "  \"outputs\": " << (a.outputs >= 0 ? std::to_string(a.outputs) : std::string("null")) << ",\n";
    out << "  \"outturn\": " << number(a.outturn) << ",\n";
    out << "  \"exchanges_per_step\": " << a.exchanges_per_step << ",\n";
    out << "  \"exchanges_per_output\": " << number(a.exchanges_per_output) << ",\n";
    out << "  \"loads_per_output\": " << number(a.loads_per_output) << ",\n";
    out << "  \"warps\": " << a.warps << ", \"fits_warp\": " << (a.fits_warp() ? "true" : "false") << "\n";
    out << "}\n";
}

/// The lane exchanges a lane makes in a step for `tap`: one for a move
/// between PEs; on a 2-D array whose lanes each hold a block of n PEs
/// (register slots), the slots whose source lies on another lane, min(|dp|, n).
int64_t exchanges_of(const sys::SystolicProgram &p, const sys::Tap &tap) {
    if (tap.dp == 0) return 0;
    if (!p.is_two_dimensional() || p.rows_on_warps) return 1;
    const sys::SpaceAxis &lanes = p.outer_space_axis(), &slots = p.inner_space_axis();
    const int64_t per_lane = (lanes.extent + 31) / 32 * slots.extent;
    return std::min<int64_t>(std::abs(tap.dp), per_lane);
}

}  // namespace

DesignMetrics analyze_design(const sys::SystolicProgram &p) {
    DesignMetrics a;
    for (const sys::Variable &v : p.variables) {
        a.design_class += sys::dataflow_letter(v.dataflow);
        a.dataflow.emplace_back(v.name, v.dataflow);
        a.registers_per_pe += v.history + 1;
        for (const sys::Tap &tap : v.taps) a.exchanges_per_step += exchanges_of(p, tap);
    }
    const ir::SpaceTimeTransform &t = *p.source.schedule.transform;
    // A 2-D array's PEs are its grid's (its linear index may skip lanes past a row).
    a.pe_count = p.is_two_dimensional() ? p.space_axes[0].extent * p.space_axes[1].extent : p.pe_count;
    a.steps = p.steps();
    a.warps = (p.pe_count + 31) / 32;
    a.domain_points = 1;
    for (const std::string &v : t.source_loops) a.domain_points *= p.source.loop(v).extent;
    if (!p.source.constraints.empty()) {
        // The exact domain's points (isl counts them; a triangle, not its box).
        isl_model::Context context;
        isl::set domain = isl_model::iteration_domain(context, p.source, t.source_loops);
        isl_val *count = isl_set_count_val(domain.get());
        a.domain_points = isl_val_get_num_si(count);
        isl_val_free(count);
    }
    a.utilization = (double)a.domain_points / (double)(a.pe_count * p.steps());
    // The count enumerates one instance's PEs x steps: only where that is quick.
    if (p.pe_count * p.steps() <= report_enumeration_limit) {
        OutputCount counted = count_outputs(p);
        a.outputs = counted.total;
        a.outputs_per_step = counted.most_in_a_step;
        if (a.outputs > 0) {
        a.outturn = (double)a.outputs / (double)a.steps;
        a.exchanges_per_output = (double)(a.exchanges_per_step * a.domain_points) / (double)a.outputs;
        a.loads_per_output = (double)counted.loads / (double)a.outputs;
        }
    }
    for (size_t r = 0; r < t.matrix.size(); r++) {
        Expr e;
        for (size_t c = 0; c < t.source_loops.size(); c++) {
            if (!t.matrix[r][c]) continue;
            Expr term = Variable::make(Int(32), t.source_loops[c]) * make_const(Int(32), t.matrix[r][c]);
            e = e.defined() ? e + term : term;
        }
        a.forward.push_back(t.destination_loops[r] + " = " + ir::to_source(e.defined() ? simplify_exact(e) : make_zero(Int(32))));
    }
    return a;
}

void print_report(std::ostream &out, const sys::SystolicProgram &program, bool json) {
    DesignMetrics a = analyze_design(program);
    if (json) print_json(out, program, a);
    else print_text(out, program, a);
}

}  // namespace pulse
