#include "codegen/CodeGenReference.h"

#include <sstream>

#include "ir/Affine.h"
#include "codegen/CodeGenC.h"
#include "ir/Target.h"
#include "ir/ExactSimplify.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

int instances_loop(const ir::UreProgram &p) {
    const ir::SpaceTimeTransform *t = p.schedule.transform ? &*p.schedule.transform : nullptr;
    for (int i = (int)p.loops.size() - 1; i >= 0; i--) {
        if (!t) return i;
        bool mapped = std::find(t->source_loops.begin(), t->source_loops.end(), p.loops[i].var) != t->source_loops.end();
        if (!mapped) return i;
    }
    return -1;
}

namespace {

/// C text for the min (or max) of an affine form over the box of `loops`
/// less the excluded iterations, with the run-time loop's extent
/// `instances` (of which only first iterations are excluded).
std::string bound_text(const std::vector<ir::Loop> &loops, const LayoutBuffer::Reach &reach, int runtime_loop, bool want_max) {
    const AffineForm &f = reach.form;
    std::string s = std::to_string(f.constant) + "ll";
    for (size_t i = 0; i < f.coefficient.size(); i++) {
        int64_t k = f.coefficient[i];
        if (k == 0) continue;
        const std::pair<int64_t, int64_t> cut = i < reach.excluded.size() ? reach.excluded[i] : std::pair<int64_t, int64_t>{0, 0};
        const int64_t first = loops[i].min + cut.first;
        std::string v = std::to_string(first) + "ll";
        if ((k > 0) == want_max) {
            v = (int)i == runtime_loop ? "(" + std::to_string(loops[i].min) + "ll + instances - 1)"
                                       : std::to_string(loops[i].max() - cut.second) + "ll";
        }
        s += " + (" + std::to_string(k) + "ll) * " + v;
    }
    return s;
}

std::string guard_name(const std::string &name) { return "PULSE_LAYOUT_" + name; }

}  // namespace

std::string dense_offset_text(const std::string &buffer, const std::vector<std::string> &index, const std::string &cast) {
    std::string s, stride;
    for (size_t d = 0; d < index.size(); d++) {
        const std::string dim = std::to_string(d);
        std::string term = "(" + cast + "(" + index[d] + ") - " + buffer + "_min" + dim + ")";
        if (!stride.empty()) term += " * " + stride;
        s += (d ? " + " : "") + term;
        stride += (stride.empty() ? "" : " * ") + buffer + "_extent" + dim;
    }
    return s.empty() ? "0" : s;
}

std::vector<LayoutBuffer> layout_buffers(const ir::UreProgram &p, const std::vector<std::string> &input_order) {
    std::vector<LayoutBuffer> buffers;
    for (const std::string &in : input_order) {
        const ir::InputDecl &decl = p.input(in);
        LayoutBuffer b{decl.name, decl.type, false, {}};
        for (int d = 0; d < decl.dimensions; d++) {
            if (decl.is_table()) {
                // A table spans its extents: constant forms at its first and last index.
                AffineForm first, last;
                first.coefficient.assign(p.loops.size(), 0);
                last.coefficient.assign(p.loops.size(), 0);
                last.constant = decl.table_extents[d] - 1;
                b.dims.push_back({LayoutBuffer::Reach{first, {}}, LayoutBuffer::Reach{last, {}}});
                continue;
            }
            std::vector<LayoutBuffer::Reach> forms;
            for (const ir::InputAccess &a : p.input_accesses) {
                if (a.input != decl.name) continue;
                auto form = to_affine(a.index[d], p.loops);
                if (!form) compile_error("input ", decl.name, " is read at a non-affine index ", ir::to_source(a.index[d]));
                forms.push_back({*form, a.excluded});
            }
            b.dims.push_back(forms);
        }
        buffers.push_back(b);
    }
    for (const ir::Ure *u : p.outputs()) {
        LayoutBuffer b{u->name, u->type, true, {}, p.output_loops(*u)};
        for (const Expr &e : u->output_index()) {
            auto form = to_affine(e, p.loops);
            if (!form) compile_error("output ", u->name, " is written at a non-affine index ", ir::to_source(e));
            b.dims.push_back({LayoutBuffer::Reach{*form, {}}});
        }
        buffers.push_back(b);
    }
    return buffers;
}

std::pair<int64_t, int64_t> LayoutBuffer::range(const ir::UreProgram &p, size_t dim, int64_t instances) const {
    std::vector<ir::Loop> loops = is_output && !this->loops.empty() ? this->loops : p.loops;
    const int runtime_loop = instances_loop(p);
    if (runtime_loop >= 0) loops[runtime_loop].extent = instances;
    int64_t lo = 0, hi = -1;
    bool first = true;
    for (const Reach &r : dims[dim]) {
        auto [l, h] = r.form.range(ir::less_excluded(loops, r.excluded));
        lo = first ? l : std::min(lo, l);
        hi = first ? h : std::max(hi, h);
        first = false;
    }
    return {lo, hi};
}

