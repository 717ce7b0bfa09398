#include "CodeGenCuda.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "Affine.h"
#include "CodeGenC.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

constexpr int warp_size = 32;

// ---------------------------------------------------------------------------
// Expression analysis: taps and undefined branches.

/// True if `e` contains a call to `tap`.
bool contains_tap(const Expr &e, const sys::Tap &tap) {
    class Finder : public IRVisitor {
    public:
        explicit Finder(const sys::Tap &t) : target(t) {}
        const sys::Tap &target;
        bool found = false;
        using IRVisitor::visit;
        void visit(const Call *op) override {
            sys::Tap t;
            if (sys::is_tap(Expr(op), &t) && t == target) found = true;
            IRVisitor::visit(op);
        }
    } finder(tap);
    e.accept(&finder);
    return finder.found;
}

/// `e` with every call to `tap` replaced by `replacement`.
Expr replace_tap(const Expr &e, const sys::Tap &tap, const Expr &replacement) {
    class Replacer : public IRMutator {
    public:
        Replacer(const sys::Tap &t, const Expr &r) : target(t), replacement(r) {}
        const sys::Tap &target;
        Expr replacement;
        using IRMutator::visit;
        Expr visit(const Call *op) override {
            sys::Tap t;
            if (sys::is_tap(Expr(op), &t) && t == target) return replacement;
            return IRMutator::visit(op);
        }
    } replacer(tap, replacement);
    return replacer.mutate(e);
}

/// Where a statement's value is a pure copy of `tap`: the condition under
/// which the select tree of `e` ends in the bare tap. Nothing if the tap is
/// used in any other way (inside arithmetic, inside a condition), which rules
/// out resolving the copy chain from its source lane.
std::optional<Expr> copy_condition(const Expr &e, const sys::Tap &tap) {
    sys::Tap t;
    if (sys::is_tap(e, &t) && t == tap) return const_true();
    if (!contains_tap(e, tap)) return const_false();
    if (const Select *op = e.as<Select>()) {
        if (contains_tap(op->condition, tap)) return std::nullopt;
        std::optional<Expr> a = copy_condition(op->true_value, tap), b = copy_condition(op->false_value, tap);
        if (!a || !b) return std::nullopt;
        return simplify(select(op->condition, *a, *b));
    }
    return std::nullopt;
}

/// The value a copy chain's source lanes compute: the branches of the select
/// tree of `e` that end in the bare `tap` are dropped. Requires that
/// copy_condition(e, tap) exists.
Expr source_value(const Expr &e, const sys::Tap &tap) {
    if (const Select *op = e.as<Select>()) {
        std::optional<Expr> a = copy_condition(op->true_value, tap), b = copy_condition(op->false_value, tap);
        if (b && is_const_one(*b)) return source_value(op->true_value, tap);
        if (a && is_const_one(*a)) return source_value(op->false_value, tap);
        return select(op->condition, source_value(op->true_value, tap), source_value(op->false_value, tap));
    }
    return replace_tap(e, tap, make_zero(e.type()));
}

/// Where `e` is defined: false in the branches of selects that end in
/// `undefined` (a select without a false value), true elsewhere.
Expr defined_condition(const Expr &e) {
    if (ir::is_undefined_value(e)) return const_false();
    if (const Select *op = e.as<Select>()) {
        return simplify(select(op->condition, defined_condition(op->true_value), defined_condition(op->false_value)));
    }
    return const_true();
}

std::string tap_text(const sys::Tap &tap) {
    std::ostringstream s;
    s << tap.var << "(dp = " << tap.dp << ", dt = " << tap.dt << ")";
    return s.str();
}

// ---------------------------------------------------------------------------
// Layout of the buffers: dense boxes, first dimension innermost.

/// value = constant + per_instance * instances
struct LinearInInstances {
    int64_t constant = 0, per_instance = 0;
};

struct InputLayout {
    std::string name;
    Type type;
    int dimensions = 0;
    /// Per dimension, the candidate minima and maxima (one per access); the
    /// region is the smallest box holding all of them for a given `instances`.
    std::vector<std::vector<LinearInInstances>> mins, maxs;
};

struct OutputLayout {
    std::string name;
    Type type;
    std::vector<std::string> index;  ///< the index it is written at, as written (`c, b` or `b * 16 + c`)
    /// Per dimension, the box the index spans over the loop bounds.
    std::vector<LinearInInstances> mins, extents;
};

class CudaGenerator {
public:
    CudaGenerator(const sys::SystolicProgram &p, const std::string &n, const std::vector<std::string> &order)
        : program(p), source(p.source), name(n), input_order(order) {
        check_fits_warp();
        plan_layout();
    }

    std::string header();
    std::string kernel();
    std::string check_harness();

private:
    const sys::SystolicProgram &program;
    const ir::UreProgram &source;
    std::string name;
    std::vector<std::string> input_order;

    std::vector<InputLayout> inputs;
    std::vector<OutputLayout> outputs;
    std::string outer_instance;        ///< the instance loop whose extent is `instances` ("" if none)
    int64_t inner_instances = 1;       ///< product of the other instance loops' extents

    void check_fits_warp() const;
    void plan_layout();

    std::string signature_parameters(bool with_names) const;
    std::string layout_struct() const;
    std::string comment_block() const;
    std::string kernel_body() const;
    std::string region_text(const std::vector<LinearInInstances> &candidates, bool minimum) const;
    std::string index_text(const std::string &buffer, const std::vector<std::string> &index, bool is_input) const;
};

