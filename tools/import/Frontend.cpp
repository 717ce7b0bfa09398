// From Clang's AST of one C function to the affine program of Model.h. Every
// construct outside the accepted subset (docs/import.md) is rejected here, at
// its location, before any spec is written.
#include "Frontend.h"

#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/Expr.h>
#include <clang/AST/Stmt.h>
#include <clang/AST/StmtCXX.h>
#include <clang/Lex/Lexer.h>

#include <set>

using namespace clang;

namespace pulse_import {

namespace {

class Builder {
public:
    Builder(ASTContext &ctx, Diagnostics &diag, Program &prog) : ctx(ctx), diag(diag), prog(prog) {}

    void function(const FunctionDecl *f);

private:
    ASTContext &ctx;
    Diagnostics &diag;
    Program &prog;
    std::map<const VarDecl *, std::string> int_params, loop_vars, locals, arrays;
    int depth = 0;
    std::vector<bool> loop_seen{false};  ///< per depth: the inner loop was already walked

    [[noreturn]] void reject(SourceRange r, const std::string &m) { diag.reject(r, m); }

    std::string text(SourceRange r) const {
        return Lexer::getSourceText(CharSourceRange::getTokenRange(r), ctx.getSourceManager(), ctx.getLangOpts()).str();
    }
    std::string text(const clang::Stmt *s) const { return text(s->getSourceRange()); }

    std::optional<CType> scalar_type(QualType t) const {
        const auto *b = t.getCanonicalType()->getAs<BuiltinType>();
        if (!b) return std::nullopt;
        switch (b->getKind()) {
        case BuiltinType::Int: return CType::Int;
        case BuiltinType::Float: return CType::Float;
        case BuiltinType::Double: return CType::Double;
        default: return std::nullopt;
        }
    }

    CType value_type(const Expr *e) {
        auto t = scalar_type(e->getType());
        if (!t) reject(e->getSourceRange(), text(e) + " has type " + e->getType().getAsString() + ": values must be int, float or double");
        return *t;
    }

    const VarDecl *var_of(const Expr *e) const {
        if (const auto *r = dyn_cast<DeclRefExpr>(e->IgnoreParenImpCasts())) return dyn_cast<VarDecl>(r->getDecl());
        return nullptr;
    }

