#include "ir/CmRegisters.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "ir/LaneVarying.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

/// Live ranges of the lane-varying lets and of the register arrays of a
/// kernel body, over the positions of its statements in printing order. A
/// value used inside a loop it was defined outside of lives to the loop's end.
class LiveRanges {
public:
    struct Value {
        std::string name;
        int64_t bytes = 0;
        bool array = false;
        int64_t rows = 1;
        int start = 0, end = 0;
    };
    std::vector<Value> values;

    LiveRanges(const Stmt &body, const LaneVarying &varying, int lanes, int grf_bytes)
        : varying(varying), lanes(lanes), grf_bytes(grf_bytes) {
        walk(body);
    }

    /// The position where the most bytes are live, and those bytes.
    std::pair<int, int64_t> peak() const {
        std::vector<int64_t> delta(pos + 2, 0);
        for (const Value &v : values) {
            delta[v.start] += v.bytes;
            delta[v.end + 1] -= v.bytes;
        }
        int64_t live = 0, best = 0;
        int at = 0;
        for (int p = 0; p <= pos; p++) {
            live += delta[p];
            if (live > best) best = live, at = p;
        }
        return {at, best};
    }

private:
    const LaneVarying &varying;
    const int lanes, grf_bytes;
    std::map<std::string, std::vector<int>> scope;  ///< name -> the bindings in scope, innermost last
    struct OpenLoop {
        int start;
        std::vector<int> used;  ///< values defined before the loop and used in it
    };
    std::vector<OpenLoop> loops;
    int pos = 0;

    int64_t vector_bytes(Type t) const {
        int64_t element = t.is_bool() ? 2 : t.bytes();
        return round_up(lanes * element, grf_bytes);
    }

    void use(const std::string &name) {
        auto it = scope.find(name);
        if (it == scope.end() || it->second.empty()) return;
        int id = it->second.back();
        Value &v = values[id];
        v.end = std::max(v.end, pos);
        for (OpenLoop &l : loops) {
            if (l.start > v.start) {
                l.used.push_back(id);
                break;
            }
        }
    }

    void uses(const Expr &e) {
        if (!e.defined()) return;
        class Uses : public IRVisitor {
        public:
            explicit Uses(LiveRanges &r) : r(r) {}
            LiveRanges &r;
            using IRVisitor::visit;
            void visit(const Variable *op) override { r.use(op->name); }
            void visit(const Load *op) override {
                r.use(op->name);
                IRVisitor::visit(op);
            }
        } u(*this);
        e.accept(&u);
    }

    int bind(const std::string &name, Value v) {
        v.start = v.end = pos;
        values.push_back(v);
        scope[name].push_back((int)values.size() - 1);
        return (int)values.size() - 1;
    }
    void unbind(const std::string &name) { scope[name].pop_back(); }

    void walk(const Stmt &s) {
        if (!s.defined()) return;
        pos++;
        if (const LetStmt *op = s.as<LetStmt>()) {
            uses(op->value);
            bool bound = varying.has(op->name);
            if (bound) bind(op->name, Value{op->name, vector_bytes(op->value.type())});
            walk(op->body);
            if (bound) unbind(op->name);
        } else if (const Block *op = s.as<Block>()) {
            walk(op->first);
            walk(op->rest);
        } else if (const ProducerConsumer *op = s.as<ProducerConsumer>()) {
            walk(op->body);
        } else if (const IfThenElse *op = s.as<IfThenElse>()) {
            uses(op->condition);
            walk(op->then_case);
            walk(op->else_case);
        } else if (const For *op = s.as<For>()) {
            uses(op->min);
            uses(op->extent);
            loops.push_back({pos, {}});
            walk(op->body);
            pos++;
            for (int id : loops.back().used) values[id].end = std::max(values[id].end, pos);
            loops.pop_back();
        } else if (const Allocate *op = s.as<Allocate>()) {
            int64_t rows = kir::register_extent(op);
            bool vec = varying.has(op->name);
            int64_t bytes = vec ? rows * vector_bytes(op->type) : round_up(rows * op->type.bytes(), grf_bytes);
            int id = bind(op->name, Value{op->name, bytes, true, rows});
            walk(op->body);
            pos++;
            values[id].end = pos;  // written and read anywhere inside its body
            unbind(op->name);
        } else if (const Store *op = s.as<Store>()) {
            uses(op->value);
            use(op->name);
        } else if (const Evaluate *op = s.as<Evaluate>()) {
            uses(op->value);
        }
    }
};


}  // namespace

