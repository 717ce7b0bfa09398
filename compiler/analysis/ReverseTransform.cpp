#include "analysis/ReverseTransform.h"

#include <Eigen/Dense>
#include <isl/ast.h>
#include <isl/ast_build.h>
#include <isl/ctx.h>
#include <isl/set.h>
#include <isl/aff.h>
#include <isl/space.h>
#include <isl/val.h>
#include <isl/id.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "analysis/IslModel.h"
#include "exec/ExprCompiler.h"
#include "ir/ExactSimplify.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

using IntMatrix = Eigen::Matrix<int64_t, Eigen::Dynamic, Eigen::Dynamic>;

/// The transform's matrix as an Eigen matrix (rows: destination loops).
IntMatrix matrix_of(const ir::SpaceTimeTransform &t) {
    IntMatrix m(t.matrix.size(), t.source_loops.size());
    for (size_t r = 0; r < t.matrix.size(); r++) {
        for (size_t c = 0; c < t.source_loops.size(); c++) m(r, c) = t.matrix[r][c];
    }
    return m;
}

/// Exact integer determinant (fraction-free Bareiss elimination): no rounding,
/// so |det| == 1 is decided exactly.
int64_t integer_determinant(IntMatrix a) {
    const Eigen::Index n = a.rows();
    int64_t sign = 1, previous = 1;
    for (Eigen::Index k = 0; k < n - 1; k++) {
        if (a(k, k) == 0) {
            Eigen::Index swap = -1;
            for (Eigen::Index r = k + 1; r < n; r++) {
                if (a(r, k) != 0) {
                    swap = r;
                    break;
                }
            }
            if (swap < 0) return 0;
            a.row(k).swap(a.row(swap));
            sign = -sign;
        }
        for (Eigen::Index i = k + 1; i < n; i++) {
            for (Eigen::Index j = k + 1; j < n; j++) a(i, j) = (a(i, j) * a(k, k) - a(i, k) * a(k, j)) / previous;
        }
        previous = a(k, k);
    }
    return sign * a(n - 1, n - 1);
}

/// Variables named after the destination loops, in destination order.
std::vector<Expr> destination_vars(const ir::SpaceTimeTransform &t) {
    std::vector<Expr> v;
    for (const std::string &d : t.destination_loops) v.push_back(Variable::make(Int(32), d));
    return v;
}

/// x -> M x for the Exprs `x` (one per source loop).
std::vector<Expr> forward_exprs(const ir::SpaceTimeTransform &t, const std::vector<Expr> &x) {
    std::vector<Expr> out;
    for (const std::vector<int64_t> &row : t.matrix) {
        Expr e = make_zero(Int(32));
        for (size_t c = 0; c < row.size(); c++) {
            if (row[c] != 0) e = e + make_const(Int(32), row[c]) * x[c];
        }
        out.push_back(simplify_exact(e));
    }
    return out;
}

/// (space, time) has a preimage iff the candidate source point is inside the
/// box and maps back onto (space, time): exact because the map is injective.
Expr preimage_condition(const ir::UreProgram &program, const std::vector<Expr> &source_of) {
    const ir::SpaceTimeTransform &t = *program.schedule.transform;
    Expr cond = const_true();
    for (size_t i = 0; i < t.source_loops.size(); i++) {
        const ir::Loop &l = program.loop(t.source_loops[i]);
        cond = cond && source_of[i] >= make_const(Int(32), l.min) && source_of[i] <= make_const(Int(32), l.max());
    }
    std::vector<Expr> image = forward_exprs(t, source_of), dst = destination_vars(t);
    for (size_t r = 0; r < dst.size(); r++) cond = cond && image[r] == dst[r];
    if (!program.constraints.empty()) {
        // The domain's constraints (over the array's loops) at the candidate.
        std::map<std::string, Expr> at;
        for (size_t i = 0; i < t.source_loops.size(); i++) at[t.source_loops[i]] = source_of[i];
        cond = cond && substitute(at, program.domain_condition());
    }
    return simplify_exact(cond);
}

