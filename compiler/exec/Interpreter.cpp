#include "exec/Interpreter.h"

#include <optional>
#include <sstream>

#include "exec/ExprCompiler.h"
#include "exec/InputRegions.h"
#include "exec/Reduce.h"
#include "ir/Affine.h"
#include "ir/ExactSimplify.h"

namespace pulse {
namespace ir {

using namespace Halide;
using namespace Halide::Internal;

std::string point_text(const UreProgram &p, const int64_t *coords) {
    std::ostringstream out;
    out << "(";
    for (size_t i = p.loops.size(); i-- > 0;) out << p.loops[i].var << "=" << coords[i] << (i ? ", " : "");
    out << ")";
    return out.str();
}

std::string element_text(const std::vector<int> &c) {
    std::ostringstream out;
    out << "(";
    for (size_t i = 0; i < c.size(); i++) out << (i ? ", " : "") << c[i];
    out << ")";
    return out.str();
}

namespace {

enum State : uint8_t { NotComputed = 0, Defined = 1, Undefined = 2, OutsideDomain = 3 };

struct Storage {
    std::vector<Scalar> values;
    std::vector<uint8_t> state;
};

class Evaluator {
public:
    Evaluator(const UreProgram &p, const Buffers &in) : program(p), inputs(in) {
        const size_t n = p.loops.size();
        strides.resize(n);
        int64_t s = 1;
        for (size_t i = 0; i < n; i++) {
            strides[i] = s;
            s *= p.loops[i].extent;
        }
        total = s;
        check_inputs();
        for (const Ure &u : p.ures) {
            if (!u.is_output) storage[u.name] = Storage{std::vector<Scalar>(total), std::vector<uint8_t>(total, NotComputed)};
        }
        for (const Ure &u : p.ures) compiled.push_back(compile(u));
        ExprCompilerHooks hooks;
        hooks.variable_slot = [this](const std::string &v) { return program.loop_index(v); };
        if (!p.constraints.empty()) in_domain = compile_expr(p.domain_condition(), hooks);
        if (!p.data_bounds.empty()) {
            // The data bounds read inputs, as the nest's owner reads them.
            hooks.input_call = [this](const Call *op, std::vector<Closure> index) { return input_read(program.ure(program.name), op, index); };
            in_data = compile_expr(p.data_condition(), hooks);
        }
    }

