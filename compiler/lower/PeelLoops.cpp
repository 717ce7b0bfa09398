#include "lower/PeelLoops.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

class Peel : public IRMutator {
public:
    using IRMutator::visit;

    Stmt visit(const ProducerConsumer *op) override {
        if (op->name != kir::array_instance_marker) return IRMutator::visit(op);
        bool outer = inside;
        inside = true;
        Stmt s = IRMutator::visit(op);
        inside = outer;
        return s;
    }

    Stmt visit(const For *op) override {
        Stmt body = mutate(op->body);
        const int64_t *lo = as_const_int(op->min), *n = as_const_int(op->extent);
        if (!inside || !lo || !n || *n < 3) {
            return For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
        }
        Expr first = make_const(op->min.type(), *lo), last = make_const(op->min.type(), *lo + *n - 1);
        Stmt middle = For::make(op->name, make_const(op->min.type(), *lo + 1), make_const(op->extent.type(), *n - 2), op->for_type,
                                op->device_api, body);
        return Block::make({substitute(op->name, first, body), middle, substitute(op->name, last, body)});
    }

private:
    bool inside = false;
};

}  // namespace

void peel_loops(kir::Kernel &kernel) { kernel.body = Peel().mutate(kernel.body); }

}  // namespace pulse