int cm_lanes(const kir::Kernel &kernel) {
    const int64_t lanes = kernel.threads_in_use();
    return (int)std::min<int64_t>(kir::warp_size, round_up(std::max<int64_t>(lanes, 1), 8));
}

CmRegisterPlan plan_cm_registers(const kir::Kernel &kernel, const CmTarget &target) {
    CmRegisterPlan plan;
    kir::on_large_stack([&] {
        const int W = cm_lanes(kernel);
        plan.available = target.bytes();
        auto add = [&](const std::string &what, int64_t bytes) {
            bytes = round_up(bytes, target.grf_bytes);
            plan.uses.push_back({what, bytes});
            plan.bytes += bytes;
        };
        const std::string lanes = std::to_string(W) + " lanes";
        add("thread payload and scalars", 2 * (int64_t)target.grf_bytes);
        add("lane indices", W * 4);
        add("I/O staging (offsets and data of one read or write)", 2 * W * 4);
        add("expression temporaries (loads, shuffles, selects)", 2 * W * 4);
        LaneVarying varying(kernel.body);
        LiveRanges ranges(kernel.body, varying, W, target.grf_bytes);
        const int at = ranges.peak().first;
        // What is live at the peak, by variable (an SSA value's name up to its
        // first dot: Z.t3.up1 is a value of Z).
        struct Group {
            bool array = false;
            int64_t vectors = 0, bytes = 0;
        };
        std::map<std::string, Group> groups;
        std::vector<std::string> order;
        for (const LiveRanges::Value &v : ranges.values) {
            if (v.start > at || v.end < at) continue;
            std::string key = (v.array ? "array " : "") + (v.array ? v.name : v.name.substr(0, v.name.find('.')));
            if (!groups.count(key)) order.push_back(key);
            Group &g = groups[key];
            g.array = v.array;
            g.vectors += v.array ? v.rows : 1;
            g.bytes += v.bytes;
        }
        for (const std::string &key : order) {
            const Group &g = groups[key];
            std::string what = g.array ? key.substr(6) + " (register array, " + std::to_string(g.vectors) + " x " + lanes + ")"
                                       : key + " (" + std::to_string(g.vectors) + " values x " + lanes + ")";
            plan.uses.push_back({what, g.bytes});
            plan.bytes += g.bytes;
        }
    });
    return plan;
}

std::string cm_register_error(const kir::Kernel &k, const CmRegisterPlan &plan, const CmTarget &target) {
    std::ostringstream s;
    s << "CM backend: " << k.name << " needs about " << plan.bytes << " bytes of registers per thread but target " << target.name
      << " has " << plan.available << " (" << target.grf_registers << " registers of " << target.grf_bytes
      << " bytes); the kernel would spill. Largest uses:";
    std::vector<CmRegisterUse> uses = plan.uses;
    std::stable_sort(uses.begin(), uses.end(), [](const CmRegisterUse &a, const CmRegisterUse &b) { return a.bytes > b.bytes; });
    for (size_t i = 0; i < uses.size() && i < 4; i++) s << " " << uses[i].what << ": " << uses[i].bytes << " bytes;";
    s << " fix: use fewer PEs (" << k.pe_count << " now: a smaller extent of the space loops), shorter histories "
      << "(a time row with smaller distances), or a target with a larger GRF";
    return s.str();
}

}  // namespace pulse