    Buffers run(const Progress &progress) {
        const size_t n = program.loops.size();
        std::vector<int64_t> coords(n), first(n), last(n);
        for (size_t i = 0; i < n; i++) {
            const Loop &l = program.loops[i];
            bool up = program.reference_direction[i] > 0;
            first[i] = up ? l.min : l.max();
            last[i] = up ? l.max() : l.min;
            coords[i] = first[i];
        }
        EvalState state;
        state.coords = coords.data();
        std::vector<Buffer<>> out_buffers;
        // Per output element: the point index that wrote it, or never_written,
        // or past_bound (reached only past a data bound: left unwritten).
        std::vector<std::vector<int64_t>> writer;
        std::vector<const Ure *> outs;
        // Each output's box: the range of its (affine) index over the domain.
        std::vector<std::vector<AffineForm>> out_forms;
        std::vector<std::vector<std::pair<int64_t, int64_t>>> out_boxes;
        for (const Ure &u : program.ures) {
            if (!u.is_output) continue;
            std::vector<int> sizes;
            std::vector<AffineForm> forms;
            std::vector<std::pair<int64_t, int64_t>> box;
            int64_t count = 1;
            for (const Expr &e : u.output_index()) {
                std::optional<AffineForm> f = to_affine(e, program.loops);
                if (!f) evaluation_error("output ", u.name, ": index ", ir::to_source(e), " is not affine in the loops");
                box.push_back(f->range(program.output_loops(u)));
                forms.push_back(*f);
                int64_t extent = box.back().second - box.back().first + 1;
                sizes.push_back((int)extent);
                count *= extent;
            }
            Buffer<> b(u.type, sizes, u.name);
            for (size_t d = 0; d < box.size(); d++) b.raw_buffer()->dim[d].min = (int)box[d].first;
            if (in_data) poison(b);  // what the points past a bound leave
            out_buffers.push_back(b);
            writer.emplace_back(count, never_written);
            outs.push_back(&u);
            out_forms.push_back(forms);
            out_boxes.push_back(box);
        }
        // Reduction outputs: each element starts at its initial value, set by
        // the first point that reaches it, and each point where the value is
        // defined combines into it.
        std::vector<std::optional<ReduceCombiner>> combine;
        std::vector<Closure> initial;
        for (const Ure *u : outs) {
            combine.push_back(u->reduction ? std::optional<ReduceCombiner>(ReduceCombiner(u->reduction->op, u->type)) : std::nullopt);
            initial.push_back(u->reduction ? compile_initial_value(program, *u) : Closure());
        }
        // The index of the element of output o that the point at `at` names.
        auto element_of = [&](size_t o, const std::vector<int64_t> &at) {
            int64_t element = 0, stride = 1;
            for (size_t d = 0; d < out_forms[o].size(); d++) {
                element += (out_forms[o][d].evaluate(at) - out_boxes[o][d].first) * stride;
                stride *= out_boxes[o][d].second - out_boxes[o][d].first + 1;
            }
            return element;
        };
        std::vector<int> out_coords;
        for (int64_t count = 0; count < total; count++) {
            if (progress && count % 65536 == 0) progress(count, total);
            int64_t index = 0;
            for (size_t i = 0; i < n; i++) index += (coords[i] - program.loops[i].min) * strides[i];
            state.point_index = index;
            if (in_domain && !in_domain(state).is_true()) {
                // A point of the box the constraints exclude: nothing runs there.
                for (Storage *st : storage_of) {
                    if (st) st->state[index] = OutsideDomain;
                }
                next_point(coords, first, last);
                continue;
            }
            // Past a data bound (a ragged instance's padding) nothing runs,
            // but the point still reaches its reductions' elements: an
            // instance with no point left keeps their initial values.
            const bool inside = !in_data || in_data(state).is_true();
            size_t out_i = 0;
            for (size_t k = 0; k < program.ures.size(); k++) {
                const Ure &u = program.ures[k];
                state.undefined = false;
                if (!inside && !u.reduction) {
                    if (!u.is_output) {
                        storage_of[k]->state[index] = OutsideDomain;
                        continue;
                    }
                    const size_t o = out_i++;
                    int64_t &w = writer[o][element_of(o, coords)];
                    if (w == never_written) w = past_bound;
                    continue;
                }
                Scalar v = inside ? compiled[k](state) : Scalar();
                if (!u.is_output) {
                    Storage &st = *storage_of[k];
                    st.values[index] = v;
                    st.state[index] = state.undefined ? Undefined : Defined;
                    continue;
                }
                size_t o = out_i++;
                const bool contributes = inside && !state.undefined;
                if (state.undefined && !u.reduction) continue;
                const int64_t element = element_of(o, coords);
                out_coords.resize(out_forms[o].size());
                for (size_t d = 0; d < out_forms[o].size(); d++) out_coords[d] = (int)out_forms[o][d].evaluate(coords);
                if (u.reduction) {
                    if (writer[o][element] < 0) {
                        writer[o][element] = index;
                        store_element(out_buffers[o], out_coords, initial[o](state));
                    }
                    if (contributes) store_element(out_buffers[o], out_coords, (*combine[o])(load_element(out_buffers[o], out_coords), v));
                    continue;
                }
                if (writer[o][element] >= 0) {
                    std::vector<int64_t> other = decode(writer[o][element]);
                    evaluation_error("output ", u.name, element_text(out_coords), " is written twice: at ",
                                     point_text(program, other.data()), " and at ", point_text(program, coords.data()),
                                     "; restrict its select so that one point writes each element");
                }
                writer[o][element] = index;
                store_element(out_buffers[o], out_coords, v);
            }
            next_point(coords, first, last);
        }
        Buffers result;
        for (size_t o = 0; o < outs.size(); o++) {
            for (size_t e = 0; e < writer[o].size(); e++) {
                if (writer[o][e] == never_written) {
                    std::vector<int> c;
                    int64_t rest = (int64_t)e;
                    for (const auto &[lo, hi] : out_boxes[o]) {
                        c.push_back((int)(lo + rest % (hi - lo + 1)));
                        rest /= hi - lo + 1;
                    }
                    evaluation_error("output ", outs[o]->name, element_text(c),
                                     " is never written: its select is false at every point that maps to it");
                }
            }
            result[outs[o]->name] = out_buffers[o];
        }
        return result;
    }

private:
    const UreProgram &program;
    const Buffers &inputs;
    std::vector<int64_t> strides;
    int64_t total = 0;
    std::map<std::string, Storage> storage;
    std::vector<Storage *> storage_of;
    std::vector<Closure> compiled;
    Closure in_domain;  ///< the constraints (unset for a box)
    Closure in_data;    ///< the data bounds (unset if none)
    static constexpr int64_t never_written = -1, past_bound = -2;  ///< an output element's writer before any point writes it

