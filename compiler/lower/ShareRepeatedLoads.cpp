#include "lower/ShareRepeatedLoads.h"

#include <map>

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

bool is_buffer_load(const Call *op) { return op->name == kir::intrinsic::load; }

/// The loads `e` reads, each occurrence counted (a load inside another's
/// coordinates too), less those that read a variable an expression's Let binds.
class CountLoads : public IRVisitor {
public:
    std::map<Expr, int, IRDeepCompare> uses;
    std::vector<Expr> in_order;  ///< each load once, inner loads before the loads around them

private:
    std::vector<std::string> bound;
    using IRVisitor::visit;

    void visit(const Let *op) override {
        op->value.accept(this);
        bound.push_back(op->name);
        op->body.accept(this);
        bound.pop_back();
    }

    void visit(const Call *op) override {
        IRVisitor::visit(op);
        if (!is_buffer_load(op)) return;
        const Expr load(op);
        for (const std::string &name : bound) {
            if (expr_uses_var(load, name)) return;
        }
        if (uses[load]++ == 0) in_order.push_back(load);
    }
};

class Share : public IRMutator {
public:
    explicit Share(kir::NameGenerator &names) : names(names) {}
    using IRMutator::visit;

private:
    kir::NameGenerator &names;

    Stmt visit(const LetStmt *op) override {
        std::vector<const LetStmt *> chain;
        Stmt rest = Stmt(op);
        while (const LetStmt *let = rest.as<LetStmt>()) {
            chain.push_back(let);
            rest = let->body;
        }
        rest = mutate(rest);
        CountLoads count;
        for (const LetStmt *let : chain) let->value.accept(&count);
        // Each repeated load's let goes before the first value that reads it.
        std::vector<std::vector<std::pair<std::string, Expr>>> before(chain.size());
        std::vector<Expr> values;
        for (const LetStmt *let : chain) values.push_back(let->value);
        std::vector<std::pair<Expr, Expr>> shared;  // (load, its let's variable), inner loads first
        for (const Expr &load : count.in_order) {
            if (count.uses.at(load) < 2) continue;
            // (The load as the values now read it: its inner loads shared.)
            Expr now = load;
            for (const auto &[inner, inner_var] : shared) now = substitute(inner, inner_var, now);
            const std::string name = names.fresh(kir::access_of(load.as<Call>()).buffer, "read");
            const Expr var = Variable::make(load.type(), name);
            bool bound = false;
            for (size_t i = 0; i < values.size(); i++) {
                const Expr replaced = substitute(now, var, values[i]);
                if (replaced.same_as(values[i])) continue;
                if (!bound) before[i].emplace_back(name, now);
                bound = true;
                values[i] = replaced;
            }
            shared.emplace_back(now, var);
        }
        for (size_t i = chain.size(); i-- > 0;) {
            rest = LetStmt::make(chain[i]->name, values[i], rest);
            for (auto it = before[i].rbegin(); it != before[i].rend(); ++it) rest = LetStmt::make(it->first, it->second, rest);
        }
        return rest;
    }
};

}  // namespace

void share_repeated_loads(kir::Kernel &kernel) {
    kir::NameGenerator names(kernel);
    Share share(names);
    kernel.body = share.mutate(kernel.body);
}

}  // namespace pulse
