#include "lower/StageInShared.h"
#include "ir/ExactSimplify.h"

#include <algorithm>
#include <functional>
#include <optional>

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

/// The box of `b` that `s` reads (LoadBox), each extent a constant; `what`
/// names `s` in the errors (the array instance, a run of steps).
struct ReadBox {
    bool found = false;
    std::vector<Expr> min, extent;
    int64_t elements = 1;
};
ReadBox read_box(const kir::Kernel &kernel, const kir::BufferArg &b, const Stmt &s, const std::string &what) {
    LoadBox loads(kernel, b.name);
    s.accept(&loads);
    ReadBox box;
    box.found = loads.found;
    const std::string primitive = b.name + ".store_in(MemoryType::Shared)" + (kernel.shared_steps ? " with --shared-steps" : "");
    if (!loads.unknown.empty()) {
        compile_error("kernel ", kernel.name, ": ", primitive, ": the coordinate ", loads.unknown, " of a read of ", b.name,
                      " has no range known before ", what, " runs; cache ", b.name, " in registers or L1 instead");
    }
    for (size_t d = 0; d < loads.box.size(); d++) {
        Expr lo = simplify_exact(loads.box[d].min), n = simplify_exact(loads.box[d].max - loads.box[d].min + 1);
        const int64_t *constant = as_const_int(n);
        if (!constant) {
            compile_error("kernel ", kernel.name, ": ", primitive, ": the box ", what, " reads has extent ", n, " in dimension ", d,
                          ", not known at generation time; cache ", b.name, " in registers or L1 instead");
        }
        box.min.push_back(lo);
        box.extent.push_back(n);
        box.elements *= *constant;
    }
    return box;
}

/// The most loads a thread of a copy issues ahead of their stores.
constexpr int64_t copy_batch = 16;

/// A copy of `elements` elements into `tile` by `threads` threads, thread
/// `thread` copying elements e = thread, thread + threads, ... . A loop
/// iteration `pass` copies a batch of up to 16 of a thread's elements, its
/// loads (lets) ahead of its stores, so that a thread has the batch in flight
/// at once rather than one load at a time (a copy is latency-bound, and the
/// threads wait for it at a barrier). `element(e, inside)` gives element
/// e's load, under `inside` (false past the last element; true where the
/// batches fill whole blocks of threads), and its index in `tile`. (The
/// element index is written out, not a let, so that specialize_interior can
/// bound the copy's coordinates.)
Stmt batched_copy(const std::string &tile, Type type, int64_t elements, int threads, const Expr &thread, const std::string &pass,
                  kir::NameGenerator &names, const std::function<std::pair<Expr, Expr>(const Expr &, const Expr &)> &element) {
    const int64_t passes = (elements + threads - 1) / threads, batch = std::min(passes, copy_batch);
    const bool whole = elements % (threads * batch) == 0;
    std::vector<std::pair<std::string, Expr>> loaded;
    std::vector<Stmt> stores;
    for (int64_t k = 0; k < batch; k++) {
        const Expr e = (Variable::make(Int(32), pass) * make_const(Int(32), batch) + make_const(Int(32), k)) * threads + thread;
        const Expr inside = whole ? const_true() : e < make_const(Int(32), elements);
        const auto [load, index] = element(e, inside);
        const std::string value = names.fresh(tile, "copy");
        loaded.emplace_back(value, load);
        Stmt store = Store::make(tile, Variable::make(type, value), index, Parameter(), const_true(), ModulusRemainder());
        stores.push_back(whole ? store : IfThenElse::make(inside, store));
    }
    Stmt copy = Block::make(stores);
    for (auto it = loaded.rbegin(); it != loaded.rend(); ++it) copy = LetStmt::make(it->first, it->second, copy);
    return For::make(pass, 0, (int)((passes + batch - 1) / batch), ForType::Serial, DeviceAPI::None, copy);
}

/// Box coordinates of element `e` of a dense box (dimension 0 fastest) at `min` of extents `extent`.
std::vector<Expr> box_coords(const std::vector<Expr> &min, const std::vector<Expr> &extent, const Expr &e) {
    std::vector<Expr> coords;
    Expr rest = e;
    for (size_t d = 0; d < min.size(); d++) {
        coords.push_back(simplify_exact(min[d] + (d + 1 < min.size() ? rest % extent[d] : rest)));
        rest = rest / extent[d];
    }
    return coords;
}