    /// The next point: an odometer over the loops in reference nesting, innermost fastest.
    void next_point(std::vector<int64_t> &coords, const std::vector<int64_t> &first, const std::vector<int64_t> &last) const {
        for (size_t k = coords.size(); k-- > 0;) {
            int i = program.reference_nesting[k];
            if (coords[i] != last[i]) {
                coords[i] += program.reference_direction[i];
                return;
            }
            coords[i] = first[i];
        }
    }

    std::vector<int64_t> decode(int64_t index) const {
        std::vector<int64_t> c(program.loops.size());
        for (size_t i = 0; i < c.size(); i++) {
            c[i] = program.loops[i].min + index % program.loops[i].extent;
            index /= program.loops[i].extent;
        }
        return c;
    }


    void check_inputs() {
        for (const InputDecl &in : program.inputs) {
            auto it = inputs.find(in.name);
            if (it == inputs.end()) evaluation_error("realize ", program.name, ": no buffer given for input ", in.name);
            const Buffer<> &b = it->second;
            if (b.type() != in.type || b.dimensions() != in.dimensions) {
                std::ostringstream s;
                s << "realize " << program.name << ": the buffer for input " << in.name << " is " << b.type() << " "
                  << b.dimensions() << "-D, but the spec reads " << in.type << " " << in.dimensions << "-D";
                evaluation_error(s.str());
            }
        }
    }

    Closure compile(const Ure &u) {
        storage_of.push_back(u.is_output ? nullptr : &storage[u.name]);
        ExprCompilerHooks hooks;
        hooks.variable_slot = [this](const std::string &v) { return program.loop_index(v); };
        hooks.recurrence_call = [this, &u](const Call *op, std::vector<Closure>) { return recurrence_read(u, op); };
        hooks.input_call = [this, &u](const Call *op, std::vector<Closure> index) { return input_read(u, op, index); };
        return compile_expr(u.value, hooks);
    }

