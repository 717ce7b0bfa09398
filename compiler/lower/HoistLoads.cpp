#include "lower/HoistLoads.h"

#include <map>
#include <set>
#include <sstream>

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

}  // namespace

void hoist_loads(kir::Kernel &kernel) {
    kir::NameGenerator fresh_names(kernel);  // every name the kernel has: a hoisted load's let is new
    kernel.body = kir::on_instances(kernel.body, [&](const Stmt &body) {
        // Names the straight-line code binds: a load using one stays put.
        std::set<std::string> bound;
        class Names : public IRVisitor {
        public:
            std::set<std::string> &names;
            explicit Names(std::set<std::string> &n) : names(n) {}
            using IRVisitor::visit;
            void visit(const LetStmt *op) override {
                names.insert(op->name);
                IRVisitor::visit(op);
            }
            void visit(const Let *op) override {
                names.insert(op->name);
                IRVisitor::visit(op);
            }
            void visit(const For *op) override {
                names.insert(op->name);
                IRVisitor::visit(op);
            }
        } names(bound);
        body.accept(&names);
        std::map<Expr, std::string, IRDeepCompare> hoisted;  // load -> let name
        std::vector<std::pair<std::string, Expr>> lets;
        Stmt rewritten = kir::replace_calls(body, [&](const Call *op) -> Expr {
            if (op->name != kir::intrinsic::load) return Expr();
            // An input read through L1 is loaded where it is used.
            if (kernel.buffer(kir::access_of(op).buffer).cache != kir::InputCache::Registers) return Expr();
            bool movable = true;
            for (const Expr &a : op->args) {
                kir::for_each_call(a, [&](const Call *c) { movable &= !kir::is_lane_exchange(c); });
                if (!movable) break;
            }
            class Free : public IRVisitor {
            public:
                const std::set<std::string> &bound;
                bool uses_bound = false;
                explicit Free(const std::set<std::string> &b) : bound(b) {}
                using IRVisitor::visit;
                void visit(const Variable *op) override { uses_bound |= bound.count(op->name) > 0; }
            } free(bound);
            Expr(op).accept(&free);
            if (!movable || free.uses_bound) return Expr();
            auto it = hoisted.find(Expr(op));
            if (it == hoisted.end()) {
                kir::Access a = kir::access_of(op);
                std::string n = fresh_names.fresh(a.buffer, "reg", (int64_t)lets.size());  // BUFFER.regN
                it = hoisted.emplace(Expr(op), n).first;
                lets.push_back({n, Expr(op)});
            }
            return Variable::make(op->type, it->second);
        });
        for (size_t i = lets.size(); i-- > 0;) rewritten = LetStmt::make(lets[i].first, lets[i].second, rewritten);
        return rewritten;
    });
}

}  // namespace pulse
