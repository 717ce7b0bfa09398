#include "analysis/RequiredInputs.h"

#include <isl/ast.h>
#include <isl/ast_build.h>
#include <isl/constraint.h>
#include <isl/ctx.h>
#include <isl/map.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/val.h>

#include "analysis/IslModel.h"
#include "ir/ExactSimplify.h"
#include "ir/KernelIR.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// The outputs' run-time sizes as isl parameters, by name: OUT_min<d>, OUT_extent<d>.
struct SizeParameters {
    std::vector<std::string> names;
    std::map<std::string, Expr> values;  ///< each as kir::buffer_min / buffer_extent
};

SizeParameters size_parameters(const ir::UreProgram &p) {
    SizeParameters s;
    for (const ir::Ure *u : p.outputs()) {
        for (size_t d = 0; d < u->output_index().size(); d++) {
            const std::string min = u->name + "_min" + std::to_string(d), extent = u->name + "_extent" + std::to_string(d);
            s.names.push_back(min), s.values[min] = kir::buffer_min(u->name, (int)d);
            s.names.push_back(extent), s.values[extent] = kir::buffer_extent(u->name, (int)d);
        }
    }
    return s;
}

/// Parameter `name` of `set`'s space as an affine function on `set`'s domain.
isl::pw_aff parameter(const isl::set &set, const std::string &name) {
    const int pos = isl_set_find_dim_by_name(set.get(), isl_dim_param, name.c_str());
    if (pos < 0) internal_error("required_input_ranges: no parameter ", name);
    isl_aff *aff = isl_aff_var_on_domain(isl_local_space_from_space(isl_set_get_space(set.get())), isl_dim_param, (unsigned)pos);
    return isl::manage(isl_pw_aff_from_aff(aff));
}

/// isl returned nothing: its operation bound ran out, or it failed.
struct IslGaveUp {};

/// An isl AST expression over the size parameters as a Halide expression.
Expr from_ast(isl_ast_expr *e, const SizeParameters &sizes) {
    if (!e) throw IslGaveUp{};
    Expr result;
    switch (isl_ast_expr_get_type(e)) {
    case isl_ast_expr_int: {
        isl_val *v = isl_ast_expr_int_get_val(e);
        result = make_const(Int(64), (int64_t)isl_val_get_num_si(v));
        isl_val_free(v);
        break;
    }
    case isl_ast_expr_id: {
        isl_id *id = isl_ast_expr_id_get_id(e);
        const std::string name = isl_id_get_name(id);
        isl_id_free(id);
        auto it = sizes.values.find(name);
        if (it == sizes.values.end()) internal_error("required_input_ranges: unknown name ", name);
        result = cast(Int(64), it->second);
        break;
    }
    case isl_ast_expr_op: {
        std::vector<Expr> a;
        const int n = isl_ast_expr_op_get_n_arg(e);
        for (int i = 0; i < n; i++) {
            isl_ast_expr *arg = isl_ast_expr_op_get_arg(e, i);
            a.push_back(from_ast(arg, sizes));
            isl_ast_expr_free(arg);
        }
        auto fold = [&](auto op) {
            Expr r = a[0];
            for (size_t i = 1; i < a.size(); i++) r = op(r, a[i]);
            return r;
        };
        switch (isl_ast_expr_op_get_type(e)) {
        case isl_ast_expr_op_and:
        case isl_ast_expr_op_and_then: result = fold([](Expr x, Expr y) { return x && y; }); break;
        case isl_ast_expr_op_or:
        case isl_ast_expr_op_or_else: result = fold([](Expr x, Expr y) { return x || y; }); break;
        case isl_ast_expr_op_max: result = fold([](Expr x, Expr y) { return max(x, y); }); break;
        case isl_ast_expr_op_min: result = fold([](Expr x, Expr y) { return min(x, y); }); break;
        case isl_ast_expr_op_minus: result = make_zero(Int(64)) - a[0]; break;
        case isl_ast_expr_op_add: result = a[0] + a[1]; break;
        case isl_ast_expr_op_sub: result = a[0] - a[1]; break;
        case isl_ast_expr_op_mul: result = a[0] * a[1]; break;
        // Halide's division rounds down, its remainder is never negative:
        // isl's floor division; a remainder isl compares with 0 only.
        case isl_ast_expr_op_div:
        case isl_ast_expr_op_fdiv_q:
        case isl_ast_expr_op_pdiv_q: result = a[0] / a[1]; break;
        case isl_ast_expr_op_pdiv_r:
        case isl_ast_expr_op_zdiv_r: result = a[0] % a[1]; break;
        case isl_ast_expr_op_cond:
        case isl_ast_expr_op_select: result = select(a[0], a[1], a[2]); break;
        case isl_ast_expr_op_eq: result = a[0] == a[1]; break;
        case isl_ast_expr_op_le: result = a[0] <= a[1]; break;
        case isl_ast_expr_op_lt: result = a[0] < a[1]; break;
        case isl_ast_expr_op_ge: result = a[0] >= a[1]; break;
        case isl_ast_expr_op_gt: result = a[0] > a[1]; break;
        default: internal_error("required_input_ranges: an isl operation of an unexpected kind (", (int)isl_ast_expr_op_get_type(e), ")");
        }
        break;
    }
    default: internal_error("required_input_ranges: an isl expression of an unexpected kind (", (int)isl_ast_expr_get_type(e), ")");
    }
    return result;
}

