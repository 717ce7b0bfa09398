#include "exec/Simulator.h"

#include "exec/Interpreter.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "ir/Affine.h"
#include "exec/ExprCompiler.h"
#include "exec/Reduce.h"
#include "exec/InputRegions.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// The k-th tap of a statement is compiled as a recurrence call "tap#k": the
/// simulator reads every tap from the histories before it evaluates a lane
/// (all lanes read, then write), and the call's closure returns that value.
std::string tap_slot_name(size_t k) { return "tap#" + std::to_string(k); }

/// Replaces each tap by its slot's call; collects the distinct taps.
class TapsToSlots : public IRMutator {
public:
    std::vector<sys::Tap> taps;

protected:
    using IRMutator::visit;
    Expr visit(const Call *op) override {
        sys::Tap tap;
        if (!sys::is_tap(op, &tap)) return IRMutator::visit(op);
        size_t k = std::find(taps.begin(), taps.end(), tap) - taps.begin();
        if (k == taps.size()) taps.push_back(tap);
        return ir::make_recurrence_call(op->type, tap_slot_name(k), {});
    }
};

/// One lowered statement, compiled.
struct CompiledStatement {
    const sys::Statement *statement = nullptr;
    Closure value;
    std::vector<Closure> output_index;
    /// A reduction output: its operator and initial value.
    std::optional<ReduceCombiner> combine;
    Closure initial;
    std::vector<sys::Tap> taps;
    std::vector<int> tap_variable;  ///< index into the program's variables, per tap
    int variable = -1;              ///< the variable it writes; -1 for an output
    /// Lane order within a step: +1 ascending, -1 descending, 0 repeat until
    /// nothing changes. A copy chain read in the same step (dt = 0, dp != 0)
    /// needs lane l - dp written before lane l reads it.
    int lane_order = 1;
};

class ArraySimulator {
public:
    ArraySimulator(const sys::SystolicProgram &program, const Buffers &in) : p(program), inputs(in) {
        for (const ir::InputDecl &d : p.source.inputs) {
            auto it = inputs.find(d.name);
            if (it == inputs.end()) evaluation_error("simulate ", p.source.name, ": no buffer given for input ", d.name);
            if (it->second.type() != d.type || it->second.dimensions() != d.dimensions) {
                evaluation_error("simulate ", p.source.name, ": the buffer for input ", d.name,
                                 " does not have the spec's type and dimensions");
            }
        }
        size_t max_taps = 0;
        for (const sys::Statement &s : p.statements) {
            statements.push_back(compile(s));
            max_taps = std::max(max_taps, statements.back().taps.size());
        }
        tap_values.assign(max_taps, Scalar());
        coords.assign(instance_base + p.instance_loops.size() + p.data_bounds.size(), 0);
        active_condition = compile_expr(p.has_preimage, hooks());
        if (p.data_active.defined()) {
            for (const Expr &b : p.data_bounds) data_bounds.push_back(compile_expr(b, hooks()));
            data_condition = compile_expr(p.data_active, hooks());
            last_step = compile_expr(p.last_step, hooks());
        }
        histories.emplace_back();
        for (const sys::Variable &v : p.variables) histories[0].emplace_back((size_t)(p.pe_count * (v.history + 1)), Scalar::zero(v.type));
    }

