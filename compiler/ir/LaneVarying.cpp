#include "ir/LaneVarying.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

LaneVarying::LaneVarying(const Stmt &body) {
    // Register arrays carry values around loops: repeat until nothing changes.
    size_t before;
    do {
        before = names.size();
        walk(body, false);
    } while (names.size() != before);
}

bool LaneVarying::varies(const Expr &e) const {
    class Finder : public IRVisitor {
    public:
        explicit Finder(const LaneVarying &v) : v(v) {}
        const LaneVarying &v;
        bool found = false;
        using IRVisitor::visit;
        void visit(const Variable *op) override { found |= op->name == kir::lane_var || v.has(op->name); }
        void visit(const Load *op) override {
            found |= v.has(op->name);
            IRVisitor::visit(op);
        }
        void visit(const Call *op) override {
            if (op->name == kir::intrinsic::chain_source) {
                found = true;  // a lane index
            } else if (op->name == kir::intrinsic::warp_all) {
                // a vote: the same on every lane
            } else if (op->name == kir::intrinsic::shfl_up || op->name == kir::intrinsic::shfl_down ||
                       op->name == kir::intrinsic::shfl_idx) {
                op->args[0].accept(this);  // a value the same on every lane stays so, wherever it is read
            } else {
                IRVisitor::visit(op);
            }
        }
    } f(*this);
    e.accept(&f);
    return f.found;
}

void LaneVarying::walk(const Stmt &s, bool under_varying_guard) {
    if (!s.defined()) return;
    if (const LetStmt *op = s.as<LetStmt>()) {
        if (varies(op->value)) names.insert(op->name);
        walk(op->body, under_varying_guard);
    } else if (const Block *op = s.as<Block>()) {
        walk(op->first, under_varying_guard);
        walk(op->rest, under_varying_guard);
    } else if (const ProducerConsumer *op = s.as<ProducerConsumer>()) {
        walk(op->body, under_varying_guard);
    } else if (const IfThenElse *op = s.as<IfThenElse>()) {
        bool v = under_varying_guard || varies(op->condition);
        walk(op->then_case, v);
        walk(op->else_case, v);
    } else if (const For *op = s.as<For>()) {
        walk(op->body, under_varying_guard);
    } else if (const Allocate *op = s.as<Allocate>()) {
        walk(op->body, under_varying_guard);
    } else if (const Store *op = s.as<Store>()) {
        // Written on some lanes only, an array differs between lanes.
        if (under_varying_guard || varies(op->value) || varies(op->index)) names.insert(op->name);
    }
}

}  // namespace pulse
