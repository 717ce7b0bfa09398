// Uniformization (docs/import.md): isl's exact dataflow analysis finds, for
// every read of a computed value, the assignment instance that wrote it; each
// statement is placed at a point of the merged loop nest (inner loops at their
// first iteration before the inner loop, at their last after it), and a read
// whose writer lies at a constant distance becomes a uniform call of that
// statement's Func. Writers whose value reads nothing computed (base cases,
// initializations) are inlined. Anything else is rejected with the access.
#include <isl/constraint.h>
#include <isl/cpp.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <sstream>

#include "Model.h"

// What every --emit-check file defines before its check (runtime/emitted/import_check_helpers.h, EmbedFile.cmake).
extern const char *const pulse_import_check_helpers_text;

namespace pulse_import {

namespace {

std::string capitalized(const std::string &s) {
    std::string r = s;
    if (!r.empty()) r[0] = (char)std::toupper((unsigned char)r[0]);
    return r;
}

std::string join(const std::vector<std::string> &v, const std::string &sep) {
    std::string r;
    for (size_t k = 0; k < v.size(); k++) r += (k ? sep : "") + v[k];
    return r;
}

std::string float_literal(double v, bool single) {
    char buf[64];
    std::snprintf(buf, sizeof buf, single ? "%.9g" : "%.17g", v);
    std::string s = buf;
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
    return single ? s + "f" : "Expr(" + s + ")";
}

/// `p` with the symbols of `values` replaced by their Polys.
Poly substitute(const Poly &p, const std::map<std::string, Poly> &values) {
    Poly r;
    for (const auto &t : p.terms) {
        Poly m = Poly::constant(t.second);
        for (const auto &s : t.first) m = m * (values.count(s) ? values.at(s) : Poly::symbol(s));
        r = r + m;
    }
    return r;
}

/// One piece of a read's source: where (in the reader's coordinates) and what.
struct Piece {
    std::string condition;  ///< Halide condition text, "" where it always holds
    std::string value;      ///< the value read there
};

class Uniformizer {
public:
    Uniformizer(Program &p, const ImportOptions &o, Diagnostics &d) : prog(p), options(o), diag(d), ctx(isl_ctx_alloc()) {
        for (const auto &l : prog.loops) vars.push_back(l.var);
        n = (int)vars.size();
        for (const auto &name : prog.int_params) {
            auto it = options.defaults.find(name);
            defaults[name] = it == options.defaults.end() ? 8 : it->second;
        }
        params_prefix = "[" + join(prefixed(prog.int_params, "p_"), ", ") + "] -> ";
        // The box of each loop, as Pulse's set_bounds resolves it: a bound that
        // uses enclosing loops spans its range over their boxes (interval
        // arithmetic: each coefficient's sign picks the end).
        for (const auto &l : prog.loops) {
            const Poly lo = extreme(l.lower, false), hi = extreme(l.upper - Poly::constant(1), true) + Poly::constant(1);
            hull.push_back({lo, hi});
        }
    }

    ~Uniformizer() { isl_ctx_free(ctx.release()); }
    Uniformizer(const Uniformizer &) = delete;
    Uniformizer &operator=(const Uniformizer &) = delete;

    std::string run(std::string *check_out);

private:
    Program &prog;
    const ImportOptions &options;
    Diagnostics &diag;
    isl::ctx ctx;
    std::vector<std::string> vars;  ///< loop variables, outermost first
    int n = 0;
    std::map<std::string, int64_t> defaults;
    std::string params_prefix;
    /// Per loop: [min, end) of its box, in the parameters only (the bounds
    /// themselves may use enclosing loops).
    std::vector<std::pair<Poly, Poly>> hull;
    /// isl text, over the parameters: every loop runs at least once at every
    /// iteration of the loops around it (check_loops).
    std::string context_text;
    void check_loops();
    /// The least (`most`: the largest) value of the affine `p` over the boxes
    /// of the loops it uses (those before the one being resolved).
    Poly extreme(const Poly &p, bool most) const {
        Poly r;
        for (const auto &t : p.terms) {
            Poly m = Poly::constant(t.second);
            for (const auto &sym : t.first) {
                const size_t k = std::find(vars.begin(), vars.end(), sym) - vars.begin();
                if (k == vars.size()) m = m * Poly::symbol(sym);
                else m = m * ((t.second > 0) == most ? hull[k].second - Poly::constant(1) : hull[k].first);
            }
            r = r + m;
        }
        return r;
    }
    /// Whether a loop's bounds use an enclosing loop (a non-rectangular nest).
    bool dependent(const Loop &l) const {
        for (const auto &v : vars) {
            if (l.lower.mentions(v) || l.upper.mentions(v)) return true;
        }
        return false;
    }
    /// The boxes of the first `depth` loops as isl constraints (the bounding box of the nest).
    std::string hull_box(int depth) const {
        std::vector<std::string> c;
        for (int k = 0; k < depth; k++) c.push_back(isl(hull[k].first) + " <= v_" + vars[k] + " < " + isl(hull[k].second));
        return join(c, " and ");
    }
    std::vector<std::string> func_name;  ///< per statement: its Func ("" none)
    std::vector<bool> inlinable, needs_func;
    std::vector<std::string> output_of;  ///< per statement: the output array whose final values it gives
    std::vector<std::vector<Poly>> distances;  ///< of every uniform dependence between Funcs
    std::set<std::string> names;
    /// 1 when the outermost loop is a batch (array instances, its extent taken
    /// from the outputs at run time) and the transform maps the loops inside it;
    /// 0 when it maps every loop.
    int first_mapped = 0;
    void choose_batch();
    std::string parameter_declarations();