    Buffers run(const Progress &progress) {
        make_outputs();
        // Instance i's coordinates, innermost loop fastest (the order read_tap numbers them in).
        int64_t instances = 1, done = 0;
        for (const ir::Loop &l : p.instance_loops) instances *= l.extent;
        auto enter = [&](int64_t i) {
            for (size_t k = 0; k < p.instance_loops.size(); k++) {
                coords[instance_base + k] = p.instance_loops[k].min + i % p.instance_loops[k].extent;
                i /= p.instance_loops[k].extent;
            }
        };
        if (p.grid_moves.empty()) {
            // Each instance on its own, one after another.
            for (int64_t i = 0; i < instances; i++) {
                enter(i);
                if (progress) progress(done++, instances);
                reset_history(0);
                for (int64_t t = p.time_min, last = last_step_of_instance(); t <= last; t++) run_step(t);
            }
        } else {
            // gpu_grid_sync: every instance takes a step before any takes the
            // next, each with its own history, which the others' taps read.
            histories.resize((size_t)instances, histories.front());
            for (size_t i = 0; i < histories.size(); i++) reset_history(i);
            for (int64_t t = p.time_min; t <= p.time_max; t++) {
                if (progress) progress(t - p.time_min, p.steps());
                for (int64_t i = 0; i < instances; i++) {
                    enter(i);
                    current = (size_t)i;
                    run_step(t);
                }
            }
        }
        Buffers result;
        for (size_t o = 0; o < outputs.size(); o++) {
            // Under a data bound the array stops at each instance's own last
            // step, and the elements past it stay poisoned (as the
            // interpreter leaves them; compare_outputs judges the rest).
            for (size_t e = 0; e < written[o].size() && !data_condition; e++) {
                if (!written[o][e]) {
                    std::vector<int> c = element_coords(outputs[o], e);
                    evaluation_error("simulate ", p.source.name, ": the array never stores output ", outputs[o].name(),
                                     ir::element_text(c), "; no active lane takes its select (is the transform's domain complete?)");
                }
            }
            result[outputs[o].name()] = outputs[o];
        }
        return result;
    }

private:
    const sys::SystolicProgram &p;
    const Buffers &inputs;
    static constexpr int instance_base = 2;  ///< coords: space, time, then the instance loops
    std::vector<CompiledStatement> statements;
    Closure active_condition;
    /// The data bounds (unset if none): what they add to active_condition, and
    /// the instance's last step with an active PE.
    Closure data_condition, last_step;
    std::vector<Closure> data_bounds;  ///< the bounds' values, read at the instance

    /// The last step the instance at coords runs: past its data bounds'
    /// last step nothing is active, but its first step runs (its reductions'
    /// elements take their initial values there, however few points are left).
    int64_t last_step_of_instance() {
        if (!last_step) return p.time_max;
        EvalState state;
        state.coords = coords.data();
        const size_t base = instance_base + p.instance_loops.size();
        lane_active = true;  // every instance reads its bounds
        for (size_t k = 0; k < data_bounds.size(); k++) coords[base + k] = data_bounds[k](state).as_int();
        return std::max(p.time_min, std::min(p.time_max, last_step(state).as_int()));
    }
    std::vector<int64_t> coords;       ///< space, time, instance loops
    /// Per instance (one unless gpu_grid_sync), per variable: lane-major
    /// rings of history + 1 values, exact.
    std::vector<std::vector<std::vector<Scalar>>> histories;
    size_t current = 0;                ///< the instance taking its step
    std::vector<char> active;          ///< per lane, this step
    std::vector<char> inside;          ///< per lane, this step: active and inside the data bounds
    bool lane_active = false;          ///< the lane being evaluated
    std::vector<Buffer<>> outputs;
    std::vector<std::vector<char>> written;
    ExprCompilerHooks hooks() {
        ExprCompilerHooks h;
        h.variable_slot = [this](const std::string &v) -> int {
            if (v == p.space_var) return 0;
            if (v == p.time_var) return 1;
            for (size_t i = 0; i < p.instance_loops.size(); i++) {
                if (p.instance_loops[i].var == v) return instance_base + (int)i;
            }
            for (size_t k = 0; k < p.data_bounds.size(); k++) {
                if (sys::data_bound_var(k) == v) return instance_base + (int)(p.instance_loops.size() + k);
            }
            compile_error("simulate ", p.source.name, ": the lowered program uses '", v,
                          "', which is neither the space, the time nor an instance loop");
        };
        h.recurrence_call = [this](const Call *op, std::vector<Closure>) -> Closure {
            std::string callee = ir::recurrence_callee(op);
            if (callee.rfind("tap#", 0) == 0) {
                size_t k = std::stoul(callee.substr(4));
                return [this, k](EvalState &) { return tap_values[k]; };
            }
            compile_error("simulate ", p.source.name, ": recurrence call ", ir::to_source(Expr(op)),
                          " was not lowered to a tap");
        };
        h.input_call = [this](const Call *op, std::vector<Closure> index) { return input_load(op, index); };
        return h;
    }