void CudaGenerator::check_fits_warp() const {
    if (program.pe_count <= warp_size) return;
    // Suggest, for each loop the space row moves along, the largest extent
    // that brings the PE count to 32 with the other bounds unchanged (the PE
    // range of a box is 1 + sum |P_i| (extent_i - 1)).
    std::ostringstream hint;
    if (source.schedule.transform && !source.schedule.transform->matrix.empty()) {
        const ir::SpaceTimeTransform &st = *source.schedule.transform;
        const std::vector<int64_t> &row = st.matrix.front();
        int64_t span = 0;
        for (size_t i = 0; i < row.size(); i++) span += std::abs(row[i]) * (source.loop(st.source_loops[i]).extent - 1);
        for (size_t i = 0; i < row.size(); i++) {
            if (row[i] == 0) continue;
            const ir::Loop &loop = source.loop(st.source_loops[i]);
            int64_t others = span - std::abs(row[i]) * (loop.extent - 1);
            int64_t fit = (warp_size - 1 - others) / std::abs(row[i]) + 1;
            if (fit >= 1) hint << "; " << loop.var << " fits with extent <= " << fit << " (set_bounds, or tile " << loop.var << " by " << fit << ")";
            else hint << "; " << loop.var << " cannot fit without shrinking the other space loops";
        }
    }
    compile_error("cuda backend: ", name, ": the array has ", program.pe_count, " PEs (p in [", program.pe_min, ", ",
                  program.pe_min + program.pe_count - 1, "]), more than the ", warp_size,
                  " lanes of a warp; arrays spanning several warps are not supported", hint.str());
}

void CudaGenerator::plan_layout() {
    if (!program.instance_loops.empty()) {
        outer_instance = program.instance_loops.back().var;
        for (size_t i = 0; i + 1 < program.instance_loops.size(); i++) inner_instances *= program.instance_loops[i].extent;
    }
    // The box of a loop: [min, max], where the outer instance loop's max is
    // min + instances - 1.
    auto bound = [&](const ir::Loop &loop, bool upper) {
        LinearInInstances v;
        if (!upper) v.constant = loop.min;
        else if (loop.var == outer_instance) v.constant = loop.min - 1, v.per_instance = 1;
        else v.constant = loop.max();
        return v;
    };
    // The smallest and largest value of an affine form over the box.
    auto range = [&](const AffineForm &form) {
        LinearInInstances lo{form.constant, 0}, hi{form.constant, 0};
        for (size_t i = 0; i < source.loops.size(); i++) {
            int64_t a = form.coefficient[i];
            if (a == 0) continue;
            LinearInInstances l = bound(source.loops[i], a < 0), h = bound(source.loops[i], a > 0);
            lo.constant += a * l.constant, lo.per_instance += a * l.per_instance;
            hi.constant += a * h.constant, hi.per_instance += a * h.per_instance;
        }
        return std::make_pair(lo, hi);
    };
    for (const std::string &input_name : input_order) {
        const ir::InputDecl &decl = source.input(input_name);
        InputLayout layout{decl.name, decl.type, decl.dimensions, {}, {}};
        layout.mins.resize(decl.dimensions);
        layout.maxs.resize(decl.dimensions);
        for (const ir::InputAccess &access : source.input_accesses) {
            if (access.input != input_name) continue;
            for (int d = 0; d < decl.dimensions; d++) {
                std::optional<AffineForm> form = to_affine(access.index[d], source.loops);
                if (!form) compile_error("cuda backend: the read of ", input_name, " in ", access.consumer, " is not affine in dimension ", d);
                auto [lo, hi] = range(*form);
                layout.mins[d].push_back(lo);
                layout.maxs[d].push_back(hi);
            }
        }
        for (int d = 0; d < decl.dimensions; d++) {
            if (layout.mins[d].empty()) compile_error("cuda backend: input ", input_name, " is never read");
        }
        inputs.push_back(layout);
    }
    for (const ir::Ure *ure : source.outputs()) {
        OutputLayout layout{ure->name, ure->type, {}, {}, {}};
        for (const Expr &e : ure->output_index()) {
            std::optional<AffineForm> form = to_affine(e, source.loops);
            if (!form) compile_error("cuda backend: output ", ure->name, " is written at a non-affine index ", ir::to_source(e));
            auto [lo, hi] = range(*form);
            layout.index.push_back(ir::to_source(e));
            layout.mins.push_back(lo);
            layout.extents.push_back({hi.constant - lo.constant + 1, hi.per_instance - lo.per_instance});
        }
        outputs.push_back(layout);
    }
}

std::string linear_text(const LinearInInstances &v) {
    std::ostringstream s;
    if (v.per_instance == 0) s << v.constant << "ll";
    else {
        s << "(int64_t)" << v.per_instance << " * instances";
        if (v.constant) s << (v.constant > 0 ? " + " : " - ") << std::abs(v.constant) << "ll";
    }
    return s.str();
}

std::string CudaGenerator::region_text(const std::vector<LinearInInstances> &candidates, bool minimum) const {
    std::string text = linear_text(candidates[0]);
    for (size_t i = 1; i < candidates.size(); i++) {
        std::string next = linear_text(candidates[i]);
        text = "pulse_" + std::string(minimum ? "min" : "max") + "64(" + text + ", " + next + ")";
    }
    return text;
}

std::string CudaGenerator::signature_parameters(bool with_names) const {
    std::ostringstream s;
    for (const InputLayout &in : inputs) s << "const " << c_type(in.type) << " *" << (with_names ? in.name : "") << ", ";
    for (const OutputLayout &out : outputs) s << c_type(out.type) << " *" << (with_names ? out.name : "") << ", ";
    s << "int64_t" << (with_names ? " instances" : "");
    return s.str();
}

std::string CudaGenerator::layout_struct() const {
    std::ostringstream s;
    s << "// The buffers are dense boxes, first dimension innermost: element (i0, i1, ..)\n"
         "// of a buffer is at (i1 - min1) * extent0 + (i0 - min0). Their size grows with\n"
         "// `instances` (the extent of loop "
      << (outer_instance.empty() ? "<none>" : outer_instance) << ").\n";
    s << "struct " << name << "_layout {\n";
    for (const InputLayout &in : inputs) {
        s << "    int64_t";
        for (int d = 0; d < in.dimensions; d++) s << (d ? ", " : " ") << in.name << "_min" << d << ", " << in.name << "_extent" << d;
        s << ";  // input " << in.name << "\n";
    }
    for (const OutputLayout &out : outputs) {
        s << "    int64_t";
        for (size_t d = 0; d < out.index.size(); d++) s << (d ? ", " : " ") << out.name << "_min" << d << ", " << out.name << "_extent" << d;
        s << ";  // output " << out.name << "(";
        for (size_t d = 0; d < out.index.size(); d++) s << (d ? ", " : "") << out.index[d];
        s << ")\n";
    }
    s << "};\n\n";
    s << "[[maybe_unused]] static __host__ __device__ __forceinline__ int64_t pulse_min64(int64_t a, int64_t b) { return a < b ? a : b; }\n"
         "[[maybe_unused]] static __host__ __device__ __forceinline__ int64_t pulse_max64(int64_t a, int64_t b) { return a > b ? a : b; }\n\n";
    s << "/// The layout of every buffer for a batch of `instances` arrays: each input's\n"
         "/// region is the box its affine reads span over the loop bounds.\n";
    s << "static __host__ __device__ __forceinline__ " << name << "_layout " << name << "_make_layout(int64_t instances) {\n";
    s << "    " << name << "_layout layout;\n";
    for (const InputLayout &in : inputs) {
        for (int d = 0; d < in.dimensions; d++) {
            s << "    layout." << in.name << "_min" << d << " = " << region_text(in.mins[d], true) << ";\n";
            s << "    layout." << in.name << "_extent" << d << " = " << region_text(in.maxs[d], false) << " - layout." << in.name << "_min" << d << " + 1;\n";
        }
    }
    for (const OutputLayout &out : outputs) {
        for (size_t d = 0; d < out.index.size(); d++) {
            s << "    layout." << out.name << "_min" << d << " = " << linear_text(out.mins[d]) << ";\n";
            s << "    layout." << out.name << "_extent" << d << " = " << linear_text(out.extents[d]) << ";\n";
        }
    }
    s << "    return layout;\n}\n";
    return s.str();
}