/// `body` with its reads of `b` from a staged copy `tile`, filled by the loop
/// `pass`; `elements` the copy's size.
Stmt stage(const kir::Kernel &kernel, const kir::BufferArg &b, const std::string &tile, const std::string &pass, kir::NameGenerator &names,
           const Stmt &body, int64_t *elements_out) {
    const ReadBox box = read_box(kernel, b, body, "the array instance");
    if (!box.found) return body;
    const std::vector<Expr> &min = box.min, &extent = box.extent;
    const int64_t elements = box.elements;
    // The copy's rows: a tile's thread reads its consecutive columns as one
    // 16-byte load (Kernel::warp_columns_blocked), so each row starts on a
    // multiple of 16 bytes, and rows of a multiple of 128 bytes are padded by
    // 16 more so that the copy's stores do not all fall on one bank.
    const int64_t per_16_bytes = std::max(1, 16 / b.type.bytes());
    std::vector<int64_t> stride(min.size(), 1);
    int64_t size = 1;
    for (size_t d = 0; d < min.size(); d++) {
        stride[d] = size;
        size *= *as_const_int(extent[d]);
        if (d == 0 && min.size() > 1 && kernel.warp_columns_blocked) {
            size = (size + per_16_bytes - 1) / per_16_bytes * per_16_bytes;
            if (size * b.type.bytes() % 128 == 0) size += per_16_bytes;
        }
    }
    *elements_out = std::max(*elements_out, size);
    auto element = [&](const std::vector<Expr> &coords) {
        Expr index = make_zero(Int(32));
        for (size_t d = 0; d < coords.size(); d++) index = index + (coords[d] - min[d]) * make_const(Int(32), stride[d]);
        return simplify_exact(index);
    };
    // The copy: element e of the box (dimension 0 fastest: coalesced) by thread e % threads.
    const Stmt copy = batched_copy(tile, b.type, elements, kernel.array_threads(), kir::array_thread(kernel), pass, names,
                                   [&](const Expr &e, const Expr &inside) {
                                       const std::vector<Expr> coords = box_coords(min, extent, e);
                                       return std::make_pair(kir::load(b.type, b.name, simplify_exact(inside && kir::in_bounds(b, coords)), coords),
                                                             size == elements ? e : element(coords));
                                   });
    // The instance reads the copy, which holds 0 outside the buffer as a
    // load's bounds guard does; any other guard stays.
    Stmt reads = kir::replace_calls(body, [&](const Call *op) -> Expr {
        if (op->name != kir::intrinsic::load) return Expr();
        kir::Access a = kir::access_of(op);
        if (a.buffer != b.name) return Expr();
        const Expr index = element(a.coords);
        Expr value = Load::make(op->type, tile, index, Buffer<>(), Parameter(), const_true(), ModulusRemainder());
        if (is_const_one(a.guard) || equal(a.guard, kir::in_bounds(b, a.coords))) return value;
        return select(a.guard, value, make_zero(op->type));
    });
    return Block::make({copy, kir::barrier(), reads, kir::barrier()});
}

/// Whether `s` loads `buffer`.
bool loads_buffer(const Stmt &s, const std::string &buffer) {
    bool found = false;
    kir::replace_calls(s, [&](const Call *op) -> Expr {
        found |= op->name == kir::intrinsic::load && kir::access_of(op).buffer == buffer;
        return Expr();
    });
    return found;
}

/// The conjuncts of `e` (a && b && ...), each simplified.
void conjuncts(const Expr &e, std::vector<Expr> *out) {
    if (const And *a = e.as<And>()) {
        conjuncts(a->a, out);
        conjuncts(a->b, out);
    } else {
        out->push_back(simplify_exact(e));
    }
}

/// Whether a load of `b` at `coords` under `guard` reads what a copy holding
/// 0 outside the buffer holds: its guard tests only that the element is
/// inside (each conjunct one of the bounds test's; a load's guard implies
/// the element is inside, so where it holds the copy holds the element, and
/// where it fails so does the bounds test, and the copy holds 0).
bool guard_only_bounds(const kir::BufferArg &b, const std::vector<Expr> &coords, const Expr &guard) {
    if (is_const_one(guard)) return true;
    std::vector<Expr> tests, bounds;
    conjuncts(guard, &tests);
    conjuncts(kir::in_bounds(b, coords), &bounds);
    return std::all_of(tests.begin(), tests.end(), [&](const Expr &t) {
        return std::any_of(bounds.begin(), bounds.end(), [&](const Expr &u) { return equal(t, u); });
    });
}