/// The exact inverse of a square unimodular matrix, or nothing.
std::optional<std::vector<Expr>> unimodular_inverse(const ir::SpaceTimeTransform &t) {
    if (t.matrix.size() != t.source_loops.size()) return std::nullopt;
    IntMatrix m = matrix_of(t);
    int64_t det = integer_determinant(m);
    if (det != 1 && det != -1) return std::nullopt;
    // The inverse of a unimodular matrix is an integer matrix: invert in
    // floating point, round, and confirm M * inverse == I in integers.
    Eigen::MatrixXd inv_d = m.cast<double>().inverse();
    IntMatrix inv = inv_d.array().round().cast<int64_t>().matrix();
    if (m * inv != IntMatrix::Identity(m.rows(), m.cols())) return std::nullopt;
    std::vector<Expr> dst = destination_vars(t), result;
    for (Eigen::Index i = 0; i < inv.rows(); i++) {
        Expr e = make_zero(Int(32));
        for (Eigen::Index j = 0; j < inv.cols(); j++) {
            if (inv(i, j) != 0) e = e + make_const(Int(32), inv(i, j)) * dst[j];
        }
        result.push_back(simplify_exact(e));
    }
    return result;
}

// ---- isl: quasi-affine inverse on the bounded domain

/// Converts an isl AST expression over the parameters o0, o1, ... (the
/// destination loops) to a Halide Expr. isl's divisions are by positive
/// constants, where Halide's integer division (rounding to -inf) is floor.
Expr from_isl(isl_ast_expr *e, const std::vector<Expr> &dst) {
    switch (isl_ast_expr_get_type(e)) {
    case isl_ast_expr_int: {
        isl_val *v = isl_ast_expr_int_get_val(e);
        int64_t k = isl_val_get_num_si(v);
        isl_val_free(v);
        return make_const(Int(32), k);
    }
    case isl_ast_expr_id: {
        isl_id *id = isl_ast_expr_id_get_id(e);
        std::string name = isl_id_get_name(id);
        isl_id_free(id);
        return dst.at(std::stoi(name.substr(1)));
    }
    case isl_ast_expr_op: break;
    default: compile_error("reverse transform: isl returned an expression Pulse cannot convert");
    }
    std::vector<Expr> a;
    for (isl_size i = 0; i < isl_ast_expr_op_get_n_arg(e); i++) {
        isl_ast_expr *arg = isl_ast_expr_op_get_arg(e, i);
        a.push_back(from_isl(arg, dst));
        isl_ast_expr_free(arg);
    }
    switch (isl_ast_expr_op_get_type(e)) {
    case isl_ast_expr_op_and:
    case isl_ast_expr_op_and_then: return a[0] && a[1];
    case isl_ast_expr_op_or:
    case isl_ast_expr_op_or_else: return a[0] || a[1];
    case isl_ast_expr_op_max: {
        Expr r = a[0];
        for (size_t i = 1; i < a.size(); i++) r = max(r, a[i]);
        return r;
    }
    case isl_ast_expr_op_min: {
        Expr r = a[0];
        for (size_t i = 1; i < a.size(); i++) r = min(r, a[i]);
        return r;
    }
    case isl_ast_expr_op_minus: return -a[0];
    case isl_ast_expr_op_add: return a[0] + a[1];
    case isl_ast_expr_op_sub: return a[0] - a[1];
    case isl_ast_expr_op_mul: return a[0] * a[1];
    case isl_ast_expr_op_div:
    case isl_ast_expr_op_fdiv_q:
    case isl_ast_expr_op_pdiv_q: return a[0] / a[1];
    case isl_ast_expr_op_pdiv_r:
    case isl_ast_expr_op_zdiv_r: return a[0] % a[1];
    case isl_ast_expr_op_cond:
    case isl_ast_expr_op_select: return select(a[0], a[1], a[2]);
    case isl_ast_expr_op_eq: return a[0] == a[1];
    case isl_ast_expr_op_le: return a[0] <= a[1];
    case isl_ast_expr_op_lt: return a[0] < a[1];
    case isl_ast_expr_op_ge: return a[0] >= a[1];
    case isl_ast_expr_op_gt: return a[0] > a[1];
    default: compile_error("reverse transform: isl returned an operation Pulse cannot convert");
    }
}

