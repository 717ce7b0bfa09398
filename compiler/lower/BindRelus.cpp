#include "lower/BindRelus.h"

#include <map>
#include <set>

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// The vector lets every read of which is a relu. (Names are unique in the
/// kernel, except in copies of one instance's code: a name counts only if
/// every copy reads it so; a scalar copy's reads are not of the vector.)
std::set<std::string> read_only_as_relu(const Stmt &body) {
    struct Count : IRVisitor {
        std::set<std::string> vector_lets;
        std::map<std::string, int> reads, relus;
        using IRVisitor::visit;
        void visit(const LetStmt *op) override {
            if (op->value.type().is_vector()) vector_lets.insert(op->name);
            IRVisitor::visit(op);
        }
        void visit(const Variable *op) override {
            if (op->type.is_vector()) reads[op->name]++;
        }
        void visit(const Max *op) override {
            if (const Variable *v = kir::relu_of_variable(op)) relus[v->name]++;
            IRVisitor::visit(op);
        }
    } count;
    body.accept(&count);
    std::set<std::string> only;
    for (const std::string &name : count.vector_lets) {
        auto r = count.relus.find(name);
        if (r != count.relus.end() && r->second == count.reads[name]) only.insert(name);
    }
    return only;
}

class Bind : public IRMutator {
public:
    explicit Bind(std::set<std::string> names) : names(std::move(names)) {}

private:
    const std::set<std::string> names;
    using IRMutator::visit;

    Stmt visit(const LetStmt *op) override {
        // (Iterative over the chain: bodies nest thousands of lets.)
        std::vector<std::pair<std::string, Expr>> chain;
        Stmt rest = Stmt(op);
        while (const LetStmt *let = rest.as<LetStmt>()) {
            Expr value = mutate(let->value);
            if (names.count(let->name)) value = Max::make(value, make_zero(value.type()));
            chain.emplace_back(let->name, value);
            rest = let->body;
        }
        rest = mutate(rest);
        for (size_t i = chain.size(); i-- > 0;) rest = LetStmt::make(chain[i].first, chain[i].second, rest);
        return rest;
    }

    Expr visit(const Max *op) override {
        const Variable *v = kir::relu_of_variable(op);
        if (v && names.count(v->name)) return op->a;
        return IRMutator::visit(op);
    }
};

}  // namespace

void bind_relus(kir::Kernel &kernel) {
    kir::on_large_stack([&] {
        std::set<std::string> names = read_only_as_relu(kernel.body);
        if (names.empty()) return;
        Bind bind(std::move(names));
        kernel.body = bind.mutate(kernel.body);
    });
}

}  // namespace pulse