/// `set` (over the size parameters only) as a condition.
Expr condition_of(const isl::set &params, const SizeParameters &sizes) {
    isl_ast_build *build = isl_ast_build_from_context(isl_set_universe(isl_set_get_space(params.get())));
    isl_ast_expr *e = isl_ast_build_expr_from_set(build, params.copy());
    Expr result = from_ast(e, sizes);
    isl_ast_expr_free(e);
    isl_ast_build_free(build);
    return simplify_exact(result);
}

/// `value` (over the size parameters) as an expression, on its domain.
Expr value_of(const isl::pw_aff &value, const SizeParameters &sizes) {
    isl_ast_build *build = isl_ast_build_from_context(isl_pw_aff_domain(value.copy()));
    isl_ast_expr *e = isl_ast_build_expr_from_pw_aff(build, value.copy());
    Expr result = from_ast(e, sizes);
    isl_ast_expr_free(e);
    isl_ast_build_free(build);
    return simplify_exact(result);
}

/// At most this many of isl's operations per program.
constexpr unsigned long max_operations = 200000;

std::map<std::string, std::vector<std::optional<kir::RequiredRange>>> required_ranges(
    const ir::UreProgram &p, const isl_model::Context &context, const SizeParameters &sizes,
    std::map<std::string, std::vector<std::optional<kir::RequiredRange>>> ranges);

}  // namespace

/// The ranges the input accesses require (tables have none).
static std::map<std::string, std::vector<std::optional<kir::RequiredRange>>> required_access_ranges(const ir::UreProgram &p) {
    std::map<std::string, std::vector<std::optional<kir::RequiredRange>>> ranges;
    for (const ir::InputDecl &in : p.inputs) ranges[in.name].assign(in.dimensions, std::nullopt);
    const SizeParameters sizes = size_parameters(p);
    isl_model::Context context;
    // A bound on isl's work: past it (a closure isl cannot find quickly, as
    // for dependences across the instances of gpu_grid_sync), nothing is
    // checked rather than the generator stalling.
    isl_ctx_set_max_operations(context.ctx().get(), max_operations);
    try {
        return required_ranges(p, context, sizes, ranges);
    } catch (const isl::exception_quota &) {
    } catch (const isl::exception &) {
        // A C call past the bound returned nothing, which the next binding refused.
        if (isl_ctx_last_error(context.ctx().get()) != isl_error_quota) throw;
    } catch (const IslGaveUp &) {
        if (isl_ctx_last_error(context.ctx().get()) != isl_error_quota) {
            internal_error("required_input_ranges: isl failed: ", isl_ctx_last_error_msg(context.ctx().get()) ? isl_ctx_last_error_msg(context.ctx().get()) : "");
        }
    }
    for (auto &[name, dims] : ranges) dims.assign(dims.size(), std::nullopt);
    return ranges;
}

