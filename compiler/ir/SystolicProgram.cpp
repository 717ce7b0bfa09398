#include "ir/SystolicProgram.h"

#include <algorithm>
#include <ostream>
#include <sstream>

namespace pulse {
namespace sys {

using namespace Halide;
using namespace Halide::Internal;

namespace {
const char *const tap_prefix = "pulse.tap.";

/// Halide's printer, with taps written as `Z[s-1, t-1]` (relative to the
/// current lane and step) and input reads as `x(s + 4)`.
class SystolicPrinter : public IRPrinter {
public:
    SystolicPrinter(std::ostream &out, const SystolicProgram &p) : IRPrinter(out), program(p) {}

protected:
    using IRPrinter::visit;
    void visit(const Call *op) override {
        Tap tap;
        if (is_tap(op, &tap)) {
            stream << tap_text(program, tap);
            return;
        }
        if (ir::is_undefined_value(op)) {
            stream << "undefined";
            return;
        }
        if (op->call_type == Call::Image) {
            stream << op->name << "(";
            for (size_t i = 0; i < op->args.size(); i++) {
                if (i) stream << ", ";
                print_no_parens(op->args[i]);
            }
            stream << ")";
            return;
        }
        IRPrinter::visit(op);
    }

private:
    const SystolicProgram &program;

public:
    static std::string tap_text(const SystolicProgram &p, const Tap &tap) {
        auto offset = [](const std::string &v, int64_t d) {
            std::ostringstream s;
            s << v;
            if (d > 0) s << "-" << d;
            if (d < 0) s << "+" << -d;
            return s.str();
        };
        std::string text = tap.var + "[" + offset(p.space_var, tap.dp) + ", " + offset(p.time_var, tap.dt);
        for (size_t i = 0; i < tap.di.size(); i++) text += ", " + offset(p.instance_loops[i].var, tap.di[i]);
        return text + "]";
    }
};

std::string expr_text(const SystolicProgram &p, const Expr &e) {
    if (!e.defined()) return "<none>";
    if (e.type().is_bool() && is_const_one(e)) return "true";
    std::ostringstream out;
    SystolicPrinter printer(out, p);
    printer.print_no_parens(e);
    return out.str();
}

}  // namespace

const char *to_string(Dataflow d) {
    switch (d) {
    case Dataflow::Broadcast: return "broadcast";
    case Dataflow::Forwarded: return "forwarded";
    case Dataflow::Stays: return "stays";
    case Dataflow::Aggregated: return "aggregated";
    case Dataflow::Migrates: return "migrates";
    case Dataflow::Sedimented: return "sedimented";
    }
    return "?";
}

char dataflow_letter(Dataflow d) {
    switch (d) {
    case Dataflow::Broadcast: return 'B';
    case Dataflow::Forwarded: return 'F';
    case Dataflow::Stays: return 'S';
    case Dataflow::Aggregated: return 'A';
    case Dataflow::Migrates: return 'M';
    case Dataflow::Sedimented: return 'S';
    }
    return '?';
}

const Variable &SystolicProgram::variable(const std::string &name) const {
    for (const Variable &v : variables) {
        if (v.name == name) return v;
    }
    compile_error("the systolic program ", source.name, " has no variable ", name);
}

std::string data_bound_var(size_t k) { return "data.bound." + std::to_string(k); }

Expr make_tap(Type type, const Tap &tap) {
    std::vector<Expr> args{make_const(Int(32), tap.dp), make_const(Int(32), tap.dt)};
    for (int64_t d : tap.di) args.push_back(make_const(Int(32), d));
    return Call::make(type, tap_prefix + tap.var, args, Call::PureExtern);
}

bool is_tap(const Expr &e, Tap *tap) {
    const Call *call = e.as<Call>();
    if (!call || call->call_type != Call::PureExtern || call->name.rfind(tap_prefix, 0) != 0 || call->args.size() < 2) {
        return false;
    }
    std::vector<int64_t> values;
    for (const Expr &a : call->args) {
        const int64_t *v = as_const_int(a);
        if (!v) return false;
        values.push_back(*v);
    }
    if (tap) *tap = Tap{call->name.substr(std::string(tap_prefix).size()), values[0], values[1], {values.begin() + 2, values.end()}};
    return true;
}

std::vector<Tap> taps_in(const Expr &e) {
    class Collect : public Halide::Internal::IRVisitor {
    public:
        std::vector<Tap> taps;
        using IRVisitor::visit;
        void visit(const Halide::Internal::Call *op) override {
            Tap t;
            if (is_tap(Expr(op), &t) && std::find(taps.begin(), taps.end(), t) == taps.end()) taps.push_back(t);
            IRVisitor::visit(op);
        }
    } collect;
    e.accept(&collect);
    return collect.taps;
}

void print(std::ostream &out, const SystolicProgram &p) {
    const ir::SpaceTimeTransform &t = *p.source.schedule.transform;
    out << "systolic program " << p.source.name << ": " << p.pe_count << " PEs x " << p.steps() << " steps\n";
    out << "  // transform (";
    for (size_t i = 0; i < t.source_loops.size(); i++) out << (i ? ", " : "") << t.source_loops[i];
    out << ") -> (" << p.space_var << ", " << p.time_var << "); reverse: ";
    for (size_t i = 0; i < t.source_loops.size(); i++) {
        out << (i ? ", " : "") << t.source_loops[i] << " = " << expr_text(p, p.reverse[i]);
    }
    out << "\n";
    if (p.is_two_dimensional()) {
        out << "  // 2-D array: " << p.space_var << " = " << p.pe_min;
        for (const SpaceAxis &a : p.space_axes) {
            out << " + " << a.stride << " * (" << a.var << (a.min ? " - " + std::to_string(a.min) : "") << ")";
        }
        out << "; " << p.space_axes[0].var << " in [" << p.space_axes[0].min << ", " << p.space_axes[0].min + p.space_axes[0].extent - 1
            << "], " << p.space_axes[1].var << " in [" << p.space_axes[1].min << ", " << p.space_axes[1].min + p.space_axes[1].extent - 1
            << "]\n";
    }
    for (const Variable &v : p.variables) {
        out << "  // " << v.name << ": history " << v.history << ", " << to_string(v.dataflow) << ", taps";
        if (v.taps.empty()) out << " (none)";
        for (const Tap &tap : v.taps) out << " " << SystolicPrinter::tap_text(p, tap);
        out << "\n";
    }
    for (const GridMove &m : p.grid_moves) {
        out << "  // " << SystolicPrinter::tap_text(p, m.tap) << " from another instance: written where "
            << expr_text(p, m.writer_guard) << ", read where " << expr_text(p, m.reader_guard) << "\n";
    }
    std::string indent = "  ";
    for (size_t i = p.instance_loops.size(); i-- > 0;) {
        const ir::Loop &l = p.instance_loops[i];
        out << indent << "for " << l.var << " in [" << l.min << ", " << l.max() << "]:  // array instance"
            << (p.source.schedule.gpu_grid_sync ? ", all at once, a grid barrier after every step" : "") << "\n";
        indent += "  ";
    }
    for (size_t k = 0; k < p.data_bounds.size(); k++) out << indent << data_bound_var(k) << " = " << expr_text(p, p.data_bounds[k]) << "\n";
    out << indent << "for " << p.time_var << " in [" << p.time_min << ", "
        << (p.last_step.defined() ? "min(" + std::to_string(p.time_max) + ", " + expr_text(p, p.last_step) + ")" : std::to_string(p.time_max))
        << "]:\n";
    indent += "  ";
    out << indent << "for all lanes " << p.space_var << " in [" << p.pe_min << ", " << p.pe_min + p.pe_count - 1
        << "] in lock step:\n";
    indent += "  ";
    out << indent << "active = " << expr_text(p, p.has_preimage) << (p.data_active.defined() ? " && " + expr_text(p, p.data_active) : "") << "\n";
    if (p.check_time) {
        out << indent << "if active:  // CheckTime\n";
        indent += "  ";
    }
    for (const Statement &s : p.statements) {
        if (s.is_output) {
            out << indent << (p.check_time ? "" : "if active: ") << s.ure << "(";
            for (size_t i = 0; i < s.output_index.size(); i++) out << (i ? ", " : "") << expr_text(p, s.output_index[i]);
            if (s.reduction) {
                out << ") = " << to_string(s.reduction->op) << "(that, " << expr_text(p, s.value) << ")  // initially "
                    << expr_text(p, s.reduction->initial) << "\n";
            } else {
                out << ") = " << expr_text(p, s.value) << "\n";
            }
        } else {
            out << indent << s.ure << "[" << p.space_var << ", " << p.time_var << "] = " << expr_text(p, s.value) << "\n";
        }
    }
}

}  // namespace sys
}  // namespace pulse