/// An input staged in runs: its copy's name and the largest box a run reads.
struct StagedInput {
    const kir::BufferArg *buffer;
    std::string tile;
    int64_t elements = 0;
};

/// The copy of the box `run` reads of `b` into `tile` (as the comment of
/// stage_run says), and `*run` reading it there.
Stmt copy_for_run(const kir::Kernel &kernel, const kir::BufferArg &b, const std::string &tile, kir::NameGenerator &names,
                  const std::string &run_var, Stmt *run, int64_t *elements_out) {
    const ReadBox box = read_box(kernel, b, *run, "a run of " + std::to_string(kernel.shared_steps) + " steps");
    const std::vector<Expr> &min = box.min, &extent = box.extent;
    const int64_t elements = box.elements;
    // The copy's layout: the dimensions the run's steps move along
    // outermost, so that each step's slice is contiguous and a thread's
    // values of one step (its slots: a's rows of a tile) lie side by side,
    // which the CUDA compiler reads as 16-byte loads. Where that reorders the
    // dimensions, a step's slice is padded to a multiple of 4 words, and by 4
    // more where it is a multiple of 32, so that the copy's stores (in the
    // buffer's order) do not all fall on one bank.
    const std::string &step = run->as<For>()->name;
    std::vector<bool> moves(min.size(), false);
    kir::replace_calls(*run, [&](const Call *op) -> Expr {
        if (op->name != kir::intrinsic::load || kir::access_of(op).buffer != b.name) return Expr();
        const kir::Access a = kir::access_of(op);
        for (size_t d = 0; d < a.coords.size(); d++) moves[d] = moves[d] || expr_uses_var(a.coords[d], step);
        return Expr();
    });
    std::vector<size_t> order;
    for (size_t d = 0; d < min.size(); d++) {
        if (!moves[d]) order.push_back(d);
    }
    for (size_t d = 0; d < min.size(); d++) {
        if (moves[d]) order.push_back(d);
    }
    const bool reordered = !std::is_sorted(order.begin(), order.end());
    std::vector<int64_t> stride(min.size(), 1);
    int64_t size = 1;
    for (size_t i = 0; i < order.size(); i++) {
        if (reordered && i > 0 && moves[order[i]] && !moves[order[i - 1]]) {
            size = (size + 3) / 4 * 4;
            if (size % 32 == 0) size += 4;
        }
        stride[order[i]] = size;
        size *= *as_const_int(extent[order[i]]);
    }
    // Double-buffered, run r's copy is the half r % 2.
    const bool halves = kernel.shared_double_buffer;
    *elements_out = std::max(*elements_out, halves ? 2 * size : size);
    const Expr half = halves ? (Variable::make(Int(32), run_var) % 2) * make_const(Int(32), size) : make_zero(Int(32));
    // The element of the copy at `coords`.
    auto element = [&](const std::vector<Expr> &coords) {
        Expr index = half;
        for (size_t d = 0; d < coords.size(); d++) index = index + (coords[d] - min[d]) * make_const(Int(32), stride[d]);
        return simplify_exact(index);
    };
    const int threads = kernel.array_threads();
    const int64_t passes = (elements + threads - 1) / threads;
    if (halves && passes > copy_batch) {
        refuse(Refusal::ResourceLimit, b.name, "kernel ", kernel.name, ": ", b.name, ".store_in(MemoryType::Shared) with --shared-steps=",
                      kernel.shared_steps, " --double-buffer: a run's copy takes ", passes, " loads per thread, more than the ", copy_batch,
                      " a thread holds while the run before computes; stage fewer steps at a time, or drop --double-buffer");
    }
    const Stmt copy = batched_copy(tile, b.type, elements, threads, kir::array_thread(kernel), names.fresh(tile, "pass"), names,
                                   [&](const Expr &e, const Expr &inside) {
                                       const std::vector<Expr> coords = box_coords(min, extent, e);
                                       return std::make_pair(kir::load(b.type, b.name, simplify_exact(inside && kir::in_bounds(b, coords)), coords),
                                                             reordered ? element(coords) : simplify_exact(half + e));
                                   });
    *run = kir::replace_calls(*run, [&](const Call *op) -> Expr {
        if (op->name != kir::intrinsic::load) return Expr();
        kir::Access a = kir::access_of(op);
        if (a.buffer != b.name) return Expr();
        Expr value = Load::make(op->type, tile, element(a.coords), Buffer<>(), Parameter(), const_true(), ModulusRemainder());
        if (guard_only_bounds(b, a.coords, a.guard)) return value;
        return select(a.guard, value, make_zero(op->type));
    });
    return copy;
}

