#include "lower/PlaceUniformInputs.h"
#include "ir/ExactSimplify.h"

#include <algorithm>
#include <climits>

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

void place_uniform_inputs(kir::Kernel &kernel) {
    int64_t placed_bytes = 0;  // by the inputs before this one
    for (kir::BufferArg &b : kernel.buffers) {
        // An input the schedule caches elsewhere (L1, shared memory) stays where it asked.
        if (b.is_output || b.placement != kir::Placement::Global || b.cache != kir::InputCache::Registers) continue;
        bool uniform = true, read = false;
        std::vector<int64_t> lo(b.dimensions, INT64_MAX), hi(b.dimensions, INT64_MIN);
        // Each load of b with the ranges of the loops of constant bounds around it.
        class Collect : public IRVisitor {
        public:
            const std::string &buffer;
            explicit Collect(const std::string &n) : buffer(n) {}
            Scope<Interval> loops;
            std::vector<std::pair<const Call *, std::vector<Interval>>> loads;
            using IRVisitor::visit;
            void visit(const For *op) override {
                const int64_t *lo = as_const_int(op->min), *n = as_const_int(op->extent);
                if (lo && n) {
                    ScopedBinding<Interval> bind(loops, op->name, Interval(op->min, simplify_exact(op->min + op->extent - 1)));
                    IRVisitor::visit(op);
                } else {
                    IRVisitor::visit(op);
                }
            }
            void visit(const Call *op) override {
                if (op->name == kir::intrinsic::load && kir::access_of(op).buffer == buffer) {
                    std::vector<Interval> ranges;
                    for (const Expr &c : kir::access_of(op).coords) ranges.push_back(bounds_of_expr_in_scope(simplify_exact(c), loops));
                    loads.push_back({op, ranges});
                }
                IRVisitor::visit(op);
            }
        } collect(b.name);
        kernel.body.accept(&collect);
        // Uniform: every coordinate is a constant, or ranges over constants
        // with the loops around it (the same on every lane).
        for (const auto &[op, ranges] : collect.loads) {
            read = true;
            for (int d = 0; d < b.dimensions; d++) {
                // The simplified bounds own what l and h point to.
                const Expr lo_bound = ranges[d].is_bounded() ? simplify_exact(ranges[d].min) : Expr();
                const Expr hi_bound = ranges[d].is_bounded() ? simplify_exact(ranges[d].max) : Expr();
                const int64_t *l = lo_bound.defined() ? as_const_int(lo_bound) : nullptr;
                const int64_t *h = hi_bound.defined() ? as_const_int(hi_bound) : nullptr;
                if (!l || !h) {
                    uniform = false;
                    break;
                }
                lo[d] = std::min(lo[d], *l), hi[d] = std::max(hi[d], *h);
            }
        }
        if (!read || !uniform) continue;
        // The loops' bounds also cover steps where a lane is idle (a rolled
        // time loop, a preimage search): only what the domain reads is
        // certain to be in the buffers. Loads beyond it keep a guard.
        bool clamped = false;
        for (int d = 0; d < b.dimensions && d < (int)b.domain_reads.size(); d++) {
            const auto [read_min, read_max] = b.domain_reads[d];
            if (lo[d] < read_min) lo[d] = read_min, clamped = true;
            if (hi[d] > read_max) hi[d] = read_max, clamped = true;
        }
        for (int d = 0; d < b.dimensions; d++) {
            if (lo[d] > hi[d]) uniform = false;
        }
        if (!uniform) continue;
        int64_t elements = 1;
        for (int d = 0; d < b.dimensions; d++) elements *= hi[d] - lo[d] + 1;
        const int64_t bytes = elements * b.type.bytes();
        if (bytes > constant_memory_budget || placed_bytes + bytes > constant_memory_total_budget) continue;
        placed_bytes += bytes;
        b.placement = kir::Placement::Constant;
        b.region_min = lo;
        for (int d = 0; d < b.dimensions; d++) b.region_extent.push_back(hi[d] - lo[d] + 1);
        // Inside the region by construction (no guard), unless it was clamped.
        kernel.body = kir::replace_calls(kernel.body, [&](const Call *op) -> Expr {
            if (op->name != kir::intrinsic::load) return Expr();
            kir::Access a = kir::access_of(op);
            if (a.buffer != b.name) return Expr();
            return kir::load(op->type, a.buffer, clamped ? kir::in_bounds(b, a.coords) : const_true(), a.coords);
        });
    }
}

}  // namespace pulse