std::string CudaGenerator::index_text(const std::string &buffer, const std::vector<std::string> &index, bool is_input) const {
    // Horner form from the outermost dimension: ((i2 - m2) * e1 + (i1 - m1)) * e0 + (i0 - m0).
    std::string text;
    for (int d = (int)index.size() - 1; d >= 0; d--) {
        std::string term = "((int64_t)" + index[d] + " - L." + buffer + "_min" + std::to_string(d) + ")";
        text = text.empty() ? term : "(" + text + ") * L." + buffer + "_extent" + std::to_string(d) + " + " + term;
    }
    return text;
}

std::string CudaGenerator::comment_block() const {
    std::ostringstream s;
    s << "// " << name << ": a software systolic array generated by Pulse.\n//\n";
    s << "// UREs (loops, innermost first:";
    for (const ir::Loop &l : source.loops) s << " " << l.var << " in [" << l.min << ", " << l.max() << "]";
    s << "):\n";
    for (const ir::Ure &u : source.ures) {
        s << "//   " << u.lhs_text() << " = " << ir::to_source(u.value) << "\n";
    }
    if (source.schedule.transform) {
        const ir::SpaceTimeTransform &st = *source.schedule.transform;
        s << "// Space-time transform" << (st.check_time ? " (CheckTime)" : "") << ":\n";
        for (size_t r = 0; r < st.matrix.size(); r++) {
            s << "//   " << st.destination_loops[r] << " =";
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
    }
    s << "// Array: " << program.pe_count << " PEs (" << program.space_var << " in [" << program.pe_min << ", "
      << program.pe_min + program.pe_count - 1 << "], lane = " << program.space_var << " - " << program.pe_min << "), "
      << program.steps() << " steps (" << program.time_var << " in [" << program.time_min << ", " << program.time_max << "]).\n";
    s << "// Instances: one warp each, over";
    if (program.instance_loops.empty()) s << " nothing (a single instance)";
    for (const ir::Loop &l : program.instance_loops) s << " " << l.var << (l.var == outer_instance ? " in [" + std::to_string(l.min) + ", " + std::to_string(l.min) + " + instances)" : " in [" + std::to_string(l.min) + ", " + std::to_string(l.max()) + "]");
    s << ".\n";
    s << "// Reverse map: ";
    if (source.schedule.transform) {
        for (size_t i = 0; i < program.reverse.size() && i < source.schedule.transform->source_loops.size(); i++) {
            s << (i ? ", " : "") << source.schedule.transform->source_loops[i] << " = " << ir::to_source(program.reverse[i]);
        }
    }
    s << "\n// Active (has a preimage): " << ir::to_source(program.has_preimage) << "\n";
    s << "// Register plan, per lane (history registers are shifted once per step):\n";
    for (const sys::Variable &v : program.variables) {
        s << "//   " << v.name << ": " << v.history << " history register" << (v.history == 1 ? "" : "s") << " + the current value; "
          << sys::to_string(v.dataflow) << "; taps";
        for (const sys::Tap &t : v.taps) {
            s << " (dp " << t.dp << ", dt " << t.dt << ": ";
            if (t.dt == 0 && t.dp == 0) s << "this step";
            else if (t.dt == 0) s << "copy chain, one ballot + one shuffle";
            else if (t.dp == 0) s << "own register";
            else s << (t.dp > 0 ? "__shfl_up_sync" : "__shfl_down_sync");
            s << ")";
        }
        s << "\n";
    }
    return s.str();
}

/// Prints the statements of one step; collects which source loop variables
/// the printed text uses, so only those are defined from the reverse map.
class StepPrinter {
public:
    StepPrinter(const sys::SystolicProgram &p, const std::map<std::string, std::string> &stationary_loads,
                const std::set<std::string> &inputs, const std::set<std::string> &source_loops)
        : program(p), stationary(stationary_loads), input_names(inputs), source_loop_names(source_loops) {}

    const sys::SystolicProgram &program;
    const std::map<std::string, std::string> &stationary;
    const std::set<std::string> &input_names;
    const std::set<std::string> &source_loop_names;
    std::set<std::string> used_source_loops;
    /// How a tap prints in the statement being printed (filled per statement).
    std::map<std::string, std::string> tap_override;
    /// Emits the text of an input element read: `L`, the buffer pointers.
    std::function<std::string(const std::string &, const std::vector<std::string> &)> input_index;

    static std::string tap_key(const sys::Tap &t) { return t.var + "/" + std::to_string(t.dp) + "/" + std::to_string(t.dt); }

    std::string print(const Expr &e) {
        CPrinterHooks hooks;
        hooks.variable = [&](const std::string &v) -> std::string {
            if (source_loop_names.count(v)) used_source_loops.insert(v);
            return v;
        };
        hooks.call = [&](const Call *op, const std::vector<std::string> &args) -> std::string {
            sys::Tap tap;
            if (sys::is_tap(Expr(op), &tap)) {
                auto it = tap_override.find(tap_key(tap));
                if (it != tap_override.end()) return it->second;
                if (tap.dt == 0 && tap.dp == 0) return tap.var + "_now";
                if (tap.dt == 0) compile_error("cuda backend: same-step tap ", tap_text(tap), " outside its copy chain");
                if (tap.dp == 0) return tap.var + "_h" + std::to_string(tap.dt);
                return tap_register(tap);
            }
            std::string input = ir::input_callee(Expr(op));
            if (!input.empty()) {
                std::string key = input + "(";
                for (size_t i = 0; i < args.size(); i++) key += (i ? ", " : "") + args[i];
                key += ")";
                auto it = stationary.find(key);
                if (it != stationary.end()) return it->second;
                // Loads happen only on active lanes: elsewhere the index may
                // lie outside the buffer.
                return "(active_ ? " + input + "[" + input_index(input, args) + "] : (" + c_type(op->type) + ")0)";
            }
            compile_error("cuda backend: cannot print the call ", op->name, " in generated code");
        };
        return print_c_expr(e, hooks);
    }

    static std::string tap_register(const sys::Tap &t) {
        return t.var + "_from_" + (t.dp > 0 ? "up" : "down") + std::to_string(std::abs(t.dp)) + "_h" + std::to_string(t.dt);
    }
};

std::string CudaGenerator::kernel_body() const {
    std::ostringstream s;
    const std::string T_int = "int";
    std::set<std::string> input_names(input_order.begin(), input_order.end());
    std::set<std::string> source_loops;
    if (source.schedule.transform) source_loops.insert(source.schedule.transform->source_loops.begin(), source.schedule.transform->source_loops.end());

    // Stationary input reads depend on the lane only: one load before the time loop.
    std::map<std::string, std::string> stationary;
    std::ostringstream preload;
    {
        std::map<std::string, std::string> none;
        StepPrinter printer(program, none, input_names, source_loops);
        printer.input_index = [&](const std::string &in, const std::vector<std::string> &args) { return index_text(in, args, true); };
        int count = 0;
        for (const sys::InputRead &read : program.input_reads) {
            if (!read.stationary) continue;
            std::vector<std::string> args;
            for (const Expr &e : read.index) args.push_back(printer.print(e));
            if (!printer.used_source_loops.empty()) { printer.used_source_loops.clear(); continue; }
            std::string key = read.input + "(";
            for (size_t i = 0; i < args.size(); i++) key += (i ? ", " : "") + args[i];
            key += ")";
            if (stationary.count(key)) continue;
            const InputLayout *layout = nullptr;
            for (const InputLayout &in : inputs) if (in.name == read.input) layout = &in;
            if (!layout) continue;
            std::string reg = read.input + "_stay" + std::to_string(count++);
            // The guard is the buffer's box: a lane that is never active may
            // compute any index, and its value is never used.
            std::string guard = "lane_ < " + std::to_string(program.pe_count);
            for (size_t d = 0; d < args.size(); d++) {
                std::string m = "L." + read.input + "_min" + std::to_string(d), e = "L." + read.input + "_extent" + std::to_string(d);
                guard += " && (int64_t)" + args[d] + " >= " + m + " && (int64_t)" + args[d] + " < " + m + " + " + e;
            }
            preload << "    // " << key << " depends on the lane only: loaded once, kept in a register.\n";
            preload << "    const " << c_type(layout->type) << " " << reg << " = (" << guard << ") ? " << read.input << "["
                    << index_text(read.input, args, true) << "] : (" << c_type(layout->type) << ")0;\n";
            stationary[key] = reg;
        }
    }

    StepPrinter printer(program, stationary, input_names, source_loops);
    printer.input_index = [&](const std::string &in, const std::vector<std::string> &args) { return index_text(in, args, true); };

    std::ostringstream step;
    // Taps of earlier steps: every lane shuffles, before any divergent code.
    std::set<std::string> shuffled;
    bool any_shuffle = false;
    for (const sys::Variable &v : program.variables) {
        for (const sys::Tap &t : v.taps) {
            if (t.dt < 1 || t.dp == 0) continue;
            if (std::abs(t.dp) >= warp_size) compile_error("cuda backend: tap ", tap_text(t), " moves further than a warp");
            std::string reg = StepPrinter::tap_register(t);
            if (!shuffled.insert(reg).second) continue;
            if (!any_shuffle) step << "        // Values of earlier steps from other lanes (all lanes shuffle).\n";
            any_shuffle = true;
            step << "        const " << c_type(v.type) << " " << reg << " = " << (t.dp > 0 ? "__shfl_up_sync" : "__shfl_down_sync")
                 << "(all_lanes_, " << v.name << "_h" << t.dt << ", " << std::abs(t.dp) << ");\n";
        }
    }

    std::ostringstream chain_setup;
    for (const sys::Statement &st : program.statements) {
        printer.tap_override.clear();
        if (st.is_output) {
            Expr defined = defined_condition(st.value);
            std::string value = printer.print(st.value);
            std::vector<std::string> index;
            for (const Expr &e : st.output_index) index.push_back(printer.print(e));
            std::string cond = is_const_one(defined) ? "active_" : "active_ && " + printer.print(defined);
            step << "        // " << st.ure << ": output\n";
            step << "        if (" << cond << ") " << st.ure << "[" << index_text(st.ure, index, false) << "] = " << value << ";\n";
            continue;
        }
        // Same-step taps along the lanes: copy chains.
        std::vector<sys::Tap> chains;
        for (const sys::Variable &v : program.variables) {
            for (const sys::Tap &t : v.taps) {
                if (t.dt == 0 && t.dp != 0 && contains_tap(st.value, t)) chains.push_back(t);
            }
        }
        const std::string T = c_type(st.type);
        if (chains.empty()) {
            std::string value = printer.print(st.value);
            step << "        // " << st.ure << "\n";
            if (program.check_time) step << "        if (active_) " << st.ure << "_now = " << value << ";\n";
            else step << "        " << st.ure << "_now = " << value << ";\n";
            continue;
        }
        if (chains.size() != 1 || chains[0].var != st.ure) {
            // A same-step read of another variable along the lanes: that
            // variable is final already, one shuffle reads it.
            for (const sys::Tap &t : chains) {
                if (t.var == st.ure) compile_error("cuda backend: ", st.ure, " has several same-step copy chains; not supported");
                std::string reg = t.var + "_now_from_" + (t.dp > 0 ? "up" : "down") + std::to_string(std::abs(t.dp));
                step << "        const " << c_type(program.variable(t.var).type) << " " << reg << " = "
                     << (t.dp > 0 ? "__shfl_up_sync" : "__shfl_down_sync") << "(all_lanes_, " << t.var << "_now, " << std::abs(t.dp) << ");\n";
                printer.tap_override[StepPrinter::tap_key(t)] = reg;
            }
            std::string value = printer.print(st.value);
            step << "        // " << st.ure << "\n";
            step << "        " << (program.check_time ? "if (active_) " : "") << st.ure << "_now = " << value << ";\n";
            continue;
        }
        const sys::Tap &tap = chains[0];
        const int64_t dp = tap.dp;
        std::optional<Expr> copies = copy_condition(st.value, tap);
        Expr from_source = copies ? simplify(source_value(st.value, tap)) : Expr();
        if (copies && !expr_uses_var(from_source, program.space_var)) {
            // A pure copy chain whose source value does not depend on the
            // lane (a broadcast, like SBM's weights w(t)): every active lane
            // computes the value its source lane would, with the same (valid)
            // indices, and no lane needs to hear from another.
            step << "        // " << st.ure << ": copy chain along the lanes (dp = " << dp
                 << ") of a value that is the same on every lane: computed in place\n";
            step << "        " << st.ure << "_now = " << printer.print(from_source) << ";\n";
        } else if (copies) {
            // A pure copy chain: each lane takes the value of the nearest
            // source lane l - k*dp (k >= 0) that computes its own value. The
            // validator guarantees the lanes in between are active copies, so
            // one ballot finds the source and one shuffle fetches its value.
            std::string mask = st.ure + "_chain_lanes_";
            chain_setup << "    // Lanes lane_, lane_ - " << dp << ", ... : where " << st.ure << "'s copy chain to this lane can start.\n";
            chain_setup << "    unsigned " << mask << " = 0u;\n";
            if (dp > 0) chain_setup << "    for (int k_ = lane_; k_ >= 0; k_ -= " << dp << ") " << mask << " |= 1u << k_;\n";
            else chain_setup << "    for (int k_ = lane_; k_ < 32; k_ += " << -dp << ") " << mask << " |= 1u << k_;\n";
            std::string own = printer.print(replace_tap(st.value, tap, make_zero(st.type)));
            std::string is_copy = printer.print(*copies);
            step << "        // " << st.ure << ": copy chain along the lanes (dp = " << dp << "), resolved from its source lane\n";
            step << "        {\n";
            step << "            const " << T << " own_ = " << own << ";\n";
            step << "            const unsigned sources_ = __ballot_sync(all_lanes_, active_ && !" << is_copy << ") & " << mask << ";\n";
            if (dp > 0) step << "            const int from_ = 31 - __clz(sources_);  // nearest source below (-1: none)\n";
            else step << "            const int from_ = __ffs(sources_) - 1;  // nearest source above (-1: none)\n";
            step << "            " << st.ure << "_now = __shfl_sync(all_lanes_, own_, from_ < 0 ? lane_ : from_);\n";
            step << "        }\n";
        } else {
            // The chain's value flows through arithmetic: iterate, one hop per
            // round, until the longest chain in the array is covered.
            int64_t rounds = (program.pe_count - 1) / std::abs(dp) + 1;
            std::string reg = st.ure + "_round_from_" + (dp > 0 ? "up" : "down") + std::to_string(std::abs(dp));
            printer.tap_override[StepPrinter::tap_key(tap)] = reg;
            std::string value = printer.print(st.value);
            step << "        // " << st.ure << ": same-step chain along the lanes (dp = " << dp << "), " << rounds << " rounds\n";
            step << "        " << st.ure << "_now = (" << T << ")0;\n";
            step << "#pragma unroll\n";
            step << "        for (int round_ = 0; round_ < " << rounds << "; ++round_) {\n";
            step << "            const " << T << " " << reg << " = " << (dp > 0 ? "__shfl_up_sync" : "__shfl_down_sync") << "(all_lanes_, "
                 << st.ure << "_now, " << std::abs(dp) << ");\n";
            step << "            " << st.ure << "_now = " << value << ";\n";
            step << "        }\n";
        }
    }
    // Shift the histories: register h_k holds the value of step t - k.
    std::ostringstream shift;
    for (const sys::Variable &v : program.variables) {
        for (int64_t k = v.history; k >= 1; k--) {
            shift << "        " << v.name << "_h" << k << " = " << (k == 1 ? v.name + "_now" : v.name + "_h" + std::to_string(k - 1)) << ";\n";
        }
    }
    std::string active = printer.print(program.has_preimage);

    // Definitions of the source loop variables the statements use.
    std::ostringstream defs;
    if (source.schedule.transform) {
        const auto &loops = source.schedule.transform->source_loops;
        for (size_t i = 0; i < loops.size() && i < program.reverse.size(); i++) {
            if (printer.used_source_loops.count(loops[i])) {
                std::set<std::string> before = printer.used_source_loops;
                defs << "        const int " << loops[i] << " = " << printer.print(program.reverse[i]) << ";\n";
                if (printer.used_source_loops != before) compile_error("cuda backend: the reverse map of ", loops[i], " uses source loops");
            }
        }
    }

    // Registers.
    std::ostringstream regs;
    regs << "    // Registers: this step's value of each URE and the history of each variable.\n";
    for (const sys::Statement &st : program.statements) {
        if (st.is_output) continue;
        regs << "    " << c_type(st.type) << " " << st.ure << "_now = (" << c_type(st.type) << ")0";
        for (const sys::Variable &v : program.variables) {
            if (v.name != st.ure) continue;
            for (int64_t k = 1; k <= v.history; k++) regs << ", " << v.name << "_h" << k << " = (" << c_type(st.type) << ")0";
        }
        regs << ";\n";
    }

    s << preload.str() << regs.str() << chain_setup.str();
    s << "    // The time loop: every lane runs every step in lock step.\n";
    if (program.steps() <= 64) s << "#pragma unroll\n";
    s << "    for (int " << program.time_var << " = " << program.time_min << "; " << program.time_var << " <= " << program.time_max
      << "; ++" << program.time_var << ") {\n";
    s << defs.str();
    s << "        const bool active_ = lane_ < " << program.pe_count << " && " << active << ";\n";
    s << step.str() << shift.str() << "    }\n";
    return s.str();
}

std::string CudaGenerator::kernel() {
    std::ostringstream s;
    s << comment_block();
    s << "#include <cstdint>\n#include <cuda_runtime.h>\n\n#include \"" << name << ".h\"\n\n";
    s << c_helper_functions("[[maybe_unused]] static __host__ __device__ __forceinline__") << "\n";
    s << layout_struct() << "\n";
    s << "/// One warp per array instance, one lane per PE.\n";
    s << "__global__ void __launch_bounds__(" << cuda_warps_per_block * warp_size << ") " << name << "_kernel(";
    {
        std::ostringstream p;
        bool first = true;
        for (const InputLayout &in : inputs) {
            p << (first ? "" : ", ") << "const " << c_type(in.type) << " *__restrict__ " << in.name;
            first = false;
        }
        for (const OutputLayout &out : outputs) {
            p << (first ? "" : ", ") << c_type(out.type) << " *__restrict__ " << out.name;
            first = false;
        }
        p << (first ? "" : ", ") << "int64_t instances";
        s << p.str() << ") {\n";
    }
    s << "    const unsigned all_lanes_ = 0xffffffffu;\n";
    s << "    const int lane_ = threadIdx.x % 32;\n";
    s << "    const int64_t warp_ = (int64_t)blockIdx.x * " << cuda_warps_per_block << " + threadIdx.x / 32;\n";
    if (outer_instance.empty()) s << "    if (warp_ >= 1) return;  // no instance loop: a single array\n";
    else s << "    if (warp_ >= instances * " << inner_instances << ") return;  // the whole warp leaves together\n";
    s << "    const " << name << "_layout L = " << name << "_make_layout(instances);\n";
    s << "    (void)L;\n";
    if (!program.instance_loops.empty()) {
        s << "    // This warp's instance (innermost loop fastest).\n";
        s << "    int64_t rest_ = warp_;\n";
        for (size_t i = 0; i < program.instance_loops.size(); i++) {
            const ir::Loop &l = program.instance_loops[i];
            if (i + 1 < program.instance_loops.size()) {
                s << "    const int " << l.var << " = (int)(" << l.min << " + rest_ % " << l.extent << ");\n";
                s << "    rest_ /= " << l.extent << ";\n";
            } else {
                s << "    const int " << l.var << " = (int)(" << l.min << " + rest_);\n";
            }
        }
        // Not every kernel reads every instance variable; silence nvcc's warning.
        for (const ir::Loop &l : program.instance_loops) s << "    (void)" << l.var << ";\n";
    }
    s << "    const int " << program.space_var << " = " << program.pe_min << " + lane_;  // this lane's PE\n";
    s << kernel_body();
    s << "}\n\n";
    s << "cudaError_t " << name << "(" << signature_parameters(true) << ", cudaStream_t stream) {\n";
    if (outer_instance.empty()) s << "    const int64_t warps = 1;\n";
    else s << "    const int64_t warps = instances * " << inner_instances << ";\n";
    s << "    if (warps <= 0) return cudaSuccess;\n";
    s << "    const int64_t blocks = (warps + " << cuda_warps_per_block - 1 << ") / " << cuda_warps_per_block << ";\n";
    s << "    " << name << "_kernel<<<(unsigned)blocks, " << cuda_warps_per_block * warp_size << ", 0, stream>>>(";
    {
        bool first = true;
        for (const InputLayout &in : inputs) s << (first ? "" : ", ") << in.name, first = false;
        for (const OutputLayout &out : outputs) s << (first ? "" : ", ") << out.name, first = false;
        s << (first ? "" : ", ") << "instances";
    }
    s << ");\n    return cudaGetLastError();\n}\n\n";
    // Layout queries for the host.
    s << "void " << name << "_cuda_input_region(int input, int dim, int64_t instances, int64_t *min, int64_t *extent) {\n";
    s << "    const " << name << "_layout L = " << name << "_make_layout(instances);\n";
    s << "    *min = 0, *extent = 0;\n";
    for (size_t i = 0; i < inputs.size(); i++) {
        for (int d = 0; d < inputs[i].dimensions; d++) {
            s << "    if (input == " << i << " && dim == " << d << ") *min = L." << inputs[i].name << "_min" << d << ", *extent = L."
              << inputs[i].name << "_extent" << d << ";\n";
        }
    }
    s << "}\n\n";
    s << "int64_t " << name << "_cuda_output_extent(int output, int dim, int64_t instances) {\n";
    s << "    const " << name << "_layout L = " << name << "_make_layout(instances);\n";
    for (size_t o = 0; o < outputs.size(); o++) {
        for (size_t d = 0; d < outputs[o].index.size(); d++) {
            s << "    if (output == " << o << " && dim == " << d << ") return L." << outputs[o].name << "_extent" << d << ";\n";
        }
    }
    s << "    return 0;\n}\n\n";
    s << "int64_t " << name << "_cuda_input_elements(int input, int64_t instances) {\n";
    s << "    int64_t n = 1, min = 0, extent = 0;\n";
    s << "    for (int d = 0; d < " << name << "_cuda_input_dimensions(input); d++) {\n";
    s << "        " << name << "_cuda_input_region(input, d, instances, &min, &extent);\n        n *= extent;\n    }\n    return n;\n}\n\n";
    s << "int64_t " << name << "_cuda_output_elements(int output, int64_t instances) {\n";
    s << "    int64_t n = 1;\n";
    s << "    for (int d = 0; d < " << name << "_cuda_output_dimensions(output); d++) n *= " << name << "_cuda_output_extent(output, d, instances);\n";
    s << "    return n;\n}\n";
    return s.str();
}

std::string CudaGenerator::header() {
    std::ostringstream s;
    std::string guard = "PULSE_KERNEL_" + name + "_H";
    for (char &c : guard) c = (char)std::toupper((unsigned char)c);
    s << "// " << name << ": host interface of a Pulse systolic kernel (see " << name << ".cu).\n";
    s << "#ifndef " << guard << "\n#define " << guard << "\n\n#include <cstdint>\n#include <cuda_runtime.h>\n\n";
    s << "/// Launches the kernel on `stream` for `instances` arrays (the extent of loop "
      << (outer_instance.empty() ? "<none: one array>" : outer_instance) << "; the spec gave "
      << (outer_instance.empty() ? 1 : program.instance_loops.back().extent) << ").\n";
    s << "/// All pointers are device pointers to dense buffers laid out as\n";
    s << "/// " << name << "_cuda_input_region / " << name << "_cuda_output_extent describe.\n";
    s << "/// Returns the launch's error (the kernel runs asynchronously).\n";
    s << "cudaError_t " << name << "(" << signature_parameters(true) << ", cudaStream_t stream = 0);\n\n";
    s << "/// The box of input `input` (0: " ;
    for (size_t i = 0; i < inputs.size(); i++) s << (i ? ", " : "") << i << ": " << inputs[i].name;
    s << ") in dimension `dim` (0 innermost).\n";
    s << "void " << name << "_cuda_input_region(int input, int dim, int64_t instances, int64_t *min, int64_t *extent);\n";
    s << "/// The extent of output `output` (";
    for (size_t i = 0; i < outputs.size(); i++) s << (i ? ", " : "") << i << ": " << outputs[i].name;
    s << ") in dimension `dim`; its minima are the smallest values of its index over the loops.\n";
    s << "int64_t " << name << "_cuda_output_extent(int output, int dim, int64_t instances);\n";
    s << "/// Elements of each buffer for a batch of `instances` arrays.\n";
    s << "int64_t " << name << "_cuda_input_elements(int input, int64_t instances);\n";
    s << "int64_t " << name << "_cuda_output_elements(int output, int64_t instances);\n\n";
    s << "inline int " << name << "_cuda_input_dimensions(int input) {\n";
    for (size_t i = 0; i < inputs.size(); i++) s << "    if (input == " << i << ") return " << inputs[i].dimensions << ";\n";
    s << "    return 0;\n}\n";
    s << "inline int " << name << "_cuda_output_dimensions(int output) {\n";
    for (size_t i = 0; i < outputs.size(); i++) s << "    if (output == " << i << ") return " << outputs[i].index.size() << ";\n";
    s << "    return 0;\n}\n";
    s << "/// The batch size the spec was written with.\n";
    s << "inline int64_t " << name << "_cuda_default_instances() { return "
      << (outer_instance.empty() ? 1 : program.instance_loops.back().extent) << "; }\n";
    s << "/// Arrays per instance of the outermost instance loop (the other instance loops).\n";
    s << "inline int64_t " << name << "_cuda_arrays_per_instance() { return " << inner_instances << "; }\n";
    s << "/// Warps per thread block of the launch.\n";
    s << "inline int " << name << "_cuda_warps_per_block() { return " << cuda_warps_per_block << "; }\n";
    s << "\n#endif\n";
    return s.str();
}

std::string CudaGenerator::check_harness() {
    std::ostringstream s;
    s << "// " << name << "_check: runs the Pulse kernel " << name << " on random inputs with a batch\n"
      << "// that fills the GPU and compares every output with the reference order\n"
      << "// (" << name << "_reference.h). Prints `PASS <name> <gpu> <instances> <max rel err>` or the\n"
      << "// first mismatch. Flags: --instances N, --seed S, --bench (time it: CUDA events,\n"
      << "// warm-up, median of 25 runs).\n"
      << "// Build: nvcc -O3 -arch=sm_90 -I<pulse>/runtime " << name << "_check.cu " << name << ".cu -o " << name << "_check\n";
    s << "#include <cmath>\n#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n#include <random>\n#include <string>\n#include <vector>\n\n";
    s << "#include \"" << name << ".h\"\n#include \"" << name << "_reference.h\"\n#include \"pulse_cuda.h\"\n\n";
    s << "namespace {\n\n";
    s << "/// Uniform in [-1, -0.1] u [0.1, 1] for floats, [-9, 9] \\ {0} for integers: never\n"
         "/// zero, so an unwritten or misindexed element cannot pass by accident.\n";
    s << "template<typename T>\nstd::vector<T> random_nonzero(size_t n, std::mt19937 &rng) {\n"
         "    std::vector<T> v(n);\n"
         "    std::uniform_real_distribution<double> magnitude(0.1, 1.0);\n"
         "    std::uniform_int_distribution<int> digit(1, 9), sign(0, 1);\n"
         "    for (T &e : v) {\n"
         "        if (std::is_floating_point<T>::value) e = (T)(magnitude(rng) * (sign(rng) ? 1 : -1));\n"
         "        else e = (T)(digit(rng) * (sign(rng) ? 1 : -1));\n"
         "    }\n"
         "    return v;\n}\n\n";
    s << "}  // namespace\n\n";
    s << "int main(int argc, char **argv) {\n";
    s << "    int64_t instances = 0;\n    unsigned seed = 1;\n    bool bench = false;\n";
    s << "    for (int i = 1; i < argc; i++) {\n"
         "        std::string a = argv[i];\n"
         "        if (a == \"--bench\") bench = true;\n"
         "        else if (a == \"--instances\" && i + 1 < argc) instances = std::atoll(argv[++i]);\n"
         "        else if (a == \"--seed\" && i + 1 < argc) seed = (unsigned)std::atoll(argv[++i]);\n"
         "        else { std::fprintf(stderr, \"usage: %s [--instances N] [--seed S] [--bench]\\n\", argv[0]); return 2; }\n"
         "    }\n";
    s << "    try {\n";
    s << "        cudaDeviceProp prop;\n        PULSE_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));\n";
    s << "        // Enough warps for 64 blocks per SM: the GPU is full.\n";
    s << "        if (instances <= 0) instances = std::max<int64_t>(1, (int64_t)64 * prop.multiProcessorCount * " << name
      << "_cuda_warps_per_block() / " << name << "_cuda_arrays_per_instance());\n";
    s << "        std::mt19937 rng(seed);\n";
    // Inputs.
    for (size_t i = 0; i < inputs.size(); i++) {
        const InputLayout &in = inputs[i];
        std::string T = c_type(in.type);
        s << "        // input " << in.name << "\n";
        s << "        for (int d = 0; d < " << in.dimensions << "; d++) {\n"
          << "            int64_t rmin, rext, kmin, kext;\n"
          << "            " << name << "_input_region(" << i << ", d, instances, &rmin, &rext);\n"
          << "            " << name << "_cuda_input_region(" << i << ", d, instances, &kmin, &kext);\n"
          << "            if (rmin != kmin || rext != kext) {\n"
          << "                std::printf(\"FAIL " << name << ": input " << in.name << " dimension %d: kernel region [%lld, +%lld) differs from the reference's [%lld, +%lld)\\n\", d, (long long)kmin, (long long)kext, (long long)rmin, (long long)rext);\n"
          << "                return 1;\n            }\n        }\n";
        s << "        std::vector<" << T << "> h_" << in.name << " = random_nonzero<" << T << ">((size_t)" << name << "_cuda_input_elements(" << i << ", instances), rng);\n";
        s << "        pulse::cuda::DeviceBuffer<" << T << "> d_" << in.name << "(h_" << in.name << ".size());\n";
        s << "        d_" << in.name << ".upload(h_" << in.name << ");\n";
    }
    for (size_t o = 0; o < outputs.size(); o++) {
        const OutputLayout &out = outputs[o];
        std::string T = c_type(out.type);
        s << "        // output " << out.name << "\n";
        s << "        for (int d = 0; d < " << out.index.size() << "; d++) {\n"
          << "            if (" << name << "_output_extent(" << o << ", d, instances) != " << name << "_cuda_output_extent(" << o << ", d, instances)) {\n"
          << "                std::printf(\"FAIL " << name << ": output " << out.name << " dimension %d: extents differ from the reference's\\n\", d);\n"
          << "                return 1;\n            }\n        }\n";
        s << "        const size_t n_" << out.name << " = (size_t)" << name << "_cuda_output_elements(" << o << ", instances);\n";
        s << "        std::vector<" << T << "> ref_" << out.name << "(n_" << out.name << "), h_" << out.name << "(n_" << out.name << ");\n";
        s << "        pulse::cuda::DeviceBuffer<" << T << "> d_" << out.name << "(n_" << out.name << ");\n";
        s << "        d_" << out.name << ".fill_bytes(0xff);  // poison: NaN for floats, -1 for integers\n";
    }
    auto call_args = [&](const std::string &prefix_in, const std::string &prefix_out, const std::string &suffix) {
        std::ostringstream a;
        bool first = true;
        for (const InputLayout &in : inputs) a << (first ? "" : ", ") << prefix_in << in.name << suffix, first = false;
        for (const OutputLayout &out : outputs) a << (first ? "" : ", ") << prefix_out << out.name << suffix, first = false;
        return a.str();
    };
    s << "        PULSE_CUDA_CHECK(" << name << "(" << call_args("d_", "d_", ".data()") << ", instances, 0));\n";
    s << "        PULSE_CUDA_CHECK_LAUNCH(\"" << name << "\");\n";
    for (const OutputLayout &out : outputs) s << "        d_" << out.name << ".download(h_" << out.name << ".data());\n";
    s << "        " << name << "_reference(" << call_args("h_", "ref_", ".data()") << ", instances);\n";
    s << "        double max_err = 0;\n";
    for (const OutputLayout &out : outputs) {
        s << "        for (size_t i = 0; i < n_" << out.name << "; i++) {\n"
          << "            double want = (double)ref_" << out.name << "[i], got = (double)h_" << out.name << "[i];\n"
          << "            // Relative error, with magnitudes under 1 compared absolutely (sums of\n"
          << "            // products of values in [-1, 1] may cancel to near zero).\n"
          << "            double err = std::fabs(got - want) / std::max(1.0, std::fabs(want));\n"
          << "            if (!(err <= 1e-5)) {  // NaN (an unwritten element) fails too\n"
          << "                std::printf(\"FAIL " << name << " " << out.name << "[%zu]: got %.9g, expected %.9g (instances %lld)\\n\", i, got, want, (long long)instances);\n"
          << "                return 1;\n            }\n"
          << "            max_err = std::max(max_err, err);\n        }\n";
    }
    s << "        std::printf(\"PASS " << name << " %s %lld %.3g\\n\", prop.name, (long long)instances, max_err);\n";
    s << "        if (bench) {\n";
    s << "            double ms = pulse::cuda::time_median_ms([&] { PULSE_CUDA_CHECK(" << name << "(" << call_args("d_", "d_", ".data()") << ", instances, 0)); });\n";
    s << "            double outputs = 0;\n";
    for (const OutputLayout &out : outputs) s << "            outputs += (double)n_" << out.name << ";\n";
    s << "            std::printf(\"BENCH " << name << " %s instances %lld outputs %.0f median %.4f ms %.4g outputs/s\\n\", prop.name, (long long)instances, outputs, ms, outputs / (ms * 1e-3));\n";
    s << "        }\n";
    s << "    } catch (const std::exception &e) {\n        std::printf(\"FAIL " << name << ": %s\\n\", e.what());\n        return 1;\n    }\n";
    s << "    return 0;\n}\n";
    return s.str();
}

void write_file(const std::string &directory, const std::string &file, const std::string &text) {
    std::filesystem::create_directories(directory);
    std::string path = (std::filesystem::path(directory) / file).string();
    std::ofstream out(path);
    if (!out) compile_error("cannot write ", path);
    out << text;
    if (!out) compile_error("error writing ", path);
}

}  // namespace

CudaSources generate_cuda(const sys::SystolicProgram &program, const std::string &name, const std::vector<std::string> &input_order) {
    CudaGenerator generator(program, name, input_order);
    CudaSources sources;
    sources.header = generator.header();
    sources.kernel = generator.kernel();
    sources.check = generator.check_harness();
    return sources;
}

void emit_cuda(const sys::SystolicProgram &program, const std::string &name, const std::vector<std::string> &input_order,
               const std::string &directory) {
    CudaSources sources = generate_cuda(program, name, input_order);
    write_file(directory, name + ".h", sources.header);
    write_file(directory, name + ".cu", sources.kernel);
}

void emit_cuda_check(const sys::SystolicProgram &program, const std::string &name, const std::vector<std::string> &input_order,
                     const std::string &directory) {
    write_file(directory, name + "_check.cu", generate_cuda(program, name, input_order).check);
}

}  // namespace pulse