std::string describe_buffers(const ir::UreProgram &p, const std::string &name, const std::vector<std::string> &input_order) {
    const int runtime_loop = instances_loop(p);
    const int64_t instances = runtime_loop >= 0 ? p.loops[runtime_loop].extent : 1;
    std::vector<LayoutBuffer> buffers = layout_buffers(p, input_order);
    std::ostringstream out;
    std::string inputs, outputs;
    for (const LayoutBuffer &b : buffers) {
        std::string &list = b.is_output ? outputs : inputs;
        list += (list.empty() ? "" : ", ") + b.name;
    }
    out << "What it computes: " << outputs << " from " << inputs << " by the UREs below";
    if (runtime_loop >= 0) {
        out << ", one array instance per value of loop '" << p.loops[runtime_loop].var << "';\nthe output extents given at run "
            << "time say how many instances run";
    }
    out << ".\nBuffers at the spec's sizes (" << instances << " instance" << (instances == 1 ? "" : "s")
        << "), dense, first dimension innermost:\n";
    for (const LayoutBuffer &b : buffers) {
        int64_t elements = 1;
        std::string box;
        for (size_t d = 0; d < b.dims.size(); d++) {
            auto [lo, hi] = b.range(p, d, instances);
            elements *= hi - lo + 1;
            box += (d ? " x [" : "[") + std::to_string(lo) + ", " + std::to_string(hi) + "]";
        }
        out << "  " << b.name << ": " << (b.is_output ? "output" : "input") << ", " << c_type(b.type) << ", " << elements
            << " elements, indices " << box << "\n";
    }
    out << "For another number of instances, " << name << "_BUFFER_region(dim, instances, &min, &extent)\nand " << name
        << "_BUFFER_elements(instances) below give each buffer's indices and size.\n";
    return out.str();
}

std::string emit_layout_functions(const ir::UreProgram &p, const std::string &name,
                                  const std::vector<std::string> &input_order, const std::string &q) {
    const int runtime_loop = instances_loop(p);
    std::ostringstream out;
    out << "#ifndef " << guard_name(name) << "\n#define " << guard_name(name) << "\n";
    out << "// Layout: every buffer is dense, first dimension innermost. Inputs cover the\n"
           "// indices their reads take, outputs the indices they are written at; the\n"
           "// extent of loop '"
        << (runtime_loop >= 0 ? p.loops[runtime_loop].var : std::string("-")) << "' is `instances`.\n";
    out << q << " int64_t " << name << "_default_instances(void) { return "
        << (runtime_loop >= 0 ? p.loops[runtime_loop].extent : 1) << "; }\n";
    for (const LayoutBuffer &b : layout_buffers(p, input_order)) {
        // The box the affine forms span over the loops: the least of their
        // smallest values, the greatest of their largest.
        out << "// " << (b.is_output ? "output " : "input ") << b.name << ": indices [*min, *min + *extent) in dimension `dim`\n";
        out << q << " void " << name << "_" << b.name << "_region(int dim, int64_t instances, int64_t *min, int64_t *extent) {\n";
        out << "    int64_t lo = 0, hi = -1;\n";
        const std::vector<ir::Loop> &loops = b.is_output && !b.loops.empty() ? b.loops : p.loops;
        for (size_t d = 0; d < b.dims.size(); d++) {
            out << "    if (dim == " << d << ") {\n";
            bool first = true;
            for (const LayoutBuffer::Reach &reach : b.dims[d]) {
                std::string lo_text = bound_text(loops, reach, runtime_loop, false), hi_text = bound_text(loops, reach, runtime_loop, true);
                if (first) {
                    out << "        lo = " << lo_text << ";\n        hi = " << hi_text << ";\n";
                } else {
                    out << "        { int64_t v = " << lo_text << "; if (v < lo) lo = v; }\n";
                    out << "        { int64_t v = " << hi_text << "; if (v > hi) hi = v; }\n";
                }
                first = false;
            }
            out << "    }\n";
        }
        out << "    (void)instances;\n    *min = lo;\n    *extent = hi - lo + 1;\n}\n";
        out << "// " << b.name << ": its number of elements\n";
        out << q << " int64_t " << name << "_" << b.name << "_elements(int64_t instances) {\n";
        out << "    int64_t count = 1, min, extent;\n";
        out << "    for (int d = 0; d < " << b.dims.size() << "; d++) {\n";
        out << "        " << name << "_" << b.name << "_region(d, instances, &min, &extent);\n";
        out << "        count *= extent;\n    }\n    return count;\n}\n";
    }
    out << "#endif  // " << guard_name(name) << "\n";
    return out.str();
}

