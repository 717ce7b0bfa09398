#include "lower/NarrowIndexComparisons.h"

#include "ir/IndexArithmetic.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

class Narrow : public IRMutator {
public:
    explicit Narrow(const IndexArithmetic &indices) : indices(indices) {}

private:
    const IndexArithmetic &indices;

    /// Whether `e` may be compared in 32 bits: index arithmetic, or a
    /// constant that fits.
    bool narrowable(const Expr &e) const {
        if (const int64_t *c = as_const_int(e)) return *c >= INT32_MIN && *c <= INT32_MAX;
        return indices.is_index(e);
    }

    static Expr narrowed(const Expr &e) {
        if (const int64_t *c = as_const_int(e)) return make_const(Int(32), *c);
        if (const Cast *c = e.as<Cast>()) {
            const Type from = c->value.type();
            if (from.is_int() && from.bits() <= 32) return from.bits() == 32 ? c->value : Cast::make(Int(32), c->value);
        }
        return Cast::make(Int(32), e);
    }

    template <typename Op>
    Expr compare(const Op *op) {
        Expr a = mutate(op->a), b = mutate(op->b);
        if (a.type() == Int(64) && narrowable(a) && narrowable(b) && !(is_const(a) && is_const(b))) {
            return Op::make(narrowed(a), narrowed(b));
        }
        if (a.same_as(op->a) && b.same_as(op->b)) return op;
        return Op::make(a, b);
    }

    using IRMutator::visit;
    Expr visit(const EQ *op) override { return compare(op); }
    Expr visit(const NE *op) override { return compare(op); }
    Expr visit(const LT *op) override { return compare(op); }
    Expr visit(const LE *op) override { return compare(op); }
    Expr visit(const GT *op) override { return compare(op); }
    Expr visit(const GE *op) override { return compare(op); }
};

}  // namespace

void narrow_index_comparisons(kir::Kernel &kernel) {
    kir::on_large_stack([&] {
        const IndexArithmetic indices(kernel.body);
        Narrow narrow(indices);
        kernel.body = narrow.mutate(kernel.body);
    });
}

}  // namespace pulse
