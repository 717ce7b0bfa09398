#include "lower/StageInShared.h"
#include "ir/ExactSimplify.h"

#include <algorithm>

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// The box of coordinates `buffer` is loaded at inside an instance body:
/// per dimension the union over the loads of their ranges, the lanes, warps
/// and loops of constant bounds varying. Names bound inside the body (lets,
/// other loops) make a range unknown.
class LoadBox : public IRVisitor {
public:
    LoadBox(const kir::Kernel &k, const std::string &b) : kernel(k), buffer(b) {
        varying.push(kir::lane_var, Interval(0, kir::warp_size - 1));
        varying.push(kir::array_warp_var, Interval(0, k.warps_per_array - 1));
    }

    std::vector<Interval> box;
    bool found = false;
    std::string unknown;  ///< a coordinate whose range is not known, if any

    using IRVisitor::visit;

    void visit(const For *op) override {
        const int64_t *lo = as_const_int(op->min), *n = as_const_int(op->extent);
        if (lo && n) {
            ScopedBinding<Interval> bind(varying, op->name, Interval(op->min, simplify_exact(op->min + op->extent - 1)));
            IRVisitor::visit(op);
        } else {
            ScopedBinding<> bind(bound, op->name);
            IRVisitor::visit(op);
        }
    }
    void visit(const LetStmt *op) override {
        op->value.accept(this);
        ScopedBinding<> bind(bound, op->name);
        op->body.accept(this);
    }
    void visit(const Call *op) override {
        IRVisitor::visit(op);
        if (op->name != kir::intrinsic::load) return;
        kir::Access a = kir::access_of(op);
        if (a.buffer != buffer) return;
        found = true;
        for (size_t d = 0; d < a.coords.size(); d++) {
            Interval r = expr_uses_vars(a.coords[d], bound) ? Interval::everything()
                                                           : bounds_of_expr_in_scope(simplify_exact(a.coords[d]), varying);
            if (!r.is_bounded() && unknown.empty()) {
                std::ostringstream s;
                s << a.coords[d];
                unknown = s.str();
            }
            if (box.size() <= d) box.push_back(r);
            else box[d] = Interval::make_union(box[d], r);
        }
    }

private:
    const kir::Kernel &kernel;
    const std::string &buffer;
    Scope<Interval> varying;
    Scope<> bound;
};

/// `body` with its reads of `b` from a staged copy `tile`, filled by the loop
/// `pass`; `elements` the copy's size.
Stmt stage(const kir::Kernel &kernel, const kir::BufferArg &b, const std::string &tile, const std::string &pass, const Stmt &body,
           int64_t *elements_out) {
    LoadBox loads(kernel, b.name);
    body.accept(&loads);
    if (!loads.found) return body;
    if (!loads.unknown.empty()) {
        compile_error("kernel ", kernel.name, ": ", b.name, ".store_in(MemoryType::Shared): the coordinate ", loads.unknown,
                      " of a read of ", b.name, " has no range known before the array instance runs; cache ", b.name,
                      " in registers or L1 instead");
    }
    std::vector<Expr> min, extent;
    int64_t elements = 1;
    for (size_t d = 0; d < loads.box.size(); d++) {
        Expr lo = simplify_exact(loads.box[d].min), n = simplify_exact(loads.box[d].max - loads.box[d].min + 1);
        const int64_t *constant = as_const_int(n);
        if (!constant) {
            compile_error("kernel ", kernel.name, ": ", b.name, ".store_in(MemoryType::Shared): the box an array instance reads ",
                          "has extent ", n, " in dimension ", d, ", not known at generation time; cache ", b.name,
                          " in registers or L1 instead");
        }
        min.push_back(lo);
        extent.push_back(n);
        elements *= *constant;
    }
    *elements_out = std::max(*elements_out, elements);
    const int threads = kernel.array_threads();
    Expr thread = kir::array_thread(kernel);
    // The copy: element e of the box (dimension 0 fastest) by thread e % threads.
    // (The element index is written out, not a let, so specialize_interior
    // can bound the copy's coordinates.)
    Expr e = Variable::make(Int(32), pass) * threads + thread;
    std::vector<Expr> coords;
    Expr rest = e;
    for (size_t d = 0; d < min.size(); d++) {
        coords.push_back(simplify_exact(min[d] + (d + 1 < min.size() ? rest % extent[d] : rest)));
        rest = rest / extent[d];
    }
    Stmt copy = Store::make(tile, kir::load(b.type, b.name, kir::in_bounds(b, coords), coords), e, Parameter(), const_true(),
                            ModulusRemainder());
    copy = IfThenElse::make(e < make_const(Int(32), elements), copy);
    copy = For::make(pass, 0, (int)((elements + threads - 1) / threads), ForType::Serial, DeviceAPI::None, copy);
    // The instance reads the copy, which holds 0 outside the buffer as a
    // load's bounds guard does; any other guard stays.
    Stmt reads = kir::replace_calls(body, [&](const Call *op) -> Expr {
        if (op->name != kir::intrinsic::load) return Expr();
        kir::Access a = kir::access_of(op);
        if (a.buffer != b.name) return Expr();
        Expr index = make_zero(Int(32)), stride = make_one(Int(32));
        for (size_t d = 0; d < a.coords.size(); d++) {
            index = index + (a.coords[d] - min[d]) * stride;
            stride = stride * extent[d];
        }
        Expr value = Load::make(op->type, tile, simplify_exact(index), Buffer<>(), Parameter(), const_true(), ModulusRemainder());
        if (is_const_one(a.guard) || equal(a.guard, kir::in_bounds(b, a.coords))) return value;
        return select(a.guard, value, make_zero(op->type));
    });
    return Block::make({copy, kir::barrier(), reads, kir::barrier()});
}

}  // namespace

void stage_in_shared(kir::Kernel &kernel) {
    int64_t bytes = 0;  // of the copies of one array
    std::string staged;
    kir::NameGenerator names(kernel);
    for (const kir::BufferArg &b : kernel.buffers) {
        if (b.is_output || b.cache != kir::InputCache::Shared) continue;
        // The copy BUFFER.shared (one for every instance) and its loop BUFFER.shared.pass.
        const std::string tile = names.fresh(b.name, "shared"), pass = names.fresh(tile, "pass");
        int64_t elements = 0;
        kernel.body = kir::on_instances(kernel.body, [&](const Stmt &body) { return stage(kernel, b, tile, pass, body, &elements); });
        if (elements == 0) continue;
        kernel.body = Allocate::make(tile, b.type, Halide::MemoryType::GPUShared, {make_const(Int(32), elements)},
                                     const_true(), kernel.body);
        bytes += elements * b.type.bytes();
        staged += (staged.empty() ? "" : ", ") + b.name + " (" + std::to_string(elements * b.type.bytes()) + " bytes)";
    }
    const int64_t budget = kernel.max_shared_bytes / kernel.arrays_per_block();
    if (bytes > budget) {
        refuse(Refusal::ResourceLimit, "", "kernel ", kernel.name, ": the inputs cached in shared memory need ", staged, " per array instance, ",
                      kernel.arrays_per_block(), " arrays per block: more than the ", kernel.max_shared_bytes,
                      " bytes of a block; cache an input in registers or L1, read a smaller box per instance (fewer rows ",
                      "per block, a narrower array)",
                      kernel.max_shared_bytes < kir::max_opt_in_shared_bytes
                          ? ", or let the block opt in to more shared memory (--max-shared-bytes=N, up to " +
                                std::to_string(kir::max_opt_in_shared_bytes) + ")"
                          : std::string());
    }
}

}  // namespace pulse