    Closure recurrence_read(const Ure &consumer, const Call *op) {
        std::string callee = recurrence_callee(op);
        const Ure &producer = program.ure(callee);
        const size_t n = program.loops.size();
        std::vector<int64_t> distance(n);
        for (size_t i = 0; i < op->args.size(); i++) {
            int loop = program.loop_index(producer.args[i]);
            distance[loop] = *as_const_int(simplify_exact(Variable::make(Int(32), producer.args[i]) - op->args[i]));
        }
        int64_t offset = 0;
        for (size_t i = 0; i < n; i++) offset += distance[i] * strides[i];
        const Storage *st = &storage.at(callee);
        std::string call_text = to_source(Expr(op));
        std::string consumer_name = consumer.name;
        return [this, st, distance, offset, n, call_text, consumer_name, callee](EvalState &s) -> Scalar {
            for (size_t i = 0; i < n; i++) {
                int64_t c = s.coords[i] - distance[i];
                const Loop &l = program.loops[i];
                if (c < l.min || c > l.max()) {
                    std::vector<int64_t> src(s.coords, s.coords + n);
                    for (size_t j = 0; j < n; j++) src[j] -= distance[j];
                    evaluation_error(consumer_name, " at ", point_text(program, s.coords), " reads ", call_text, " = ",
                                     callee, point_text(program, src.data()), ", which is outside the domain (loop '",
                                     l.var, "' runs over [", l.min, ", ", l.max(), "]); guard the call with a select");
                }
            }
            int64_t src = s.point_index - offset;
            uint8_t state = st->state[src];
            if (state != Defined) {
                std::vector<int64_t> p(s.coords, s.coords + n);
                for (size_t j = 0; j < n; j++) p[j] -= distance[j];
                if (state == OutsideDomain) {
                    evaluation_error(consumer_name, " at ", point_text(program, s.coords), " reads ", call_text, " = ",
                                     callee, point_text(program, p.data()), ", which is outside the domain (its where ",
                                     "conditions exclude it); guard the call with a select");
                }
                if (state == Undefined) {
                    evaluation_error(consumer_name, " at ", point_text(program, s.coords), " reads ", call_text, " = ",
                                     callee, point_text(program, p.data()),
                                     ", which its select left undefined there; give the select a value for that point");
                }
                evaluation_error(consumer_name, " at ", point_text(program, s.coords), " reads ", call_text, " = ", callee,
                                 point_text(program, p.data()), ", which the reference order has not computed yet");
            }
            return st->values[src];
        };
    }

    Closure input_read(const Ure &consumer, const Call *op, std::vector<Closure> index) {
        const Buffer<> &b = inputs.at(op->name);
        const halide_buffer_t *raw = b.raw_buffer();
        std::string name = op->name, consumer_name = consumer.name;
        return [this, raw, b, index, name, consumer_name](EvalState &s) -> Scalar {
            int64_t offset = 0;
            for (size_t d = 0; d < index.size(); d++) {
                int64_t i = index[d](s).as_int();
                if (i < raw->dim[d].min || i >= raw->dim[d].min + raw->dim[d].extent) {
                    evaluation_error(consumer_name, " at ", point_text(program, s.coords), " reads input ", name,
                                     " at index ", i, " in dimension ", d, ", outside its buffer [", raw->dim[d].min, ", ",
                                     raw->dim[d].min + raw->dim[d].extent - 1, "]");
                }
                offset += (i - raw->dim[d].min) * raw->dim[d].stride;
            }
            return load_at(b.type(), raw->host, offset);
        };
    }

    static Scalar load_at(Type t, const uint8_t *host, int64_t offset) {
        if (t == Float(32)) return Scalar::of_float(((const float *)host)[offset]);
        if (t == Float(64)) return Scalar::of_double(((const double *)host)[offset]);
        if (t == Int(32)) return Scalar::of_int(((const int32_t *)host)[offset]);
        if (t == Int(16)) return Scalar::of_int(((const int16_t *)host)[offset]);
        if (t == Int(8)) return Scalar::of_int(((const int8_t *)host)[offset]);
        if (t == Int(64)) return Scalar::of_int(((const int64_t *)host)[offset]);
        if (t == UInt(8)) return Scalar::of_uint(((const uint8_t *)host)[offset]);
        if (t == UInt(16)) return Scalar::of_uint(((const uint16_t *)host)[offset]);
        if (t == UInt(32)) return Scalar::of_uint(((const uint32_t *)host)[offset]);
        if (t == UInt(64)) return Scalar::of_uint(((const uint64_t *)host)[offset]);
        if (t == Bool()) return Scalar::of_bool(((const bool *)host)[offset]);
        std::ostringstream s;
        s << t;
        evaluation_error("input element type ", s.str(), " is not supported");
    }
};

}  // namespace

Buffers realize(const UreProgram &program, const Buffers &inputs, const Progress &progress) {
    check_enumerable(program, "--realize");
    return Evaluator(program, inputs).run(progress);
}

}  // namespace ir
}  // namespace pulse
