#include "ir/Affine.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

int64_t AffineForm::evaluate(const std::vector<int64_t> &point) const {
    int64_t v = constant;
    for (size_t i = 0; i < coefficient.size(); i++) v += coefficient[i] * point[i];
    return v;
}

std::pair<int64_t, int64_t> AffineForm::range(const std::vector<ir::Loop> &loops) const {
    int64_t lo = constant, hi = constant;
    for (size_t i = 0; i < coefficient.size(); i++) {
        int64_t a = coefficient[i] * loops[i].min, b = coefficient[i] * loops[i].max();
        lo += std::min(a, b);
        hi += std::max(a, b);
    }
    return {lo, hi};
}

std::optional<AffineForm> to_affine(const Expr &e, const std::vector<ir::Loop> &loops) {
    AffineForm f;
    f.coefficient.assign(loops.size(), 0);
    if (const int64_t *k = as_const_int(e)) {
        f.constant = *k;
        return f;
    }
    if (const uint64_t *k = as_const_uint(e)) {
        f.constant = (int64_t)*k;
        return f;
    }
    if (const Variable *v = e.as<Variable>()) {
        for (size_t i = 0; i < loops.size(); i++) {
            if (loops[i].var == v->name) {
                f.coefficient[i] = 1;
                return f;
            }
        }
        return std::nullopt;
    }
    if (const Cast *c = e.as<Cast>()) {
        if (c->type.is_int_or_uint() && c->value.type().is_int_or_uint()) return to_affine(c->value, loops);
        return std::nullopt;
    }
    auto combine = [&](const Expr &a, const Expr &b, int64_t sign) -> std::optional<AffineForm> {
        auto fa = to_affine(a, loops), fb = to_affine(b, loops);
        if (!fa || !fb) return std::nullopt;
        fa->constant += sign * fb->constant;
        for (size_t i = 0; i < loops.size(); i++) fa->coefficient[i] += sign * fb->coefficient[i];
        return fa;
    };
    if (const Add *a = e.as<Add>()) return combine(a->a, a->b, 1);
    if (const Sub *s = e.as<Sub>()) return combine(s->a, s->b, -1);
    if (const Mul *m = e.as<Mul>()) {
        auto fa = to_affine(m->a, loops), fb = to_affine(m->b, loops);
        if (!fa || !fb) return std::nullopt;
        auto is_constant = [](const AffineForm &x) {
            for (int64_t c : x.coefficient) {
                if (c) return false;
            }
            return true;
        };
        if (!is_constant(*fa) && !is_constant(*fb)) return std::nullopt;
        if (!is_constant(*fa)) std::swap(fa, fb);
        int64_t k = fa->constant;
        fb->constant *= k;
        for (int64_t &c : fb->coefficient) c *= k;
        return fb;
    }
    return std::nullopt;
}

namespace {

/// The coefficient of `var` in the integer expression `e`, read as a sum of
/// products by constants modulo 2^bits (a subexpression not naming `var`
/// counts as a constant), or nothing if `e` is not of that form in `var`.
std::optional<int64_t> coefficient_of(const Expr &e, const std::string &var) {
    if (!expr_uses_var(e, var)) return 0;
    if (const Variable *v = e.as<Variable>()) return v->name == var ? std::optional<int64_t>(1) : std::nullopt;
    if (const Add *a = e.as<Add>()) {
        auto x = coefficient_of(a->a, var), y = coefficient_of(a->b, var);
        if (x && y) return (int64_t)((uint64_t)*x + (uint64_t)*y);
        return std::nullopt;
    }
    if (const Sub *s = e.as<Sub>()) {
        auto x = coefficient_of(s->a, var), y = coefficient_of(s->b, var);
        if (x && y) return (int64_t)((uint64_t)*x - (uint64_t)*y);
        return std::nullopt;
    }
    if (const Mul *m = e.as<Mul>()) {
        const int64_t *ka = as_const_int(m->a), *kb = as_const_int(m->b);
        if (ka || kb) {
            auto c = coefficient_of(ka ? m->b : m->a, var);
            if (c) return (int64_t)((uint64_t)*c * (uint64_t)(ka ? *ka : *kb));
        }
        return std::nullopt;
    }
    if (const Cast *c = e.as<Cast>()) {
        // Truncating (or same-width) conversions keep a sum's value modulo
        // 2^bits; a widening one keeps only an invariant value invariant.
        if (!c->type.is_int_or_uint() || !c->value.type().is_int_or_uint()) return std::nullopt;
        auto inner = coefficient_of(c->value, var);
        if (inner && (*inner == 0 || c->type.bits() <= c->value.type().bits())) return inner;
        return std::nullopt;
    }
    return std::nullopt;
}

bool cancels_modulo_width(int64_t coefficient, int bits) {
    return bits >= 64 ? coefficient == 0 : ((uint64_t)coefficient & ((uint64_t(1) << bits) - 1)) == 0;
}

/// Walks down to the widest sums, products and conversions naming a
/// variable: one whose coefficient of it cancels is invariant, one whose does
/// not varies, one of another form (the variable under a division or in a
/// load's index) is looked into.
class FindVariation : public IRVisitor {
public:
    explicit FindVariation(const std::string &v) : var(v) {}
    const std::string &var;
    bool varies = false;
    using IRVisitor::visit;

private:
    template<typename T>
    void linear(const T *op) {
        const Expr e(op);
        if (varies || !expr_uses_var(e, var)) return;
        if (e.type().is_int_or_uint() && !e.type().is_bool()) {
            if (const auto c = coefficient_of(e, var)) {
                varies = !cancels_modulo_width(*c, e.type().bits());
                return;
            }
        }
        IRVisitor::visit(op);
    }
    void visit(const Add *op) override { linear(op); }
    void visit(const Sub *op) override { linear(op); }
    void visit(const Mul *op) override { linear(op); }
    void visit(const Cast *op) override { linear(op); }
    void visit(const Variable *op) override { varies |= op->name == var; }
};

}  // namespace

bool varies_with(const Expr &e, const std::string &var) {
    FindVariation find(var);
    e.accept(&find);
    return find.varies;
}

}  // namespace pulse
