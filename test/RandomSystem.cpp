#include "RandomSystem.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace pulse::test {

namespace {

const char *const loop_names[] = {"i", "j", "k"};
const char *const recurrence_names[] = {"A", "B", "C", "D"};
const char *const input_names[] = {"x", "y"};

int64_t uniform(std::mt19937 &rng, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
bool chance(std::mt19937 &rng, double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }

std::string type_text(const Halide::Type &t) {
    std::ostringstream s;
    s << (t.is_float() ? "Float(" : t.is_uint() ? "UInt(" : "Int(") << t.bits() << ")";
    return s.str();
}

/// An expression and its C++ text, built together so that the printed spec
/// is exactly the one that was compiled.
struct Code {
    Expr e;
    std::string s;
};

Code binary(char op, const Code &a, const Code &b) {
    Expr e;
    switch (op) {
    case '+': e = a.e + b.e; break;
    case '-': e = a.e - b.e; break;
    case '*': e = a.e * b.e; break;
    case '/': e = a.e / b.e; break;
    case '%': e = a.e % b.e; break;
    case '&': e = a.e && b.e; break;
    case '|': e = a.e || b.e; break;
    }
    const std::string text = op == '&' ? "&&" : op == '|' ? "||" : std::string(1, op);
    return {e, "(" + a.s + " " + text + " " + b.s + ")"};
}

Code comparison(const std::string &op, const Code &a, int64_t k) {
    Expr b = Expr((int)k), e;
    if (op == "==") e = a.e == b;
    else if (op == "<") e = a.e < b;
    else if (op == ">") e = a.e > b;
    else if (op == "<=") e = a.e <= b;
    else e = a.e >= b;
    return {e, a.s + " " + op + " " + std::to_string(k)};
}

Code constant(const Halide::Type &t, int64_t k) {
    if (t.is_float()) {
        char text[32];
        std::snprintf(text, sizeof text, "%.1ff", 0.5 * (double)k);
        return {Expr(0.5f * (float)k), text};
    }
    if (t == Halide::Int(32)) return {Expr((int)k), k < 0 ? "(" + std::to_string(k) + ")" : std::to_string(k)};
    return {Halide::cast(t, Expr((int)k)), "cast(" + type_text(t) + ", " + std::to_string(k) + ")"};
}

/// `c0 * i + c1 * j + k`.
Code affine(const std::vector<Var> &vars, const std::vector<int64_t> &coefficient, int64_t k) {
    Code sum{Expr(), ""};
    for (size_t l = 0; l < vars.size(); l++) {
        const int64_t a = coefficient[l];
        if (a == 0) continue;
        Code term{Expr(vars[l]), vars[l].name()};
        if (a != 1) term = {Expr((int)a) * vars[l], (a < 0 ? "(" + std::to_string(a) + ")" : std::to_string(a)) + " * " + vars[l].name()};
        sum = sum.e.defined() ? Code{sum.e + term.e, sum.s + " + " + term.s} : term;
    }
    if (!sum.e.defined()) return {Expr((int)k), std::to_string(k)};
    if (k > 0) return {sum.e + (int)k, sum.s + " + " + std::to_string(k)};
    if (k < 0) return {sum.e - (int)-k, sum.s + " - " + std::to_string(-k)};
    return sum;
}

int64_t max_of(const System &s, size_t l) { return s.mins[l] + s.extents[l] - 1; }

/// Builds a system's expressions over the language's Funcs and Inputs.
struct Builder {
    const System &system;
    std::vector<Var> vars;
    std::vector<Func> recs;
    std::vector<Input> inputs;

    explicit Builder(const System &s) : system(s) {
        for (size_t l = 0; l < s.loops(); l++) vars.emplace_back(loop_names[l]);
        for (size_t r = 0; r < s.recurrences.size(); r++) recs.emplace_back(s.type, vars, Place::Device, recurrence_names[r]);
        for (size_t n = 0; n < s.input_dims.size(); n++) inputs.emplace_back(s.type, s.input_dims[n], input_names[n]);
    }

    std::string args_text(const std::vector<std::string> &args) const {
        std::string s;
        for (size_t i = 0; i < args.size(); i++) s += (i ? ", " : "") + args[i];
        return s;
    }

    /// Where a read at distance d of `producer` is inside the domain and defined:
    /// atoms (loop, lower bound?, bound).
    struct Atom {
        size_t loop;
        bool lower;  ///< loop >= bound, else loop <= bound
        int64_t bound;
    };
    std::vector<Atom> guard_atoms(const Term &t) const {
        std::vector<Atom> atoms;
        for (size_t l = 0; l < system.loops(); l++) {
            if (t.distance[l] > 0) atoms.push_back({l, true, system.mins[l] + t.distance[l]});
            if (t.distance[l] < 0) atoms.push_back({l, false, max_of(system, l) + t.distance[l]});
        }
        const Recurrence &p = system.recurrences[t.target];
        if (p.partial_loop >= 0) atoms.push_back({(size_t)p.partial_loop, true, p.partial_from + t.distance[p.partial_loop]});
        return atoms;
    }

    /// The guard, inside form (`i >= 1 && ...`) or outside form (`i == 0 || ...`).
    Code guard(const std::vector<Atom> &atoms, bool outside) const {
        Code all{Expr(), ""};
        for (const Atom &a : atoms) {
            Code v{Expr(vars[a.loop]), vars[a.loop].name()};
            Code c;
            if (!outside) c = comparison(a.lower ? ">=" : "<=", v, a.bound);
            else if (a.lower && a.bound == system.mins[a.loop] + 1) c = comparison("==", v, system.mins[a.loop]);
            else if (!a.lower && a.bound == max_of(system, a.loop) - 1) c = comparison("==", v, max_of(system, a.loop));
            else c = comparison(a.lower ? "<" : ">", v, a.bound);
            all = all.e.defined() ? binary(outside ? '|' : '&', all, c) : c;
        }
        return all;
    }

    Code read(const Term &t) const {
        std::vector<Expr> args;
        std::vector<std::string> texts;
        for (size_t l = 0; l < system.loops(); l++) {
            std::vector<int64_t> unit(system.loops(), 0);
            unit[l] = 1;
            Code a = affine(vars, unit, -t.distance[l]);
            args.push_back(a.e);
            texts.push_back(a.s);
        }
        return {Expr(recs[t.target](args)), std::string(recurrence_names[t.target]) + "(" + args_text(texts) + ")"};
    }

    Code term(const Term &t, const Code *fallback = nullptr) const {
        switch (t.kind) {
        case Term::Constant: return constant(system.type, t.value);
        case Term::InputRead: {
            std::vector<Expr> index;
            std::vector<std::string> texts;
            for (const auto &row : t.index) {
                Code a = affine(vars, std::vector<int64_t>(row.begin(), row.end() - 1), row.back());
                index.push_back(a.e);
                texts.push_back(a.s);
            }
            return {inputs[t.target](index), std::string(input_names[t.target]) + "(" + args_text(texts) + ")"};
        }
        case Term::RecurrenceRead: {
            Code r = read(t);
            std::vector<Atom> atoms = guard_atoms(t);
            if (!t.guarded || atoms.empty()) return r;
            Code other = fallback ? *fallback : constant(system.type, t.value);
            if (t.negated_guard) {
                Code g = guard(atoms, true);
                return {Halide::select(g.e, other.e, r.e), "select(" + g.s + ", " + other.s + ", " + r.s + ")"};
            }
            Code g = guard(atoms, false);
            return {Halide::select(g.e, r.e, other.e), "select(" + g.s + ", " + r.s + ", " + other.s + ")"};
        }
        }
        return {};
    }

    /// A term with its modifier: `(t / -3)`, `min(t, 4)`, ...
    Code modified(const Term &t) const {
        Code c = term(t);
        if (!t.modifier) return c;
        Code k = constant(system.type, t.operand);
        if (t.modifier == 'm' || t.modifier == 'M') {
            const char *f = t.modifier == 'm' ? "min" : "max";
            return {t.modifier == 'm' ? Halide::min(c.e, k.e) : Halide::max(c.e, k.e), std::string(f) + "(" + c.s + ", " + k.s + ")"};
        }
        return binary(t.modifier, c, k);
    }

    Code definition(const Recurrence &r) const {
        Code value;
        if (r.copy) {
            Code base = term(r.terms[1]);
            value = term(r.terms[0], &base);
        } else {
            value = modified(r.terms[0]);
            for (size_t n = 1; n < r.terms.size(); n++) value = binary(r.ops[n - 1], value, modified(r.terms[n]));
            // Wide signed values are kept small: signed overflow is undefined in the emitted C++.
            if (system.type == Halide::Int(32)) value = binary('%', value, constant(system.type, 10007));
            if (system.type == Halide::Int(64)) value = binary('%', value, constant(system.type, 1000000007));
        }
        if (r.partial_loop >= 0) {
            Code c = comparison(">=", Code{Expr(vars[r.partial_loop]), vars[r.partial_loop].name()}, r.partial_from);
            value = {pulse::select(c.e, value.e), "select(" + c.s + ", " + value.s + ")"};
        }
        return value;
    }
};

const char *output_name(size_t o) { return o == 0 ? "Out" : "Out2"; }

/// A nonzero distance that the declared nesting orders (its outermost nonzero
/// component has the sign of that loop's direction).
std::vector<int64_t> draw_distance(std::mt19937 &rng, const std::vector<int> &direction) {
    const size_t n = direction.size();
    std::vector<int64_t> d(n, 0);
    const size_t lead = (size_t)uniform(rng, 0, (int64_t)n - 1);
    d[lead] = direction[lead] * (chance(rng, 0.8) ? 1 : 2);
    for (size_t l = 0; l < lead; l++)
        if (chance(rng, 0.3)) d[l] = uniform(rng, -2, 2);
    return d;
}

Term draw_input_read(std::mt19937 &rng, const System &s) {
    Term t;
    t.kind = Term::InputRead;
    t.target = (int)uniform(rng, 0, (int64_t)s.input_dims.size() - 1);
    for (int dim = 0; dim < s.input_dims[t.target]; dim++) {
        std::vector<int64_t> row;
        for (size_t l = 0; l < s.loops(); l++) row.push_back(chance(rng, 0.5) ? uniform(rng, -1, 2) : 0);
        row.push_back(uniform(rng, -2, 2));
        t.index.push_back(row);
    }
    return t;
}

Term draw_constant(std::mt19937 &rng) {
    Term t;
    t.kind = Term::Constant;
    t.value = uniform(rng, 1, 9);
    return t;
}

Term draw_recurrence_read(std::mt19937 &rng, const System &s, int reader, const std::vector<int> &direction) {
    Term t;
    t.kind = Term::RecurrenceRead;
    t.target = (int)uniform(rng, 0, (int64_t)s.recurrences.size() - 1);
    if (t.target < reader && chance(rng, 0.25)) t.distance.assign(s.loops(), 0);  // an earlier URE, same point
    else t.distance = draw_distance(rng, direction);
    t.value = uniform(rng, 1, 9);
    t.negated_guard = chance(rng, 0.4);
    return t;
}

/// Makes the system ill defined in one way, or leaves its order unsatisfiable.
void inject_defect(std::mt19937 &rng, System &s) {
    std::vector<Term *> reads;
    for (Recurrence &r : s.recurrences)
        for (Term &t : r.terms)
            if (t.kind == Term::RecurrenceRead && std::any_of(t.distance.begin(), t.distance.end(), [](int64_t v) { return v; }))
                reads.push_back(&t);
    switch (uniform(rng, 0, 4)) {
    case 0:  // no base case
        if (!reads.empty()) reads[uniform(rng, 0, (int64_t)reads.size() - 1)]->guarded = false;
        break;
    case 1:  // a read of a value a select leaves undefined
        if (!reads.empty()) {
            Term &t = *reads[uniform(rng, 0, (int64_t)reads.size() - 1)];
            Recurrence &p = s.recurrences[t.target];
            p.partial_loop = (int)uniform(rng, 0, (int64_t)s.loops() - 1);
            p.partial_from = s.mins[p.partial_loop] + uniform(rng, 0, s.extents[p.partial_loop]);
            t.guarded = false;
        }
        break;
    case 2:  // an output written several times
        s.outputs[0].at_or_above = true;
        break;
    case 3:  // an output element never written
        if (!s.outputs[0].at.empty()) s.outputs[0].at[0] += 50;
        break;
    case 4:  // a dependence against the order
        if (!reads.empty()) {
            Term &t = *reads[uniform(rng, 0, (int64_t)reads.size() - 1)];
            for (int64_t &v : t.distance) v = -v;
        }
        break;
    }
}

}  // namespace

System draw_system(std::mt19937 &rng) {
    System s;
    const size_t loops = (size_t)uniform(rng, 1, 3);
    const Halide::Type types[] = {Halide::Int(32), Halide::Float(32), Halide::UInt(8), Halide::Int(16), Halide::UInt(32), Halide::Int(64)};
    const int weights[] = {33, 33, 8, 9, 9, 8};
    s.type = types[std::discrete_distribution<int>(std::begin(weights), std::end(weights))(rng)];
    const int64_t largest = loops == 1 ? 9 : loops == 2 ? 6 : 4;
    for (size_t l = 0; l < loops; l++) {
        s.mins.push_back(chance(rng, 0.2) ? uniform(rng, -2, 3) : 0);
        s.extents.push_back(chance(rng, 0.15) ? 1 : uniform(rng, 2, largest));
    }
    // Sometimes an array wider than a warp (several PEs per lane on a GPU).
    if (loops <= 2 && chance(rng, 0.08)) {
        s.extents.assign(loops, 2);
        s.extents[uniform(rng, 0, (int64_t)loops - 1)] = uniform(rng, 33, 48);
    }
    s.input_dims.push_back((int)uniform(rng, 1, 2));
    if (chance(rng, 0.5)) s.input_dims.push_back((int)uniform(rng, 1, 2));
    std::vector<int> direction;
    for (size_t l = 0; l < loops; l++) direction.push_back(chance(rng, 0.7) ? 1 : -1);

    s.recurrences.resize((size_t)uniform(rng, 1, 4));
    for (size_t r = 0; r < s.recurrences.size(); r++) {
        Recurrence &rec = s.recurrences[r];
        if (chance(rng, 0.3)) {
            // A copy chain (or a broadcast, depending on the transform).
            rec.copy = true;
            rec.terms.push_back(draw_recurrence_read(rng, s, (int)r, direction));
            rec.terms.push_back(chance(rng, 0.7) ? draw_input_read(rng, s) : draw_constant(rng));
            continue;
        }
        const int64_t terms = uniform(rng, 1, 4);
        for (int64_t n = 0; n < terms; n++) {
            const double u = std::uniform_real_distribution<double>(0, 1)(rng);
            Term t = u < 0.5 ? draw_recurrence_read(rng, s, (int)r, direction)
                             : u < 0.85 ? draw_input_read(rng, s) : draw_constant(rng);
            if (chance(rng, 0.15)) {
                // Halide's division and modulo round down, for negative divisors too.
                t.modifier = "/%mM"[uniform(rng, 0, 3)];
                do t.operand = uniform(rng, -4, 5);
                while (t.operand == 0 || ((t.modifier == '/' || t.modifier == '%') && (t.operand == 1 || (s.type.is_uint() && t.operand < 0))));
                // Float % is refused by the code generators; the kernel executor's float % is not the interpreter's.
                if (t.modifier == '%' && s.type.is_float()) t.modifier = '/';
            }
            if (n > 0) {
                // A product only by a bounded operand, so that integers stay small.
                char op = "+-*"[uniform(rng, 0, 2)];
                if (op == '*' && t.kind == Term::RecurrenceRead) op = '+';
                rec.ops.push_back(op);
            }
            rec.terms.push_back(t);
        }
        if (chance(rng, 0.08)) {
            // Defined only on part of the domain; the guards of its readers say so.
            rec.partial_loop = (int)uniform(rng, 0, (int64_t)loops - 1);
            rec.partial_from = s.mins[rec.partial_loop] + uniform(rng, 0, s.extents[rec.partial_loop] - 1);
        }
    }

    const size_t outputs = chance(rng, 0.2) && s.recurrences.size() > 1 ? 2 : 1;
    for (size_t o = 0; o < outputs; o++) {
        Output out;
        out.recurrence = o == 0 ? (int)s.recurrences.size() - 1 : (int)uniform(rng, 0, (int64_t)s.recurrences.size() - 2);
        out.kept.assign(loops, false);
        for (size_t l = 0; l < loops; l++) out.kept[l] = chance(rng, 0.5);
        if (std::none_of(out.kept.begin(), out.kept.end(), [](bool k) { return k; })) out.kept[uniform(rng, 0, (int64_t)loops - 1)] = true;
        for (size_t l = 0; l < loops; l++)
            if (!out.kept[l]) out.at.push_back(chance(rng, 0.7) ? max_of(s, l) : s.mins[l] + uniform(rng, 0, s.extents[l] - 1));
        // A partial recurrence is output only where it is defined.
        const Recurrence &rec = s.recurrences[out.recurrence];
        if (rec.partial_loop >= 0) {
            size_t at = 0;
            for (size_t l = 0; l < loops; l++) {
                if (out.kept[l]) continue;
                if ((int)l == rec.partial_loop) out.at[at] = max_of(s, l);
                at++;
            }
            if (out.kept[rec.partial_loop]) s.recurrences[out.recurrence].partial_loop = -1;
        }
        s.outputs.push_back(out);
    }
    if (chance(rng, 0.12)) inject_defect(rng, s);
    return s;
}

Transform draw_transform(std::mt19937 &rng, const System &system, int space_rows) {
    Transform t;
    for (size_t l = 0; l < system.loops(); l++) t.source.push_back((int)l);
    if (system.loops() >= 2 && chance(rng, 0.15)) t.source.erase(t.source.begin() + uniform(rng, 0, (int64_t)system.loops() - 1));
    t.matrix.assign((size_t)space_rows + 1, std::vector<int64_t>(t.source.size()));
    for (auto &row : t.matrix)
        for (auto &v : row) v = uniform(rng, -2, 2);
    return t;
}

namespace {

/// `Out(j) = select(i == 3, A(i, j))`, as expression and text, with its Func's arguments.
struct OutputCode {
    std::vector<Expr> args;
    std::string args_text;
    Code value;
};

OutputCode output_code(const Builder &b, const Output &out) {
    const System &s = b.system;
    OutputCode oc;
    Term all;
    all.kind = Term::RecurrenceRead;
    all.target = out.recurrence;
    all.distance.assign(s.loops(), 0);
    Code value = b.read(all);
    Code condition{Expr(), ""};
    size_t at = 0;
    std::vector<std::string> kept;
    for (size_t l = 0; l < s.loops(); l++) {
        if (out.kept[l]) {
            oc.args.push_back(b.vars[l]);
            kept.push_back(b.vars[l].name());
            continue;
        }
        Code c = comparison(at == 0 && out.at_or_above ? ">=" : "==", Code{Expr(b.vars[l]), b.vars[l].name()}, out.at[at]);
        condition = condition.e.defined() ? binary('&', condition, c) : c;
        at++;
    }
    oc.args_text = b.args_text(kept);
    oc.value = condition.e.defined()
                   ? Code{pulse::select(condition.e, value.e), "select(" + condition.s + ", " + value.s + ")"}
                   : value;
    return oc;
}

std::vector<int> flat_matrix(const Transform &t) {
    std::vector<int> flat;
    for (const auto &row : t.matrix)
        for (int64_t v : row) flat.push_back((int)v);
    return flat;
}

std::vector<std::string> destination_names(const Transform &t) {
    return t.matrix.size() == 2 ? std::vector<std::string>{"s", "t"} : std::vector<std::string>{"s", "r", "t"};
}

}  // namespace

ir::UreProgram build_system(const System &system, const Transform &transform) {
    Builder b(system);
    for (size_t r = 0; r < system.recurrences.size(); r++) b.recs[r](std::vector<Expr>(b.vars.begin(), b.vars.end())) = b.definition(system.recurrences[r]).e;
    std::vector<Func> merged(b.recs.begin() + 1, b.recs.end());
    std::vector<Func> outs;
    for (size_t o = 0; o < system.outputs.size(); o++) {
        outs.emplace_back(Place::Device, output_name(o));
        OutputCode oc = output_code(b, system.outputs[o]);
        outs.back()(oc.args) = oc.value.e;
        merged.push_back(outs.back());
    }
    b.recs[0].merge_ures(merged);
    for (size_t l = 0; l < system.loops(); l++) b.recs[0].set_bounds(b.vars[l], system.mins[l], system.extents[l]);
    std::vector<Var> source, destination;
    for (int l : transform.source) source.push_back(b.vars[l]);
    for (const std::string &n : destination_names(transform)) destination.emplace_back(n);
    b.recs[0].space_time_transform(source, destination, flat_matrix(transform));
    return outs[0].lower();
}

void apply_transform(ir::UreProgram &program, const Transform &transform) {
    ir::SpaceTimeTransform &st = *program.schedule.transform;
    st.source_loops.clear();
    for (int l : transform.source) st.source_loops.push_back(program.loops[l].var);
    st.destination_loops = destination_names(transform);
    st.matrix = transform.matrix;
}

std::string system_cpp(const System &system, const Transform &transform) {
    Builder b(system);
    std::ostringstream out;
    std::vector<std::string> vars;
    for (size_t l = 0; l < system.loops(); l++) vars.push_back(loop_names[l]);
    out << "Var ";
    for (size_t l = 0; l < system.loops(); l++) out << loop_names[l] << "(\"" << loop_names[l] << "\"), ";
    const std::vector<std::string> dest = destination_names(transform);
    for (size_t d = 0; d < dest.size(); d++) out << dest[d] << "(\"" << dest[d] << "\")" << (d + 1 < dest.size() ? ", " : ";\n");
    for (size_t n = 0; n < system.input_dims.size(); n++) {
        out << "Input " << input_names[n] << "(" << type_text(system.type) << ", " << system.input_dims[n] << ", \""
            << input_names[n] << "\");\n";
    }
    for (size_t r = 0; r < system.recurrences.size(); r++) {
        out << "Func " << recurrence_names[r] << "(" << type_text(system.type) << ", {" << b.args_text(vars)
            << "}, Place::Device, \"" << recurrence_names[r] << "\");\n";
    }
    for (size_t o = 0; o < system.outputs.size(); o++) out << "Func " << output_name(o) << "(Place::Device, \"" << output_name(o) << "\");\n";
    for (size_t r = 0; r < system.recurrences.size(); r++) {
        out << recurrence_names[r] << "(" << b.args_text(vars) << ") = " << b.definition(system.recurrences[r]).s << ";\n";
    }
    for (size_t o = 0; o < system.outputs.size(); o++) {
        OutputCode oc = output_code(b, system.outputs[o]);
        out << output_name(o) << "(" << oc.args_text << ") = " << oc.value.s << ";\n";
    }
    std::vector<std::string> merged;
    for (size_t r = 1; r < system.recurrences.size(); r++) merged.push_back(recurrence_names[r]);
    for (size_t o = 0; o < system.outputs.size(); o++) merged.push_back(output_name(o));
    out << "A.merge_ures(" << b.args_text(merged) << ").set_bounds(";
    for (size_t l = 0; l < system.loops(); l++) {
        out << (l ? ", " : "") << loop_names[l] << ", " << system.mins[l] << ", " << system.extents[l];
    }
    out << ");\n";
    std::vector<std::string> source;
    for (int l : transform.source) source.push_back(loop_names[l]);
    out << "A.space_time_transform({" << b.args_text(source) << "}, {" << b.args_text(dest) << "}, {";
    for (size_t r = 0; r < transform.matrix.size(); r++) {
        for (size_t c = 0; c < transform.matrix[r].size(); c++) {
            out << transform.matrix[r][c] << (c + 1 < transform.matrix[r].size() ? ", " : "");
        }
        out << (r + 1 < transform.matrix.size() ? ", /**/ " : "});\n");
    }
    // What a spec builder (PULSE_REGISTER_SPEC) returns.
    std::vector<std::string> inputs(input_names, input_names + system.input_dims.size());
    out << "return Spec{Out, {" << b.args_text(inputs) << "}};\n";
    return out.str();
}

namespace {

/// The system without loop `l` (nothing of a loop of extent 1 is lost but the loop).
bool drop_loop(System &s, Transform &t, size_t l) {
    if (s.loops() <= 1) return false;
    s.mins.erase(s.mins.begin() + l);
    s.extents.erase(s.extents.begin() + l);
    for (Recurrence &r : s.recurrences) {
        for (Term &term : r.terms) {
            if (!term.distance.empty()) term.distance.erase(term.distance.begin() + l);
            for (auto &row : term.index) row.erase(row.begin() + l);
        }
        if (r.partial_loop == (int)l) r.partial_loop = -1;
        else if (r.partial_loop > (int)l) r.partial_loop--;
    }
    for (Output &o : s.outputs) {
        size_t at = 0;
        for (size_t m = 0; m < l; m++) at += !o.kept[m];
        if (!o.kept[l]) o.at.erase(o.at.begin() + at);
        o.kept.erase(o.kept.begin() + l);
        if (std::none_of(o.kept.begin(), o.kept.end(), [](bool k) { return k; })) {
            // An output keeps at least one loop: the innermost one left.
            o.kept[0] = true;
            o.at.erase(o.at.begin());
        }
    }
    auto it = std::find(t.source.begin(), t.source.end(), (int)l);
    if (it != t.source.end()) {
        const size_t column = it - t.source.begin();
        if (t.source.size() == 1) return false;
        t.source.erase(it);
        for (auto &row : t.matrix) row.erase(row.begin() + column);
    }
    for (int &v : t.source)
        if (v > (int)l) v--;
    return true;
}

/// The system without recurrence `r`: its reads become constants.
bool drop_recurrence(System &s, size_t r) {
    if (s.recurrences.size() <= 1) return false;
    for (Output &o : s.outputs) {
        // An output of the dropped recurrence stores its neighbour instead.
        if (o.recurrence > (int)r || (o.recurrence == (int)r && r + 1 == s.recurrences.size())) o.recurrence--;
    }
    s.recurrences.erase(s.recurrences.begin() + r);
    for (Recurrence &rec : s.recurrences) {
        if (rec.copy && rec.terms[0].target == (int)r) {
            rec.copy = false;
            rec.terms.erase(rec.terms.begin());
        }
        for (Term &t : rec.terms) {
            if (t.kind != Term::RecurrenceRead) continue;
            if (t.target == (int)r) t.kind = Term::Constant;
            else if (t.target > (int)r) t.target--;
        }
    }
    return true;
}

}  // namespace

std::vector<std::pair<System, Transform>> shrink_candidates(const System &system, const Transform &transform) {
    std::vector<std::pair<System, Transform>> out;
    auto add = [&](System s, Transform t) { out.push_back({std::move(s), std::move(t)}); };
    if (system.outputs.size() > 1) {
        System s = system;
        s.outputs.pop_back();
        add(s, transform);
    }
    for (size_t r = 0; r < system.recurrences.size(); r++) {
        System s = system;
        if (drop_recurrence(s, r)) add(s, transform);
    }
    for (size_t l = 0; l < system.loops(); l++) {
        System s = system;
        Transform t = transform;
        if (drop_loop(s, t, l)) add(s, t);
    }
    for (size_t r = 0; r < system.recurrences.size(); r++) {
        const Recurrence &rec = system.recurrences[r];
        for (size_t n = 0; n < rec.terms.size() && !rec.copy && rec.terms.size() > 1; n++) {
            System s = system;
            Recurrence &x = s.recurrences[r];
            x.terms.erase(x.terms.begin() + n);
            x.ops.erase(x.ops.begin() + (n ? n - 1 : 0));
            add(s, transform);
        }
        for (size_t n = 0; n < rec.terms.size(); n++) {
            const Term &t = rec.terms[n];
            if (t.kind != Term::Constant && !(rec.copy && n == 0)) {
                System s = system;
                s.recurrences[r].terms[n] = Term{};
                add(s, transform);
            }
            for (size_t l = 0; l < t.distance.size(); l++) {
                if (t.distance[l] == 0) continue;
                System s = system;
                int64_t &v = s.recurrences[r].terms[n].distance[l];
                v -= v > 0 ? 1 : -1;
                add(s, transform);
            }
            for (size_t d = 0; d < t.index.size(); d++) {
                for (size_t c = 0; c < t.index[d].size(); c++) {
                    if (t.index[d][c] == 0) continue;
                    System s = system;
                    s.recurrences[r].terms[n].index[d][c] = 0;
                    add(s, transform);
                }
            }
            if (t.modifier) {
                System s = system;
                s.recurrences[r].terms[n].modifier = 0;
                add(s, transform);
            }
            if (t.modifier) {
                System s = system;
                s.recurrences[r].terms[n].modifier = 0;
                add(s, transform);
            }
            if (t.negated_guard) {
                System s = system;
                s.recurrences[r].terms[n].negated_guard = false;
                add(s, transform);
            }
        }
        if (rec.partial_loop >= 0) {
            System s = system;
            s.recurrences[r].partial_loop = -1;
            add(s, transform);
        }
    }
    for (size_t l = 0; l < system.loops(); l++) {
        for (int64_t e : {int64_t(1), system.extents[l] / 2, system.extents[l] - 1}) {
            if (e < 1 || e >= system.extents[l]) continue;
            System s = system;
            s.extents[l] = e;
            add(s, transform);
        }
        if (system.mins[l] != 0) {
            System s = system;
            s.mins[l] = 0;
            add(s, transform);
        }
    }
    for (size_t r = 0; r < transform.matrix.size(); r++) {
        for (size_t c = 0; c < transform.matrix[r].size(); c++) {
            const int64_t v = transform.matrix[r][c];
            if (v == 0) continue;
            Transform t = transform;
            t.matrix[r][c] = 0;
            add(system, t);
            if (v < -1 || v > 1) {
                t.matrix[r][c] = v > 0 ? v - 1 : v + 1;
                add(system, t);
            }
        }
    }
    if (system.type != Halide::Int(32) && !system.type.is_float()) {
        System s = system;
        s.type = Halide::Int(32);
        add(s, transform);
    }
    return out;
}

}  // namespace pulse::test
