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

}  // namespace pulse