namespace {

/// Splits a URE value into (where it is defined, its value there).
std::pair<Expr, Expr> split_defined(const Expr &e) {
    if (ir::is_undefined_value(e)) return {const_false(), make_zero(e.type())};
    if (const Select *s = e.as<Select>()) {
        auto a = split_defined(s->true_value), b = split_defined(s->false_value);
        Expr defined = is_const_one(a.first) && is_const_one(b.first) ? const_true() : simplify_exact(select(s->condition, a.first, b.first));
        return {defined, select(s->condition, a.second, b.second)};
    }
    class FindUndefined : public IRVisitor {
    public:
        bool found = false;
        using IRVisitor::visit;
        void visit(const Call *op) override {
            found |= ir::is_undefined_value(op);
            IRVisitor::visit(op);
        }
    } finder;
    e.accept(&finder);
    if (finder.found) {
        compile_error("the undefined branch of a select is used inside '", ir::to_source(e),
                      "'; generated code needs selects without a false value at the top of a definition");
    }
    return {const_true(), e};
}

}  // namespace

std::string emit_reference_cpp(const ir::UreProgram &p, const std::string &name, const std::vector<std::string> &input_order) {
    const int runtime_loop = instances_loop(p);
    // Instances that read each other (gpu_grid_sync) keep every instance's
    // values and run in the reference nesting; others one instance at a time.
    bool crossed = false;
    for (const ir::Dependence &d : p.dependences) {
        if (runtime_loop < 0 || d.distance[runtime_loop] == 0) continue;
        if (!p.schedule.gpu_grid_sync) {
            compile_error("dependence ", d.consumer, " <- ", d.call_text, " crosses the instances of loop '",
                          p.loops[runtime_loop].var, "', which run independently without gpu_grid_sync");
        }
        crossed = true;
    }
    const size_t n = p.loops.size();
    std::vector<int64_t> strides(n, 0);
    int64_t points = 1;
    for (size_t i = 0; i < n; i++) {
        if ((int)i == runtime_loop) continue;
        strides[i] = points;
        points *= p.loops[i].extent;
    }
    if (crossed) strides[runtime_loop] = points;
    auto local_index = [&](const std::vector<std::string> &coords) {
        std::string s = "0";
        for (size_t i = 0; i < n; i++) {
            if ((int)i == runtime_loop && !crossed) continue;
            s += " + (" + coords[i] + " - (" + std::to_string(p.loops[i].min) + "ll)) * " + std::to_string(strides[i]) + "ll";
        }
        return s;
    };
    std::ostringstream out;
    out << "// Reference of " << name << ": the merged UREs of " << p.name << " in the reference order\n"
        << "// (" << (p.reference_nesting.empty() ? "" : "see --print-ir") << "), "
        << (crossed ? "every instance together" : "one instance at a time") << ". " << generated_by() << ".\n";
    out << "#pragma once\n#include <cstdint>\n#include <cmath>\n#include <vector>\n";
    out << scalar_semantics_source();
    out << emit_layout_functions(p, name, input_order, "static inline");
    out << "static void " << name << "_reference(";
    for (const std::string &in : input_order) out << "const " << c_type(p.input(in).type) << " *" << in << ", ";
    for (const ir::Ure &u : p.ures) {
        if (u.is_output) out << c_type(u.type) << " *" << u.name << ", ";
    }
    out << "int64_t instances) {\n";
    // Each buffer's box: BUFFER_min<d>, BUFFER_extent<d>.
    for (const LayoutBuffer &b : layout_buffers(p, input_order)) {
        for (size_t dim = 0; dim < b.dims.size(); dim++) {
            out << "    int64_t " << b.name << "_min" << dim << ", " << b.name << "_extent" << dim << ";\n";
            out << "    " << name << "_" << b.name << "_region(" << dim << ", instances, &" << b.name << "_min" << dim << ", &"
                << b.name << "_extent" << dim << ");\n";
        }
    }
    for (const ir::Ure &u : p.ures) {
        if (!u.is_output) {
            out << "    std::vector<" << c_type(u.type) << "> " << u.name << "_values(" << points << (crossed ? " * instances" : "") << ");\n";
        }
        if (u.reduction) {
            // Which elements of a reduction have their initial value yet.
            out << "    std::vector<unsigned char> " << u.name << "_reached(1";
            for (size_t d = 0; d < u.output_index().size(); d++) out << " * " << u.name << "_extent" << d;
            out << ");\n";
        }
    }
    // Loops: the run-time loop outermost, then the reference nesting.
    std::vector<std::string> coord(n);
    for (size_t i = 0; i < n; i++) coord[i] = p.loops[i].var;
    std::string indent = "    ";
    int depth = 0;
    auto open_loop = [&](int l, int direction) {
        const ir::Loop &loop = p.loops[l];
        std::string v = loop.var;
        if (l == runtime_loop) {
            out << indent << "for (int64_t " << v << " = " << loop.min << "; " << v << " < " << loop.min << " + instances; " << v << "++) {\n";
        } else if (direction > 0) {
            out << indent << "for (int64_t " << v << " = " << loop.min << "; " << v << " <= " << loop.max() << "; " << v << "++) {\n";
        } else {
            out << indent << "for (int64_t " << v << " = " << loop.max() << "; " << v << " >= " << loop.min << "; " << v << "--) {\n";
        }
        indent += "    ";
        depth++;
    };
    if (runtime_loop >= 0 && !crossed) open_loop(runtime_loop, 1);
    for (int l : p.reference_nesting) {
        if (l != runtime_loop || crossed) open_loop(l, p.reference_direction[l]);
    }
    out << indent << "const int64_t point = " << local_index(coord) << ";\n";
    CPrinterHooks hooks;
    hooks.variable = [](const std::string &v) { return v; };
    hooks.call = [&](const Call *op, const std::vector<std::string> &args) -> std::string {
        std::string callee = ir::recurrence_callee(op);
        if (!callee.empty()) {
            const ir::Ure &producer = p.ure(callee);
            std::vector<std::string> c = coord;
            for (size_t i = 0; i < args.size(); i++) c[p.loop_index(producer.args[i])] = args[i];
            return callee + "_values[" + local_index(c) + "]";
        }
        if (op->call_type == Call::Image) return op->name + "[" + dense_offset_text(op->name, args, "(int64_t)") + "]";
        compile_error("call '", ir::to_source(Expr(op)), "' cannot be emitted");
    };
    if (!p.constraints.empty()) {
        out << indent << "if (!(" << print_c_expr(p.domain_condition(), hooks) << ")) continue;  // outside the domain\n";
    }
    // Past a data bound (a ragged instance's padding) nothing runs, but the
    // point reaches its reductions' elements (check_domain: every output is one).
    const std::string inside = p.data_bounds.empty() ? std::string() : "inside_data_bounds";
    if (!inside.empty()) out << indent << "const bool " << inside << " = " << print_c_expr(p.data_condition(), hooks) << ";\n";
    for (const ir::Ure &u : p.ures) {
        auto [defined, value] = split_defined(u.value);
        std::string v = print_c_expr(value, hooks);
        if (!u.is_output) {
            out << indent << (inside.empty() ? "" : "if (" + inside + ") ") << u.name << "_values[point] = " << v << ";\n";
            continue;
        }
        if (!inside.empty()) defined = defined && Variable::make(Bool(), inside);
        // The element the output's (affine) index names, in its box.
        std::vector<std::string> index;
        for (const Expr &e : u.output_index()) index.push_back(print_c_expr(e, hooks));
        if (u.reduction) {
            // The first point that reaches an element sets its initial value;
            // each point where the value is defined combines into it.
            const std::string element = u.name + "_element", acc = u.name + "_accumulator";
            const Expr combined = ir::reduce_combine(u.reduction->op, Variable::make(u.type, acc), Variable::make(u.type, u.name + "_value"));
            out << indent << "{\n"
                << indent << "    const int64_t " << element << " = " << dense_offset_text(u.name, index, "(int64_t)") << ";\n"
                << indent << "    if (!" << u.name << "_reached[" << element << "]) " << u.name << "_reached[" << element << "] = 1, "
                << u.name << "[" << element << "] = " << print_c_expr(u.reduction->initial, hooks) << ";\n"
                << indent << "    if (" << print_c_expr(defined, hooks) << ") {\n"
                << indent << "        const " << c_type(u.type) << " " << u.name << "_value = " << v << ";\n"
                << indent << "        " << c_type(u.type) << " &" << acc << " = " << u.name << "[" << element << "];\n"
                << indent << "        " << acc << " = " << print_c_expr(combined, hooks) << ";\n"
                << indent << "    }\n"
                << indent << "}\n";
            continue;
        }
        out << indent << "if (" << print_c_expr(defined, hooks) << ") " << u.name << "[" << dense_offset_text(u.name, index, "(int64_t)")
            << "] = " << v << ";\n";
    }
    for (int d = 0; d < depth; d++) {
        indent.resize(indent.size() - 4);
        out << indent << "}\n";
    }
    out << "}\n";
    return out.str();
}

}  // namespace pulse