    Closure input_load(const Call *op, std::vector<Closure> index) {
        const Buffer<> &b = inputs.at(op->name);
        std::string name = op->name;
        const Scalar zero = Scalar::zero(op->type);
        return [this, b, index, name, zero](EvalState &s) -> Scalar {
            if (!lane_active) return zero;  // inactive lanes load nothing
            std::vector<int> c(index.size());
            for (size_t d = 0; d < index.size(); d++) {
                int64_t i = index[d](s).as_int();
                if (i < b.dim(d).min() || i > b.dim(d).max()) {
                    evaluation_error("simulate ", p.source.name, ": active lane ", p.space_var, "=", s.coords[0], " at ",
                                     p.time_var, "=", s.coords[1], " reads input ", name, " at index ", i,
                                     " in dimension ", d, ", outside its buffer [", b.dim(d).min(), ", ", b.dim(d).max(), "]");
                }
                c[d] = (int)i;
            }
            return load_element(b, c);
        };
    }

    int variable_index(const std::string &name) const {
        for (size_t i = 0; i < p.variables.size(); i++) {
            if (p.variables[i].name == name) return (int)i;
        }
        return -1;
    }

    CompiledStatement compile(const sys::Statement &s) {
        CompiledStatement c;
        c.statement = &s;
        TapsToSlots slots;
        Expr value = slots.mutate(s.value);
        c.taps = slots.taps;
        ExprCompilerHooks h = hooks();
        c.value = compile_expr(value, h);
        for (const Expr &e : s.output_index) c.output_index.push_back(compile_expr(e, h));
        if (s.reduction) {
            c.combine.emplace(s.reduction->op, s.type);
            c.initial = compile_expr(s.reduction->initial, h);
        }
        c.variable = s.is_output ? -1 : variable_index(s.ure);
        bool up = false, down = false;
        for (const sys::Tap &t : c.taps) {
            int v = variable_index(t.var);
            if (v < 0) compile_error("simulate ", p.source.name, ": statement ", s.ure, " taps ", t.var, ", which is not a variable");
            c.tap_variable.push_back(v);
            if (t.var == s.ure && t.dt == 0 && t.dp > 0) up = true;
            if (t.var == s.ure && t.dt == 0 && t.dp < 0) down = true;
        }
        c.lane_order = up && down ? 0 : down ? -1 : 1;
        return c;
    }

    Scalar read_tap(const CompiledStatement &c, size_t k, int64_t lane, int64_t step) const {
        const sys::Tap &t = c.taps[k];
        int64_t from = lane - t.dp, at = step - t.dt;
        const sys::Variable &v = p.variables[c.tap_variable[k]];
        if (from < 0 || from >= p.pe_count || at < 0) return Scalar::zero(v.type);  // off the array or before the first step
        // The instance read (another one for a tap across instances), or none past the loops' ends.
        size_t instance = current;
        if (t.crosses_instances()) {
            int64_t linear = 0, stride = 1;
            for (size_t i = 0; i < t.di.size(); i++) {
                const ir::Loop &loop = p.instance_loops[i];
                const int64_t at_loop = coords[instance_base + i] - t.di[i];
                if (at_loop < loop.min || at_loop > loop.max()) return Scalar::zero(v.type);
                linear += (at_loop - loop.min) * stride;
                stride *= loop.extent;
            }
            instance = (size_t)linear;
        }
        return histories[instance][c.tap_variable[k]][(size_t)(from * (v.history + 1) + at % (v.history + 1))];
    }