    static std::vector<std::string> prefixed(const std::vector<std::string> &v, const std::string &p) {
        std::vector<std::string> r;
        for (const auto &s : v) r.push_back(p + s);
        return r;
    }
    std::string isl(const Poly &p) const { return p.isl(prog.int_params); }
    std::string tuple(const std::string &name, int depth) const {
        return name + "[" + join(prefixed(std::vector<std::string>(vars.begin(), vars.begin() + depth), "v_"), ", ") + "]";
    }
    std::string box(int depth) const {
        std::vector<std::string> c;
        for (int k = 0; k < depth; k++) {
            c.push_back(isl(prog.loops[k].lower) + " <= v_" + vars[k] + " < " + isl(prog.loops[k].upper));
        }
        return c.empty() ? "" : join(c, " and ");
    }
    /// Every loop runs at least once (docs/import.md): a statement after an
    /// empty inner loop has no point of the merged nest to run at.
    std::string context() const { return context_text; }
    std::string domain_constraints(const Stmt &s, const std::string &guard) const {
        std::vector<std::string> c{context()};
        if (!box(s.depth).empty()) c.push_back(box(s.depth));
        if (!s.guard.empty()) c.push_back("(" + s.guard + ")");
        if (!guard.empty()) c.push_back("(" + guard + ")");
        return " : " + join(c, " and ");
    }
    /// Coordinate k of the merged nest at statement s's instance: its own loop
    /// variable, or the first (before the inner loop) or last (after it) iteration.
    Poly place(const Stmt &s, int k) const {
        if (k < s.depth) return Poly::symbol(vars[k]);
        // A bound that uses a loop the statement is outside of takes that
        // loop's placed coordinate (the first or last iteration) too.
        std::map<std::string, Poly> outside;
        for (int m = s.depth; m < k; m++) outside[vars[m]] = place(s, m);
        return substitute(s.post ? prog.loops[k].upper - Poly::constant(1) : prog.loops[k].lower, outside);
    }
    std::string schedule(const Stmt &s, const std::string &tuple_name) const {
        std::vector<std::string> x;
        for (int k = 0; k < n; k++) x.push_back(isl(place(s, k)));
        x.push_back(std::to_string(s.id));
        return params_prefix + "{ " + tuple(tuple_name, s.depth) + " -> [" + join(x, ", ") + "]" + domain_constraints(s, "") + " }";
    }
    std::string index_list(const std::vector<Poly> &index) const {
        std::vector<std::string> idx;
        for (const auto &p : index) idx.push_back(isl(p));
        return join(idx, ", ");
    }
    std::string access(const Stmt &s, const std::string &tuple_name, const std::string &target, const std::vector<Poly> &index,
                       const std::string &guard) const {
        return params_prefix + "{ " + tuple(tuple_name, s.depth) + " -> a_" + target + "[" + index_list(index) + "]" +
               domain_constraints(s, guard) + " }";
    }
    /// The set of points of the merged nest where statement s runs (within `instances`).
    isl::set placed(const Stmt &s, const isl::set &instances) const {
        std::vector<std::string> x;
        for (int k = 0; k < n; k++) x.push_back(isl(place(s, k)));
        isl::map to_point(ctx, params_prefix + "{ " + tuple("S" + std::to_string(s.id), s.depth) + " -> P[" + join(x, ", ") + "] }");
        return instances.apply(to_point).gist(isl::set(ctx, params_prefix + "{ " + tuple("P", n) + " : " + box(n) + " and " + context() + " }"));
    }
    isl::set instances(const Stmt &s) const {
        return isl::set(ctx, params_prefix + "{ " + tuple("S" + std::to_string(s.id), s.depth) + domain_constraints(s, "") + " }");
    }

