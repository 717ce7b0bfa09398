#include "analysis/IslModel.h"

#include <algorithm>
#include <isl/aff.h>
#include <isl/constraint.h>
#include <isl/ctx.h>
#include <isl/local_space.h>
#include <isl/map.h>
#include <isl/options.h>
#include <isl/point.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/val.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <string>

namespace pulse {
namespace isl_model {

using namespace Halide::Internal;

namespace {
/// A broken precondition of this file's API is a compiler bug, not a user error.
void model_check(bool ok, const char *what) {
    if (!ok) internal_error("isl model: ", what);
}
}  // namespace

Context::Context() : ptr(isl_ctx_alloc()) {
    model_check(ptr != nullptr, "isl_ctx_alloc failed");
    // Return errors to the caller (the C++ bindings turn them into
    // isl::exception) rather than printing and aborting.
    isl_options_set_on_error(ptr, ISL_ON_ERROR_CONTINUE);
}

Context::~Context() { isl_ctx_free(ptr); }

namespace {

/// A set space with one named dimension per loop.
isl::space named_set_space(isl_ctx *ctx, const std::vector<std::string> &names) {
    isl_space *space = isl_space_set_alloc(ctx, 0, (unsigned)names.size());
    for (size_t i = 0; i < names.size(); i++) {
        space = isl_space_set_dim_name(space, isl_dim_set, (unsigned)i, names[i].c_str());
    }
    return isl::manage(space);
}

isl::set universe_like(const isl::set &set) { return isl::manage(isl_set_universe(isl_set_get_space(set.get()))); }

/// `v` as an isl value, exactly: isl_val_int_from_si takes a long, which may
/// be narrower than int64_t; a value it cannot hold goes through its decimal text.
isl_val *int64_val(isl_ctx *ctx, int64_t v) {
    if (v >= LONG_MIN && v <= LONG_MAX) return isl_val_int_from_si(ctx, (long)v);
    return isl_val_read_from_str(ctx, std::to_string(v).c_str());
}

isl::val int_val(const isl::set &set, int64_t v) { return isl::manage(int64_val(isl_set_get_ctx(set.get()), v)); }

/// c with coefficient `v` of dimension `pos` of type `type`, exactly.
isl_constraint *set_coefficient(isl_constraint *c, isl_dim_type type, unsigned pos, int64_t v) {
    return isl_constraint_set_coefficient_val(c, type, (int)pos, int64_val(isl_constraint_get_ctx(c), v));
}

/// c with constant term `v`, exactly.
isl_constraint *set_constant(isl_constraint *c, int64_t v) {
    return isl_constraint_set_constant_val(c, int64_val(isl_constraint_get_ctx(c), v));
}

/// Converts Halide expressions to isl objects on the space of one domain.
/// Every result is defined on the universe of that space; callers intersect
/// with the domain once at the end.
class Converter {
public:
    explicit Converter(const isl::set &domain) : domain(domain), universe(universe_like(domain)) {}

    std::optional<isl::pw_aff> expr(const Halide::Expr &e) const {
        if (auto imm = e.as<IntImm>()) return constant(imm->value);
        if (auto imm = e.as<UIntImm>()) {
            if (imm->value > (uint64_t)INT64_MAX) return std::nullopt;
            return constant((int64_t)imm->value);
        }
        if (auto var = e.as<Variable>()) {
            int dim = isl_set_find_dim_by_name(domain.get(), isl_dim_set, var->name.c_str());
            if (dim < 0) return std::nullopt;
            isl_local_space *ls = isl_local_space_from_space(isl_set_get_space(domain.get()));
            return isl::manage(isl_pw_aff_var_on_domain(ls, isl_dim_set, (unsigned)dim));
        }
        if (auto cast = e.as<Cast>()) {
            // Loop variables and their affine combinations are small integers:
            // an integer-to-integer cast does not change their value.
            if (cast->type.is_int_or_uint() && cast->value.type().is_int_or_uint()) return expr(cast->value);
            return std::nullopt;
        }
        if (auto op = e.as<Add>()) return binary(op->a, op->b, isl_pw_aff_add);
        if (auto op = e.as<Sub>()) return binary(op->a, op->b, isl_pw_aff_sub);
        if (auto op = e.as<Min>()) return binary(op->a, op->b, isl_pw_aff_min);
        if (auto op = e.as<Max>()) return binary(op->a, op->b, isl_pw_aff_max);
        if (auto op = e.as<Mul>()) {
            auto a = expr(op->a), b = expr(op->b);
            if (!a || !b) return std::nullopt;
            // A product is affine only if one factor is a constant.
            if (!isl_pw_aff_is_cst(a->get()) && !isl_pw_aff_is_cst(b->get())) return std::nullopt;
            return isl::manage(isl_pw_aff_mul(a->copy(), b->copy()));
        }
        if (auto op = e.as<Div>()) {
            // Halide's integer division rounds down for a positive divisor.
            const int64_t *k = as_const_int(op->b);
            auto a = expr(op->a);
            if (!k || *k <= 0 || !a || !op->type.is_int_or_uint()) return std::nullopt;
            return isl::manage(isl_pw_aff_floor(isl_pw_aff_scale_down_val(a->copy(), int_val(domain, *k).release())));
        }
        if (auto op = e.as<Mod>()) {
            // ... and its remainder is then in [0, k).
            const int64_t *k = as_const_int(op->b);
            auto a = expr(op->a);
            if (!k || *k <= 0 || !a || !op->type.is_int_or_uint()) return std::nullopt;
            return isl::manage(isl_pw_aff_mod_val(a->copy(), int_val(domain, *k).release()));
        }
        return std::nullopt;
    }