    /// Evaluates statement `c` on `lane` at `step` (steps count from 0).
    void evaluate(const CompiledStatement &c, int64_t lane, int64_t step, EvalState &state, bool *changed) {
        coords[0] = p.pe_min + lane;
        for (size_t k = 0; k < c.taps.size(); k++) tap_values[k] = read_tap(c, k, lane, step);
        lane_active = active[lane];
        state.undefined = false;
        const Scalar v = c.value(state);
        if (c.variable >= 0) {
            const sys::Variable &var = p.variables[c.variable];
            Scalar &slot = histories[current][c.variable][(size_t)(lane * (var.history + 1) + step % (var.history + 1))];
            if (changed && !Scalar::same(slot, v)) *changed = true;
            slot = v;
            return;
        }
        // A reduction's element starts at its initial value at the first
        // point that reaches it, defined there or not.
        if (!active[lane] || ((state.undefined || !inside[lane]) && !c.combine)) return;
        size_t o = output_of(c);
        std::vector<int> index(c.output_index.size());
        int64_t element = 0, stride = 1;
        for (size_t d = 0; d < index.size(); d++) {
            index[d] = (int)c.output_index[d](state).as_int();
            const halide_dimension_t &dim = outputs[o].raw_buffer()->dim[d];
            if (index[d] < dim.min || index[d] >= dim.min + dim.extent) {
                evaluation_error("simulate ", p.source.name, ": lane ", p.space_var, "=", coords[0], " at ", p.time_var,
                                 "=", coords[1], " stores ", c.statement->ure, ir::element_text(index), ", outside the output");
            }
            element += (index[d] - dim.min) * stride;
            stride *= dim.extent;
        }
        if (c.combine) {
            if (!written[o][element]) store_element(outputs[o], index, c.initial(state));
            written[o][element] = 1;
            if (!state.undefined && inside[lane]) store_element(outputs[o], index, (*c.combine)(load_element(outputs[o], index), v));
            return;
        }
        if (written[o][element]) {
            evaluation_error("simulate ", p.source.name, ": output ", c.statement->ure, ir::element_text(index),
                             " is stored twice (second store by lane ", p.space_var, "=", coords[0], " at ", p.time_var,
                             "=", coords[1], ")");
        }
        written[o][element] = 1;
        store_element(outputs[o], index, v);
    }

    std::vector<Scalar> tap_values;

    void reset_history(size_t instance) {
        std::vector<std::vector<Scalar>> &history = histories[instance];
        for (size_t v = 0; v < history.size(); v++) std::fill(history[v].begin(), history[v].end(), Scalar::zero(p.variables[v].type));
    }

    /// Step t of the instance at coords (histories[current]).
    void run_step(int64_t t) {
        active.assign(p.pe_count, 0);
        EvalState state;
        state.coords = coords.data();
        const int64_t step = t - p.time_min;
        coords[1] = t;
        inside.assign(p.pe_count, 1);
        for (int64_t l = 0; l < p.pe_count; l++) {
            coords[0] = p.pe_min + l;
            active[l] = active_condition(state).is_true();
            if (data_condition) inside[l] = active[l] && data_condition(state).is_true();
        }
        for (const CompiledStatement &c : statements) {
            auto lanes = [&](bool *changed) {
                for (int64_t i = 0; i < p.pe_count; i++) {
                    int64_t l = c.lane_order < 0 ? p.pe_count - 1 - i : i;
                    if (p.check_time && !active[l]) continue;
                    evaluate(c, l, step, state, changed);
                }
            };
            if (c.lane_order != 0) {
                lanes(nullptr);
                continue;
            }
            for (int64_t round = 0; round <= p.pe_count; round++) {
                bool changed = false;
                lanes(&changed);
                if (!changed) break;
            }
        }
    }

    size_t output_of(const CompiledStatement &c) const {
        size_t o = 0;
        for (const sys::Statement &s : p.statements) {
            if (&s == c.statement) return o;
            if (s.is_output) o++;
        }
        return o;
    }

