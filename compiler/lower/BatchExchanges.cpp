#include "lower/BatchExchanges.h"

#include <map>
#include <optional>
#include <set>

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// One link of a run of straight-line code: a let (name and value) or a statement.
struct Item {
    std::string name;
    Expr value;
    Stmt stmt;
    bool is_let() const { return !name.empty(); }
};

/// What an item reads and writes: variables, and arrays (register and
/// shared arrays, and the buffers of kir::load and kir::store).
struct Footprint {
    std::set<std::string> variables, reads, writes;
};

Footprint footprint(const Item &item) {
    class Collect : public IRVisitor {
    public:
        Footprint f;
        using IRVisitor::visit;
        void visit(const Variable *op) override { f.variables.insert(op->name); }
        void visit(const Load *op) override {
            f.reads.insert(op->name);
            IRVisitor::visit(op);
        }
        void visit(const Store *op) override {
            f.writes.insert(op->name);
            IRVisitor::visit(op);
        }
        void visit(const Call *op) override {
            if (op->name == kir::intrinsic::load) f.reads.insert(kir::access_of(op).buffer);
            if (op->name == kir::intrinsic::store) f.writes.insert(kir::access_of(op).buffer);
            IRVisitor::visit(op);
        }
    } collect;
    if (item.is_let()) item.value.accept(&collect);
    else item.stmt.accept(&collect);
    return collect.f;
}

/// True if the move `shift` may be hoisted above `item`: the item binds
/// nothing the move reads and not its name, does not read its name, and
/// writes no array the move reads.
bool may_hoist_above(const Item &shift, const Footprint &moved, const Item &item) {
    if (item.is_let() && (item.name == shift.name || moved.variables.count(item.name))) return false;
    const Footprint crossed = footprint(item);
    if (crossed.variables.count(shift.name)) return false;
    for (const std::string &array : crossed.writes) {
        if (moved.reads.count(array)) return false;
    }
    return true;
}

class Batch : public IRMutator {
public:
    Batch(int threads, int64_t budget) : threads(threads), budget(budget) {}
    using IRMutator::visit;

    Stmt visit(const LetStmt *op) override { return batch_chain(op); }
    Stmt visit(const Block *op) override { return batch_chain(op); }

private:
    const int threads;
    const int64_t budget;  ///< bytes of shared memory a run's moves may use

    /// The shared bytes of a run's moves: a slot per distinct value moved
    /// through shared memory, one per other move across warps (as
    /// exchange_across_warps allocates them), two halves of a slot per thread.
    struct Run {
        size_t end = 0;  ///< one past the run's last move in the output
        std::vector<Expr> published;
        int64_t bytes = 0;
    };
    int64_t slot_bytes(Type t) const { return 2 * (int64_t)threads * t.bytes(); }

    /// The bytes the run needs with `shift` in it.
    int64_t bytes_with(const Run &run, const Call *shift) const {
        const int64_t *d = as_const_int(shift->args[1]);
        if (d && *d == 0) return run.bytes;
        if (kir::shifts_through_shared(shift)) {
            for (const Expr &v : run.published) {
                if (equal(v, shift->args[0])) return run.bytes;
            }
        }
        return run.bytes + slot_bytes(shift->type);
    }

    Stmt batch_chain(const Stmt &head) {
        std::vector<Item> items;
        for (Stmt s = head; s.defined();) {
            if (const LetStmt *l = s.as<LetStmt>()) {
                items.push_back({l->name, l->value, Stmt()});
                s = l->body;
            } else if (const Block *b = s.as<Block>()) {
                items.push_back({"", Expr(), b->first});
                s = b->rest;
            } else {
                items.push_back({"", Expr(), s});
                break;
            }
        }
        std::vector<Item> out;
        std::optional<Run> run;
        for (Item &item : items) {
            if (!item.is_let()) item.stmt = mutate(item.stmt);
            const Call *shift = item.is_let() ? kir::as_intrinsic(item.value, kir::intrinsic::array_shift) : nullptr;
            if (!shift) {
                out.push_back(item);
                continue;
            }
            bool joins = run && bytes_with(*run, shift) <= budget;
            if (joins) {
                const Footprint moved = footprint(item);
                for (size_t k = run->end; k < out.size() && joins; k++) joins = may_hoist_above(item, moved, out[k]);
            }
            if (!joins) {
                out.push_back(item);
                run = Run{out.size(), {}, 0};
            } else {
                out.insert(out.begin() + (std::ptrdiff_t)run->end, item);
                run->end++;
            }
            run->bytes = bytes_with(*run, shift);
            if (kir::shifts_through_shared(shift)) run->published.push_back(shift->args[0]);
        }
        Stmt body;
        for (size_t k = out.size(); k-- > 0;) {
            if (out[k].is_let()) body = LetStmt::make(out[k].name, out[k].value, body);
            else body = body.defined() ? Block::make(out[k].stmt, body) : out[k].stmt;
        }
        return body;
    }
};

}  // namespace

void batch_exchanges(kir::Kernel &kernel) {
    if (kernel.warps_per_array <= 1) return;
    const int64_t budget = kir::shared_bytes_per_block - kir::shared_bytes(kernel.body);
    kernel.body = Batch(kernel.array_threads(), budget).mutate(kernel.body);
}

}  // namespace pulse