/// `run`, the steps of one run of a rolled loop, with its reads of each
/// staged input it loads from the copy of the box the run reads (over its
/// steps, lanes and warps; its position may move with the run and the grid
/// point): the copies (batched_copy), a barrier, the run, a barrier.
Stmt stage_run(const kir::Kernel &kernel, std::vector<StagedInput> &inputs, kir::NameGenerator &names, Stmt run,
               const std::string &run_var) {
    std::vector<Stmt> parts;
    for (StagedInput &in : inputs) {
        if (loads_buffer(run, in.buffer->name)) {
            parts.push_back(copy_for_run(kernel, *in.buffer, in.tile, names, run_var, &run, &in.elements));
        }
    }
    parts.push_back(kir::barrier());
    parts.push_back(run);
    parts.push_back(kir::barrier());
    return Block::make(parts);
}

/// The runs `run_var` in [0, runs) of `run` double-buffered: run 0's copies
/// before the loop, then each run but the last issues the next run's loads
/// (lets), runs its steps on its half of the copies, stores the next run's
/// values into the other half and meets the array's threads at one barrier;
/// the last run, peeled, only computes. Writing the other half is safe: it
/// was last read in the run before, which ended at a barrier; the next run
/// reads it after this one's barrier.
Stmt stage_runs_double_buffered(const kir::Kernel &kernel, std::vector<StagedInput> &inputs, kir::NameGenerator &names, Stmt run,
                                const std::string &run_var, int64_t runs) {
    const Expr r = Variable::make(Int(32), run_var);
    std::vector<Stmt> first, next_stores;
    std::vector<std::pair<std::string, Expr>> next_loads;
    for (StagedInput &in : inputs) {
        if (!loads_buffer(run, in.buffer->name)) continue;
        // One batch (checked by copy_for_run): for (pass, 0, 1) { lets; stores }.
        const Stmt copy = copy_for_run(kernel, *in.buffer, in.tile, names, run_var, &run, &in.elements);
        const For *loop = copy.as<For>();
        internal_assert(loop && is_const_one(loop->extent), "stage_in_shared: a double-buffered copy of more than one batch");
        first.push_back(substitute(run_var, make_zero(Int(32)), copy));
        Stmt body = substitute(run_var, r + 1, substitute(loop->name, make_zero(Int(32)), loop->body));
        while (const LetStmt *let = body.as<LetStmt>()) {
            next_loads.emplace_back(let->name, let->value);
            body = let->body;
        }
        next_stores.push_back(body);
    }
    first.push_back(kir::barrier());
    if (runs > 1) {
        Stmt step = Block::make({run, Block::make(next_stores), kir::barrier()});
        for (auto it = next_loads.rbegin(); it != next_loads.rend(); ++it) step = LetStmt::make(it->first, it->second, step);
        first.push_back(For::make(run_var, make_zero(Int(32)), make_const(Int(32), runs - 1), ForType::Serial, DeviceAPI::None, step));
    }
    first.push_back(substitute(run_var, make_const(Int(32), runs - 1), run));
    first.push_back(kir::barrier());
    return Block::make(first);
}

