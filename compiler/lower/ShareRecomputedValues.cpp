#include "lower/ShareRecomputedValues.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// Whether `e` is worth a let of its own: not a leaf, and computed alike on
/// every lane of the warp that evaluates it (no lane exchange).
bool shareable(const Expr &e) {
    if (e.as<Variable>() || is_const(e) || e.as<Broadcast>()) return false;
    bool exchanges = false;
    kir::for_each_call(e, [&](const Call *call) { exchanges |= kir::is_lane_exchange(call); });
    return !exchanges;
}

/// The names of the chain (`in_chain`) that an expression reads.
class ChainNamesRead : public IRVisitor {
public:
    explicit ChainNamesRead(const std::map<std::string, size_t> &in_chain) : in_chain(in_chain) {}
    std::set<std::string> read;

private:
    const std::map<std::string, size_t> &in_chain;
    using IRVisitor::visit;
    void visit(const Variable *op) override {
        if (in_chain.count(op->name)) read.insert(op->name);
    }
};

/// `e` with each subexpression for which `replace` gives a defined Expr
/// replaced by it (outermost first; a replaced one is not entered).
class ReplaceSubexpressions : public IRMutator {
public:
    explicit ReplaceSubexpressions(std::function<Expr(const Expr &)> replace) : replace(std::move(replace)) {}
    using IRMutator::mutate;
    Expr mutate(const Expr &e) override {
        Expr r = replace(e);
        return r.defined() ? r : IRMutator::mutate(e);
    }

private:
    std::function<Expr(const Expr &)> replace;
};

class Share : public IRMutator {
public:
    using IRMutator::visit;

private:
    struct Let {
        std::string name;
        Expr value;
        std::set<std::string> reads;  ///< names of the chain its value reads
    };

    Stmt visit(const LetStmt *op) override {
        std::vector<Let> chain;
        Stmt rest = Stmt(op);
        std::map<std::string, size_t> in_chain;
        while (const LetStmt *let = rest.as<LetStmt>()) {
            in_chain[let->name] = chain.size();
            chain.push_back({let->name, let->value, {}});
            rest = let->body;
        }
        rest = mutate(rest);
        for (Let &let : chain) {
            ChainNamesRead names(in_chain);
            let.value.accept(&names);
            let.reads = std::move(names.read);
        }
        // The first let of each shareable value (a later let of an equal
        // value reads the first like any other value does).
        std::map<Expr, size_t, IRDeepCompare> binding;
        for (size_t k = 0; k < chain.size(); k++) {
            if (shareable(chain[k].value)) binding.emplace(chain[k].value, k);
        }
        std::vector<bool> emitted(chain.size(), false);
        std::vector<size_t> order;
        std::vector<Expr> values(chain.size());
        // Emits let i: first every not yet emitted let whose value its value
        // contains and whose reads are all emitted, then i itself, its
        // occurrences replaced.
        std::function<void(size_t)> emit = [&](size_t i) {
            ReplaceSubexpressions replace([&](const Expr &e) -> Expr {
                auto found = binding.find(e);
                if (found != binding.end() && found->second != i) {
                    const size_t k = found->second;
                    const bool ready = std::all_of(chain[k].reads.begin(), chain[k].reads.end(),
                                                   [&](const std::string &n) { return emitted[in_chain.at(n)]; });
                    if (emitted[k] || (k > i && ready)) {
                        if (!emitted[k]) emit(k);
                        return Variable::make(e.type(), chain[k].name);
                    }
                }
                return Expr();
            });
            values[i] = replace.mutate(chain[i].value);
            emitted[i] = true;
            order.push_back(i);
        };
        for (size_t i = 0; i < chain.size(); i++) {
            if (!emitted[i]) emit(i);
        }
        for (size_t n = order.size(); n-- > 0;) rest = LetStmt::make(chain[order[n]].name, values[order[n]], rest);
        return rest;
    }
};

}  // namespace

void share_recomputed_values(kir::Kernel &kernel) {
    kir::on_large_stack([&] {
        Share share;
        kernel.body = share.mutate(kernel.body);
    });
}

}  // namespace pulse