    std::optional<isl::set> condition(const Halide::Expr &e) const {
        if (!e.defined()) return universe;
        if (e.type().is_bool()) {
            if (auto imm = e.as<UIntImm>()) return imm->value ? universe : empty();
            if (auto imm = e.as<IntImm>()) return imm->value ? universe : empty();
        }
        if (auto op = e.as<EQ>()) return compare(op->a, op->b, isl_pw_aff_eq_set);
        if (auto op = e.as<NE>()) return compare(op->a, op->b, isl_pw_aff_ne_set);
        if (auto op = e.as<LT>()) return compare(op->a, op->b, isl_pw_aff_lt_set);
        if (auto op = e.as<LE>()) return compare(op->a, op->b, isl_pw_aff_le_set);
        if (auto op = e.as<GT>()) return compare(op->a, op->b, isl_pw_aff_gt_set);
        if (auto op = e.as<GE>()) return compare(op->a, op->b, isl_pw_aff_ge_set);
        if (auto op = e.as<And>()) {
            auto a = condition(op->a), b = condition(op->b);
            if (!a || !b) return std::nullopt;
            return a->intersect(*b);
        }
        if (auto op = e.as<Or>()) {
            auto a = condition(op->a), b = condition(op->b);
            if (!a || !b) return std::nullopt;
            return a->unite(*b);
        }
        if (auto op = e.as<Not>()) {
            auto a = condition(op->a);
            if (!a) return std::nullopt;
            return universe.subtract(*a);
        }
        if (auto op = e.as<Select>()) {
            if (!e.type().is_bool()) return std::nullopt;
            auto c = condition(op->condition), t = condition(op->true_value), f = condition(op->false_value);
            if (!c || !t || !f) return std::nullopt;
            return c->intersect(*t).unite(universe.subtract(*c).intersect(*f));
        }
        return std::nullopt;
    }

private:
    const isl::set &domain;
    isl::set universe;

    isl::set empty() const { return isl::manage(isl_set_empty(isl_set_get_space(domain.get()))); }

    isl::pw_aff constant(int64_t v) const {
        return isl::manage(isl_pw_aff_val_on_domain(universe.copy(), int_val(domain, v).release()));
    }

    using PwAffOp = isl_pw_aff *(*)(isl_pw_aff *, isl_pw_aff *);
    std::optional<isl::pw_aff> binary(const Halide::Expr &ea, const Halide::Expr &eb, PwAffOp op) const {
        auto a = expr(ea), b = expr(eb);
        if (!a || !b) return std::nullopt;
        return isl::manage(op(a->copy(), b->copy()));
    }

