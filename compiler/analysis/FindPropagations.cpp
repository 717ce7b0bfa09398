#include "analysis/FindPropagations.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "ir/ExactSimplify.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

Expr var(const std::string &name) { return Variable::make(Int(32), name); }

int64_t gcd_of(const std::vector<int64_t> &v) {
    int64_t g = 0;
    for (int64_t x : v) g = std::gcd(g, x < 0 ? -x : x);
    return g;
}

/// Every integer vector of `n` entries in [-bound, bound] with no common
/// factor (gcd 1), in lexicographic order.
std::vector<std::vector<int64_t>> primitive_vectors(size_t n, int64_t bound) {
    std::vector<std::vector<int64_t>> out;
    std::vector<int64_t> v(n, -bound);
    while (true) {
        if (gcd_of(v) == 1) out.push_back(v);
        size_t i = n;
        while (i > 0 && v[i - 1] == bound) v[--i] = -bound;
        if (i == 0) break;
        v[i - 1]++;
    }
    return out;
}

/// Uses no loop variable but `keep`.
bool uses_only(const Expr &e, const ir::UreProgram &p, const std::string &keep) {
    for (const ir::Loop &l : p.loops) {
        if (l.var != keep && expr_uses_var(e, l.var)) return false;
    }
    return true;
}

/// A recurrence with one argument per loop of the nest.
bool spans_nest(const ir::UreProgram &p, const ir::Ure &u) {
    if (u.is_output || u.args.size() != p.loops.size()) return false;
    return std::all_of(u.args.begin(), u.args.end(), [&](const std::string &a) { return p.loop_index(a) >= 0; });
}

}  // namespace

std::optional<Carrier> find_carrier(const ir::UreProgram &p, const std::vector<std::string> &src, const ir::Ure &u) {
    if (!spans_nest(p, u)) return std::nullopt;
    Carrier c;
    c.ure = u.name;
    if (!ir::input_callee(u.value).empty()) {
        c.read = u.value;
    } else if (const Select *s = u.value.as<Select>()) {
        if (ir::input_callee(s->true_value).empty() || ir::recurrence_callee(s->false_value) != u.name) return std::nullopt;
        c.read = s->true_value;
    } else {
        return std::nullopt;
    }
    const Call *read = c.read.as<Call>();
    for (const std::vector<int64_t> &d : primitive_vectors(src.size(), max_carrier_direction_entry)) {
        std::map<std::string, Expr> shifted;
        for (size_t i = 0; i < src.size(); i++) shifted[src[i]] = var(src[i]) - (int)d[i];
        bool invariant = true;
        for (const Expr &e : read->args) invariant = invariant && is_const_zero(simplify_exact(e - substitute(shifted, e)));
        if (invariant) c.directions.push_back(d);
    }
    return c;
}

std::optional<Reduction> find_reduction(const ir::UreProgram &p, const std::vector<std::string> &src, const ir::Ure &u) {
    if (!spans_nest(p, u)) return std::nullopt;
    const ir::Dependence *self = nullptr;
    for (const ir::Dependence &d : p.dependences) {
        if (d.producer != u.name) continue;
        const bool zero = std::all_of(d.distance.begin(), d.distance.end(), [](int64_t v) { return !v; });
        if (d.consumer == u.name && !zero && !self) self = &d;
        else if (d.consumer == u.name || !zero || !p.ure(d.consumer).is_output) return std::nullopt;
    }
    if (!self) return std::nullopt;
    Reduction r;
    r.ure = u.name;
    r.distance = self->distance;
    for (size_t i = 0; i < p.loops.size(); i++) {
        const int64_t d = self->distance[i];
        if (!d) continue;
        if ((d != 1 && d != -1) || r.loop >= 0) return std::nullopt;
        r.loop = (int)i;
    }
    if (std::find(src.begin(), src.end(), p.loops[r.loop].var) == src.end()) return std::nullopt;
    const std::string &k = p.loops[r.loop].var;
    const Add *add = u.value.as<Add>();
    if (!add) return std::nullopt;
    const Select *s = add->a.as<Select>() ? add->a.as<Select>() : add->b.as<Select>();
    if (!s || ir::recurrence_callee(s->false_value) != u.name || !uses_only(s->condition, p, k)) return std::nullopt;
    for (const ir::Ure &o : p.ures) {
        if (!o.is_output) continue;
        const Select *os = o.value.as<Select>();
        if (!os || !uses_only(os->condition, p, k)) return std::nullopt;
    }
    return r;
}

}  // namespace pulse
