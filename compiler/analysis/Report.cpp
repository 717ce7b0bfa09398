#include "analysis/Report.h"

#include <iomanip>
#include <ostream>
#include <sstream>

#include "exec/ExprCompiler.h"

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

/// The numbers the report prints, computed once for both formats.
struct Analysis {
    std::string design_class;        ///< one letter per variable, merge order (e.g. SBM)
    int64_t registers_per_pe = 0;    ///< sum over variables of history + 1
    int64_t outputs_per_step = 0;    ///< max over steps of the output stores of one array instance; -1: not counted
    int64_t domain_points = 0;       ///< iteration points of one array instance
    double utilization = 0;          ///< domain points / (PEs x steps)
    std::vector<std::string> forward;  ///< "s = c + q", "t = q"
};

/// Counts, per step of the first array instance, the lanes that store an
/// output: active lanes whose output select is taken. Tap values and input
/// loads do not decide whether a store happens, so they evaluate to 0 here.
int64_t max_outputs_per_step(const sys::SystolicProgram &p) {
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
    hooks.input_call = hooks.recurrence_call;
    // Taps are not recurrence calls: rewrite them to zeros of their type first.
    class ZeroTaps : public IRMutator {
        using IRMutator::visit;
        Expr visit(const Call *op) override { return sys::is_tap(op) ? make_zero(op->type) : IRMutator::visit(op); }
    };
    Closure active = compile_expr(p.has_preimage, hooks);
    std::vector<Closure> stores;
    for (const sys::Statement &s : p.statements) {
        if (s.is_output) stores.push_back(compile_expr(ZeroTaps().mutate(s.value), hooks));
    }
    EvalState state;
    state.coords = coords.data();
    int64_t best = 0;
    for (int64_t t = p.time_min; t <= p.time_max; t++) {
        coords[1] = t;
        int64_t count = 0;
        for (int64_t l = 0; l < p.pe_count; l++) {
            coords[0] = p.pe_min + l;
            if (!active(state).is_true()) continue;
            for (const Closure &c : stores) {
                state.undefined = false;
                c(state);
                if (!state.undefined) count++;
            }
        }
        best = std::max(best, count);
    }
    return best;
}

Analysis analyze(const sys::SystolicProgram &p) {
    Analysis a;
    for (const sys::Variable &v : p.variables) {
        a.design_class += sys::dataflow_letter(v.dataflow);
        a.registers_per_pe += v.history + 1;
    }
    const ir::SpaceTimeTransform &t = *p.source.schedule.transform;
    a.domain_points = 1;
    for (const std::string &v : t.source_loops) a.domain_points *= p.source.loop(v).extent;
    a.utilization = (double)a.domain_points / (double)(p.pe_count * p.steps());
    // The count enumerates one instance's PEs x steps: only where that is quick.
    a.outputs_per_step = p.pe_count * p.steps() <= report_enumeration_limit ? max_outputs_per_step(p) : -1;
    for (size_t r = 0; r < t.matrix.size(); r++) {
        Expr e;
        for (size_t c = 0; c < t.source_loops.size(); c++) {
            if (!t.matrix[r][c]) continue;
            Expr term = Variable::make(Int(32), t.source_loops[c]) * make_const(Int(32), t.matrix[r][c]);
            e = e.defined() ? e + term : term;
        }
        a.forward.push_back(t.destination_loops[r] + " = " + ir::to_source(e.defined() ? simplify(e) : make_zero(Int(32))));
    }
    return a;
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

void print_text(std::ostream &out, const sys::SystolicProgram &p, const Analysis &a) {
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
    out << "  PEs:   " << p.space_var << " in [" << p.pe_min << ", " << p.pe_min + p.pe_count - 1 << "], " << p.pe_count
        << " PEs (lane = " << p.space_var << (p.pe_min ? " - " + std::to_string(p.pe_min) : "") << ")\n";
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
            << (v.is_partial_sum ? "partial sum" : "input/weight carrier") << ", history " << v.history << ", taps";
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
    out << "  PE utilization: " << a.domain_points << " points / (" << p.pe_count << " PEs x " << p.steps()
        << " steps) = " << percent(a.utilization) << "\n";
}

void print_json(std::ostream &out, const sys::SystolicProgram &p, const Analysis &a) {
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
    out << "  \"utilization\": " << a.utilization << "\n";
    out << "}\n";
}

}  // namespace

void print_report(std::ostream &out, const sys::SystolicProgram &program, bool json) {
    Analysis a = analyze(program);
    if (json) print_json(out, program, a);
    else print_text(out, program, a);
}

}  // namespace pulse