/// `body` (an array instance) with each rolled loop of constant bounds and
/// at least Kernel::shared_steps iterations that reads a staged input run
/// in runs of that many iterations, each run staged (stage_run); the
/// iterations past the last whole run read the inputs where they are.
/// Counts the loops split in `*loops`.
Stmt stage_in_runs(const kir::Kernel &kernel, std::vector<StagedInput> &inputs, kir::NameGenerator &names, const Stmt &body,
                   int *loops) {
    class Runs : public IRMutator {
    public:
        Runs(const kir::Kernel &k, std::vector<StagedInput> &i, kir::NameGenerator &n, int *l) : kernel(k), inputs(i), names(n), loops(l) {}
        using IRMutator::visit;
        Stmt visit(const For *op) override {
            const int64_t *lo = as_const_int(op->min), *n = as_const_int(op->extent);
            const int64_t steps = kernel.shared_steps;
            const bool reads = std::any_of(inputs.begin(), inputs.end(),
                                           [&](const StagedInput &in) { return loads_buffer(op->body, in.buffer->name); });
            if (op->for_type != ForType::Serial || !lo || !n || *n < steps || !reads) return IRMutator::visit(op);
            (*loops)++;
            const std::string run = names.fresh(op->name, "run"), step = names.fresh(op->name, "step");
            const Type type = op->min.type();
            const Expr at = make_const(type, *lo) + Variable::make(type, run) * make_const(type, steps) + Variable::make(type, step);
            Stmt steps_of_run = For::make(step, make_zero(type), make_const(type, steps), ForType::Serial, op->device_api,
                                          substitute(op->name, at, op->body));
            Stmt runs = kernel.shared_double_buffer
                            ? stage_runs_double_buffered(kernel, inputs, names, steps_of_run, run, *n / steps)
                            : For::make(run, make_zero(type), make_const(type, *n / steps), ForType::Serial, op->device_api,
                                        stage_run(kernel, inputs, names, steps_of_run, run));
            if (*n % steps == 0) return runs;
            Stmt rest = For::make(op->name, make_const(type, *lo + *n / steps * steps), make_const(type, *n % steps), op->for_type,
                                  op->device_api, op->body);
            return Block::make(runs, rest);
        }

    private:
        const kir::Kernel &kernel;
        std::vector<StagedInput> &inputs;
        kir::NameGenerator &names;
        int *loops;
    } runs(kernel, inputs, names, loops);
    return runs.mutate(body);
}

/// The coordinates of every load of `buffer` in `s`.
std::vector<std::vector<Expr>> load_coords(const Stmt &s, const std::string &buffer) {
    std::vector<std::vector<Expr>> found;
    kir::replace_calls(s, [&](const Call *op) -> Expr {
        if (op->name == kir::intrinsic::load && kir::access_of(op).buffer == buffer) found.push_back(kir::access_of(op).coords);
        return Expr();
    });
    return found;
}

/// `x` as min(lane * k + c, hi) with 0 <= c < k on every lane, where it is
/// index arithmetic of the lane alone (the first index of a table's read,
/// clamped into the table by [0, hi]; checked lane by lane); nullopt
/// otherwise.
std::optional<std::pair<int64_t, int64_t>> lane_blocked(const Expr &x, int64_t hi) {
    class LaneOnly : public IRVisitor {
    public:
        bool yes = true;
        using IRVisitor::visit;
        void visit(const Variable *v) override { yes &= v->name == kir::lane_var; }
        void visit(const Call *) override { yes = false; }
        void visit(const Load *) override { yes = false; }
    } lane_only;
    x.accept(&lane_only);
    if (!lane_only.yes || !x.type().is_int()) return std::nullopt;
    // Its value on every lane (as_const_int points into its Expr: keep them).
    std::vector<int64_t> value;
    for (int l = 0; l < kir::warp_size; l++) {
        const Expr v = simplify(substitute(kir::lane_var, make_const(x.type(), l), x));
        const int64_t *constant = as_const_int(v);
        if (!constant) return std::nullopt;
        value.push_back(*constant);
    }
    const int64_t c = value[0], k = value[1] - value[0];
    if (k < 2 || c < 0 || c >= k) return std::nullopt;
    for (int l = 0; l < kir::warp_size; l++) {
        if (value[l] != std::min(l * k + c, hi)) return std::nullopt;
    }
    return std::make_pair(k, c);
}

