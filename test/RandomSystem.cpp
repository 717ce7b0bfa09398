#include "RandomSystem.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <optional>
#include <sstream>

#include "exec/InputRegions.h"

namespace pulse::test {

namespace {

const char *const loop_names[] = {"i", "j", "k"};
const char *const recurrence_names[] = {"A", "B", "C", "D", "E"};
const char *const input_names[] = {"x", "y"};

int64_t uniform(std::mt19937 &rng, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
bool chance(std::mt19937 &rng, double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; }

std::string type_text(const Halide::Type &t) {
    std::ostringstream s;
    s << (t.is_float() ? "Float(" : t.is_uint() ? "UInt(" : "Int(") << t.bits() << ")";
    return s.str();
}

/// The C++ type of `t`, for Halide's cast<T>(e).
std::string cpp_type(const Halide::Type &t) {
    if (t.is_float()) return t.bits() == 32 ? "float" : "double";
    return std::string(t.is_uint() ? "uint" : "int") + std::to_string(t.bits()) + "_t";
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
    else if (op == "!=") e = a.e != b;
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

/// `c` of type `from` as type `to`: cast<T>(c) where they differ.
Code converted(const Code &c, const Halide::Type &from, const Halide::Type &to) {
    if (from == to) return c;
    return {Halide::cast(to, c.e), "cast<" + cpp_type(to) + ">(" + c.s + ")"};
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
        for (size_t r = 0; r < s.recurrences.size(); r++) recs.emplace_back(s.recurrences[r].type, vars, Place::Device, recurrence_names[r]);
        for (size_t n = 0; n < s.input_dims.size(); n++) inputs.emplace_back(s.input_types[n], s.input_dims[n], input_names[n]);
        if (s.table_extent > 0) table.emplace_back(s.type, std::vector<int>{(int)s.table_extent}, "tab");
        if (s.ragged_loop >= 0) length.emplace_back(Halide::Int(32), (int)s.ragged_by.size(), "len");
    }
    std::vector<Input> table;   ///< the table, if the system has one
    std::vector<Input> length;  ///< the data bound's input, if the system has one

    /// The data bound `loop < len(...)`.
    Code data_bound() const {
        std::vector<Expr> at;
        std::vector<std::string> texts;
        for (int l : system.ragged_by) at.push_back(vars[l]), texts.push_back(loop_names[l]);
        return {Expr(vars[system.ragged_loop]) < length[0](at),
                std::string(loop_names[system.ragged_loop]) + " < len(" + args_text(texts) + ")"};
    }

    std::string args_text(const std::vector<std::string> &args) const {
        std::string s;
        for (size_t i = 0; i < args.size(); i++) s += (i ? ", " : "") + args[i];
        return s;
    }

    /// Where a read at distance d of `producer` is inside the domain and defined:
    /// atoms (loop, lower bound?, bound).
    /// Or, with `coefficient`, an affine atom `coefficient . x <= bound`.
    struct Atom {
        size_t loop;
        bool lower;  ///< loop >= bound, else loop <= bound
        int64_t bound;
        std::vector<int64_t> coefficient = {};
    };
    std::vector<Atom> guard_atoms(const Term &t) const {
        std::vector<Atom> atoms;
        for (size_t l = 0; l < system.loops(); l++) {
            if (t.distance[l] > 0) atoms.push_back({l, true, system.mins[l] + t.distance[l]});
            if (t.distance[l] < 0) atoms.push_back({l, false, max_of(system, l) + t.distance[l]});
        }
        // x - d in the domain: a . (x - d) <= c, that is a . x <= c + a . d,
        // which x in the domain (a . x <= c) implies where a . d >= 0.
        for (const Constraint &c : system.constraints) {
            int64_t ad = 0;
            for (size_t l = 0; l < system.loops(); l++) ad += c.coefficient[l] * t.distance[l];
            if (ad < 0) atoms.push_back({0, false, c.bound + ad, c.coefficient});
        }
        const Recurrence &p = system.recurrences[t.target];
        if (p.partial_loop >= 0) atoms.push_back({(size_t)p.partial_loop, true, p.partial_from + t.distance[p.partial_loop]});
        return atoms;
    }

    /// Constraint `c` as `a . x <= bound` (`a . x > bound` where `negated`).
    Code constraint(const std::vector<int64_t> &coefficient, int64_t bound, bool negated) const {
        return comparison(negated ? ">" : "<=", affine(vars, coefficient, 0), bound);
    }

    /// The guard, inside form (`i >= 1 && ...`) or outside form (`i == 0 || ...`).
    Code guard(const std::vector<Atom> &atoms, bool outside) const {
        Code all{Expr(), ""};
        for (const Atom &a : atoms) {
            Code v{Expr(vars[a.loop]), vars[a.loop].name()};
            Code c;
            if (!a.coefficient.empty()) c = constraint(a.coefficient, a.bound, outside);
            else if (!outside) c = comparison(a.lower ? ">=" : "<=", v, a.bound);
            else if (a.lower && a.bound == system.mins[a.loop] + 1) c = comparison("==", v, system.mins[a.loop]);
            else if (!a.lower && a.bound == max_of(system, a.loop) - 1) c = comparison("==", v, max_of(system, a.loop));
            else c = comparison(a.lower ? "<" : ">", v, a.bound);
            all = all.e.defined() ? binary(outside ? '|' : '&', all, c) : c;
        }
        return all;
    }

    /// `i < 3`, `i % 2 == 1`, ..., or where `negated` the opposite (`i >= 3`, `i % 2 != 1`).
    Code condition(const Condition &c, bool negated) const {
        Code v{Expr(vars[c.loop]), vars[c.loop].name()};
        switch (c.kind) {
        case '<': return comparison(negated ? ">=" : "<", v, c.value);
        case '>': return comparison(negated ? "<=" : ">", v, c.value);
        case '=': return comparison(negated ? "!=" : "==", v, c.value);
        default: return comparison(negated ? "!=" : "==", Code{Expr(vars[c.loop]) % 2, v.s + " % 2"}, c.value);
        }
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

    /// Term `t` as a value of type `type` (a cast where it reads another
    /// type); a guarded read takes `fallback` where its guard (and `extra`,
    /// if any) fails, else its constant.
    Code term(const Term &t, const Halide::Type &type, const Code *fallback = nullptr, const Condition *extra = nullptr) const {
        switch (t.kind) {
        case Term::Constant: return constant(type, t.value);
        case Term::InputRead: {
            std::vector<Expr> index;
            std::vector<std::string> texts;
            for (const auto &row : t.index) {
                Code a = affine(vars, std::vector<int64_t>(row.begin(), row.end() - 1), row.back());
                index.push_back(a.e);
                texts.push_back(a.s);
            }
            Code in{inputs[t.target](index), std::string(input_names[t.target]) + "(" + args_text(texts) + ")"};
            if (t.via_table && !table.empty()) {
                // The value read as the table's index (clamped into it).
                Code element{table[0](Halide::cast(Halide::Int(32), in.e)), "tab(cast(Int(32), " + in.s + "))"};
                return converted(element, system.type, type);
            }
            return converted(in, system.input_types[t.target], type);
        }
        case Term::RecurrenceRead: {
            Code r = converted(read(t), system.recurrences[t.target].type, type);
            std::vector<Atom> atoms = guard_atoms(t);
            const bool also = extra && extra->present();
            if (!t.guarded || (atoms.empty() && !also)) return r;
            Code other = fallback ? *fallback : constant(type, t.value);
            if (t.negated_guard) {
                Code g = guard(atoms, true);
                if (also) g = g.e.defined() ? binary('|', g, condition(*extra, true)) : condition(*extra, true);
                return {Halide::select(g.e, other.e, r.e), "select(" + g.s + ", " + other.s + ", " + r.s + ")"};
            }
            Code g = guard(atoms, false);
            if (also) g = g.e.defined() ? binary('&', g, condition(*extra, false)) : condition(*extra, false);
            return {Halide::select(g.e, r.e, other.e), "select(" + g.s + ", " + r.s + ", " + other.s + ")"};
        }
        }
        return {};
    }

    /// A term with its modifier: `(t / -3)`, `min(t, 4)`, ...
    Code modified(const Term &t, const Halide::Type &type) const {
        Code c = term(t, type);
        if (!t.modifier) return c;
        // A literal as an Expr: C++ would divide two literals rounding toward
        // zero (Halide rounds down), and min(2, 3) is ambiguous with std::min.
        if (t.kind == Term::Constant && c.s.rfind("cast(", 0) != 0) c.s = "Expr(" + c.s + ")";
        Code k = constant(type, t.operand);
        if (t.modifier == 'm' || t.modifier == 'M') {
            const char *f = t.modifier == 'm' ? "min" : "max";
            return {t.modifier == 'm' ? Halide::min(c.e, k.e) : Halide::max(c.e, k.e), std::string(f) + "(" + c.s + ", " + k.s + ")"};
        }
        if (t.modifier == 'a' || t.modifier == 's') {
            const bool add = t.modifier == 'a';
            return {add ? Halide::Internal::saturating_add(c.e, k.e) : Halide::Internal::saturating_sub(c.e, k.e),
                    std::string(add ? "saturating_add(" : "saturating_sub(") + c.s + ", " + k.s + ")"};
        }
        return binary(t.modifier, c, k);
    }

    /// `terms[from] op ... op terms[to - 1]` of `r`.
    Code expression(const Recurrence &r, size_t from, size_t to) const {
        Code value = modified(r.terms[from], r.type);
        for (size_t n = from + 1; n < to; n++) value = binary(r.ops[n - 1], value, modified(r.terms[n], r.type));
        // Wide signed values are kept small: signed overflow is undefined in the emitted C++.
        if (to - from >= 2 || !r.copy) {
            if (r.type == Halide::Int(32)) value = binary('%', value, constant(r.type, 10007));
            if (r.type == Halide::Int(64)) value = binary('%', value, constant(r.type, 1000000007));
        }
        return value;
    }

    Code definition(const Recurrence &r) const {
        Code value;
        if (r.copy) {
            const Term &chain = r.terms[0];
            if (!r.root_split) {
                Code root = expression(r, 1, r.terms.size());
                value = term(chain, r.type, &root, &r.copy_only);
            } else {
                Code first = expression(r, 1, r.root_split), second = expression(r, r.root_split, r.terms.size());
                Code where = condition(r.nested, false);
                if (r.nested_outside) {
                    Code inner = term(chain, r.type, &first, &r.copy_only);
                    value = {Halide::select(where.e, inner.e, second.e), "select(" + where.s + ", " + inner.s + ", " + second.s + ")"};
                } else {
                    Code root{Halide::select(where.e, first.e, second.e), "select(" + where.s + ", " + first.s + ", " + second.s + ")"};
                    value = term(chain, r.type, &root, &r.copy_only);
                }
            }
        } else {
            value = expression(r, 0, r.terms.size());
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

int64_t dot(const std::vector<int64_t> &a, const std::vector<int64_t> &b) {
    int64_t sum = 0;
    for (size_t c = 0; c < a.size(); c++) sum += a[c] * b[c];
    return sum;
}

/// A distance the system's planned time row (System::planned_time) gives no
/// steps (`same_step`, a copy chain's) or at least one, if a few draws find one.
std::vector<int64_t> draw_planned_distance(std::mt19937 &rng, const System &s, const std::vector<int> &direction, bool same_step) {
    std::vector<int64_t> d;
    for (int tries = 0; tries < 40; tries++) {
        d = draw_distance(rng, direction);
        if (s.planned_time.empty() || (same_step ? dot(s.planned_time, d) == 0 : dot(s.planned_time, d) >= 1)) break;
    }
    return d;
}

Term draw_recurrence_read(std::mt19937 &rng, const System &s, int reader, const std::vector<int> &direction) {
    Term t;
    t.kind = Term::RecurrenceRead;
    t.target = (int)uniform(rng, 0, (int64_t)s.recurrences.size() - 1);
    if (t.target < reader && chance(rng, 0.25)) t.distance.assign(s.loops(), 0);  // an earlier URE, same point
    else t.distance = draw_planned_distance(rng, s, direction, false);
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

const Halide::Type drawn_types[] = {Halide::Int(32), Halide::Float(32), Halide::UInt(8), Halide::Int(16), Halide::UInt(32), Halide::Int(64)};

/// Sometimes a modifier on `t` in a definition of type `type`.
void draw_modifier(std::mt19937 &rng, Term &t, const Halide::Type &type) {
    if (!chance(rng, 0.15)) return;
    // Halide's division and modulo round down, for negative divisors too.
    t.modifier = "/%mMas"[uniform(rng, 0, 5)];
    do t.operand = uniform(rng, -4, 5);
    while (t.operand == 0 || ((t.modifier == '/' || t.modifier == '%') && (t.operand == 1 || (type.is_uint() && t.operand < 0))));
    // Float % is refused by the code generators; the kernel executor's float % is not the interpreter's.
    if (t.modifier == '%' && type.is_float()) t.modifier = '/';
    // Saturating + and - are integer operations (a float is refused).
    if ((t.modifier == 'a' || t.modifier == 's') && type.is_float()) t.modifier = 'M';
}

/// An operator before `t`: a product only by a bounded operand, so that integers stay small.
char draw_op(std::mt19937 &rng, const Term &t) {
    char op = "+-*"[uniform(rng, 0, 2)];
    if (op == '*' && t.kind == Term::RecurrenceRead) op = '+';
    return op;
}

/// The definition `t0 op t1 ...` of recurrence r, as before the shapes.
void draw_computed(std::mt19937 &rng, System &s, size_t r, const std::vector<int> &direction) {
    Recurrence &rec = s.recurrences[r];
    const int64_t terms = uniform(rng, 1, 4);
    for (int64_t n = 0; n < terms; n++) {
        const double u = std::uniform_real_distribution<double>(0, 1)(rng);
        Term t = u < 0.5 ? draw_recurrence_read(rng, s, (int)r, direction)
                         : u < 0.85 ? draw_input_read(rng, s) : draw_constant(rng);
        draw_modifier(rng, t, rec.type);
        if (n > 0) rec.ops.push_back(draw_op(rng, t));
        rec.terms.push_back(t);
    }
}

Condition draw_condition(std::mt19937 &rng, const System &s) {
    Condition c;
    c.loop = (int)uniform(rng, 0, (int64_t)s.loops() - 1);
    c.kind = "<>=%"[uniform(rng, 0, 3)];
    c.value = c.kind == '%' ? uniform(rng, 0, 1) : s.mins[c.loop] + uniform(rng, 0, s.extents[c.loop] - 1);
    return c;
}

/// How a chain's root is drawn.
enum class RootStyle {
    Computed,   ///< reads of earlier recurrences at the same point, inputs, constants (class a)
    Broadcast,  ///< inputs indexed along the planned time row or not along the chain, and constants (class c)
    Plain,      ///< inputs and constants
};

/// Appends a root of `style` to the copy r whose chain moves by `distance`.
void draw_root(std::mt19937 &rng, System &s, size_t r, RootStyle style, const std::vector<int64_t> &distance,
               const std::vector<int> &direction) {
    Recurrence &rec = s.recurrences[r];
    std::vector<int> earlier_chains, earlier_computed;
    for (size_t q = 0; q < r; q++) (s.recurrences[q].copy ? earlier_chains : earlier_computed).push_back((int)q);
    auto pick = [&](const std::vector<int> &from) { return from[uniform(rng, 0, (int64_t)from.size() - 1)]; };
    auto same_point = [&]() {
        Term t;
        t.kind = Term::RecurrenceRead;
        // Mostly a computed recurrence (a chain's value is the same all along
        // the chain, so a root reading one rarely differs between its PEs);
        // sometimes a chain, read by another chain's root (class b).
        const double v = std::uniform_real_distribution<double>(0, 1)(rng);
        t.target = !earlier_computed.empty() && (v < 0.5 || earlier_chains.empty()) ? pick(earlier_computed)
                   : !earlier_chains.empty()                                           ? pick(earlier_chains)
                                                                                       : (int)uniform(rng, 0, (int64_t)r - 1);
        t.distance.assign(s.loops(), 0);
        t.value = uniform(rng, 1, 9);
        t.negated_guard = chance(rng, 0.4);
        return t;
    };
    auto unindexed_input = [&]() {
        // Not along the chain: the same value wherever the chain copies it.
        Term t = draw_input_read(rng, s);
        for (auto &row : t.index)
            for (size_t l = 0; l < s.loops(); l++)
                if (distance[l] != 0) row[l] = 0;
        return t;
    };
    auto time_input = [&]() {
        // Indexed along the planned time row only: under it, the same on
        // every PE of a step.
        Term t = draw_input_read(rng, s);
        int64_t g = 0;
        for (int64_t v : s.planned_time) g = std::gcd(g, std::abs(v));
        for (auto &row : t.index) {
            const int64_t k = g ? uniform(rng, -1, 1) : 0;
            for (size_t l = 0; l < s.loops(); l++) row[l] = k * s.planned_time[l] / g;
        }
        return t;
    };
    const int64_t count = style == RootStyle::Computed ? uniform(rng, 1, 3) : uniform(rng, 1, 2) + (style == RootStyle::Broadcast);
    for (int64_t n = 0; n < count; n++) {
        Term t;
        const double u = std::uniform_real_distribution<double>(0, 1)(rng);
        if (style == RootStyle::Computed) {
            // Mostly terms that name no PE (same-point reads, inputs not
            // along the chain, constants): a root that looks the same on
            // every PE and is not, as its reads differ between PEs.
            if (n == 0 || u < 0.45) t = same_point();
            else if (u < 0.7) t = time_input();
            else if (u < 0.75) t = unindexed_input();
            else if (u < 0.8) t = draw_input_read(rng, s);
            else if (u < 0.85) t = draw_recurrence_read(rng, s, (int)r, direction);
            else t = draw_constant(rng);
        } else if (style == RootStyle::Broadcast) {
            t = n == 0 || u < 0.3 ? (chance(rng, 0.6) ? time_input() : unindexed_input()) : draw_constant(rng);
        } else {
            t = u < 0.7 ? draw_input_read(rng, s) : draw_constant(rng);
        }
        draw_modifier(rng, t, rec.type);
        // The op before a root's first term joins nothing.
        rec.ops.push_back(n == 0 ? '+' : draw_op(rng, t));
        rec.terms.push_back(t);
    }
}

/// A copy chain `select(guard, V(x - d), root)` as recurrence r, with the
/// shapes of ShapeClass.
void draw_chain(std::mt19937 &rng, System &s, size_t r, const std::vector<int> &direction) {
    Recurrence &rec = s.recurrences[r];
    rec.copy = true;
    Term read;
    read.kind = Term::RecurrenceRead;
    read.target = (int)r;
    std::vector<int> chains;
    for (size_t q = 0; q < s.recurrences.size(); q++)
        if (q != r && s.recurrences[q].copy) chains.push_back((int)q);
    // Sometimes a copy of another chain along the PEs (class b).
    if (!chains.empty() && chance(rng, 0.15)) read.target = chains[uniform(rng, 0, (int64_t)chains.size() - 1)];
    // Only a copy of itself may take no steps.
    read.distance = draw_planned_distance(rng, s, direction, read.target == (int)r && chance(rng, 0.8));
    read.value = uniform(rng, 1, 9);
    read.negated_guard = chance(rng, 0.4);
    rec.terms.push_back(read);
    auto style = [&]() {
        const double u = std::uniform_real_distribution<double>(0, 1)(rng);
        if (r > 0 && u < 0.45) return RootStyle::Computed;
        if (read.target == (int)r && u < 0.8) return RootStyle::Broadcast;
        return RootStyle::Plain;
    };
    draw_root(rng, s, r, style(), read.distance, direction);
    if (chance(rng, 0.3)) {
        // A root under a nested select (class d).
        rec.root_split = rec.terms.size();
        draw_root(rng, s, r, style(), read.distance, direction);
        rec.nested = draw_condition(rng, s);
        rec.nested_outside = chance(rng, 0.3);
    }
    // Copies only on part of the chain's way (odd points, past a bound): a guarded chain.
    if (chance(rng, 0.3)) rec.copy_only = draw_condition(rng, s);
}

/// Calls `f(point)` for every point of the system's box.
template<typename F>
void for_each_box_point(const System &s, F f) {
    std::vector<int64_t> x(s.mins);
    for (;;) {
        f(x);
        size_t l = 0;
        for (; l < s.loops(); l++) {
            if (x[l] < max_of(s, l)) {
                x[l]++;
                break;
            }
            x[l] = s.mins[l];
        }
        if (l == s.loops()) return;
    }
}

/// One or two constraints `a . x <= c` (System::constraints), each leaving
/// out some point of the domain so far and keeping every element an output
/// writes; an output that keeps every loop first drops one (written at its
/// last iteration), as a domain smaller than the box cannot write it all.
void draw_constraints(std::mt19937 &rng, System &s) {
    const size_t loops = s.loops();
    for (Output &out : s.outputs) {
        if (std::any_of(out.kept.begin(), out.kept.end(), [](bool k) { return !k; })) continue;
        const size_t l = (size_t)uniform(rng, 0, (int64_t)loops - 1);
        out.kept[l] = false;
        out.at.insert(out.at.begin(), max_of(s, l));  // the only dropped loop
    }
    // The points the outputs write from: they stay in the domain.
    auto written = [&](const std::vector<int64_t> &x) {
        for (const Output &out : s.outputs) {
            bool all = true;
            for (size_t l = 0, at = 0; l < loops; l++) {
                if (out.kept[l]) continue;
                all &= x[l] == out.at[at++];
            }
            if (all) return true;
        }
        return false;
    };
    const int64_t count = chance(rng, 0.3) ? 2 : 1;
    for (int64_t n = 0; n < count; n++) {
        for (int tries = 0; tries < 20; tries++) {
            Constraint c;
            c.coefficient.assign(loops, 0);
            // `x <= y + k` (a difference of two loops), or small coefficients.
            if (chance(rng, 0.5)) {
                const size_t a = (size_t)uniform(rng, 0, (int64_t)loops - 1);
                size_t b = (size_t)uniform(rng, 0, (int64_t)loops - 2);
                if (b >= a) b++;
                c.coefficient[a] = 1;
                c.coefficient[b] = -1;
            } else {
                for (int64_t &v : c.coefficient) v = chance(rng, 0.7) ? uniform(rng, -2, 2) : 0;
            }
            if (std::all_of(c.coefficient.begin(), c.coefficient.end(), [](int64_t v) { return v == 0; })) continue;
            // c at least the most the written points need, less than the most the domain reaches.
            int64_t need = std::numeric_limits<int64_t>::min(), most = std::numeric_limits<int64_t>::min();
            for_each_box_point(s, [&](const std::vector<int64_t> &x) {
                if (!in_domain(s, x)) return;
                const int64_t v = dot(c.coefficient, x);
                most = std::max(most, v);
                if (written(x)) need = std::max(need, v);
            });
            if (need == std::numeric_limits<int64_t>::min() || need > most - 1) continue;
            c.bound = uniform(rng, need, most - 1);
            s.constraints.push_back(c);
            break;
        }
    }
}

}  // namespace

bool in_domain(const System &system, const std::vector<int64_t> &point) {
    for (size_t l = 0; l < system.loops(); l++) {
        if (point[l] < system.mins[l] || point[l] > max_of(system, l)) return false;
    }
    for (const Constraint &c : system.constraints) {
        if (dot(c.coefficient, point) > c.bound) return false;
    }
    return true;
}

int64_t domain_points(const System &system) {
    int64_t n = 0;
    for_each_box_point(system, [&](const std::vector<int64_t> &x) { n += in_domain(system, x); });
    return n;
}

int64_t box_points(const System &system) {
    int64_t n = 1;
    for (int64_t e : system.extents) n *= e;
    return n;
}

System draw_system(std::mt19937 &rng) {
    // Whether the system is drawn with the shapes, from a generator of its own
    // (rng is left where it is): the others draw as they did before them.
    std::mt19937 peek = rng;
    std::mt19937 side(peek() ^ 0x9e3779b9u);
    // The affine domain's draws, from one more generator of their own.
    std::mt19937 domain(peek() ^ 0x85ebca6bu);
    System s;
    s.shaped = chance(side, 0.4);
    // Shaped: 2 or 3 loops (on one loop a same-step chain leaves no step to the rest).
    const size_t loops = (size_t)uniform(rng, s.shaped ? 2 : 1, 3);
    const int weights[] = {33, 33, 8, 9, 9, 8};
    s.type = drawn_types[std::discrete_distribution<int>(std::begin(weights), std::end(weights))(rng)];
    // Shaped systems, with more recurrences, keep smaller domains (the run's time).
    const int64_t largest = loops == 1 ? 9 : loops == 2 ? 6 - s.shaped : 4 - s.shaped;
    for (size_t l = 0; l < loops; l++) {
        s.mins.push_back(chance(rng, 0.2) ? uniform(rng, -2, 3) : 0);
        s.extents.push_back(chance(rng, 0.15) ? 1 : uniform(rng, 2, largest));
    }
    // Sometimes an array wider than a warp (several PEs per lane on a GPU, or
    // several warps with gpu_threads).
    if (loops <= 2 && chance(rng, s.shaped ? 0.12 : 0.08)) {
        s.extents.assign(loops, 2);
        s.extents[uniform(rng, 0, (int64_t)loops - 1)] = uniform(rng, 33, 48);
    }
    s.input_dims.push_back((int)uniform(rng, 1, 2));
    if (chance(rng, 0.5)) s.input_dims.push_back((int)uniform(rng, 1, 2));
    std::vector<int> direction;
    for (size_t l = 0; l < loops; l++) direction.push_back(chance(rng, 0.7) ? 1 : -1);
    if (s.shaped) {
        // A time row the dependences are drawn for: its chains same-step, the others later.
        while (std::all_of(s.planned_time.begin(), s.planned_time.end(), [](int64_t v) { return v == 0; })) {
            s.planned_time.assign(loops, 0);
            for (int64_t &v : s.planned_time) v = uniform(rng, -2, 2);
        }
    }

    s.recurrences.resize((size_t)(s.shaped ? uniform(rng, 3, 5) : uniform(rng, 1, 4)));
    s.input_types.assign(s.input_dims.size(), s.type);
    for (Recurrence &rec : s.recurrences) rec.type = s.type;
    if (s.shaped && chance(rng, 0.35)) {
        // Mixed element types (class f): reads of another type are cast.
        for (Recurrence &rec : s.recurrences)
            if (chance(rng, 0.5)) rec.type = drawn_types[uniform(rng, 0, 5)];
        for (Halide::Type &t : s.input_types)
            if (chance(rng, 0.5)) t = drawn_types[uniform(rng, 0, 5)];
    }
    for (size_t r = 0; r < s.recurrences.size(); r++) {
        Recurrence &rec = s.recurrences[r];
        // The last recurrence of a shaped system is computed: a sink that reads
        // every other one, so that every chain reaches the output.
        // The first is computed too: a producer whose values differ between
        // PEs, for the chains' roots to read.
        const bool sink = s.shaped && r + 1 == s.recurrences.size();
        const double u = s.shaped && !sink && r > 0 ? std::uniform_real_distribution<double>(0, 1)(rng) : 1;
        if (u < 0.5) {
            draw_chain(rng, s, r, direction);
            continue;
        }
        if (s.shaped ? u < 0.6 : chance(rng, 0.3)) {
            // A copy chain (or a broadcast, depending on the transform).
            rec.copy = true;
            rec.terms.push_back(draw_recurrence_read(rng, s, (int)r, direction));
            rec.terms.push_back(chance(rng, 0.7) ? draw_input_read(rng, s) : draw_constant(rng));
            rec.ops.push_back('+');  // joins nothing: the root's first term
            continue;
        }
        draw_computed(rng, s, r, direction);
        for (size_t q = 0; sink && q < r; q++) {
            // A read elsewhere may never be taken (a guard no point meets):
            // the sink reads every recurrence at the same point.
            bool read = false;
            for (const Term &t : rec.terms) read |= t.kind == Term::RecurrenceRead && t.target == (int)q && t.distance == std::vector<int64_t>(loops, 0);
            if (read) continue;
            Term t;
            t.kind = Term::RecurrenceRead;
            t.target = (int)q;
            t.distance.assign(loops, 0);
            t.value = uniform(rng, 1, 9);
            rec.ops.push_back("+-"[uniform(rng, 0, 1)]);
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
    // A reduction output (a quarter of the systems), from a generator of its
    // own: the rest draw as they did before it.
    std::mt19937 fold(peek() ^ 0xc2b2ae35u);
    if (chance(fold, 0.25)) {
        const Halide::Type t = s.recurrences[s.outputs[0].recurrence].type;
        std::vector<ir::ReduceOp> ops;
        for (ir::ReduceOp op : {ir::ReduceOp::Add, ir::ReduceOp::Mul, ir::ReduceOp::Min, ir::ReduceOp::Max, ir::ReduceOp::And,
                                ir::ReduceOp::Or}) {
            if (ir::reduce_refusal(op, t).empty()) ops.push_back(op);
        }
        Output &out = s.outputs[0];
        out.reduce = (int)ops[uniform(fold, 0, (int64_t)ops.size() - 1)];
        // One loop kept: most often one no recurrence reads along (so a
        // transform may leave it out of the array, where the GPU mapping
        // lowers the reduction), else the outermost or any.
        if (loops >= 2) {
            std::vector<size_t> free_loops;
            for (size_t l = 0; l < loops; l++) {
                bool read_along = false;
                for (const Recurrence &rec : s.recurrences)
                    for (const Term &t : rec.terms) read_along |= t.kind == Term::RecurrenceRead && t.distance[l] != 0;
                if (!read_along) free_loops.push_back(l);
            }
            const size_t keep = !free_loops.empty() && chance(fold, 0.8) ? free_loops[uniform(fold, 0, (int64_t)free_loops.size() - 1)]
                                : chance(fold, 0.7)                        ? loops - 1
                                                                           : (size_t)uniform(fold, 0, (int64_t)loops - 1);
            out.kept.assign(loops, false);
            out.kept[keep] = true;
            out.at.clear();
            for (size_t l = 0; l < loops; l++)
                if (l != keep) out.at.push_back(chance(fold, 0.7) ? max_of(s, l) : s.mins[l] + uniform(fold, 0, s.extents[l] - 1));
        }
    }
    // A table read at input values (a fifth of the systems), from a generator of its own;
    // a third of them large (a copy to shared memory takes many passes of a block's threads).
    std::mt19937 lookup(peek() ^ 0x27d4eb2fu);
    if (chance(lookup, 0.2)) {
        s.table_extent = chance(lookup, 0.35) ? uniform(lookup, 1000, 9000) : uniform(lookup, 1, 9);
        for (Recurrence &rec : s.recurrences)
            for (Term &t : rec.terms)
                if (t.kind == Term::InputRead && chance(lookup, 0.5)) t.via_table = true;
    }
    // An affine domain (a third of the systems).
    if (loops >= 2 && chance(domain, 0.45)) draw_constraints(domain, s);
    // Extreme input values (class g).
    if (s.shaped && chance(rng, 0.3)) s.extremes = (int)uniform(rng, 5, 30);
    if (chance(rng, 0.12)) inject_defect(rng, s);
    return s;
}

bool uses_table(const System &system) {
    if (system.table_extent <= 0) return false;
    for (const Recurrence &rec : system.recurrences)
        for (const Term &t : rec.terms)
            if (t.kind == Term::InputRead && t.via_table) return true;
    return false;
}

bool uses_saturating(const System &system) {
    for (const Recurrence &rec : system.recurrences)
        for (const Term &t : rec.terms)
            if (t.modifier == 'a' || t.modifier == 's') return true;
    return false;
}

int ragged_loop_for(const System &system, const Transform &transform) {
    if (transform.source.size() >= system.loops()) return -1;  // no loop outside the array to read the bound at
    for (const Output &o : system.outputs) {
        if (o.reduce < 0) continue;  // written point by point, up to the bound
        for (size_t l = 0; l < system.loops(); l++) {
            if (o.kept[l] && std::count(transform.source.begin(), transform.source.end(), (int)l)) return -1;
        }
    }
    for (size_t c = 0; c < transform.source.size(); c++) {
        bool time_only = transform.matrix.back()[c] > 0;
        for (size_t r = 0; r + 1 < transform.matrix.size(); r++) time_only &= transform.matrix[r][c] == 0;
        if (time_only) return transform.source[c];
    }
    return -1;
}

bool reads_above(const System &system, int loop) {
    for (const Recurrence &r : system.recurrences) {
        for (const Term &t : r.terms) {
            if (t.kind == Term::RecurrenceRead && t.distance[loop] < 0) return true;
        }
    }
    return false;
}

void leave_out_kept_loop(const System &system, Transform &transform) {
    const Output &out = system.outputs[0];
    if (std::count(out.kept.begin(), out.kept.end(), true) != 1) return;
    const int l = (int)(std::find(out.kept.begin(), out.kept.end(), true) - out.kept.begin());
    if (std::any_of(system.constraints.begin(), system.constraints.end(), [&](const Constraint &c) { return c.uses((size_t)l); })) return;
    auto it = std::find(transform.source.begin(), transform.source.end(), l);
    if (it == transform.source.end() || transform.source.size() == 1) return;
    const size_t column = it - transform.source.begin();
    transform.source.erase(it);
    for (auto &row : transform.matrix) row.erase(row.begin() + column);
}

Transform draw_transform(std::mt19937 &rng, const System &system, int space_rows) {
    Transform t;
    for (size_t l = 0; l < system.loops(); l++) t.source.push_back((int)l);
    if (system.loops() >= 2 && chance(rng, 0.15)) {
        const int64_t l = uniform(rng, 0, (int64_t)system.loops() - 1);
        // A loop a domain constraint uses stays in the array.
        if (std::none_of(system.constraints.begin(), system.constraints.end(), [&](const Constraint &c) { return c.uses((size_t)l); }))
            t.source.erase(t.source.begin() + l);
    }
    t.matrix.assign((size_t)space_rows + 1, std::vector<int64_t>(t.source.size()));
    for (auto &row : t.matrix)
        for (auto &v : row) v = uniform(rng, -2, 2);
    if (!system.shaped) return t;
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    if (u < 0.45) {
        // The planned time row, and a space row that moves a same-step chain.
        std::vector<int64_t> &time = t.matrix.back();
        for (size_t c = 0; c < t.source.size(); c++) time[c] = system.planned_time[t.source[c]];
        std::vector<std::vector<int64_t>> same_step;
        for (size_t r = 0; r < system.recurrences.size(); r++) {
            const Recurrence &rec = system.recurrences[r];
            if (!rec.copy || rec.terms[0].target != (int)r || dot(system.planned_time, rec.terms[0].distance) != 0) continue;
            std::vector<int64_t> d;
            for (int l : t.source) d.push_back(rec.terms[0].distance[l]);
            same_step.push_back(d);
        }
        if (same_step.empty()) return t;
        const std::vector<int64_t> d = same_step[uniform(rng, 0, (int64_t)same_step.size() - 1)];
        for (int tries = 0; tries < 10 && dot(t.matrix[0], d) == 0; tries++)
            for (int64_t &v : t.matrix[0]) v = uniform(rng, -2, 2);
        return t;
    }
    if (u > 0.75) return t;
    // A time row orthogonal to a chain's distance makes it a same-step chain
    // (the shapes' bugs were there), when the space row moves it; of those,
    // one that gives the most other dependences a positive delay, so that
    // the validator accepts it.
    auto on_source = [&](const std::vector<int64_t> &distance, std::vector<int64_t> &d) {
        d.clear();
        for (size_t l = 0; l < system.loops(); l++) {
            const bool in_source = std::find(t.source.begin(), t.source.end(), (int)l) != t.source.end();
            if (!in_source && distance[l] != 0) return false;  // crosses array instances
            if (in_source) d.push_back(distance[l]);
        }
        return std::any_of(d.begin(), d.end(), [](int64_t v) { return v != 0; });
    };
    // Copies of themselves may take zero steps, other dependences need one.
    std::vector<std::vector<int64_t>> chains, others, other_chains;
    std::vector<int> weights;
    for (size_t r = 0; r < system.recurrences.size(); r++) {
        const Recurrence &rec = system.recurrences[r];
        for (size_t n = 0; n < rec.terms.size(); n++) {
            const Term &term = rec.terms[n];
            std::vector<int64_t> d;
            if (term.kind != Term::RecurrenceRead || !on_source(term.distance, d)) continue;
            if (!(rec.copy && n == 0 && term.target == (int)r)) {
                others.push_back(d);
                continue;
            }
            chains.push_back(d);
            // Mostly a chain whose root reads another recurrence (classes a, b).
            bool computed_root = false;
            for (size_t m = 1; m < rec.terms.size(); m++) computed_root |= rec.terms[m].kind == Term::RecurrenceRead;
            weights.push_back(computed_root ? 4 : 1);
        }
    }
    if (chains.empty()) return t;
    const size_t chosen = (size_t)std::discrete_distribution<int>(weights.begin(), weights.end())(rng);
    const std::vector<int64_t> d = chains[chosen];
    for (size_t c = 0; c < chains.size(); c++)
        if (c != chosen) other_chains.push_back(chains[c]);
    std::vector<std::vector<int64_t>> best;
    int64_t best_score = -1;
    std::vector<int64_t> time(d.size(), -2);
    for (bool more = true; more;) {
        if (dot(time, d) == 0 && (d.size() == 1 || std::any_of(time.begin(), time.end(), [](int64_t v) { return v != 0; }))) {
            int64_t score = 0;
            for (const auto &o : others) score += dot(time, o) >= 1;
            for (const auto &o : other_chains) score += dot(time, o) >= 0;
            if (score > best_score) best.clear(), best_score = score;
            if (score == best_score) best.push_back(time);
        }
        more = false;
        for (int64_t &v : time) {
            if (v < 2) {
                v++;
                more = true;
                break;
            }
            v = -2;
        }
    }
    // Where no such row gives every dependence its steps the validator
    // likely refuses it: mostly keep the transform drawn.
    if (best_score < (int64_t)(others.size() + other_chains.size()) && chance(rng, 0.7)) return t;
    if (best.empty()) return t;
    t.matrix.back() = best[uniform(rng, 0, (int64_t)best.size() - 1)];
    // A space row that moves the chain.
    for (int tries = 0; tries < 10 && dot(t.matrix[0], d) == 0; tries++)
        for (int64_t &v : t.matrix[0]) v = uniform(rng, -2, 2);
    return t;
}

namespace {

/// `Out(j) = select(i == 3, A(i, j))`, as expression and text, with its Func's arguments.
struct OutputCode {
    std::vector<Expr> args;
    std::string args_text;
    Code value;
    Halide::Type type;
    /// A reduction's initial value (3, or true).
    Code initial() const {
        if (type.is_bool()) return {Halide::Internal::const_true(), "true"};
        return {Halide::Internal::make_const(type, 3), "cast(" + type_text(type) + ", 3)"};
    }
};

/// `Out(args) = op(Out(args), value)` as text.
std::string reduction_text(const std::string &name, const OutputCode &oc, ir::ReduceOp op) {
    const std::string self = name + "(" + oc.args_text + ")";
    switch (op) {
    case ir::ReduceOp::Min: return "min(" + self + ", " + oc.value.s + ")";
    case ir::ReduceOp::Max: return "max(" + self + ", " + oc.value.s + ")";
    default: return self + " " + ir::to_string(op) + " " + oc.value.s;
    }
}

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
        Code c = comparison(at == 0 && out.at_or_above ? ">=" : out.reduce >= 0 ? "<=" : "==", Code{Expr(b.vars[l]), b.vars[l].name()}, out.at[at]);
        condition = condition.e.defined() ? binary('&', condition, c) : c;
        at++;
    }
    oc.args_text = b.args_text(kept);
    oc.type = s.recurrences[out.recurrence].type;
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
        if (system.outputs[o].reduce >= 0) {
            outs.back()(oc.args) = oc.initial().e;
            outs.back()(oc.args) = ir::reduce_combine((ir::ReduceOp)system.outputs[o].reduce, outs.back()(oc.args), oc.value.e);
        } else {
            outs.back()(oc.args) = oc.value.e;
        }
        merged.push_back(outs.back());
    }
    b.recs[0].merge_ures(merged);
    for (size_t l = 0; l < system.loops(); l++) b.recs[0].set_bounds(b.vars[l], system.mins[l], system.extents[l]);
    for (const Constraint &c : system.constraints) b.recs[0].where(b.constraint(c.coefficient, c.bound, false).e);
    if (system.ragged_loop >= 0) b.recs[0].where(b.data_bound().e);
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
        out << "Input " << input_names[n] << "(" << type_text(system.input_types[n]) << ", " << system.input_dims[n] << ", \""
            << input_names[n] << "\");\n";
    }
    if (system.table_extent > 0) out << "Input tab(" << type_text(system.type) << ", {" << system.table_extent << "}, \"tab\");\n";
    if (system.ragged_loop >= 0) out << "Input len(Int(32), " << system.ragged_by.size() << ", \"len\");\n";
    for (size_t r = 0; r < system.recurrences.size(); r++) {
        out << "Func " << recurrence_names[r] << "(" << type_text(system.recurrences[r].type) << ", {" << b.args_text(vars)
            << "}, Place::Device, \"" << recurrence_names[r] << "\");\n";
    }
    for (size_t o = 0; o < system.outputs.size(); o++) out << "Func " << output_name(o) << "(Place::Device, \"" << output_name(o) << "\");\n";
    for (size_t r = 0; r < system.recurrences.size(); r++) {
        out << recurrence_names[r] << "(" << b.args_text(vars) << ") = " << b.definition(system.recurrences[r]).s << ";\n";
    }
    for (size_t o = 0; o < system.outputs.size(); o++) {
        OutputCode oc = output_code(b, system.outputs[o]);
        if (system.outputs[o].reduce >= 0) {
            out << output_name(o) << "(" << oc.args_text << ") = " << oc.initial().s << ";\n";
            out << output_name(o) << "(" << oc.args_text << ") = " << reduction_text(output_name(o), oc, (ir::ReduceOp)system.outputs[o].reduce) << ";\n";
            continue;
        }
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
    for (const Constraint &c : system.constraints) out << "A.where(" << b.constraint(c.coefficient, c.bound, false).s << ");\n";
    if (system.ragged_loop >= 0) out << "A.where(" << b.data_bound().s << ");\n";
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
    if (uses_table(system)) inputs.push_back("tab");
    out << "return Spec{Out, {" << b.args_text(inputs) << "}};\n";
    if (system.extremes) {
        out << "// run on inputs with " << system.extremes
            << "% of the elements extreme (NaN, +-inf, -0.0, huge; an integer type's ends): the seed draws them\n";
    }
    return out.str();
}

namespace {

/// `r` with one root only: the first (`first`) or the second of its nested select.
void keep_one_root(Recurrence &r, bool first) {
    if (!r.root_split) return;
    if (first) {
        r.terms.erase(r.terms.begin() + r.root_split, r.terms.end());
        r.ops.erase(r.ops.begin() + (r.root_split - 1), r.ops.end());
    } else {
        r.terms.erase(r.terms.begin() + 1, r.terms.begin() + r.root_split);
        r.ops.erase(r.ops.begin(), r.ops.begin() + (r.root_split - 1));
    }
    r.root_split = 0;
    r.nested = Condition{};
    r.nested_outside = false;
}

/// `r` without term n (not the only term of its expression).
void erase_term(Recurrence &r, size_t n) {
    // The op before the first term of an expression joins nothing: keep it, drop the next one.
    const bool first = n == 0 || (r.copy && (n == 1 || n == r.root_split));
    r.ops.erase(r.ops.begin() + (first ? n : n - 1));
    r.terms.erase(r.terms.begin() + n);
    if (r.copy && r.root_split > n) r.root_split--;
}

/// The system without loop `l` (nothing of a loop of extent 1 is lost but the loop).
bool drop_loop(System &s, Transform &t, size_t l) {
    if (s.loops() <= 1) return false;
    s.mins.erase(s.mins.begin() + l);
    s.extents.erase(s.extents.begin() + l);
    if (!s.planned_time.empty()) s.planned_time.erase(s.planned_time.begin() + l);
    for (Recurrence &r : s.recurrences) {
        for (Term &term : r.terms) {
            if (!term.distance.empty()) term.distance.erase(term.distance.begin() + l);
            for (auto &row : term.index) row.erase(row.begin() + l);
        }
        if (r.partial_loop == (int)l) r.partial_loop = -1;
        else if (r.partial_loop > (int)l) r.partial_loop--;
        if (r.nested.loop == (int)l) keep_one_root(r, true);
        else if (r.nested.loop > (int)l) r.nested.loop--;
        if (r.copy_only.loop == (int)l) r.copy_only = Condition{};
        else if (r.copy_only.loop > (int)l) r.copy_only.loop--;
    }
    // A constraint on the loop goes with it.
    s.constraints.erase(std::remove_if(s.constraints.begin(), s.constraints.end(), [&](const Constraint &c) { return c.uses(l); }),
                        s.constraints.end());
    for (Constraint &c : s.constraints) c.coefficient.erase(c.coefficient.begin() + l);
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
            // A copy of the dropped recurrence computes its root(s) instead.
            rec.copy = false;
            rec.terms.erase(rec.terms.begin());
            rec.ops.erase(rec.ops.begin());
            rec.root_split = 0;
            rec.nested = rec.copy_only = Condition{};
            rec.nested_outside = false;
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
    for (size_t c = 0; c < system.constraints.size(); c++) {
        System s = system;
        s.constraints.erase(s.constraints.begin() + c);
        add(s, transform);
    }
    for (size_t l = 0; l < system.loops(); l++) {
        System s = system;
        Transform t = transform;
        if (drop_loop(s, t, l)) add(s, t);
    }
    for (size_t r = 0; r < system.recurrences.size(); r++) {
        const Recurrence &rec = system.recurrences[r];
        if (rec.root_split) {
            for (bool first : {true, false}) {
                System s = system;
                keep_one_root(s.recurrences[r], first);
                add(s, transform);
            }
        }
        for (size_t n = 0; n < rec.terms.size(); n++) {
            // A term of an expression of two or more (a copy's read stays).
            const size_t from = !rec.copy ? 0 : n < 1 ? n : rec.root_split && n >= rec.root_split ? rec.root_split : 1;
            const size_t to = !rec.copy ? rec.terms.size() : rec.root_split && n < rec.root_split ? rec.root_split : rec.terms.size();
            if ((rec.copy && n == 0) || to - from < 2) continue;
            System s = system;
            erase_term(s.recurrences[r], n);
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
            if (t.negated_guard) {
                System s = system;
                s.recurrences[r].terms[n].negated_guard = false;
                add(s, transform);
            }
        }
        if (rec.nested_outside) {
            System s = system;
            s.recurrences[r].nested_outside = false;
            add(s, transform);
        }
        if (rec.copy_only.present()) {
            System s = system;
            s.recurrences[r].copy_only = Condition{};
            add(s, transform);
        }
        if (rec.partial_loop >= 0) {
            System s = system;
            s.recurrences[r].partial_loop = -1;
            add(s, transform);
        }
        if (rec.type != system.type) {
            System s = system;
            s.recurrences[r].type = system.type;
            add(s, transform);
        }
    }
    for (size_t n = 0; n < system.input_types.size(); n++) {
        if (system.input_types[n] == system.type) continue;
        System s = system;
        s.input_types[n] = system.type;
        add(s, transform);
    }
    if (system.extremes) {
        System s = system;
        s.extremes = 0;
        add(s, transform);
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
        // Every value of the system's type as int32.
        System s = system;
        s.type = Halide::Int(32);
        for (Recurrence &r : s.recurrences)
            if (r.type == system.type) r.type = s.type;
        for (Halide::Type &t : s.input_types)
            if (t == system.type) t = s.type;
        add(s, transform);
    }
    return out;
}

namespace {

/// Distance `d` of a read as (dp, dt) under a transform with one space row;
/// nothing if it crosses array instances (moves along a loop the transform leaves out).
std::optional<std::pair<int64_t, int64_t>> moves(const Transform &t, const std::vector<int64_t> &d) {
    int64_t dp = 0, dt = 0;
    for (size_t l = 0; l < d.size(); l++) {
        auto it = std::find(t.source.begin(), t.source.end(), (int)l);
        if (it == t.source.end()) {
            if (d[l] != 0) return std::nullopt;
            continue;
        }
        dp += t.matrix[0][it - t.source.begin()] * d[l];
        dt += t.matrix[1][it - t.source.begin()] * d[l];
    }
    return std::make_pair(dp, dt);
}

bool is_same_point(const Term &t) {
    return t.kind == Term::RecurrenceRead && std::all_of(t.distance.begin(), t.distance.end(), [](int64_t v) { return v == 0; });
}

/// A copy of itself whose root computes on constants and inputs at indices
/// its chain's distance does not change (with `computed`: two terms or more).
bool is_broadcast_shape(const System &s, size_t r, bool computed) {
    const Recurrence &rec = s.recurrences[r];
    if (!rec.copy || rec.terms[0].target != (int)r || rec.root_split) return false;
    bool input = false, arithmetic = rec.terms.size() > 2;
    for (size_t n = 1; n < rec.terms.size(); n++) {
        const Term &t = rec.terms[n];
        if (t.kind == Term::RecurrenceRead) return false;
        arithmetic |= t.modifier != 0;
        if (t.kind != Term::InputRead) continue;
        input = true;
        // The same all along the chain: an index the chain's distance does not change.
        for (const auto &row : t.index)
            if (dot(std::vector<int64_t>(row.begin(), row.end() - 1), rec.terms[0].distance) != 0) return false;
    }
    return !computed || (input && arithmetic);
}

/// The classes a..d copy r draws.
unsigned recurrence_classes(const System &s, size_t r) {
    const Recurrence &rec = s.recurrences[r];
    if (!rec.copy) return 0;
    unsigned c = 0;
    const Term &read = rec.terms[0];
    if (read.kind == Term::RecurrenceRead && read.target != (int)r && s.recurrences[read.target].copy) c |= 1u << ChainOfChains;
    for (size_t n = 1; n < rec.terms.size(); n++) {
        const Term &t = rec.terms[n];
        if (!is_same_point(t) || t.target == (int)r) continue;
        c |= 1u << ChainComputedRoot;
        if (s.recurrences[t.target].copy) c |= 1u << ChainOfChains;
    }
    if (is_broadcast_shape(s, r, true)) c |= 1u << ComputedBroadcast;
    if (rec.root_split) c |= 1u << NestedRoot;
    return c;
}

}  // namespace

const char *recurrence_name(size_t r) { return recurrence_names[r]; }

const char *shape_class_name(int c) {
    static const char *const names[] = {"a", "b", "c", "d", "e", "f", "g"};
    return c >= 0 && c < shape_class_count ? names[c] : "?";
}

unsigned shape_classes(const System &system) {
    unsigned c = 0;
    int copies = 0;
    for (size_t r = 0; r < system.recurrences.size(); r++) {
        copies += system.recurrences[r].copy;
        c |= recurrence_classes(system, r);
    }
    if (copies >= 2) c |= 1u << SeveralChains;
    bool mixed = false;
    for (const Recurrence &r : system.recurrences) mixed |= r.type != system.type;
    for (const Halide::Type &t : system.input_types) mixed |= t != system.type;
    if (mixed) c |= 1u << MixedTypes;
    if (system.extremes) c |= 1u << ExtremeInputs;
    return c;
}

unsigned same_step_classes(const System &system, const Transform &transform) {
    if (transform.matrix.size() != 2) return 0;
    unsigned c = 0;
    int chains = 0;
    for (size_t r = 0; r < system.recurrences.size(); r++) {
        const Recurrence &rec = system.recurrences[r];
        // Only a copy of itself may take zero steps (the validator's rule).
        if (!rec.copy || rec.terms[0].kind != Term::RecurrenceRead || rec.terms[0].target != (int)r) continue;
        auto m = moves(transform, rec.terms[0].distance);
        if (!m || m->first == 0 || m->second != 0) continue;
        chains++;
        c |= recurrence_classes(system, r);
    }
    if (chains >= 2) c |= 1u << SeveralChains;
    return c;
}

bool integer_reverse(const Transform &transform) {
    if (transform.matrix.size() != transform.source.size()) return false;
    if (transform.source.size() == 1) return std::abs(transform.matrix[0][0]) == 1;
    const auto &m = transform.matrix;
    return transform.source.size() == 2 && std::abs(m[0][0] * m[1][1] - m[0][1] * m[1][0]) == 1;
}

std::vector<int> broadcasts(const System &system, const Transform &transform) {
    std::vector<int> out;
    // A square transform only: the lowering sees a root as the same on every
    // PE when its reverse map names no PE, and a non-square one's reverse map
    // (quasi-affine) may name it in a root that only follows the time step.
    if (transform.matrix.size() != 2 || transform.source.size() > 2) return out;
    const std::vector<int64_t> &time = transform.matrix[1];
    for (size_t r = 0; r < system.recurrences.size(); r++) {
        if (!is_broadcast_shape(system, r, false)) continue;
        const Recurrence &rec = system.recurrences[r];
        auto m = moves(transform, rec.terms[0].distance);
        if (!m || m->first == 0 || m->second != 0) continue;
        // Each index a function of the time step: its coefficients over the
        // transform's loops a multiple of the time row.
        bool along_time = true;
        for (size_t n = 1; n < rec.terms.size(); n++) {
            for (const auto &row : rec.terms[n].index) {
                for (size_t a = 0; a < transform.source.size(); a++) {
                    for (size_t b = 0; b < transform.source.size(); b++) {
                        along_time &= row[transform.source[a]] * time[b] == row[transform.source[b]] * time[a];
                    }
                    if (std::all_of(time.begin(), time.end(), [](int64_t v) { return v == 0; })) along_time &= row[transform.source[a]] == 0;
                }
            }
        }
        if (along_time) out.push_back((int)r);
    }
    return out;
}

void plant_extremes(const System &system, Buffers &inputs, uint32_t seed) {
    if (!system.extremes) return;
    std::mt19937 rng(seed ^ 0x6a09e667u);
    for (auto &named : inputs) {
        Halide::Buffer<> &b = named.second;
        const Halide::Type t = b.type();
        std::vector<Scalar> values;
        if (t.is_float()) {
            for (double v : {(double)NAN, (double)INFINITY, -(double)INFINITY, -0.0, (double)FLT_MAX, -(double)FLT_MAX, 1e-40})
                values.push_back(t.bits() == 32 ? Scalar::of_float((float)v) : Scalar::of_double(v));
        } else if (t.is_uint()) {
            const uint64_t top = t.bits() == 64 ? ~uint64_t(0) : (uint64_t(1) << t.bits()) - 1;
            for (uint64_t v : {uint64_t(0), top, top - 1}) values.push_back(Scalar::of_uint(v));
        } else {
            const int64_t top = t.bits() == 64 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << (t.bits() - 1)) - 1;
            for (int64_t v : {-top - 1, -top, top, top - 1}) values.push_back(Scalar::of_int(v));
        }
        const int dims = b.dimensions();
        b.for_each_element([&](const int *pos) {
            if (uniform(rng, 0, 99) >= system.extremes) return;
            store_element(b, std::vector<int>(pos, pos + dims), values[uniform(rng, 0, (int64_t)values.size() - 1)]);
        });
    }
}

}  // namespace pulse::test
