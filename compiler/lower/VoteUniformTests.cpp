#include "lower/VoteUniformTests.h"

#include "ir/LaneVarying.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

bool has_lane_exchange(const Stmt &s) {
    class Find : public IRVisitor {
    public:
        bool found = false;
        using IRVisitor::visit;
        void visit(const Call *c) override {
            found = found || kir::is_lane_exchange(c);
            if (!found) IRVisitor::visit(c);
        }
    } find;
    s.accept(&find);
    return find.found;
}

class Vote : public IRMutator {
public:
    explicit Vote(const LaneVarying &varying) : varying(varying) {}
    using IRMutator::visit;

private:
    const LaneVarying &varying;
    int loop_depth = 0;

    Stmt visit(const For *op) override {
        loop_depth++;
        Stmt s = IRMutator::visit(op);
        loop_depth--;
        return s;
    }

    Stmt visit(const IfThenElse *op) override {
        Stmt s = IRMutator::visit(op);
        if (loop_depth > 0 || varying.varies(op->condition) || !has_lane_exchange(Stmt(op))) return s;
        const IfThenElse *mutated = s.as<IfThenElse>();
        return IfThenElse::make(kir::warp_all(mutated->condition), mutated->then_case, mutated->else_case);
    }
};

}  // namespace

void vote_uniform_tests(kir::Kernel &kernel) {
    const LaneVarying varying(kernel.body);
    Vote vote(varying);
    kernel.body = vote.mutate(kernel.body);
}

}  // namespace pulse
