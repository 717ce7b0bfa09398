#include "lower/BatchExchanges.h"

#include "lower/ExchangeAcrossWarps.h"

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

/// What the items since a run's last move do, gathered as they are
/// passed: a move joins the run only if it may be hoisted above them all.
struct Crossed {
    Footprint footprint;
    std::set<std::string> bound;  ///< names the items' lets bind

    void add(const Item &item) {
        const Footprint f = pulse::footprint(item);
        footprint.variables.insert(f.variables.begin(), f.variables.end());
        footprint.writes.insert(f.writes.begin(), f.writes.end());
        if (item.is_let()) bound.insert(item.name);
    }
    /// True if the move `shift` may be hoisted above them: they bind nothing
    /// it reads and not its name, do not read its name, and write no array it reads.
    bool allow(const Item &shift) const {
        if (bound.count(shift.name) || footprint.variables.count(shift.name)) return false;
        const Footprint moved = pulse::footprint(shift);
        for (const std::string &v : moved.variables) {
            if (bound.count(v)) return false;
        }
        for (const std::string &array : moved.reads) {
            if (footprint.writes.count(array)) return false;
        }
        return true;
    }
};

class Batch : public IRMutator {
public:
    Batch(int threads, int64_t budget) : threads(threads), budget(budget) {}
    using IRMutator::visit;

    Stmt visit(const LetStmt *op) override { return batch_chain(op); }
    Stmt visit(const Block *op) override { return batch_chain(op); }

private:
    const int threads;
    const int64_t budget;  ///< bytes of shared memory a run's moves may use

    /// A run of moves: one past its last move in the output, its size, and
    /// what the items after it do.
    struct Run {
        size_t end = 0;
        ExchangeRunSize size;
        Crossed crossed;
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
                if (run) run->crossed.add(item);
                continue;
            }
            if (!run || !run->size.fits(shift) || !run->crossed.allow(item)) {
                out.push_back(item);
                run = Run{out.size(), ExchangeRunSize(threads, budget), Crossed{}};
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