    void make_outputs() {
        for (const sys::Statement &s : p.statements) {
            if (!s.is_output) continue;
            const ir::Ure &u = p.source.ure(s.ure);
            // The box of the output's (affine) index over the domain.
            std::vector<int> sizes, mins;
            int64_t count = 1;
            for (const Expr &e : u.output_index()) {
                std::optional<AffineForm> f = to_affine(e, p.source.loops);
                if (!f) evaluation_error("simulate: output ", u.name, ": index ", ir::to_source(e), " is not affine");
                auto [lo, hi] = f->range(p.source.output_loops(u));
                sizes.push_back((int)(hi - lo + 1));
                mins.push_back((int)lo);
                count *= hi - lo + 1;
            }
            Buffer<> b(u.type, sizes, u.name);
            for (size_t d = 0; d < mins.size(); d++) b.raw_buffer()->dim[d].min = mins[d];
            if (data_condition) poison(b);
            outputs.push_back(b);
            written.emplace_back(count, 0);
        }
    }

    static std::vector<int> element_coords(const Buffer<> &b, size_t e) {
        std::vector<int> c;
        for (int d = 0; d < b.dimensions(); d++) {
            c.push_back(b.dim(d).min() + (int)(e % b.dim(d).extent()));
            e /= b.dim(d).extent();
        }
        return c;
    }

};

}  // namespace

Buffers simulate(const sys::SystolicProgram &program, const Buffers &inputs, const Progress &progress) {
    check_enumerable(program.source, "--simulate");
    return ArraySimulator(program, inputs).run(progress);
}

std::string compare_outputs(const Buffers &expected, const Buffers &actual, double tolerance) {
    std::ostringstream out;
    for (const auto &[name, e] : expected) {
        if (!actual.count(name)) return "output " + name + " is missing";
    }
    for (const auto &[name, a] : actual) {
        if (!expected.count(name)) return "unexpected output " + name;
    }
    for (const auto &[name, e] : expected) {
        const Buffer<> &a = actual.at(name);
        if (a.type() != e.type() || a.dimensions() != e.dimensions()) {
            out << "output " << name << " is " << a.type() << " " << a.dimensions() << "-D, expected " << e.type() << " "
                << e.dimensions() << "-D";
            return out.str();
        }
        for (int d = 0; d < e.dimensions(); d++) {
            if (a.dim(d).min() != e.dim(d).min() || a.dim(d).extent() != e.dim(d).extent()) {
                out << "output " << name << " dimension " << d << " is [" << a.dim(d).min() << ", " << a.dim(d).max()
                    << "], expected [" << e.dim(d).min() << ", " << e.dim(d).max() << "]";
                return out.str();
            }
        }
        size_t count = 1;
        for (int d = 0; d < e.dimensions(); d++) count *= (size_t)e.dim(d).extent();
        std::vector<int> c(e.dimensions());
        for (size_t i = 0; i < count; i++) {
            size_t rest = i;
            for (int d = 0; d < e.dimensions(); d++) {
                c[d] = e.dim(d).min() + (int)(rest % e.dim(d).extent());
                rest /= e.dim(d).extent();
            }
            const Scalar xs = load_element(e, c), ys = load_element(a, c);
            const double x = xs.as_double(), y = ys.as_double();
            // Floats equal (infinities too), or within a tolerance relative to
            // the expected magnitude (absolute near zero), or both a computed
            // NaN, or both the poison (an element the reference leaves
            // unwritten, past a ragged instance's bound); integers exactly.
            bool same = e.type().is_float()
                            ? x == y || std::fabs(x - y) <= tolerance * std::max(1.0, std::fabs(x)) ||
                                  (std::isnan(x) && std::isnan(y) && is_poison_element(a, c) == is_poison_element(e, c))
                            : Scalar::same(xs, ys);
            if (!same) {
                out << "output " << name << "(";
                for (size_t k = 0; k < c.size(); k++) out << (k ? ", " : "") << c[k];
                out << ") is " << scalar_text(ys, e.type()) << ", expected " << scalar_text(xs, e.type());
                return out.str();
            }
        }
    }
    return "";
}

}  // namespace pulse