    /// The variable `e` names, after its subscripts (outermost first); anything
    /// else (a pointer expression) is pointer arithmetic, rejected with `why`.
    const VarDecl *accessed(const Expr *e, std::vector<const Expr *> &subscripts, const std::string &why) {
        const Expr *base = e->IgnoreParenImpCasts();
        while (const auto *a = dyn_cast<ArraySubscriptExpr>(base)) {
            subscripts.insert(subscripts.begin(), a->getIdx());
            base = a->getBase()->IgnoreParenImpCasts();
        }
        const VarDecl *v = var_of(base);
        if (!v || !isa<DeclRefExpr>(base)) reject(e->getSourceRange(), "pointer arithmetic: " + why);
        return v;
    }
    void parameter(const ParmVarDecl *p);
    Poly affine(const Expr *e, const std::string &what, bool params_only);
    Poly loop_bound(const Expr *e, const VarDecl *loop_var);
    std::optional<std::string> condition(const Expr *e, bool negate, std::string *why);
    std::string require_condition(const Expr *e);
    ValP value(const Expr *e, const std::string &guard, int stmt);
    ValP read(const Expr *e, const std::string &guard, int stmt);
    void lvalue(const Expr *e, Stmt &s);
    void body(const clang::Stmt *s, const std::string &guard, bool last_in_function);
    void for_loop(const ForStmt *f);
    void assignment(const Expr *e, const std::string &guard, const clang::Stmt *whole);
    bool fold_if(const IfStmt *s, const std::string &guard);
    void declaration(const DeclStmt *d, const std::string &guard);
    int new_stmt(const clang::Stmt *whole, const std::string &guard);
};

std::string conj(const std::string &a, const std::string &b) {
    if (a.empty()) return b;
    if (b.empty()) return a;
    return "(" + a + ") and (" + b + ")";
}

void Builder::parameter(const ParmVarDecl *p) {
    const std::string name = p->getNameAsString();
    if (name.empty()) reject(p->getSourceRange(), "unnamed parameter: every parameter needs a name");
    QualType t = p->getOriginalType();
    if (auto st = scalar_type(t); st && !t->isPointerType()) {
        if (*st != CType::Int) {
            reject(p->getSourceRange(), "scalar parameter '" + name + "' of type " + t.getAsString() +
                                            ": only int parameters (sizes) are accepted; pass values in arrays");
        }
        int_params[p] = name;
        prog.int_params.push_back(name);
        prog.params.push_back({name, false});
        return;
    }
    Array a;
    a.name = name;
    a.loc = p->getLocation();
    if (const auto *pt = t->getAs<PointerType>()) t = pt->getPointeeType();
    else if (const auto *at = ctx.getAsArrayType(t)) t = at->getElementType();
    else reject(p->getSourceRange(), "parameter '" + name + "' of type " + t.getAsString() + " is neither int nor an array");
    while (const auto *at = ctx.getAsArrayType(t)) {
        if (const auto *ca = dyn_cast<ConstantArrayType>(at)) {
            a.inner_extents.push_back(Poly::constant((int64_t)ca->getSize().getZExtValue()));
        } else if (const auto *va = dyn_cast<VariableArrayType>(at)) {
            a.inner_extents.push_back(affine(va->getSizeExpr(), "array extent", true));
        } else {
            reject(p->getSourceRange(), "array parameter '" + name + "' needs the extents of its inner dimensions");
        }
        a.dims++;
        t = at->getElementType();
    }
    if (t->isPointerType()) {
        reject(p->getSourceRange(), "parameter '" + name + "' is a pointer to a pointer: declare arrays as T *x or T x[N][M]");
    }
    auto st = scalar_type(t);
    if (!st) reject(p->getSourceRange(), "array '" + name + "' of " + t.getAsString() + ": elements must be int, float or double");
    a.type = *st;
    arrays[p] = name;
    prog.arrays[name] = a;
    prog.params.push_back({name, true});
}

// An index, condition or bound, affine in the loop variables (coefficients
// may be products of parameters); `params_only` (an array extent): no loop
// variable at all.
Poly Builder::affine(const Expr *e, const std::string &what, bool params_only) {
    e = e->IgnoreParens();
    if (const auto *c = dyn_cast<ImplicitCastExpr>(e)) {
        if (!c->getType()->isIntegerType()) reject(e->getSourceRange(), what + " " + text(e) + " is not an integer");
        return affine(c->getSubExpr(), what, params_only);
    }
    if (const auto *lit = dyn_cast<IntegerLiteral>(e)) return Poly::constant((int64_t)lit->getValue().getSExtValue());
    if (const auto *v = var_of(e); v && isa<DeclRefExpr>(e)) {
        if (int_params.count(v)) return Poly::symbol(int_params.at(v));
        if (loop_vars.count(v)) {
            if (params_only) {
                reject(e->getSourceRange(), what + " depends on the loop variable '" + loop_vars.at(v) +
                                                "': it must be affine in the int parameters only");
            }
            return Poly::symbol(loop_vars.at(v));
        }
        reject(e->getSourceRange(), "non-affine " + what + ": '" + v->getNameAsString() +
                                        "' is not a loop variable or an int parameter");
    }
    if (const auto *u = dyn_cast<UnaryOperator>(e)) {
        if (u->getOpcode() == UO_Minus) return Poly::constant(0) - affine(u->getSubExpr(), what, params_only);
        if (u->getOpcode() == UO_Plus) return affine(u->getSubExpr(), what, params_only);
    }
    if (const auto *b = dyn_cast<BinaryOperator>(e)) {
        switch (b->getOpcode()) {
        case BO_Add: return affine(b->getLHS(), what, params_only) + affine(b->getRHS(), what, params_only);
        case BO_Sub: return affine(b->getLHS(), what, params_only) - affine(b->getRHS(), what, params_only);
        case BO_Mul: {
            Poly p = affine(b->getLHS(), what, params_only) * affine(b->getRHS(), what, params_only);
            std::vector<std::string> vars;
            for (const auto &l : loop_vars) vars.push_back(l.second);
            if (p.degree_in(vars) > 1) {
                reject(e->getSourceRange(), "non-affine " + what + " " + text(e) + ": a product of loop variables");
            }
            return p;
        }
        case BO_Div:
        case BO_Rem:
            reject(e->getSourceRange(), "non-affine " + what + " " + text(e) + ": division and remainder are not affine");
        default: break;
        }
    }
    if (isa<ArraySubscriptExpr>(e)) {
        reject(e->getSourceRange(), "non-affine " + what + ": it depends on the array element " + text(e));
    }
    reject(e->getSourceRange(), "non-affine " + what + " " + text(e));
}

// A loop bound: affine in the int parameters and in the variables of the
// enclosing loops (a triangle, j <= i, is a bound that uses i); the spec gives
// it to set_bounds as an Expr of those loops. The walk here precedes affine()
// so that every refusal names the loop, what it may use, and an example.
Poly Builder::loop_bound(const Expr *e, const VarDecl *loop_var) {
    const std::string name = loop_var->getNameAsString();
    std::string outer;
    for (const auto &l : prog.loops) outer += (outer.empty() ? "" : ", ") + l.var;
    const std::string fix = "; a bound of loop '" + name + "' must be affine in the int parameters" +
                            (outer.empty() ? ", e.g. " + name + " < N - 1"
                                           : " and the enclosing loop variables (" + outer + "), e.g. " + name + " <= " +
                                                 prog.loops.back().var + " (a triangle)");
    const std::string bound = "the bound " + text(e) + " of loop '" + name + "'";
    std::function<void(const clang::Stmt *)> walk = [&](const clang::Stmt *s) {
        if (!s) return;
        for (const auto *c : s->children()) walk(c);  // innermost first: the message names the smallest culprit
        if (const auto *r = dyn_cast<DeclRefExpr>(s)) {
            const auto *d = dyn_cast<VarDecl>(r->getDecl());
            if (!d) return;  // a function: its call is refused below
            if (d == loop_var) reject(r->getSourceRange(), bound + " uses '" + name + "' itself" + fix);
            if (!int_params.count(d) && !loop_vars.count(d)) {
                reject(r->getSourceRange(), bound + " uses '" + text(r) + "', neither an int parameter nor an enclosing loop variable" + fix);
            }
        } else if (isa<CallExpr>(s)) {
            reject(s->getSourceRange(), bound + " calls " + text(cast<Expr>(s)) + fix);
        } else if (isa<ArraySubscriptExpr>(s)) {
            reject(s->getSourceRange(), bound + " reads the array element " + text(cast<Expr>(s)) + fix);
        } else if (const auto *b = dyn_cast<BinaryOperator>(s)) {
            if (b->getOpcode() == BO_Div || b->getOpcode() == BO_Rem) {
                reject(b->getSourceRange(), bound + " divides (" + text(b) + ")" + fix);
            }
            // A product of two loop variables, of a parameter and a loop
            // variable (isl's bounds are affine in both), or of two parameters.
            // (Its factors passed this walk already, so affine() accepts them.)
            if (b->getOpcode() != BO_Mul) return;
            const Poly p = affine(b->getLHS(), "loop bound", false) * affine(b->getRHS(), "loop bound", false);
            if (p.degree() <= 1) return;
            std::vector<std::string> vars;
            for (const auto &l : loop_vars) vars.push_back(l.second);
            const int in_loops = p.degree_in(vars);
            reject(b->getSourceRange(), bound + " is not affine: " + text(b) + " is a product of " +
                                            (in_loops > 1 ? "loop variables" : in_loops ? "a parameter and a loop variable" : "parameters") + fix);
        }
    };
    walk(e);
    return affine(e, "bound of loop '" + name + "'", false);
}

// An affine condition as isl text, or nullopt (with the reason) if it is not one.
std::optional<std::string> Builder::condition(const Expr *e, bool negate, std::string *why) {
    e = e->IgnoreParenImpCasts();
    if (const auto *u = dyn_cast<UnaryOperator>(e); u && u->getOpcode() == UO_LNot) {
        return condition(u->getSubExpr(), !negate, why);
    }
    const auto *b = dyn_cast<BinaryOperator>(e);
    if (!b) {
        *why = text(e) + " is not a comparison";
        return std::nullopt;
    }
    if (b->getOpcode() == BO_LAnd || b->getOpcode() == BO_LOr) {
        auto l = condition(b->getLHS(), negate, why);
        auto r = condition(b->getRHS(), negate, why);
        if (!l || !r) return std::nullopt;
        const bool is_and = (b->getOpcode() == BO_LAnd) != negate;
        return "(" + *l + (is_and ? ") and (" : ") or (") + *r + ")";
    }
    if (!b->isComparisonOp()) {
        *why = text(e) + " is not a comparison";
        return std::nullopt;
    }
    // Probe: a comparison of values (not indices) is no affine condition.
    for (const Expr *side : {b->getLHS(), b->getRHS()}) {
        if (!side->IgnoreParenImpCasts()->getType()->isIntegerType()) {
            *why = text(side) + " is not an integer expression";
            return std::nullopt;
        }
        bool ok = true;
        std::function<void(const clang::Stmt *)> scan = [&](const clang::Stmt *s) {
            if (!s) return;
            if (const auto *r = dyn_cast<DeclRefExpr>(s)) {
                const auto *v = dyn_cast<VarDecl>(r->getDecl());
                if (!v || (!int_params.count(v) && !loop_vars.count(v))) ok = false;
            }
            if (isa<ArraySubscriptExpr>(s) || isa<CallExpr>(s)) ok = false;
            for (const auto *c : s->children()) scan(c);
        };
        scan(side);
        if (!ok) {
            *why = text(side) + " depends on values, not only on loop variables and int parameters";
            return std::nullopt;
        }
    }
    const std::vector<std::string> params = prog.int_params;
    const std::string l = affine(b->getLHS(), "condition", false).isl(params);
    const std::string r = affine(b->getRHS(), "condition", false).isl(params);
    BinaryOperatorKind op = b->getOpcode();
    if (negate) op = BinaryOperator::negateComparisonOp(op);
    switch (op) {
    case BO_LT: return l + " < " + r;
    case BO_LE: return l + " <= " + r;
    case BO_GT: return l + " > " + r;
    case BO_GE: return l + " >= " + r;
    case BO_EQ: return l + " = " + r;
    default: return "(" + l + " < " + r + ") or (" + l + " > " + r + ")";
    }
}

std::string Builder::require_condition(const Expr *e) {
    std::string why;
    auto c = condition(e, false, &why);
    if (!c) {
        reject(e->getSourceRange(), "the condition of this if is not affine (" + why +
                                        "); compute a value conditionally with ?: (a select) instead");
    }
    return *c;
}

ValP make(Val::Kind k, CType t) {
    auto v = std::make_shared<Val>();
    v->kind = k;
    v->type = t;
    return v;
}

/// `v` as type `t`: itself, or a cast (C's conversions, spelled out).
ValP converted(ValP v, CType t) {
    if (v->type == t) return v;
    auto c = make(Val::Cast, t);
    c->args = {v};
    return c;
}

// An array element or local scalar read as a value.
ValP Builder::read(const Expr *e, const std::string &guard, int stmt) {
    Read r;
    r.stmt = stmt;
    r.guard = guard;
    r.range = e->getSourceRange();
    r.text = text(e);
    std::vector<const Expr *> subscripts;
    const VarDecl *v = accessed(e, subscripts, text(e) + " does not index an array parameter by name");
    CType type;
    if (locals.count(v) && subscripts.empty()) {
        r.target = locals.at(v);
        type = prog.scalars.at(r.target);
    } else if (arrays.count(v)) {
        Array &a = prog.arrays.at(arrays.at(v));
        if ((int)subscripts.size() != a.dims) {
            reject(e->getSourceRange(), "array '" + a.name + "' has " + std::to_string(a.dims) + " dimension(s) but " +
                                            text(e) + " gives " + std::to_string(subscripts.size()) + " index(es)");
        }
        for (const Expr *i : subscripts) r.index.push_back(affine(i, "index", false));
        r.target = a.name;
        a.read = true;
        type = a.type;
    } else if (loop_vars.count(v) || int_params.count(v)) {
        reject(e->getSourceRange(), text(e) + " is not an array");
    } else {
        reject(e->getSourceRange(), "'" + v->getNameAsString() + "' is neither a parameter, a loop variable nor a local scalar of this function");
    }
    auto val = make(Val::Read, type);
    val->name = r.target;
    val->read = (int)prog.reads.size();
    prog.reads.push_back(r);
    return val;
}

ValP Builder::value(const Expr *e, const std::string &guard, int stmt) {
    e = e->IgnoreParens();
    if (const auto *c = dyn_cast<ImplicitCastExpr>(e)) {
        switch (c->getCastKind()) {
        case CK_LValueToRValue:
            if (c->getSubExpr()->getType()->isPointerType()) break;
            return value(c->getSubExpr(), guard, stmt);
        case CK_IntegralCast:
        case CK_IntegralToFloating:
        case CK_FloatingCast:
        case CK_FloatingToIntegral:
        case CK_IntegralToBoolean:
        case CK_FloatingToBoolean: {
            auto t = scalar_type(c->getType());
            if (c->getType()->isBooleanType()) t = CType::Bool;
            if (!t) reject(e->getSourceRange(), "conversion to " + c->getType().getAsString() + " is not supported");
            return converted(value(c->getSubExpr(), guard, stmt), *t);
        }
        default: break;
        }
    }
    if (const auto *c = dyn_cast<CStyleCastExpr>(e)) {
        auto t = scalar_type(c->getType());
        if (!t) reject(e->getSourceRange(), "cast to " + c->getType().getAsString() + ": only int, float and double values are accepted");
        return converted(value(c->getSubExpr(), guard, stmt), *t);
    }
    if (e->getType()->isPointerType() || e->getType()->isArrayType()) {
        reject(e->getSourceRange(), "pointer arithmetic: " + text(e) + " is a pointer; read array elements by index (x[i])");
    }
    if (const auto *lit = dyn_cast<IntegerLiteral>(e)) {
        auto v = make(Val::Const, CType::Int);
        v->ival = (int64_t)lit->getValue().getSExtValue();
        return v;
    }
    if (const auto *lit = dyn_cast<FloatingLiteral>(e)) {
        auto v = make(Val::Const, value_type(e));
        v->fval = lit->getValueAsApproximateDouble();
        return v;
    }
    if (isa<ArraySubscriptExpr>(e)) return read(e, guard, stmt);
    if (const auto *r = dyn_cast<DeclRefExpr>(e)) {
        const auto *v = dyn_cast<VarDecl>(r->getDecl());
        if (v && int_params.count(v)) {
            auto p = make(Val::Param, CType::Int);
            p->name = int_params.at(v);
            return p;
        }
        if (v && loop_vars.count(v)) {
            auto p = make(Val::LoopVar, CType::Int);
            p->name = loop_vars.at(v);
            return p;
        }
        return read(e, guard, stmt);
    }
    if (const auto *u = dyn_cast<UnaryOperator>(e)) {
        switch (u->getOpcode()) {
        case UO_Minus:
        case UO_LNot: {
            ValP inner = value(u->getSubExpr(), guard, stmt);
            auto v = make(Val::Unary, u->getOpcode() == UO_LNot ? CType::Bool : inner->type);
            v->op = u->getOpcode() == UO_LNot ? "!" : "-";
            v->args = {inner};
            return v;
        }
        case UO_Plus: return value(u->getSubExpr(), guard, stmt);
        case UO_Deref:
        case UO_AddrOf:
            reject(e->getSourceRange(), "pointer arithmetic: " + text(e) + "; read array elements by index (x[i])");
        default:
            reject(e->getSourceRange(), "increment or decrement inside an expression: " + text(e) +
                                            " has a side effect; write the update as its own assignment");
        }
    }
    if (const auto *b = dyn_cast<BinaryOperator>(e)) {
        if (b->isAssignmentOp()) {
            reject(e->getSourceRange(), "assignment inside an expression: " + text(e) + "; write it as its own statement");
        }
        if (b->getOpcode() == BO_Comma) reject(e->getSourceRange(), "comma operator: write one statement per assignment");
        const bool integer = b->getType()->isIntegerType() && !b->isComparisonOp() && !b->isLogicalOp();
        if ((b->getOpcode() == BO_Div || b->getOpcode() == BO_Rem) && integer) {
            reject(e->getSourceRange(), "integer division or remainder: C rounds toward zero and Pulse (Halide) rounds "
                                        "down, so " + text(e) + " could differ for negative values");
        }
        if (b->isBitwiseOp() || b->isShiftOp() || b->getOpcode() == BO_Rem) {
            reject(e->getSourceRange(), "operator '" + b->getOpcodeStr().str() + "' is not supported in values (+, -, *, /, comparisons, &&, ||, ?: are)");
        }
        auto v = make(Val::Binary, b->isComparisonOp() || b->isLogicalOp() ? CType::Bool : value_type(b));
        v->op = b->getOpcodeStr().str();
        // C evaluates the right side of && (||) only where the left one holds
        // (fails): when that is affine, the right side's reads are guarded by it.
        std::string right_guard = guard, why;
        if (b->isLogicalOp()) {
            if (auto c = condition(b->getLHS(), b->getOpcode() == BO_LOr, &why)) right_guard = conj(guard, *c);
        }
        v->args = {value(b->getLHS(), guard, stmt), value(b->getRHS(), right_guard, stmt)};
        return v;
    }
    if (const auto *c = dyn_cast<ConditionalOperator>(e)) {
        std::string why;
        auto cond = condition(c->getCond(), false, &why);
        auto neg = condition(c->getCond(), true, &why);
        auto v = make(Val::Select, value_type(c));
        // An affine condition guards the reads of each branch, so a read is
        // uniformized only where C performs it.
        v->args = {value(c->getCond(), guard, stmt), value(c->getTrueExpr(), cond ? conj(guard, *cond) : guard, stmt),
                   value(c->getFalseExpr(), neg ? conj(guard, *neg) : guard, stmt)};
        return v;
    }
    if (const auto *call = dyn_cast<CallExpr>(e)) {
        const FunctionDecl *f = call->getDirectCallee();
        const std::string name = f ? f->getNameAsString() : "";
        static const std::set<std::string> minmax = {"fminf", "fmaxf", "fmin", "fmax"};
        if (minmax.count(name) && call->getNumArgs() == 2) {
            auto v = make(Val::MinMax, value_type(call));
            v->op = name.substr(1, 3);
            v->args = {value(call->getArg(0), guard, stmt), value(call->getArg(1), guard, stmt)};
            return v;
        }
        reject(e->getSourceRange(), "call to '" + (name.empty() ? text(call->getCallee()) : name) +
                                        "': only fminf, fmaxf, fmin and fmax are accepted (write min and max of "
                                        "ints as a ? b : c)");
    }
    reject(e->getSourceRange(), "expression not supported by pulse-import: " + text(e));
}

void Builder::lvalue(const Expr *e, Stmt &s) {
    std::vector<const Expr *> subscripts;
    const VarDecl *v = accessed(e, subscripts, "the assignment writes through " + text(e));
    if (loop_vars.count(v)) reject(e->getSourceRange(), "assignment to the loop variable '" + loop_vars.at(v) + "' inside its loop");
    if (int_params.count(v)) reject(e->getSourceRange(), "assignment to the int parameter '" + int_params.at(v) + "'");
    if (locals.count(v) && subscripts.empty()) {
        s.target = locals.at(v);
        s.type = prog.scalars.at(s.target);
        return;
    }
    if (!arrays.count(v)) reject(e->getSourceRange(), "assignment to " + text(e) + ": only array elements and local scalars may be assigned");
    Array &a = prog.arrays.at(arrays.at(v));
    if ((int)subscripts.size() != a.dims) {
        reject(e->getSourceRange(), "pointer arithmetic: " + text(e) + " gives " + std::to_string(subscripts.size()) +
                                        " index(es) to the " + std::to_string(a.dims) + "-dimensional array '" + a.name + "'");
    }
    for (const Expr *i : subscripts) {
        Poly p = affine(i, "index", false);
        if (p.degree() > 1) {
            reject(i->getSourceRange(), "index " + text(i) + " of the written array '" + a.name +
                                            "' is not affine (a product of a parameter and a loop variable); "
                                            "declare the array with its dimensions, e.g. float y[N][M]");
        }
        s.index.push_back(p);
    }
    s.target = a.name;
    s.type = a.type;
    a.written = true;
}

int Builder::new_stmt(const clang::Stmt *whole, const std::string &guard) {
    Stmt s;
    s.id = (int)prog.stmts.size();
    s.depth = depth;
    s.post = loop_seen[depth];
    s.guard = guard;
    s.range = whole->getSourceRange();
    s.text = text(whole);
    s.line = ctx.getSourceManager().getSpellingLineNumber(whole->getBeginLoc());
    prog.stmts.push_back(s);
    return s.id;
}

void Builder::assignment(const Expr *e, const std::string &guard, const clang::Stmt *whole) {
    const auto *b = dyn_cast<BinaryOperator>(e->IgnoreParens());
    if (!b || !b->isAssignmentOp()) {
        if (const auto *u = dyn_cast<UnaryOperator>(e->IgnoreParens()); u && u->isIncrementDecrementOp()) {
            reject(e->getSourceRange(), "increment " + text(e) + " outside a for header: write it as += 1");
        }
        if (isa<CallExpr>(e->IgnoreParens())) {
            const auto *f = cast<CallExpr>(e->IgnoreParens())->getDirectCallee();
            reject(e->getSourceRange(), "call to '" + (f ? f->getNameAsString() : text(e)) + "': the function body may only assign values");
        }
        reject(e->getSourceRange(), "statement is not an assignment: " + text(e));
    }
    const int id = new_stmt(whole, guard);
    Stmt s = prog.stmts[id];
    lvalue(b->getLHS(), s);
    prog.stmts[id] = s;
    if (const auto *ca = dyn_cast<CompoundAssignOperator>(b)) {
        // x op= e is x = x op e, computed in the type C computes it in.
        static const std::set<BinaryOperatorKind> ok = {BO_AddAssign, BO_SubAssign, BO_MulAssign, BO_DivAssign};
        if (!ok.count(ca->getOpcode())) reject(e->getSourceRange(), "compound assignment '" + ca->getOpcodeStr().str() + "' is not supported (+=, -=, *=, /= are)");
        auto t = scalar_type(ca->getComputationResultType());
        if (ca->getOpcode() == BO_DivAssign && t == CType::Int) {
            reject(e->getSourceRange(), "integer division: C rounds toward zero and Pulse (Halide) rounds down");
        }
        auto v = make(Val::Binary, *t);
        v->op = BinaryOperator::getOpcodeStr(BinaryOperator::getOpForCompoundAssignment(ca->getOpcode())).str();
        v->args = {converted(read(b->getLHS(), guard, id), *t), converted(value(b->getRHS(), guard, id), *t)};
        prog.stmts[id].value = converted(v, s.type);
    } else {
        prog.stmts[id].value = value(b->getRHS(), guard, id);
    }
}

// `if (c) A[f] = e1; else A[f] = e2;` (and else-if chains) assign one element
// a conditional value: one statement whose value is a select.
bool Builder::fold_if(const IfStmt *s, const std::string &guard) {
    std::vector<std::pair<const Expr *, const BinaryOperator *>> arms;
    const clang::Stmt *cur = s;
    while (true) {
        const Expr *cond = nullptr;
        const clang::Stmt *then = cur;
        if (const auto *i = dyn_cast<IfStmt>(cur)) {
            cond = i->getCond();
            then = i->getThen();
        }
        if (const auto *c = dyn_cast<CompoundStmt>(then); c && c->size() == 1) then = c->body_front();
        const auto *a = dyn_cast<BinaryOperator>(then);
        if (!a || a->getOpcode() != BO_Assign) return false;
        if (!arms.empty() && text(a->getLHS()) != text(arms.front().second->getLHS())) return false;
        arms.push_back({cond, a});
        if (!cond) break;
        const auto *i = cast<IfStmt>(cur);
        if (!i->getElse()) return false;
        cur = i->getElse();
        if (const auto *c = dyn_cast<CompoundStmt>(cur); c && c->size() == 1) cur = c->body_front();
    }
    const int id = new_stmt(s, guard);
    Stmt st = prog.stmts[id];
    lvalue(arms.front().second->getLHS(), st);
    prog.stmts[id] = st;
    // Build the select from the last arm outwards; each arm's reads are guarded
    // by its condition and the negations of the earlier ones.
    // An arm's condition is evaluated only where the earlier ones failed
    // (`if (i == 0) ... else if (a[i - 1] == b[j])` reads a[i - 1] at i >= 1).
    std::vector<std::string> taken, tested;
    std::string reach = guard;
    for (const auto &arm : arms) {
        tested.push_back(reach);
        if (arm.first) {
            std::string why;
            auto c = condition(arm.first, false, &why), n = condition(arm.first, true, &why);
            taken.push_back(c ? conj(reach, *c) : reach);
            reach = n ? conj(reach, *n) : reach;
        } else {
            taken.push_back(reach);
        }
    }
    ValP v;
    for (size_t k = arms.size(); k-- > 0;) {
        ValP arm = value(arms[k].second->getRHS(), taken[k], id);
        if (!v) {
            v = arm;
            continue;
        }
        auto sel = make(Val::Select, st.type);
        sel->args = {value(arms[k].first, tested[k], id), arm, v};
        v = sel;
    }
    prog.stmts[id].value = v;
    return true;
}

void Builder::declaration(const DeclStmt *d, const std::string &guard) {
    for (const Decl *decl : d->decls()) {
        const auto *v = dyn_cast<VarDecl>(decl);
        if (!v) reject(decl->getSourceRange(), "only local scalar variables may be declared");
        if (ctx.getAsArrayType(v->getType())) {
            reject(v->getSourceRange(), "local array '" + v->getNameAsString() + "': pass it as a parameter");
        }
        if (v->getType()->isPointerType()) {
            reject(v->getSourceRange(), "pointer arithmetic: local pointer '" + v->getNameAsString() + "'; index the array parameters directly");
        }
        auto t = scalar_type(v->getType());
        if (!t) reject(v->getSourceRange(), "local '" + v->getNameAsString() + "' of type " + v->getType().getAsString() + ": only int, float and double");
        if (!guard.empty()) reject(v->getSourceRange(), "declaration inside an if: declare '" + v->getNameAsString() + "' before it");
        const std::string name = v->getNameAsString();
        for (const auto &l : locals) {
            if (l.second == name) reject(v->getSourceRange(), "a second local named '" + name + "': give each local its own name");
        }
        locals[v] = name;
        prog.scalars[name] = *t;
        if (v->hasInit()) {
            const int id = new_stmt(d, guard);
            prog.stmts[id].target = name;
            prog.stmts[id].type = *t;
            prog.stmts[id].value = value(v->getInit(), guard, id);
        }
    }
}

void Builder::for_loop(const ForStmt *f) {
    if (loop_seen[depth]) {
        reject(f->getSourceRange(), "a second loop in the same body: pulse-import maps one chain of nested loops "
                                    "onto the URE nest; fuse the loops or split the function");
    }
    const auto *init = dyn_cast_or_null<DeclStmt>(f->getInit());
    const VarDecl *v = init && init->isSingleDecl() ? dyn_cast<VarDecl>(init->getSingleDecl()) : nullptr;
    if (!v || !v->hasInit() || scalar_type(v->getType()) != CType::Int) {
        reject(f->getForLoc(), "the loop must declare its int variable: for (int i = LOWER; i < UPPER; i++)");
    }
    const std::string name = v->getNameAsString();
    for (const auto &l : prog.loops) {
        if (l.var == name) reject(v->getLocation(), "loop variable '" + name + "' shadows an enclosing loop's");
    }
    Loop loop;
    loop.var = name;
    loop.loc = f->getForLoc();
    loop.lower = loop_bound(v->getInit(), v);
    const auto *cond = dyn_cast_or_null<BinaryOperator>(f->getCond() ? f->getCond()->IgnoreParens() : nullptr);
    if (!cond || (cond->getOpcode() != BO_LT && cond->getOpcode() != BO_LE) || var_of(cond->getLHS()) != v) {
        reject(f->getCond() ? f->getCond()->getSourceRange() : SourceRange(f->getForLoc()),
               "the loop condition must be " + name + " < UPPER or " + name + " <= UPPER");
    }
    loop.upper = loop_bound(cond->getRHS(), v) + Poly::constant(cond->getOpcode() == BO_LE ? 1 : 0);
    bool step_one = false;
    const Expr *inc = f->getInc() ? f->getInc()->IgnoreParens() : nullptr;
    if (const auto *u = dyn_cast_or_null<UnaryOperator>(inc)) step_one = u->isIncrementOp() && var_of(u->getSubExpr()) == v;
    if (const auto *ca = dyn_cast_or_null<CompoundAssignOperator>(inc)) {
        const auto *lit = dyn_cast<IntegerLiteral>(ca->getRHS()->IgnoreParenImpCasts());
        step_one = ca->getOpcode() == BO_AddAssign && var_of(ca->getLHS()) == v && lit && lit->getValue() == 1;
    }
    if (!step_one) {
        reject(inc ? inc->getSourceRange() : SourceRange(f->getForLoc()),
               "the loop step must be " + name + "++: a stride belongs in the index (x[2 * i + k])");
    }
    loop_vars[v] = name;
    if (depth != (int)prog.loops.size()) {
        reject(f->getForLoc(), "loop inside an if: the nest must be a chain of loops");
    }
    prog.loops.push_back(loop);
    depth++;
    loop_seen.push_back(false);
    body(f->getBody(), "", false);
    depth--;
    loop_seen[depth] = true;
}

void Builder::body(const clang::Stmt *s, const std::string &guard, bool last_in_function) {
    if (!s || isa<NullStmt>(s)) return;
    if (const auto *c = dyn_cast<CompoundStmt>(s)) {
        size_t k = 0;
        for (const auto *child : c->body()) body(child, guard, last_in_function && ++k == c->size());
        return;
    }
    if (const auto *d = dyn_cast<DeclStmt>(s)) return declaration(d, guard);
    if (const auto *f = dyn_cast<ForStmt>(s)) {
        if (!guard.empty()) reject(f->getForLoc(), "loop inside an if: the nest must be a chain of loops");
        return for_loop(f);
    }
    if (const auto *i = dyn_cast<IfStmt>(s)) {
        if (i->getInit() || i->getConditionVariable()) reject(i->getIfLoc(), "declaration in an if condition");
        if (fold_if(i, guard)) return;
        const std::string c = require_condition(i->getCond());
        std::string why;
        body(i->getThen(), conj(guard, c), false);
        if (i->getElse()) body(i->getElse(), conj(guard, *condition(i->getCond(), true, &why)), false);
        return;
    }
    if (const auto *e = dyn_cast<Expr>(s)) return assignment(e, guard, s);
    if (isa<ReturnStmt>(s)) {
        if (last_in_function && depth == 0 && guard.empty() && !cast<ReturnStmt>(s)->getRetValue()) return;
        reject(s->getSourceRange(), "early exit: return before the end of the function (the loop nest must run to completion)");
    }
    if (isa<BreakStmt>(s)) reject(s->getSourceRange(), "early exit: break leaves the loop before its bound");
    if (isa<ContinueStmt>(s)) reject(s->getSourceRange(), "early exit: continue skips the rest of the body; guard the assignments with an if instead");
    if (isa<GotoStmt>(s) || isa<LabelStmt>(s) || isa<IndirectGotoStmt>(s)) reject(s->getSourceRange(), "goto: the control flow must be structured loops and ifs");
    if (isa<WhileStmt>(s) || isa<DoStmt>(s)) {
        reject(s->getSourceRange(), std::string(isa<WhileStmt>(s) ? "while" : "do-while") +
                                        " loop: its trip count is not affine; write it as for (int i = LOWER; i < UPPER; i++)");
    }
    if (isa<SwitchStmt>(s)) reject(s->getSourceRange(), "switch: use if with affine conditions");
    reject(s->getSourceRange(), "statement not supported by pulse-import");
}

void Builder::function(const FunctionDecl *f) {
    prog.function = f->getNameAsString();
    prog.function_loc = f->getLocation();
    if (!f->getReturnType()->isVoidType()) {
        reject(f->getReturnTypeSourceRange(), "the function must return void: its results are the arrays it writes");
    }
    for (const ParmVarDecl *p : f->parameters()) parameter(p);
    body(f->getBody(), "", true);
    if (prog.stmts.empty()) reject(f->getLocation(), "the function assigns nothing");
    // Two pointer parameters may point at the same memory, and then C reads
    // what the function writes, which the spec (inputs apart from outputs)
    // cannot express. Without restrict, the import assumes, as polyhedral
    // importers such as pet do, that distinct arrays do not overlap: it says
    // so in a warning and in the spec, and the generated host functions refuse
    // overlapping buffers at run time.
    for (const ParmVarDecl *p : f->parameters()) {
        if (!arrays.count(p) || !prog.arrays.at(arrays.at(p)).written || p->getType().isRestrictQualified()) continue;
        const Array &out = prog.arrays.at(arrays.at(p));
        std::vector<std::string> others;
        for (const auto &other : prog.arrays) {
            if (other.first != out.name && other.second.read && other.second.type == out.type) others.push_back(other.first);
        }
        if (others.empty()) continue;
        prog.assumed_apart[out.name] = others;
        std::string list;
        for (size_t k = 0; k < others.size(); k++) list += (k ? (k + 1 == others.size() ? " or '" : ", '") : "'") + others[k] + "'";
        diag.warning(p->getSourceRange(), "output array '" + out.name + "' is not restrict: assumed not to overlap " + list +
                                              " (the spec keeps inputs and outputs apart; the generated host functions refuse "
                                              "overlapping buffers); declare it restrict (" + c_type(out.type) + " *restrict " +
                                              out.name + ") to state it in C");
    }
}

}  // namespace

void build_program(ASTContext &ctx, const FunctionDecl *f, Diagnostics &diag, Program &prog) {
    Builder(ctx, diag, prog).function(f);
}

}  // namespace pulse_import