    using CompareOp = isl_set *(*)(isl_pw_aff *, isl_pw_aff *);
    std::optional<isl::set> compare(const Halide::Expr &ea, const Halide::Expr &eb, CompareOp op) const {
        if (!ea.type().is_int_or_uint() || !eb.type().is_int_or_uint()) return std::nullopt;
        auto a = expr(ea), b = expr(eb);
        if (!a || !b) return std::nullopt;
        return isl::manage(op(a->copy(), b->copy()));
    }
};

}  // namespace

namespace {

/// The box of `loops` (names of program loops, in the set's order).
isl::set loop_box(const Context &context, const ir::UreProgram &program, const std::vector<std::string> &loops) {
    isl::space space = named_set_space(context.ctx().get(), loops);
    isl_set *set = isl_set_universe(space.copy());
    for (size_t i = 0; i < loops.size(); i++) {
        const ir::Loop &loop = program.loop(loops[i]);
        isl_local_space *ls = isl_local_space_from_space(space.copy());
        // x_i - min >= 0 and max - x_i >= 0, with the bounds exact (they may exceed 32 bits).
        model_check(loop.extent >= 1 && loop.min <= INT64_MAX - (loop.extent - 1), "iteration_domain: loop bounds overflow int64");
        isl_constraint *lower = isl_constraint_alloc_inequality(isl_local_space_copy(ls));
        lower = set_coefficient(lower, isl_dim_set, (unsigned)i, 1);
        lower = isl_constraint_set_constant_val(lower, isl_val_neg(int64_val(context.ctx().get(), loop.min)));
        isl_constraint *upper = isl_constraint_alloc_inequality(ls);
        upper = set_coefficient(upper, isl_dim_set, (unsigned)i, -1);
        upper = set_constant(upper, loop.max());
        set = isl_set_add_constraint(set, lower);
        set = isl_set_add_constraint(set, upper);
    }
    return isl::manage(set);
}

}  // namespace

isl::set iteration_domain(const Context &context, const ir::UreProgram &program,
                          const std::vector<std::string> &loops) {
    if (program.constraints.empty()) return loop_box(context, program, loops);
    // The constraints may use loops the set leaves out: build the domain over
    // all of them, then project those out (the points of `loops` that some
    // point of the domain extends).
    std::vector<std::string> all = loops;
    for (const ir::Loop &l : program.loops) {
        if (std::find(all.begin(), all.end(), l.var) == all.end()) all.push_back(l.var);
    }
    isl::set domain = loop_box(context, program, all);
    for (const Halide::Expr &c : program.constraints) {
        ConditionSet where = condition_set(c, domain);
        if (!where.exact) {
            compile_error(program.name, ".where(", ir::to_source(c), "): the condition is not affine in the loops; ",
                          "write it with +, -, * by a constant, comparisons, && and ||");
        }
        domain = where.set;
    }
    return isl::manage(isl_set_project_out(domain.release(), isl_dim_set, (unsigned)loops.size(),
                                           (unsigned)(all.size() - loops.size())));
}

isl::set runtime_domain(const Context &context, const ir::UreProgram &program) {
    std::vector<std::string> vars;
    for (const ir::Loop &l : program.loops) vars.push_back(l.var);
    const ir::SpaceTimeTransform *transform = program.schedule.transform ? &*program.schedule.transform : nullptr;
    isl::set domain = iteration_domain(context, program, vars);
    for (size_t i = 0; i < vars.size(); i++) {
        if (transform && std::find(transform->source_loops.begin(), transform->source_loops.end(), vars[i]) != transform->source_loops.end()) {
            continue;
        }
        isl_set *open = isl_set_drop_constraints_involving_dims(domain.release(), isl_dim_set, (unsigned)i, 1);
        open = isl_set_lower_bound_val(open, isl_dim_set, (unsigned)i, int64_val(context.ctx().get(), program.loops[i].min));
        domain = isl::manage(open);
    }
    return domain;
}

std::optional<isl::pw_aff> affine_expr(const Halide::Expr &e, const isl::set &domain) {
    return Converter(domain).expr(e);
}

ConditionSet condition_set(const Halide::Expr &condition, const isl::set &domain) {
    std::optional<isl::set> set = Converter(domain).condition(condition);
    if (!set) return ConditionSet{domain, false};
    return ConditionSet{set->intersect(domain), true};
}

isl::map dependence_relation(const ir::UreProgram &program, const ir::Dependence &dependence,
                             const isl::set &domain, bool *exact) {
    const unsigned n = isl_set_dim(domain.get(), isl_dim_set);
    model_check(n == program.loops.size() && dependence.distance.size() == n,
                "dependence_relation: the domain must have one dimension per loop");
    ConditionSet where = condition_set(dependence.condition, domain);
    if (exact) *exact = where.exact;
    isl_map *map = shift_map(domain, dependence.distance).release();
    map = isl_map_intersect_domain(map, where.set.copy());
    map = isl_map_intersect_range(map, domain.copy());
    return isl::manage(map);
}

isl::map shift_map(const isl::set &domain, const std::vector<int64_t> &distance) {
    const unsigned n = isl_set_dim(domain.get(), isl_dim_set);
    model_check(distance.size() == n, "shift_map: one distance per dimension");
    // { x -> y : y_i = x_i - d_i }
    isl_space *space = isl_space_map_from_set(isl_set_get_space(domain.get()));
    isl_map *map = isl_map_universe(isl_space_copy(space));
    isl_local_space *ls = isl_local_space_from_space(space);
    for (unsigned i = 0; i < n; i++) {
        isl_constraint *c = isl_constraint_alloc_equality(isl_local_space_copy(ls));
        c = set_coefficient(c, isl_dim_out, i, 1);
        c = set_coefficient(c, isl_dim_in, i, -1);
        c = set_constant(c, distance[i]);
        map = isl_map_add_constraint(map, c);
    }
    isl_local_space_free(ls);
    return isl::manage(map);
}

isl::map forward_map(const ir::SpaceTimeTransform &transform, const isl::set &source_domain) {
    const unsigned n_in = isl_set_dim(source_domain.get(), isl_dim_set);
    const unsigned n_out = (unsigned)transform.matrix.size();
    isl_ctx *ctx = isl_set_get_ctx(source_domain.get());
    std::vector<std::string> out_names;
    for (unsigned r = 0; r < n_out; r++) {
        out_names.push_back(r < transform.destination_loops.size() ? transform.destination_loops[r]
                                                                   : "d" + std::to_string(r));
    }
    isl::space range = named_set_space(ctx, out_names);
    isl_space *space = isl_space_map_from_domain_and_range(isl_set_get_space(source_domain.get()), range.copy());
    isl_map *map = isl_map_universe(isl_space_copy(space));
    isl_local_space *ls = isl_local_space_from_space(space);
    for (unsigned r = 0; r < n_out; r++) {
        model_check(transform.matrix[r].size() == n_in, "forward_map: matrix row of the wrong length");
        // out_r - sum_j m_rj in_j = 0
        isl_constraint *c = isl_constraint_alloc_equality(isl_local_space_copy(ls));
        c = set_coefficient(c, isl_dim_out, r, 1);
        for (unsigned j = 0; j < n_in; j++) {
            c = isl_constraint_set_coefficient_val(c, isl_dim_in, (int)j,
                                                   isl_val_neg(int64_val(ctx, transform.matrix[r][j])));
        }
        map = isl_map_add_constraint(map, c);
    }
    isl_local_space_free(ls);
    map = isl_map_intersect_domain(map, source_domain.copy());
    return isl::manage(map);
}

isl::map collisions(const isl::map &map) {
    // F^-1 . F relates the points with the same image; keep one ordered pair of
    // distinct points per collision.
    isl_map *same_image = isl_map_apply_range(map.copy(), isl_map_reverse(map.copy()));
    isl_map *before = isl_map_lex_lt(isl_space_domain(isl_map_get_space(map.get())));
    return isl::manage(isl_map_intersect(same_image, before));
}

std::vector<int64_t> coordinates(const isl::point &point) {
    isl_space *space = isl_point_get_space(point.get());
    const unsigned n = isl_space_dim(space, isl_dim_set);
    isl_space_free(space);
    std::vector<int64_t> result;
    for (unsigned i = 0; i < n; i++) {
        isl::val v = isl::manage(isl_point_get_coordinate_val(point.get(), isl_dim_set, (int)i));
        // A coordinate of a point of a domain with int64 bounds fits in int64.
        char *text = isl_val_to_str(v.get());
        model_check(text != nullptr && isl_val_is_int(v.get()) == isl_bool_true, "coordinates: not an integer point");
        errno = 0;
        long long c = std::strtoll(text, nullptr, 10);
        const bool fits = errno == 0;
        free(text);
        model_check(fits, "coordinates: a coordinate does not fit in int64");
        result.push_back((int64_t)c);
    }
    return result;
}

std::pair<std::vector<int64_t>, std::vector<int64_t>> first_collision(const isl::map &collisions) {
    const unsigned n = isl_map_dim(collisions.get(), isl_dim_in);
    isl::set pairs = isl::manage(isl_set_lexmin(isl_map_wrap(collisions.copy())));
    model_check(isl_set_is_empty(pairs.get()) == isl_bool_false, "first_collision: no collision");
    std::vector<int64_t> both = coordinates(isl::manage(isl_set_sample_point(pairs.copy())));
    return {std::vector<int64_t>(both.begin(), both.begin() + n), std::vector<int64_t>(both.begin() + n, both.end())};
}

}  // namespace isl_model
}  // namespace pulse
