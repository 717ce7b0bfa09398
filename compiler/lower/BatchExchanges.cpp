#include "lower/BatchExchanges.h"

#include "lower/ExchangeAcrossWarps.h"

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

    /// A run of moves: one past its last move in the output, and its size.
    struct Run {
        size_t end = 0;
        ExchangeRunSize size;
    };

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
            bool joins = run && run->size.fits(shift);
            if (joins) {
                const Footprint moved = footprint(item);
                for (size_t k = run->end; k < out.size() && joins; k++) joins = may_hoist_above(item, moved, out[k]);
            }
            if (!joins) {
                out.push_back(item);
                run = Run{out.size(), ExchangeRunSize(threads, budget)};
            } else {
                out.insert(out.begin() + (std::ptrdiff_t)run->end, item);
                run->end++;
            }
            run->size.add(shift);
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
    kernel.body = Batch(kernel.array_threads(), exchange_budget(kernel)).mutate(kernel.body);
}

}  // namespace pulse