/// The lexicographic minimum of the preimage of (o0, o1, ...) on the domain,
/// as quasi-affine Exprs; single-valued because the transform is injective.
std::vector<Expr> isl_inverse(const ir::UreProgram &program) {
    const ir::SpaceTimeTransform &t = *program.schedule.transform;
    const size_t n = t.source_loops.size(), m = t.matrix.size();
    isl_model::Context context;
    const isl::set source = isl_model::iteration_domain(context, program, t.source_loops);
    // { [o] -> [i] : o = M i, i in the domain }, its o moved to parameters
    // named o0, o1, ... (the names from_isl reads back).
    isl_map *inverse = isl_map_reverse(isl_model::forward_map(t, source).release());
    isl_set *preimages = isl_map_range(isl_map_move_dims(inverse, isl_dim_param, 0, isl_dim_in, 0, (unsigned)m));
    for (size_t r = 0; r < m; r++) {
        preimages = isl_set_set_dim_name(preimages, isl_dim_param, (unsigned)r, ("o" + std::to_string(r)).c_str());
    }
    if (!preimages) compile_error("reverse transform: isl could not invert the transform of ", program.name);
    isl_set *params = isl_set_params(isl_set_copy(preimages));
    isl_pw_multi_aff *lexmin = isl_set_lexmin_pw_multi_aff(preimages);
    isl_ast_build *build = isl_ast_build_from_context(params);
    std::vector<Expr> dst = destination_vars(t), result;
    for (size_t c = 0; c < n; c++) {
        isl_pw_aff *pa = isl_pw_multi_aff_get_pw_aff(lexmin, (int)c);
        isl_ast_expr *e = isl_ast_build_expr_from_pw_aff(build, pa);
        if (!e) compile_error("reverse transform: isl could not build an expression for loop ", t.source_loops[c]);
        result.push_back(simplify_exact(from_isl(e, dst)));
        isl_ast_expr_free(e);
    }
    isl_ast_build_free(build);
    isl_pw_multi_aff_free(lexmin);
    return result;
}