namespace {

std::map<std::string, std::vector<std::optional<kir::RequiredRange>>> required_ranges(
    const ir::UreProgram &p, const isl_model::Context &context, const SizeParameters &sizes,
    std::map<std::string, std::vector<std::optional<kir::RequiredRange>>> ranges) {
    const isl::set plain = isl_model::runtime_domain(context, p);
    // The same domain with the size parameters.
    isl_set *with_sizes = isl_set_add_dims(plain.copy(), isl_dim_param, (unsigned)sizes.names.size());
    for (size_t i = 0; i < sizes.names.size(); i++) with_sizes = isl_set_set_dim_name(with_sizes, isl_dim_param, (unsigned)i, sizes.names[i].c_str());
    const isl::set domain = isl::manage(with_sizes);
    // The output points inside the extents.
    isl::set needed = isl::manage(isl_set_empty(isl_set_get_space(domain.get())));
    for (const ir::Ure *u : p.outputs()) {
        isl::set points = isl_model::condition_set(ir::defined_condition(u->value), domain).set;
        const std::vector<Expr> index = u->output_index();
        for (size_t d = 0; d < index.size(); d++) {
            std::optional<isl::pw_aff> f = isl_model::affine_expr(index[d], domain);
            if (!f) return ranges;  // an output index isl cannot take: nothing is checked
            const isl::pw_aff min = parameter(domain, u->name + "_min" + std::to_string(d));
            const isl::pw_aff last = min.add(parameter(domain, u->name + "_extent" + std::to_string(d))).add(
                isl::manage(isl_pw_aff_val_on_domain(domain.copy(), isl_val_negone(context.ctx().get()))));
            points = points.intersect(min.le_set(*f)).intersect(f->le_set(last));
        }
        needed = needed.unite(points);
    }
    // And every point a chain of dependences reaches from them.
    if (!p.dependences.empty()) {
        isl_map *reads = nullptr;
        for (const ir::Dependence &dep : p.dependences) {
            isl_map *r = isl_model::dependence_relation(p, dep, plain).release();
            reads = reads ? isl_map_union(reads, r) : r;
        }
        isl_bool exact = isl_bool_false;
        isl_map *closure = isl_map_transitive_closure(reads, &exact);
        closure = isl_map_align_params(closure, isl_set_get_space(domain.get()));
        needed = needed.unite(isl::manage(isl_set_apply(needed.copy(), closure)));
    }
    needed = needed.coalesce();
    // The reads of the needed points, per input.
    std::map<std::string, isl::set> read;
    for (const ir::InputAccess &a : p.input_accesses) {
        isl_model::ConditionSet where = isl_model::condition_set(a.condition, domain);
        isl_multi_pw_aff *index = nullptr;
        isl_pw_aff_list *list = isl_pw_aff_list_alloc(context.ctx().get(), (int)a.index.size());
        for (const Expr &i : a.index) {
            std::optional<isl::pw_aff> f = isl_model::affine_expr(i, domain);
            if (!f) {
                isl_pw_aff_list_free(list);
                return ranges;
            }
            list = isl_pw_aff_list_add(list, f->release());
        }
        isl_space *range = isl_space_align_params(isl_space_set_alloc(context.ctx().get(), 0, (unsigned)a.index.size()),
                                                  isl_set_get_space(domain.get()));
        isl_space *space = isl_space_map_from_domain_and_range(isl_set_get_space(domain.get()), range);
        index = isl_multi_pw_aff_from_pw_aff_list(space, list);
        isl::set image = isl::manage(isl_set_apply(needed.intersect(where.set).release(), isl_map_from_multi_pw_aff(index)));
        auto it = read.find(a.input);
        if (it == read.end()) read.emplace(a.input, image);
        else it->second = it->second.unite(image);
    }
    for (auto &[name, image] : read) {
        image = image.coalesce();
        if (image.is_empty()) continue;
        for (int d = 0; d < (int)ranges[name].size(); d++) {
            isl::pw_aff low = isl::manage(isl_set_dim_min(image.copy(), d)), high = isl::manage(isl_set_dim_max(image.copy(), d));
            if (isl_pw_aff_involves_nan(low.get()) || isl_pw_aff_involves_nan(high.get())) continue;
            // A dimension the outputs do not bound has no finite maximum.
            isl::set bounded = isl::manage(isl_pw_aff_domain(low.copy())).intersect(isl::manage(isl_pw_aff_domain(high.copy())));
            if (!bounded.is_equal(isl::manage(isl_set_params(image.copy())))) continue;
            ranges[name][d] = kir::RequiredRange{condition_of(bounded, sizes), value_of(low, sizes), value_of(high, sizes)};
        }
    }
    return ranges;
}

}  // namespace

std::map<std::string, std::vector<std::optional<kir::RequiredRange>>> required_input_ranges(const ir::UreProgram &p) {
    std::map<std::string, std::vector<std::optional<kir::RequiredRange>>> ranges = required_access_ranges(p);
    // A table is read anywhere in it, at any run-time size.
    for (const ir::InputDecl &in : p.inputs) {
        for (size_t d = 0; d < in.table_extents.size(); d++) {
            ranges[in.name][d] = kir::RequiredRange{const_true(), make_const(Int(64), 0), make_const(Int(64), in.table_extents[d] - 1)};
        }
    }
    return ranges;
}

}  // namespace pulse