/// A table (read at data-dependent indices, clamped into it) staged whole,
/// once per block, in a block array: copied by every thread of the block
/// (Kernel::block_setup), read by every array instance of the block.
///
/// The layout: where every read's first index is lane * K + c clamped into
/// the table (a lane's K consecutive entries, one per slot, as a query
/// profile is read), a row is 32 K words and entry i of it (i < 32 K) lies at
/// (i % K) * 32 + i / K, holding the table's entry min(i, last): lane l's
/// read of slot c is word c * 32 + l, clamp included, and the lanes of a
/// warp reading one slot read 32 consecutive words, one per bank, whatever
/// rows they read. Otherwise rows are dense, a row of a multiple of 32
/// entries padded by one so that rows do not start on the same bank.
int64_t stage_table(kir::Kernel &kernel, const kir::BufferArg &b, kir::NameGenerator &names) {
    const std::vector<std::vector<Expr>> reads = load_coords(kernel.body, b.name);
    if (reads.empty()) return 0;
    const int dims = (int)b.domain_reads.size();
    std::vector<int64_t> min, extent;
    int64_t entries = 1;
    for (const auto &[lo, hi] : b.domain_reads) {
        min.push_back(lo);
        extent.push_back(hi - lo + 1);
        entries *= hi - lo + 1;
    }
    // Interleaved over the lanes, if every read is blocked by the same K.
    int64_t K = 0;
    if (kernel.warps_per_array == 1) {
        for (const std::vector<Expr> &c : reads) {
            std::optional<std::pair<int64_t, int64_t>> blocked = lane_blocked(c[0], extent[0] - 1);
            if (!blocked || (K && blocked->first != K)) {
                K = 0;
                break;
            }
            K = blocked->first;
        }
        if (K && (min[0] != 0 || extent[0] > kir::warp_size * K)) K = 0;
    }
    const int64_t row = K ? kir::warp_size * K : extent[0] + (dims > 1 && extent[0] % kir::warp_size == 0 ? 1 : 0);
    const int64_t elements = entries / extent[0] * row;
    // The element of the table's coordinates `coords`.
    auto element = [&](const std::vector<Expr> &coords) {
        Expr first;
        std::optional<std::pair<int64_t, int64_t>> blocked = K ? lane_blocked(coords[0], extent[0] - 1) : std::nullopt;
        if (blocked) {
            first = make_const(Int(32), blocked->second * kir::warp_size) + Variable::make(Int(32), kir::lane_var);
        } else if (K) {
            Expr i = cast(Int(32), coords[0]);
            first = (i % make_const(Int(32), K)) * kir::warp_size + i / make_const(Int(32), K);
        } else {
            first = cast(Int(32), coords[0]) - make_const(Int(32), min[0]);
        }
        Expr rest = make_zero(Int(32));
        for (int d = dims - 1; d >= 1; d--) rest = rest * make_const(Int(32), extent[d]) + (cast(Int(32), coords[d]) - make_const(Int(32), min[d]));
        return simplify_exact(first + rest * make_const(Int(32), row));
    };
    const std::string tile = names.fresh(b.name, "shared"), pass = names.fresh(tile, "pass");
    // The copy: entry e of the table (dimension 0 fastest: coalesced) by the
    // block's thread e % threads; interleaved, every entry of a row of 32 K,
    // those past the table's last holding the last (batched_copy).
    const int threads = kernel.block_warps() * kir::warp_size;
    const int64_t copied_row = K ? row : extent[0], copies = entries / extent[0] * copied_row;
    const Expr thread = Variable::make(Int(32), kir::block_warp_var) * kir::warp_size + Variable::make(Int(32), kir::lane_var);
    const Stmt copy = batched_copy(tile, b.type, copies, threads, thread, pass, names, [&](const Expr &e, const Expr &inside) {
        std::vector<Expr> at, coords;
        Expr rest = e;
        for (int d = 0; d < dims; d++) {
            const int64_t n = d == 0 ? copied_row : extent[d];
            at.push_back(simplify_exact(make_const(Int(32), min[d]) + (d + 1 < dims ? rest % make_const(Int(32), n) : rest)));
            coords.push_back(d == 0 && K ? simplify_exact(Halide::min(at[0], make_const(Int(32), extent[0] - 1))) : at[d]);
            rest = rest / make_const(Int(32), n);
        }
        return std::make_pair(kir::load(b.type, b.name, inside, coords), element(at));
    });
    kernel.block_setup = kernel.block_setup.defined() ? Block::make(kernel.block_setup, copy) : copy;
    kernel.block_arrays.push_back(kir::BlockArray{tile, b.type, elements});
    kernel.body = kir::replace_calls(kernel.body, [&](const Call *op) -> Expr {
        if (op->name != kir::intrinsic::load) return Expr();
        kir::Access a = kir::access_of(op);
        if (a.buffer != b.name) return Expr();
        // Its indices are clamped into the table, so the read is safe
        // anywhere; a guard (the domain's) still gives 0 where it fails.
        Expr value = Load::make(op->type, tile, element(a.coords), Buffer<>(), Parameter(), const_true(), ModulusRemainder());
        return is_const_one(a.guard) ? value : select(a.guard, value, make_zero(op->type));
    });
    return elements * b.type.bytes();
}

}  // namespace

