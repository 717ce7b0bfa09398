#include "codegen/KernelPrinter.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

std::string c_name(const std::string &n) {
    std::string r;
    for (char c : n) r += (std::isalnum((unsigned char)c) || c == '_') ? c : '_';
    return r;
}

std::string comment_lines(const std::string &text) {
    std::ostringstream s;
    std::istringstream in(text);
    std::string line;
    bool first = true;
    while (std::getline(in, line)) {
        s << (first ? "" : "// ") << line << "\n";
        first = false;
    }
    if (first) s << "\n";  // no text: the comment's line still ends
    return s.str();
}

void KernelPrinter::if_then_else(const IfThenElse *op, int indent) { print_if(op, expr(op->condition), indent); }

void KernelPrinter::print_if(const IfThenElse *op, const std::string &condition, int indent) {
    out << pad(indent) << "if (" << condition << ") {\n";
    stmt(op->then_case, indent + 1);
    if (op->else_case.defined()) {
        out << pad(indent) << "} else {\n";
        stmt(op->else_case, indent + 1);
    }
    out << pad(indent) << "}\n";
}

void KernelPrinter::barrier(int) { internal_error(backend(), " printer: the kernel has barriers, which this backend cannot print"); }

void KernelPrinter::grid_barrier(int) {
    internal_error(backend(), " printer: the kernel has grid barriers, which this backend cannot print");
}

void KernelPrinter::stmt(const Stmt &s, int indent) {
    if (s.as<LetStmt>()) {
        Stmt body = s;
        while (const LetStmt *op = body.as<LetStmt>()) {
            let(op, indent);
            body = op->body;
        }
        stmt(body, indent);
        return;
    }
    if (const Block *op = s.as<Block>()) {
        // Lets bind only inside their statement: a scope of their own keeps
        // names that a sibling binds again (peeled loop iterations) apart.
        for (const Stmt &part : {op->first, op->rest}) {
            if (part.as<LetStmt>() && op->rest.defined()) {
                out << pad(indent) << "{\n";
                stmt(part, indent + 1);
                out << pad(indent) << "}\n";
            } else {
                stmt(part, indent);
            }
        }
        return;
    }
    if (const ProducerConsumer *op = s.as<ProducerConsumer>()) {
        out << pad(indent) << "{  // one array instance\n";
        stmt(op->body, indent + 1);
        out << pad(indent) << "}\n";
        return;
    }
    if (const IfThenElse *op = s.as<IfThenElse>()) {
        if_then_else(op, indent);
        return;
    }
    if (const For *op = s.as<For>()) {
        // Serial loops stay loops; their bounds are the same on every lane.
        std::string v = c_name(op->name);
        out << pad(indent) << "for (int " << v << " = " << expr(op->min) << "; " << v << " < " << expr(op->min) << " + "
            << expr(op->extent) << "; ++" << v << ") {\n";
        loop_depth++;
        stmt(op->body, indent + 1);
        loop_depth--;
        out << pad(indent) << "}\n";
        return;
    }
    if (const Allocate *op = s.as<Allocate>()) {
        allocate(op, indent);
        return;
    }
    if (const Store *op = s.as<Store>()) {
        register_store(op, indent);
        return;
    }
    if (const Evaluate *op = s.as<Evaluate>()) {
        if (const Call *c = op->value.as<Call>(); c && c->name == kir::intrinsic::store) {
            buffer_store(c, indent);
            return;
        }
        if (kir::as_intrinsic(op->value, kir::intrinsic::barrier)) {
            barrier(indent);
            return;
        }
        if (kir::as_intrinsic(op->value, kir::intrinsic::grid_barrier)) {
            grid_barrier(indent);
            return;
        }
        if (is_const(op->value)) return;
    }
    internal_error(backend(), " printer: cannot print the statement ", s);
}

}  // namespace pulse