/// Checks reverse(forward(x)) == x at every point x of the domain of the
/// source loops by enumeration (the domains Pulse maps onto one array are small);
/// returns "" or a description of the first failing point.
std::string find_reverse_witness(const ir::UreProgram &program, const std::vector<Expr> &source_of) {
    const ir::SpaceTimeTransform &t = *program.schedule.transform;
    const size_t n = t.source_loops.size(), m = t.matrix.size();
    ExprCompilerHooks hooks;
    hooks.variable_slot = [&](const std::string &v) -> int {
        for (size_t r = 0; r < m; r++) {
            if (t.destination_loops[r] == v) return (int)r;
        }
        compile_error("the reverse transform uses '", v, "', which is not a destination loop (",
                      t.destination_loops.front(), ", ...); write it over the destination loops only");
    };
    hooks.recurrence_call = [](const Call *op, std::vector<Closure>) -> Closure {
        compile_error("the reverse transform calls ", ir::to_source(Expr(op)), "; it may only use the destination loops");
    };
    hooks.input_call = hooks.recurrence_call;
    std::vector<Closure> rev;
    for (const Expr &e : source_of) rev.push_back(compile_expr(e, hooks));
    // The domain's constraints, over the source loops (x's coordinates).
    Closure in_domain;
    if (!program.constraints.empty()) {
        ExprCompilerHooks source_hooks;
        source_hooks.variable_slot = [&](const std::string &v) -> int {
            return (int)(std::find(t.source_loops.begin(), t.source_loops.end(), v) - t.source_loops.begin());
        };
        in_domain = compile_expr(program.domain_condition(), source_hooks);
    }
    std::vector<const ir::Loop *> loops;
    for (const std::string &v : t.source_loops) loops.push_back(&program.loop(v));
    std::vector<int64_t> x(n), y(m);
    for (size_t c = 0; c < n; c++) x[c] = loops[c]->min;
    EvalState state, at_source;
    state.coords = y.data();
    at_source.coords = x.data();
    while (true) {
        const bool inside = !in_domain || in_domain(at_source).is_true();
        for (size_t r = 0; r < m && inside; r++) {
            y[r] = 0;
            for (size_t c = 0; c < n; c++) y[r] += t.matrix[r][c] * x[c];
        }
        for (size_t c = 0; c < n && inside; c++) {
            int64_t got = rev[c](state).as_int();
            if (got != x[c]) {
                std::ostringstream w;
                w << "at (";
                for (size_t k = n; k-- > 0;) w << t.source_loops[k] << "=" << x[k] << (k ? ", " : "");
                w << ") the transform gives (";
                for (size_t r = 0; r < m; r++) w << (r ? ", " : "") << t.destination_loops[r] << "=" << y[r];
                w << ") but the reverse transform gives " << t.source_loops[c] << " = " << got << " ("
                  << t.source_loops[c] << " = " << ir::to_source(source_of[c]) << ")";
                return w.str();
            }
        }
        size_t c = 0;
        for (; c < n; c++) {
            if (x[c] < loops[c]->max()) {
                x[c]++;
                break;
            }
            x[c] = loops[c]->min;
        }
        if (c == n) return "";
    }
}

int64_t box_size(const ir::UreProgram &program) {
    int64_t size = 1;
    for (const std::string &v : program.schedule.transform->source_loops) size *= program.loop(v).extent;
    return size;
}

}  // namespace

ReverseMap compute_reverse_map(const ir::UreProgram &program) {
    if (!program.schedule.transform) compile_error(program.name, " has no space-time transform to invert");
    const ir::SpaceTimeTransform &t = *program.schedule.transform;
    ReverseMap result;
    if (!t.reverse.empty()) {
        if (t.reverse.size() != t.source_loops.size()) {
            compile_error("the reverse transform of ", program.name, " gives ", t.reverse.size(),
                          " expressions, but the transform has ", t.source_loops.size(),
                          " source loops; give one expression per source loop");
        }
        // Enumeration is exact; it is bounded so a huge domain fails loudly
        // instead of silently taking minutes.
        if (box_size(program) > (int64_t(1) << 26)) {
            compile_error("the reverse transform of ", program.name, " cannot be verified: the domain has ",
                          box_size(program), " points; verify it at smaller bounds, or omit it to let Pulse invert the transform");
        }
        std::string witness = find_reverse_witness(program, t.reverse);
        if (!witness.empty()) {
            compile_error("the reverse transform of ", program.name, " does not invert the space-time transform: ",
                          witness, "; fix the reverse transform, or omit it to let Pulse invert the transform");
        }
        for (const Expr &e : t.reverse) result.source_of.push_back(simplify_exact(cast(Int(32), e)));
        result.how = "user reverse transform (verified)";
    } else if (auto inverse = unimodular_inverse(t)) {
        result.source_of = *inverse;
        result.how = "unimodular inverse";
    } else {
        result.source_of = isl_inverse(program);
        result.how = "isl quasi-affine inverse";
    }
    // A derived inverse is checked as well where that is cheap: a wrong one
    // would silently permute the computation.
    if (t.reverse.empty() && box_size(program) <= (int64_t(1) << 20)) {
        std::string witness = find_reverse_witness(program, result.source_of);
        if (!witness.empty()) {
            internal_error("the ", result.how, " of the transform of ", program.name, " is wrong ",
                          witness, "; is the transform injective on the domain? (run --check)");
        }
    }
    result.has_preimage = preimage_condition(program, result.source_of);
    return result;
}

}  // namespace pulse