void stage_in_shared(kir::Kernel &kernel) {
    int64_t bytes = 0;   // of the copies of one array
    int64_t tables = 0;  // of the block's copies of tables
    std::string staged;
    std::vector<StagedInput> in_runs;  // staged a run of steps at a time (Kernel::shared_steps)
    kir::NameGenerator names(kernel);
    for (const kir::BufferArg &b : kernel.buffers) {
        if (b.is_output || b.cache != kir::InputCache::Shared) continue;
        if (b.table) {
            if (const int64_t table_bytes = stage_table(kernel, b, names)) {
                tables += table_bytes;
                staged += (staged.empty() ? "" : ", ") + b.name + " (" + std::to_string(table_bytes) + " bytes, one copy for the block)";
            }
            continue;
        }
        // The copy BUFFER.shared (one for every instance) and its loop BUFFER.shared.pass.
        const std::string tile = names.fresh(b.name, "shared");
        if (kernel.shared_steps > 0) {
            in_runs.push_back({&b, tile});
            continue;
        }
        int64_t elements = 0;
        const std::string pass = names.fresh(tile, "pass");
        kernel.body = kir::on_instances(kernel.body, [&](const Stmt &body) { return stage(kernel, b, tile, pass, names, body, &elements); });
        if (elements == 0) continue;
        kernel.body = Allocate::make(tile, b.type, Halide::MemoryType::GPUShared, {make_const(Int(32), elements)},
                                     const_true(), kernel.body);
        bytes += elements * b.type.bytes();
        staged += (staged.empty() ? "" : ", ") + b.name + " (" + std::to_string(elements * b.type.bytes()) + " bytes)";
    }
    if (kernel.shared_steps > 0 && in_runs.empty()) {
        compile_error("kernel ", kernel.name, ": --shared-steps=", kernel.shared_steps, " stages inputs cached in shared memory, and ",
                      "this kernel caches none but tables (staged whole): cache an input there (x.in(F).store_in(MemoryType::Shared)), ",
                      "or drop --shared-steps");
    }
    if (!in_runs.empty()) {
        int loops = 0;
        kernel.body = kir::on_instances(kernel.body, [&](const Stmt &body) { return stage_in_runs(kernel, in_runs, names, body, &loops); });
        for (const StagedInput &in : in_runs) {
            if (in.elements == 0) {
                compile_error("kernel ", kernel.name, ": ", in.buffer->name, ".store_in(MemoryType::Shared) with --shared-steps=",
                              kernel.shared_steps, ": no rolled loop of at least ", kernel.shared_steps, " steps reads ", in.buffer->name,
                              "; stage fewer steps at a time, roll the time loop (--unroll-steps=0), or drop --shared-steps to stage ",
                              "each array instance's box whole");
            }
            kernel.body = Allocate::make(in.tile, in.buffer->type, Halide::MemoryType::GPUShared, {make_const(Int(32), in.elements)},
                                         const_true(), kernel.body);
            bytes += in.elements * in.buffer->type.bytes();
            staged += (staged.empty() ? "" : ", ") + in.buffer->name + " (" + std::to_string(in.elements * in.buffer->type.bytes()) +
                      " bytes a run of " + std::to_string(kernel.shared_steps) + " steps)";
        }
    }
    if (bytes * kernel.arrays_per_block() + tables > kernel.max_shared_bytes) {
        refuse(Refusal::ResourceLimit, "", "kernel ", kernel.name, ": the inputs cached in shared memory need ", staged,
                      !tables ? " per array instance, " : bytes ? " (any input but a table per array instance), " : ", ",
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
