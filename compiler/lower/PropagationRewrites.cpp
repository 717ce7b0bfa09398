#include "lower/PropagationRewrites.h"

#include <map>

#include "ir/ExactSimplify.h"
#include "lower/Pipeline.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

Expr var(const std::string &name) { return Variable::make(Int(32), name); }

/// `u`'s call at distance d (over the nest's loops, indexed like program.loops): u(args - d).
Expr call_at(const ir::UreProgram &p, const ir::Ure &u, const std::vector<int64_t> &loop_distance) {
    std::vector<Expr> args;
    for (const std::string &a : u.args) {
        const int d = (int)loop_distance[p.loop_index(a)];
        args.push_back(d > 0 ? var(a) - d : d < 0 ? var(a) + -d : var(a));
    }
    return ir::make_recurrence_call(u.type, u.name, args);
}

/// The points whose predecessor x - d lies outside the domain: where a chain along d starts.
Expr chain_start(const ir::UreProgram &p, const std::vector<int64_t> &loop_distance) {
    Expr start;
    for (size_t i = 0; i < p.loops.size(); i++) {
        const int64_t d = loop_distance[i];
        if (!d) continue;
        const ir::Loop &l = p.loops[i];
        Expr c = d > 0 ? var(l.var) < (int)(l.min + d) : var(l.var) > (int)(l.max() + d);
        start = start.defined() ? (start || c) : c;
    }
    return start;
}

/// A distance over `src` (one entry per source loop) as one over the nest's loops.
std::vector<int64_t> on_loops(const ir::UreProgram &p, const std::vector<std::string> &src, const std::vector<int64_t> &d) {
    std::vector<int64_t> loop_d(p.loops.size(), 0);
    for (size_t i = 0; i < src.size(); i++) loop_d[p.loop_index(src[i])] = d[i];
    return loop_d;
}

}  // namespace

void read_carrier_in_place(ir::UreProgram &p, const Carrier &c) {
    p.ures[p.ure_index(c.ure)].value = c.read;
}

void forward_carrier(ir::UreProgram &p, const Carrier &c, const std::vector<std::string> &src, const std::vector<int64_t> &direction) {
    ir::Ure &u = p.ures[p.ure_index(c.ure)];
    const std::vector<int64_t> d = on_loops(p, src, direction);
    u.value = Select::make(chain_start(p, d), c.read, call_at(p, u, d));
}

void reverse_reduction(ir::UreProgram &p, const Reduction &r) {
    const ir::Loop &l = p.loops[r.loop];
    std::map<std::string, Expr> mirror{{l.var, Expr((int)(l.min + l.max())) - var(l.var)}};
    std::vector<int64_t> back(r.distance.size());
    for (size_t i = 0; i < back.size(); i++) back[i] = -r.distance[i];
    ir::Ure &u = p.ures[p.ure_index(r.ure)];
    const Add *add = u.value.as<Add>();
    const bool first = add->a.as<Select>() != nullptr;
    const Select *s = (first ? add->a : add->b).as<Select>();
    Expr chain = Select::make(simplify_exact(substitute(mirror, s->condition)), s->true_value, call_at(p, u, back));
    u.value = first ? Add::make(chain, add->b) : Add::make(add->a, chain);
    for (ir::Ure &o : p.ures) {
        if (!o.is_output) continue;
        const Select *os = o.value.as<Select>();
        o.value = Select::make(simplify_exact(substitute(mirror, os->condition)), os->true_value, os->false_value);
    }
}

void reanalyze(ir::UreProgram &p) {
    p.dependences.clear();
    p.input_accesses.clear();
    p.reference_nesting.clear();
    p.reference_direction.clear();
    run_front_passes(p);
}

}  // namespace pulse