    Poly poly_of(const isl::aff &a, clang::SourceRange where, const std::string &what);
    std::string condition_text(const isl::set &set, clang::SourceRange where);
    std::vector<int64_t> sample(const isl::set &set) const;
    std::string defaults_text() const;
    std::string witness(const isl::set &set) const;
    std::string value_text(const Val &v, const std::map<std::string, std::string> &subst) const;
    std::string number_text(const Val &v, const std::map<std::string, std::string> &subst) const;
    std::string bool_text(const Val &v, const std::map<std::string, std::string> &subst) const;
    std::string point_text(const std::vector<Poly> &p) const;
    std::string element_text(const isl::set &set) const;
    void uniformize(const isl::union_map &deps, const isl::union_map &no_source);
    void find_outputs();
    void check_bounds();
    void check_access(const Stmt &s, const std::string &target, const std::vector<Poly> &index, const std::string &guard,
                      clang::SourceRange where, const std::string &text);
    std::string unique(const std::string &base);
    std::string transform(const std::string &space_name, const std::string &time_name, std::string *rule);
    std::string spec_text();
    std::string check_text();
};

// The parameters at which every loop runs at least once at every iteration of
// the loops around it. A rectangular loop needs UPPER > LOWER; a loop whose
// bounds use enclosing loops must be non-empty at each of their points
// (isl projects the points where it is empty onto the parameters). A loop
// empty somewhere at every parameter value (j < i at i = 0) is rejected.
void Uniformizer::check_loops() {
    std::vector<std::string> c;
    const isl::set universe(ctx, params_prefix + "{ : }");
    isl::set all = universe;
    for (size_t k = 0; k < prog.loops.size(); k++) {
        const Loop &l = prog.loops[k];
        if (!dependent(l)) {
            c.push_back(isl(l.upper) + " > " + isl(l.lower));
            continue;
        }
        const std::string outer = box((int)k);
        isl::set empty_at(ctx, params_prefix + "{ " + tuple("L", (int)k) + " : " + (outer.empty() ? "" : outer + " and ") +
                                   isl(l.upper) + " <= " + isl(l.lower) + " }");
        all = all.subtract(empty_at.params());
        isl::set runs = all.intersect(isl::set(ctx, params_prefix + "{ : " + (c.empty() ? "true" : join(c, " and ")) + " }"));
        if (runs.is_empty()) {
            diag.reject(clang::SourceRange(l.loc), "loop '" + l.var + "' runs no iteration at " + witness(empty_at) +
                                                      ", whatever the parameters: every loop must run at least once at "
                                                      "each iteration of the loops around it (the merged nest has no point "
                                                      "for a statement around an empty loop); bound it with <= (" + l.var +
                                                      " <= " + vars[k - 1] + ") or start the enclosing loop where it is not empty");
        }
    }
    if (!universe.is_subset(all)) {
        // isl's text of the parameter set, `[p_N] -> { : CONSTRAINTS }`: its constraints.
        char *raw = isl_set_to_str(all.coalesce().get());
        const std::string text = raw;
        free(raw);
        const size_t colon = text.find(':'), close = text.rfind('}');
        c.push_back("(" + text.substr(colon + 1, close - colon - 1) + ")");
    }
    context_text = join(c, " and ");
}

Poly Uniformizer::poly_of(const isl::aff &a, clang::SourceRange where, const std::string &what) {
    isl_aff *raw = a.get();
    if (isl_aff_dim(raw, isl_dim_div) > 0 || isl_val_get_den_si(isl::manage(isl_aff_get_denominator_val(raw)).get()) != 1) {
        diag.reject(where, what + " needs integer division (a quasi-affine dependence); pulse-import cannot make it uniform");
    }
    Poly p = Poly::constant(isl_val_get_num_si(isl::manage(isl_aff_get_constant_val(raw)).get()));
    for (int k = 0; k < isl_aff_dim(raw, isl_dim_in); k++) {
        int64_t c = isl_val_get_num_si(isl::manage(isl_aff_get_coefficient_val(raw, isl_dim_in, k)).get());
        p = p + Poly::constant(c) * Poly::symbol(vars[k]);
    }
    for (int k = 0; k < isl_aff_dim(raw, isl_dim_param); k++) {
        int64_t c = isl_val_get_num_si(isl::manage(isl_aff_get_coefficient_val(raw, isl_dim_param, k)).get());
        p = p + Poly::constant(c) * Poly::symbol(std::string(isl_aff_get_dim_name(raw, isl_dim_param, k)).substr(2));
    }
    return p;
}

// A condition on the loop variables (dimension k of the set is vars[k]) as
// Halide text: constraints joined by && (and || between pieces); "" if none.
std::string Uniformizer::condition_text(const isl::set &set, clang::SourceRange where) {
    std::vector<std::string> disjuncts;
    bool always = false;
    set.coalesce().foreach_basic_set([&](isl::basic_set b) {
        std::vector<std::string> conj;
        std::pair<const Uniformizer *, std::vector<std::string> *> user(this, &conj);
        if (isl_basic_set_dim(b.get(), isl_dim_div) > 0) {
            diag.reject(where, "the condition under which this value is read is quasi-affine (integer division)");
        }
        isl_basic_set_foreach_constraint(
            b.get(),
            [](isl_constraint *c, void *user) -> isl_stat {
                auto *self = static_cast<std::pair<const Uniformizer *, std::vector<std::string> *> *>(user);
                Poly rest = Poly::constant(isl_val_get_num_si(isl::manage(isl_constraint_get_constant_val(c)).get()));
                std::vector<std::pair<int, int64_t>> var_terms;
                for (int k = 0; k < isl_constraint_dim(c, isl_dim_set); k++) {
                    int64_t v = isl_val_get_num_si(isl::manage(isl_constraint_get_coefficient_val(c, isl_dim_set, k)).get());
                    if (v) var_terms.push_back({k, v});
                }
                for (int k = 0; k < isl_constraint_dim(c, isl_dim_param); k++) {
                    int64_t v = isl_val_get_num_si(isl::manage(isl_constraint_get_coefficient_val(c, isl_dim_param, k)).get());
                    const char *name = isl_constraint_get_dim_name(c, isl_dim_param, k);
                    if (v) rest = rest + Poly::constant(v) * Poly::symbol(std::string(name).substr(2));
                }
                const bool eq = isl_constraint_is_equality(c);
                std::string text;
                const auto &vars = self->first->vars;
                // The innermost variable with coefficient 1 or -1, isolated: on a
                // triangle, -i + j >= 1 reads j >= i + 1.
                int lone = -1;
                for (int t = 0; t < (int)var_terms.size(); t++) {
                    if (var_terms[t].second == 1 || var_terms[t].second == -1) lone = t;
                }
                if (lone >= 0) {
                    // Isolate the variable: v + rest >= 0 is v >= -rest; -v + rest >= 0 is v <= rest.
                    const std::string v = vars[var_terms[lone].first];
                    const bool pos = var_terms[lone].second == 1;
                    for (int t = 0; t < (int)var_terms.size(); t++) {
                        if (t != lone) rest = rest + Poly::constant(var_terms[t].second) * Poly::symbol(vars[var_terms[t].first]);
                    }
                    Poly bound = pos ? Poly::constant(0) - rest : rest;
                    text = v + (eq ? " == " : pos ? " >= " : " <= ") + bound.str();
                } else {
                    Poly all = rest;
                    for (const auto &t : var_terms) all = all + Poly::constant(t.second) * Poly::symbol(vars[t.first]);
                    text = all.str() + (eq ? " == 0" : " >= 0");
                }
                self->second->push_back(text);
                isl_constraint_free(c);
                return isl_stat_ok;
            },
            &user);
        if (conj.empty()) always = true;
        disjuncts.push_back(join(conj, " && "));
    });
    if (always) return "";
    if (disjuncts.size() == 1) return disjuncts[0];
    for (auto &d : disjuncts) d = "(" + d + ")";
    return join(disjuncts, " || ");
}

// A point of `set` with the parameters at their defaults, for messages; empty
// if it has none there.
std::vector<int64_t> Uniformizer::sample(const isl::set &set) const {
    std::vector<std::string> fix;
    for (const auto &p : prog.int_params) fix.push_back("p_" + p + " = " + std::to_string(defaults.at(p)));
    isl::set s = set.intersect_params(isl::set(ctx, params_prefix + "{ : " + (fix.empty() ? "true" : join(fix, " and ")) + " }"));
    std::vector<int64_t> c;
    if (s.is_empty()) return c;
    isl::point pt = s.sample_point();
    for (int k = 0; k < (int)isl_set_dim(s.get(), isl_dim_set); k++) {
        c.push_back(isl_val_get_num_si(isl::manage(isl_point_get_coordinate_val(pt.get(), isl_dim_set, k)).get()));
    }
    return c;
}

std::string Uniformizer::defaults_text() const {
    std::vector<std::string> ps;
    for (const auto &p : prog.int_params) ps.push_back(p + " = " + std::to_string(defaults.at(p)));
    return join(ps, ", ");
}

// A point of the loop nest in `set`: (i = 0, k = 0 with N = 8).
std::string Uniformizer::witness(const isl::set &set) const {
    std::vector<std::string> c;
    for (int64_t v : sample(set)) c.push_back(vars[c.size()] + " = " + std::to_string(v));
    return "(" + join(c, ", ") + (prog.int_params.empty() ? "" : " with " + defaults_text()) + ")";
}

// An element of an array in `set`: [3][0] (with N = 8).
std::string Uniformizer::element_text(const isl::set &set) const {
    std::string text;
    for (int64_t v : sample(set)) text += "[" + std::to_string(v) + "]";
    return text + (prog.int_params.empty() ? "" : " (with " + defaults_text() + ")");
}

std::string Uniformizer::point_text(const std::vector<Poly> &p) const {
    std::vector<std::string> s;
    for (const auto &x : p) s.push_back(x.str());
    return "(" + join(s, ", ") + ")";
}

std::string Uniformizer::bool_text(const Val &v, const std::map<std::string, std::string> &subst) const {
    return v.type == CType::Bool ? value_text(v, subst) : "(" + value_text(v, subst) + " != 0)";
}

// C's comparisons are ints: as a number, a condition is select(c, 1, 0).
std::string Uniformizer::number_text(const Val &v, const std::map<std::string, std::string> &subst) const {
    return v.type == CType::Bool ? "select(" + value_text(v, subst) + ", 1, 0)" : value_text(v, subst);
}

std::string Uniformizer::value_text(const Val &v, const std::map<std::string, std::string> &subst) const {
    switch (v.kind) {
    case Val::Const:
        if (v.type == CType::Int) return std::to_string(v.ival);
        return float_literal(v.fval, v.type == CType::Float);
    case Val::Param: return v.name;
    case Val::LoopVar: return subst.count(v.name) ? "(" + subst.at(v.name) + ")" : v.name;
    case Val::Read: {
        const Read &r = prog.reads[v.read];
        if (!r.input) return r.pulse;
        std::vector<std::string> idx;
        for (auto it = r.index.rbegin(); it != r.index.rend(); ++it) idx.push_back(it->str(subst));
        return r.target + "(" + join(idx, ", ") + ")";
    }
    case Val::Unary:
        if (v.op == "!") return "!" + bool_text(*v.args[0], subst);
        return "-" + number_text(*v.args[0], subst);
    case Val::Binary: {
        const bool logical = v.op == "&&" || v.op == "||";
        auto side = [&](const Val &a) { return logical ? bool_text(a, subst) : number_text(a, subst); };
        return "(" + side(*v.args[0]) + " " + v.op + " " + side(*v.args[1]) + ")";
    }
    case Val::Select: {
        // C's integer min and max (a < b ? a : b, as macros write them) read
        // as min and max; floats keep the select, which treats -0.0 and NaN as C does.
        const Val &c = *v.args[0];
        if (v.type == CType::Int && c.kind == Val::Binary && c.op.find_first_of("<>") == 0) {
            const std::string a = number_text(*c.args[0], subst), b = number_text(*c.args[1], subst);
            const std::string t = number_text(*v.args[1], subst), f = number_text(*v.args[2], subst);
            const bool less = c.op[0] == '<';
            if (a == t && b == f) return std::string(less ? "min" : "max") + "(" + a + ", " + b + ")";
            if (a == f && b == t) return std::string(less ? "max" : "min") + "(" + a + ", " + b + ")";
        }
        return "select(" + bool_text(*v.args[0], subst) + ", " + number_text(*v.args[1], subst) + ", " +
               number_text(*v.args[2], subst) + ")";
    }
    case Val::MinMax: return v.op + "(" + number_text(*v.args[0], subst) + ", " + number_text(*v.args[1], subst) + ")";
    case Val::Cast:
        if (v.args[0]->kind == Val::Const && v.args[0]->type == CType::Int && v.type != CType::Bool) {
            return v.type == CType::Int ? std::to_string(v.args[0]->ival) : float_literal((double)v.args[0]->ival, v.type == CType::Float);
        }
        return "cast(" + std::string(halide_type(v.type)) + ", " + number_text(*v.args[0], subst) + ")";
    }
    return "";
}

bool reads_computed(const Val &v, const Program &prog) {
    if (v.kind == Val::Read && !prog.reads[v.read].input) return true;
    for (const auto &a : v.args) {
        if (reads_computed(*a, prog)) return true;
    }
    return false;
}

std::string Uniformizer::unique(const std::string &base) {
    std::string name = base;
    for (int k = 1; names.count(name); k++) name = base + "_" + std::to_string(k);
    names.insert(name);
    return name;
}

void Uniformizer::uniformize(const isl::union_map &deps, const isl::union_map &no_source) {
    for (size_t r = 0; r < prog.reads.size(); r++) {
        Read &read = prog.reads[r];
        if (read.input) continue;
        const Stmt &reader = prog.stmts[read.stmt];
        const std::string sink = "R" + std::to_string(r);
        isl::set domain(ctx, params_prefix + "{ " + tuple(sink, reader.depth) + domain_constraints(reader, read.guard) + " }");
        isl::union_set sink_set = isl::union_set(domain);
        isl::union_map unread = no_source.intersect_domain(sink_set);
        if (!unread.is_empty()) {
            isl::set points = unread.domain().extract_set(domain.get_space());
            const bool local = prog.scalars.count(read.target);
            diag.reject(read.range, local ? "'" + read.target + "' is read before it is assigned, e.g. at " + witness(points) +
                                                "; initialize it where it is declared"
                                          : "the read " + read.text + " takes the initial contents of '" + read.target +
                                                "', e.g. at " + witness(points) + ": the array is both an input and an output "
                                                "(aliasing); read the input from a separate array");
        }
        std::vector<Piece> pieces;
        deps.intersect_domain(sink_set).foreach_map([&](isl::map m) {
            const int source = std::stoi(std::string(isl_map_get_tuple_name(m.get(), isl_dim_out)).substr(1));
            const Stmt &writer = prog.stmts[source];
            m.as_pw_multi_aff().foreach_piece([&](isl::set where, isl::multi_aff ma) {
                std::vector<Poly> w;  // the writer's instance, in the reader's coordinates
                for (int k = 0; k < writer.depth; k++) w.push_back(poly_of(ma.get_at(k).gist(where), read.range, "the read " + read.text));
                std::vector<Poly> delta;
                std::map<std::string, std::string> subst;
                for (int k = 0; k < writer.depth; k++) subst[vars[k]] = w[k].str();
                // The writer's point in the reader's coordinates: its own loops at
                // w, the loops inside it placed with their bounds at w too (on a
                // triangle, the last j of row w[0] is w[0]).
                std::map<std::string, Poly> at_w;
                for (int k = 0; k < writer.depth; k++) at_w[vars[k]] = w[k];
                auto writer_at = [&](int k) { return k < writer.depth ? w[k] : substitute(place(writer, k), at_w); };
                bool uniform = true;
                for (int k = 0; k < n; k++) {
                    Poly y = writer_at(k);
                    Poly d = place(reader, k) - y;
                    isl::aff a(ctx, params_prefix + "{ " + tuple(sink, reader.depth) + " -> [(" + isl(d) + ")] }");
                    d = poly_of(a.gist(where), read.range, "the read " + read.text);
                    for (const auto &v : vars) uniform = uniform && !d.mentions(v);
                    delta.push_back(d);
                }
                const std::string cond = condition_text(where.gist(domain), read.range);
                if (!uniform) {
                    std::vector<Poly> at, from;
                    std::vector<std::string> moving;
                    bool broadcast = true;
                    for (int k = 0; k < n; k++) {
                        at.push_back(place(reader, k));
                        from.push_back(writer_at(k));
                        bool varies = false;
                        for (const auto &v : vars) varies = varies || delta[k].mentions(v);
                        if (!varies) continue;
                        bool fixed = true;
                        for (const auto &v : vars) fixed = fixed && !from[k].mentions(v);
                        if (fixed) moving.push_back(vars[k]);
                        else broadcast = false;
                    }
                    diag.error(read.range, "the read " + read.text + " is not uniform: at " + point_text(at) +
                                               (cond.empty() ? "" : " where " + cond) + " it reads the value written at " +
                                               point_text(from) + " (line " + std::to_string(writer.line) +
                                               "), at a distance " + point_text(delta) + " that is not constant");
                    if (broadcast && !moving.empty()) {
                        // A copy chain along each moving loop: it takes the value
                        // where the loop is at the writer's coordinate and copies
                        // it from the previous iteration elsewhere.
                        std::vector<std::string> chains;
                        for (const auto &v : moving) {
                            const int k = (int)(std::find(vars.begin(), vars.end(), v) - vars.begin());
                            const std::string name = capitalized(read.target) + "_" + v;
                            std::vector<std::string> here, prev;
                            for (int m = n - 1; m >= 0; m--) {
                                here.push_back(vars[m]);
                                prev.push_back(m == k ? vars[m] + " - 1" : vars[m]);
                            }
                            chains.push_back(name + "(" + join(here, ", ") + ") = select(" + v + " == " + from[k].str() + ", " +
                                             read.text + ", " + name + "(" + join(prev, ", ") + "))");
                        }
                        diag.note(read.range, "the value is broadcast along " + join(moving, ", ") +
                                                  "; a copy chain makes the read uniform (distance 1 along " + join(moving, ", ") +
                                                  "), merged after the assignment of line " + std::to_string(writer.line) + ": " + join(chains, "; ") +
                                                  "; then read " + capitalized(read.target) + "_" + moving.back() + " at " +
                                                  moving.back() + " - 1 instead of " + read.text);
                    } else {
                        diag.note(read.range, "no propagation along a loop makes it uniform: the writer's point moves with the reader's");
                    }
                    throw Rejected{};
                }
                Piece p;
                p.condition = cond;
                if (inlinable[source]) {
                    p.value = value_text(*writer.value, subst);
                } else {
                    needs_func[source] = true;
                    std::vector<std::string> args;
                    for (int k = n - 1; k >= 0; k--) args.push_back((Poly::symbol(vars[k]) - delta[k]).str());
                    p.value = "@" + std::to_string(source) + "(" + join(args, ", ") + ")";
                    distances.push_back(delta);
                }
                pieces.push_back(p);
            });
        });
        if (pieces.empty()) diag.reject(read.range, "the read " + read.text + " is never executed");
        // Pieces partition the read's domain: the last needs no condition.
        std::string text = pieces.back().value;
        for (size_t k = pieces.size() - 1; k-- > 0;) {
            text = "select(" + (pieces[k].condition.empty() ? "true" : pieces[k].condition) + ", " + pieces[k].value + ", " + text + ")";
        }
        read.pulse = text;
    }
}

// C flattens a multi-dimensional array: an index past an inner extent reaches
// the next row, where the spec's input or output has a separate coordinate. So
// every access must stay inside the declared extents (and at or after the
// array's start) wherever it is performed.
void Uniformizer::check_access(const Stmt &s, const std::string &target, const std::vector<Poly> &index,
                               const std::string &guard, clang::SourceRange where, const std::string &text) {
    const Array &a = prog.arrays.at(target);
    isl::set domain(ctx, params_prefix + "{ " + tuple("S", s.depth) + domain_constraints(s, guard) + " }");
    for (size_t k = 0; k < index.size(); k++) {
        // A flat index (i * M + j) of the outermost dimension is C's own
        // arithmetic: nothing to flatten, and isl cannot bound it.
        if (k == 0 && index[k].degree() > 1) continue;
        if (index[k].degree() > 1 || (k > 0 && a.inner_extents[k - 1].degree() > 1)) {
            diag.reject(where, "cannot prove that " + text + " stays inside '" + target + "': its index or extent is not "
                               "affine in the parameters");
        }
        std::string outside = isl(index[k]) + " < 0";
        if (k > 0) outside += " or " + isl(index[k]) + " >= " + isl(a.inner_extents[k - 1]);
        isl::set bad = domain.intersect(isl::set(ctx, params_prefix + "{ " + tuple("S", s.depth) + " : " + outside + " }"));
        if (!bad.is_empty()) {
            diag.reject(where, text + " leaves the array '" + target + "' in dimension " + std::to_string(k + 1) + " (index " +
                               index[k].str() + (k > 0 ? ", extent " + a.inner_extents[k - 1].str() : ", below 0") + "), e.g. at " +
                               witness(bad) + (k > 0 ? ": C would address another row" : ": C would address memory before the array"));
        }
    }
}

void Uniformizer::check_bounds() {
    for (const auto &r : prog.reads) {
        if (prog.arrays.count(r.target)) check_access(prog.stmts[r.stmt], r.target, r.index, r.guard, r.range, r.text);
    }
    for (const auto &s : prog.stmts) {
        if (prog.arrays.count(s.target)) check_access(s, s.target, s.index, "", s.range, "the write of " + s.target);
    }
}

// Which statement gives each output array's final values (the writes no
// later write overwrites).
void Uniformizer::find_outputs() {
    isl::union_map writes = isl::union_map::empty(ctx), sched = isl::union_map::empty(ctx);
    for (const auto &s : prog.stmts) {
        if (!prog.arrays.count(s.target)) continue;
        const std::string name = "S" + std::to_string(s.id);
        writes = writes.unite(isl::union_map(isl::map(ctx, access(s, name, s.target, s.index, ""))));
        sched = sched.unite(isl::union_map(isl::map(ctx, schedule(s, name))));
    }
    isl::union_map same = writes.apply_range(writes.reverse());
    isl::union_set overwritten = same.intersect(isl::manage(isl_union_map_lex_lt_union_map(sched.copy(), sched.copy()))).domain();
    isl::union_set live = writes.domain().subtract(overwritten);
    std::map<std::string, int> giver;
    for (const auto &s : prog.stmts) {
        if (!prog.arrays.count(s.target)) continue;
        isl::set mine = live.extract_set(instances(s).get_space());
        if (mine.is_empty()) continue;
        if (giver.count(s.target)) {
            diag.error(s.range, "the final values of '" + s.target + "' come from two assignments, this one and line " +
                                    std::to_string(prog.stmts[giver[s.target]].line) +
                                    "; a Pulse output has one definition: assign it once, with a conditional value");
            throw Rejected{};
        }
        giver[s.target] = s.id;
        output_of[s.id] = s.target;
        // A Pulse output is written over the whole box its index spans on the
        // loop nest; C may leave elements as they were, which the spec cannot say.
        const std::string name = "S" + std::to_string(s.id);
        isl::map index(ctx, access(s, name, s.target, s.index, ""));
        isl::map spans(ctx, params_prefix + "{ " + tuple(name, s.depth) + " -> a_" + s.target + "[" + index_list(s.index) + "] : " +
                                (s.depth ? hull_box(s.depth) + " and " : "") + context() + " }");
        isl::set missing = spans.range().subtract(mine.apply(index));
        if (!missing.is_empty()) {
            diag.reject(s.range, "only part of '" + s.target + "' is written: its index spans elements over the loop nest that "
                                 "this assignment never writes, e.g. " + s.target + element_text(missing) +
                                 "; a Pulse output is written over the whole box its index spans, so assign every element "
                                 "(a conditional value instead of an if" +
                                 // The box of a triangle is its bounding box: the C loop must cover it.
                                 std::string(std::any_of(prog.loops.begin(), prog.loops.begin() + s.depth,
                                                         [&](const Loop &l) { return dependent(l); })
                                                 ? "; over a triangle, a rectangular loop with a conditional value, as j <= i ? ... : 0"
                                                 : "") + ")");
        }
    }
}

// The outermost loop becomes a batch when it carries no dependence and every
// output is indexed by it: each of its iterations is an array instance, and
// the kernel takes its extent from the outputs at run time, so that size is
// not fixed when the spec is generated (nor bounded by the PEs of a warp).
void Uniformizer::choose_batch() {
    first_mapped = 0;
    if (n < 2) return;
    for (const auto &d : distances) {
        if (!(d[0] == Poly::constant(0))) return;
    }
    // Instances of a batch share one array shape: no bound may use its loop.
    for (const auto &l : prog.loops) {
        if (l.lower.mentions(vars[0]) || l.upper.mentions(vars[0])) return;
    }
    bool any_output = false;
    for (size_t s = 0; s < prog.stmts.size(); s++) {
        if (output_of[s].empty()) continue;
        any_output = true;
        bool indexed = false;
        for (const Poly &index : prog.stmts[s].index) indexed |= index.mentions(prog.loops[0].var);
        if (!indexed) return;
    }
    if (any_output) first_mapped = 1;
}

std::string Uniformizer::transform(const std::string &space_name, const std::string &time_name, std::string *rule) {
    // Every candidate projects the mapped loops (all, or all but the batch)
    // onto (space, time); the one with the fewest time steps among those that
    // pass both conditions wins.
    std::vector<int64_t> extent;
    std::vector<Poly> extent_poly;
    // On the box of each loop (its hull), as Pulse's transform maps it.
    for (const auto &h : hull) {
        extent_poly.push_back(h.second - h.first);
        extent.push_back(extent_poly.back().evaluate(defaults));
    }
    struct Candidate {
        int space;
        std::vector<Poly> time;
        std::string why;
    };
    std::vector<Candidate> candidates;
    const int first = first_mapped;
    // The other mapped loops linearized, innermost fastest; the space loop
    // weighted `space_weight` (or in the linear order too).
    auto linear = [&](int space, bool include_space, int64_t space_weight) {
        std::vector<Poly> t(n, Poly::constant(0));
        Poly w = Poly::constant(1);
        for (int k = n - 1; k >= first; k--) {
            if (k == space && !include_space) continue;
            t[k] = w;
            w = w * extent_poly[k];
        }
        if (!include_space) t[space] = Poly::constant(space_weight);
        return t;
    };
    for (int p = first; p < n; p++) {
        std::vector<Poly> wavefront(n, Poly::constant(0));
        for (int k = first; k < n; k++) wavefront[k] = Poly::constant(1);
        candidates.push_back({p, wavefront, "wavefront"});
        candidates.push_back({p, linear(p, false, 1), "row-major"});
        // A space loop that carries no dependence needs no skew: all its PEs at once.
        if (n - first > 1) candidates.push_back({p, linear(p, false, 0), "the space loop carries no dependence, no skew"});
    }
    candidates.push_back({first, linear(first, true, 1), "sequential"});
    int best = -1;
    int64_t best_steps = 0;
    for (size_t c = 0; c < candidates.size(); c++) {
        std::vector<int64_t> t;
        for (const auto &x : candidates[c].time) t.push_back(x.evaluate(defaults));
        bool ok = true;
        for (const auto &d : distances) {
            int64_t dt = 0;
            bool zero = true;
            for (int k = 0; k < n; k++) {
                int64_t dk = d[k].evaluate(defaults);
                dt += t[k] * dk;
                zero = zero && dk == 0;
            }
            if (!zero && dt < 1) ok = false;
        }
        if (!ok) continue;
        std::vector<std::string> x, cons;
        std::string time;
        for (int k = first; k < n; k++) {
            x.push_back("x" + std::to_string(k));
            const int64_t lo = hull[k].first.evaluate(defaults);
            cons.push_back(std::to_string(lo) + " <= x" + std::to_string(k) + " < " + std::to_string(lo + extent[k]));
            time += (k > first ? " + " : "") + std::to_string(t[k]) + "x" + std::to_string(k);
        }
        isl::map m(ctx, "{ [" + join(x, ", ") + "] -> [x" + std::to_string(candidates[c].space) + ", " + time + "] : " +
                            join(cons, " and ") + " }");
        if (!m.is_injective()) continue;
        int64_t steps = 1;
        for (int k = first; k < n; k++) steps += std::llabs(t[k]) * (extent[k] - 1);
        if (best < 0 || steps < best_steps) best = (int)c, best_steps = steps;
    }
    if (best < 0) return "";  // unreachable: the sequential candidate is always valid
    const Candidate &c = candidates[best];
    std::vector<std::string> space_row, time_row, time_terms;
    for (int k = n - 1; k >= first; k--) {
        space_row.push_back(k == c.space ? "1" : "0");
        time_row.push_back(c.time[k].str());
    }
    for (int k = first; k < n; k++) {
        if (c.time[k] == Poly::constant(0)) continue;
        time_terms.push_back(c.time[k] == Poly::constant(1) ? vars[k] : (c.time[k].terms.size() == 1 ? c.time[k].str() : "(" + c.time[k].str() + ")") + " * " + vars[k]);
    }
    *rule = "space " + space_name + " = " + vars[c.space] + ", time " + time_name + " = " + join(time_terms, " + ") + " (" + c.why + "; " +
            std::to_string(best_steps) + " steps at the default sizes)";
    return "{" + join(space_row, ", ") + ", /**/ " + join(time_row, ", ") + "}";
}

std::string Uniformizer::run(std::string *check_out) {
    const size_t ns = prog.stmts.size();
    func_name.assign(ns, "");
    inlinable.assign(ns, false);
    needs_func.assign(ns, false);
    output_of.assign(ns, "");
    for (auto &r : prog.reads) {
        r.input = prog.arrays.count(r.target) && !prog.arrays.at(r.target).written;
        if (!r.input) {
            for (const auto &p : r.index) {
                if (p.degree() > 1) {
                    diag.reject(r.range, "index " + p.str() + " of '" + r.target + "', an array the function writes, is not "
                                         "affine (a product of a parameter and a loop variable); declare the array with its "
                                         "dimensions, e.g. float y[N][M]");
                }
            }
        }
    }
    check_loops();
    check_bounds();
    for (size_t s = 0; s < ns; s++) inlinable[s] = !reads_computed(*prog.stmts[s].value, prog);
    // The dataflow: sinks are the reads of computed values, sources every write.
    isl::union_map sinks = isl::union_map::empty(ctx), sources = isl::union_map::empty(ctx),
                   sched = isl::union_map::empty(ctx);
    for (const auto &s : prog.stmts) {
        const std::string name = "S" + std::to_string(s.id);
        sources = sources.unite(isl::union_map(isl::map(ctx, access(s, name, s.target, s.index, ""))));
        sched = sched.unite(isl::union_map(isl::map(ctx, schedule(s, name))));
    }
    for (size_t r = 0; r < prog.reads.size(); r++) {
        const Read &read = prog.reads[r];
        if (read.input) continue;
        const Stmt &s = prog.stmts[read.stmt];
        const std::string name = "R" + std::to_string(r);
        sinks = sinks.unite(isl::union_map(isl::map(ctx, access(s, name, read.target, read.index, read.guard))));
        sched = sched.unite(isl::union_map(isl::map(ctx, schedule(s, name))));
    }
    isl::union_flow flow = isl::union_access_info(sinks).set_must_source(sources).set_schedule_map(sched).compute_flow();
    uniformize(flow.get_must_dependence().reverse(), flow.get_must_no_source());
    find_outputs();
    bool any_output = false;
    for (const auto &o : output_of) any_output = any_output || !o.empty();
    if (!any_output) diag.reject(prog.function_loc, "the function writes no array parameter: it has no output");

    // Names: the C names for inputs, outputs, loops and parameters; Funcs of
    // statements after their target, capitalized.
    for (const auto &p : prog.params) names.insert(p.name);
    for (const auto &v : vars) names.insert(v);
    static const std::vector<std::string> reserved = {"params", "select", "min", "max", "cast", "Expr", "Var", "Func", "Input",
                                                      "Spec", "Float", "Int", "Place", "Params", "pulse", "Halide"};
    for (const auto &r : reserved) {
        if (names.count(r)) diag.reject(prog.function_loc, "the name '" + r + "' would clash with the spec's C++ names; rename it");
        names.insert(r);
    }
    // The nest belongs to a recurrence Func: with none (no value is read
    // again), the first output's statement gets one.
    if (std::find(needs_func.begin(), needs_func.end(), true) == needs_func.end()) {
        for (size_t s = 0; s < ns; s++) {
            if (!output_of[s].empty()) {
                needs_func[s] = true;
                break;
            }
        }
    }
    for (size_t s = 0; s < ns; s++) {
        if (needs_func[s]) func_name[s] = unique(capitalized(prog.stmts[s].target));
    }
    for (auto &r : prog.reads) {
        // Sources are named once every Func has its name.
        std::string &t = r.pulse;
        for (size_t pos; (pos = t.find('@')) != std::string::npos;) {
            size_t end = t.find('(', pos);
            t.replace(pos, end - pos, func_name[std::stoi(t.substr(pos + 1, end - pos - 1))]);
        }
    }
    return spec_text() + (check_out ? (*check_out = check_text(), "") : "");
}

// `const int P = params.get_int("P", default, least, 2^24);` for each size
// parameter: the least value at which every loop runs at least once and every
// declared extent is positive.
std::string Uniformizer::parameter_declarations() {
    std::ostringstream os;
    constexpr int64_t max_size = int64_t(1) << 24;
    std::vector<std::string> positive;
    if (!context().empty()) positive.push_back(context());
    for (const auto &a : prog.arrays) {
        for (const Poly &e : a.second.inner_extents) {
            if (e.degree() <= 1) positive.push_back(isl(e) + " >= 1");
        }
    }
    isl::set sizes(ctx, "{ [" + join(prefixed(prog.int_params, "p_"), ", ") + "] : " + (positive.empty() ? "true" : join(positive, " and ")) + " }");
    if (!prog.int_params.empty()) {
        os << "    // Sizes: each from the least value at which every loop runs at least once (and every\n"
           << "    // declared extent is positive), up to 2^24; --param outside the range is refused.\n";
    }
    for (size_t k = 0; k < prog.int_params.size(); k++) {
        const std::string &p = prog.int_params[k];
        isl::val least = sizes.is_empty() ? isl::val(ctx, 0) : sizes.dim_min_val((int)k);
        const int64_t lo = least.is_int() ? std::max<int64_t>(least.get_num_si(), INT32_MIN) : 0;
        os << "    const int " << p << " = params.get_int(\"" << p << "\", " << defaults.at(p) << ", " << lo << ", "
           << std::max(max_size, defaults.at(p)) << ");\n";
    }
    return os.str();
}

std::string Uniformizer::spec_text() {
    const std::string spec = options.spec_name.empty() ? prog.function : options.spec_name;
    const std::string space = unique("s"), time = unique("t");
    std::ostringstream os;
    os << "// Spec " << spec << ", imported by pulse-import (Pulse " PULSE_VERSION ") from " << prog.file << " (function " << prog.function << ").\n"
       << "// Each assignment of the C loop nest is a URE over the whole nest; the value it\n"
       << "// reads from an earlier assignment is a call at a constant distance (docs/import.md).\n"
       << "#include \"pulse/pulse.h\"\n\nusing namespace pulse;\n\nnamespace {\n\n"
       << "Spec build_" << spec << "(const Params &params) {\n";
    os << parameter_declarations();
    std::vector<std::string> var_decls, loops_inner_first;
    for (const auto &v : vars) var_decls.push_back(v + "(\"" + v + "\")");
    for (int k = n - 1; k >= 0; k--) loops_inner_first.push_back(vars[k]);
    var_decls.push_back(space + "(\"" + space + "\")");
    var_decls.push_back(time + "(\"" + time + "\")");
    os << "    Var " << join(var_decls, ", ") << ";\n";
    std::vector<std::string> inputs, input_names;
    for (const auto &p : prog.params) {
        if (!p.is_array) continue;
        const Array &a = prog.arrays.at(p.name);
        if (a.written) continue;
        inputs.push_back(p.name + "(" + halide_type(a.type) + ", " + std::to_string(a.dims) + ", \"" + p.name + "\")");
        input_names.push_back(p.name);
    }
    if (!inputs.empty()) os << "    Input " << join(inputs, ", ") << ";\n";
    for (const auto &apart : prog.assumed_apart) {
        os << "    // Assumed: " << apart.first << " does not overlap " << join(apart.second, " or ") << " (C allows it: "
           << apart.first << " is not restrict).\n"
           << "    // The spec keeps inputs and outputs apart; the generated host functions refuse overlapping buffers.\n";
    }
    std::vector<std::string> funcs, merged;
    std::string first_output;
    const std::string args = join(loops_inner_first, ", ");
    for (size_t s = 0; s < prog.stmts.size(); s++) {
        if (!func_name[s].empty()) {
            funcs.push_back(func_name[s] + "(" + halide_type(prog.stmts[s].type) + ", {" + args + "}, Place::Device, \"" + func_name[s] + "\")");
            merged.push_back(func_name[s]);
        }
        if (!output_of[s].empty()) {
            funcs.push_back(output_of[s] + "(Place::Device, \"" + output_of[s] + "\")");
            merged.push_back(output_of[s]);
            if (first_output.empty()) first_output = output_of[s];
        }
    }
    os << "    Func " << join(funcs, ",\n         ") << ";\n";
    for (size_t s = 0; s < prog.stmts.size(); s++) {
        const Stmt &st = prog.stmts[s];
        if (func_name[s].empty() && output_of[s].empty()) continue;
        std::string text;
        for (char ch : st.text) {  // one line, runs of white space as one space
            if (std::isspace((unsigned char)ch)) {
                if (!text.empty() && text.back() != ' ') text += ' ';
            } else {
                text += ch;
            }
        }
        os << "    // line " << st.line << ": " << text << "\n";
        const std::string value = number_text(*st.value, {});
        if (!func_name[s].empty()) {
            std::string cond = condition_text(placed(st, instances(st)), st.range);
            os << "    " << func_name[s] << "(" << args << ") = " << (cond.empty() ? value : "select(" + cond + ", " + value + ")") << ";\n";
        }
        if (!output_of[s].empty()) {
            isl::set live = instances(st);
            {
                // Only the writes no later write overwrites are the output.
                isl::union_map writes = isl::union_map::empty(ctx), sched = isl::union_map::empty(ctx);
                for (const auto &o : prog.stmts) {
                    if (o.target != st.target) continue;
                    const std::string name = "S" + std::to_string(o.id);
                    writes = writes.unite(isl::union_map(isl::map(ctx, access(o, name, o.target, o.index, ""))));
                    sched = sched.unite(isl::union_map(isl::map(ctx, schedule(o, name))));
                }
                isl::union_set over = writes.apply_range(writes.reverse()).intersect(isl::manage(isl_union_map_lex_lt_union_map(sched.copy(), sched.copy()))).domain();
                live = live.subtract(over.extract_set(live.get_space()));
            }
            std::string cond = condition_text(placed(st, live), st.range);
            std::vector<std::string> idx;
            for (auto it = st.index.rbegin(); it != st.index.rend(); ++it) idx.push_back(it->str());
            const std::string v = func_name[s].empty() ? value : func_name[s] + "(" + args + ")";
            os << "    " << st.target << "(" << join(idx, ", ") << ") = " << (cond.empty() ? v : "select(" + cond + ", " + v + ")") << ";\n";
        }
    }
    std::vector<std::string> bounds;
    for (int k = n - 1; k >= 0; k--) {
        bounds.push_back(vars[k] + ", " + prog.loops[k].lower.str() + ", " + (prog.loops[k].upper - prog.loops[k].lower).str());
    }
    std::vector<std::string> rest(merged.begin() + 1, merged.end());
    os << "    " << merged[0] << (rest.empty() ? "" : ".merge_ures(" + join(rest, ", ") + ")") << ".set_bounds(" << join(bounds, ", ")
       << ");\n";
    std::string rule;
    choose_batch();
    const std::string matrix = transform(space, time, &rule);
    std::vector<std::string> mapped;
    for (int k = n - 1; k >= first_mapped; k--) mapped.push_back(vars[k]);
    if (first_mapped) {
        os << "    // Loop " << vars[0] << " carries no dependence and indexes every output: a batch. Each of its\n"
           << "    // iterations is an array instance, and a kernel takes its extent from the outputs\n"
           << "    // at run time (" << vars[0] << " is left out of the transform).\n";
    }
    os << "    // Space-time transform: " << rule << ".\n"
       << "    // pulse-import tried, for each " << (first_mapped ? "mapped " : "") << "loop as the space, the wavefront time (the sum of\n"
       << "    // the loops), a row-major time and, for a loop that carries no dependence, no skew,\n"
       << "    // and kept the valid one with the fewest steps.\n"
       << "    " << merged[0] << ".space_time_transform({" << join(mapped, ", ") << "}, {" << space << ", " << time << "}, " << matrix << ");\n"
       << "    return Spec{" << first_output << ", {" << join(input_names, ", ") << "}};\n"
       << "}\n\n}  // namespace\n\n"
       << "PULSE_REGISTER_SPEC(\"" << spec << "\", \"imported from " << prog.file.substr(prog.file.find_last_of('/') + 1) << " ("
       << prog.function << ")\", build_" << spec << ");\n";
    return os.str();
}

std::string Uniformizer::check_text() {
    const std::string spec = options.spec_name.empty() ? prog.function : options.spec_name;
    std::ostringstream os;
    os << "// Runs C function " << prog.function << " (" << prog.file << ") and spec " << spec
       << " on the same random inputs\n// (those of --realize) and compares every output element. Written by pulse-import --emit-check\n"
       << "// (Pulse " PULSE_VERSION ").\n"
       << "#include <algorithm>\n#include <cmath>\n#include <cstdio>\n#include <limits>\n#include <vector>\n\n"
       << "#include \"pulse/pulse.h\"\n\n";
    std::vector<std::string> proto;
    for (const auto &p : prog.params) {
        proto.push_back(p.is_array ? std::string(c_type(prog.arrays.at(p.name).type)) + " *" + p.name : "int " + p.name);
    }
    os << "extern \"C\" void " << prog.function << "(" << join(proto, ", ") << ");\n\n"
       << "bool pulse_import_register_check(const char *spec, int (*check)(unsigned seed, const pulse::Params &params));\n\n"
       << "namespace {\n\n" << pulse_import_check_helpers_text << "\n"
       << "int check(unsigned seed, const pulse::Params &params) {\n"
       << "    pulse::Spec spec = pulse::build_spec(\"" << spec << "\", params);\n"
       << "    pulse::Buffers inputs = pulse::random_inputs(spec, seed);\n"
       << "    pulse::Buffers outputs = spec.output.realize(inputs);\n"
       ;
    os << parameter_declarations();
    std::vector<std::string> call;
    for (const auto &p : prog.params) {
        if (!p.is_array) {
            call.push_back(p.name);
            continue;
        }
        const Array &a = prog.arrays.at(p.name);
        std::vector<std::string> inner;
        for (const auto &e : a.inner_extents) inner.push_back(e.str());
        const std::string t = c_type(a.type), ext = "{" + join(inner, ", ") + "}";
        os << "    const std::vector<int64_t> " << p.name << "_inner = " << ext << ";\n";
        if (a.written) os << "    std::vector<" << t << "> " << p.name << "_c = c_output<" << t << ">(outputs, \"" << p.name << "\", " << p.name << "_inner);\n";
        else os << "    std::vector<" << t << "> " << p.name << "_c = c_array<" << t << ">(inputs, \"" << p.name << "\", " << p.name << "_inner);\n";
        call.push_back(p.name + "_c.data()");
    }
    os << "    " << prog.function << "(" << join(call, ", ") << ");\n    int failed = 0;\n";
    for (const auto &p : prog.params) {
        if (p.is_array && prog.arrays.at(p.name).written) {
            os << "    failed += compare(outputs, \"" << p.name << "\", " << p.name << "_c, " << p.name << "_inner);\n";
        }
    }
    os << "    return failed;\n}\n\nconst bool registered = pulse_import_register_check(\"" << spec << "\", check);\n\n}  // namespace\n";
    return os.str();
}

}  // namespace

std::string write_spec(Program &program, const ImportOptions &options, Diagnostics &diag, std::string *check_out) {
    if (program.loops.empty()) diag.reject(program.function_loc, "the function has no for loop: there is no nest to map");
    return Uniformizer(program, options, diag).run(check_out);
}

}  // namespace pulse_import
