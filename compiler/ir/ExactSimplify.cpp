#include "ir/ExactSimplify.h"

#include <map>

#include "ir/IndexArithmetic.h"
#include "ir/Scalar.h"

namespace pulse {

using namespace Halide;
using namespace Halide::Internal;

namespace {

/// Operations hidden from Halide's simplifier become calls of these names,
/// their operands still simplified (so exact folds inside them, such as a
/// select on a constant condition, still happen), and come back afterwards.
const std::string opaque_prefix = "pulse.exact.";
enum class Opaque { Add, Sub, Mul, Div, Mod, Min, Max, EQ, NE, LT, LE, GT, GE, Cast };
const char *const opaque_names[] = {"add", "sub", "mul", "div", "mod", "min", "max", "eq", "ne", "lt", "le", "gt", "ge", "cast"};

/// Hides each operation Halide's simplifier would rewrite inexactly: float
/// arithmetic, comparisons and conversions from float; min, max, /, % and
/// comparisons of int32/int64 values (index arithmetic excepted).
class Protect : public IRMutator {
public:
    explicit Protect(const IndexArithmetic &indices) : indices(indices) {}

private:
    const IndexArithmetic &indices;
    using IRMutator::visit;

    Expr opaque(Type type, Opaque which, std::vector<Expr> args) {
        for (Expr &a : args) a = mutate(a);
        return Call::make(type, opaque_prefix + opaque_names[(int)which], args, Call::PureExtern);
    }

    /// int32 and int64 values: the integers Halide assumes never overflow.
    bool overflow_assumed(const Expr &operand, const Expr &whole) const {
        return operand.type().is_int() && operand.type().bits() >= 32 && indices.reads_values(whole);
    }

    /// +, - and * of integers wrap exactly as Halide's reassociation assumes,
    /// but it folds int32/int64 constants to an overflow error: hidden for
    /// floats, and for int32/int64 outside index arithmetic.
    template<typename T>
    Expr ring(const T *op, Opaque which, BinaryOp binary) {
        const bool wide_int = op->type.is_int() && op->type.bits() >= 32;
        if (op->type.is_float() || (wide_int && !indices.is_index(Expr(op)))) {
            // Constants fold here, wrapping.
            Expr a = mutate(op->a), b = mutate(op->b);
            const IntImm *x = a.as<IntImm>(), *y = b.as<IntImm>();
            if (wide_int && x && y) {
                return make_const(op->type, binary_fn(binary, op->type)(Scalar::of_int(x->value), Scalar::of_int(y->value)).as_int());
            }
            return Call::make(op->type, opaque_prefix + opaque_names[(int)which], {a, b}, Call::PureExtern);
        }
        return IRMutator::visit(op);
    }
    /// min, max, /, % and comparisons: hidden for floats and int32/int64 values.
    template<typename T>
    Expr ordered(const T *op, Opaque which) {
        if (op->a.type().is_float() || overflow_assumed(op->a, Expr(op))) return opaque(op->type, which, {op->a, op->b});
        return IRMutator::visit(op);
    }

    Expr visit(const Add *op) override { return ring(op, Opaque::Add, BinaryOp::Add); }
    Expr visit(const Sub *op) override { return ring(op, Opaque::Sub, BinaryOp::Sub); }
    Expr visit(const Mul *op) override { return ring(op, Opaque::Mul, BinaryOp::Mul); }
    Expr visit(const Div *op) override { return ordered(op, Opaque::Div); }
    Expr visit(const Mod *op) override { return ordered(op, Opaque::Mod); }
    Expr visit(const Min *op) override { return ordered(op, Opaque::Min); }
    Expr visit(const Max *op) override { return ordered(op, Opaque::Max); }
    Expr visit(const EQ *op) override { return ordered(op, Opaque::EQ); }
    Expr visit(const NE *op) override { return ordered(op, Opaque::NE); }
    Expr visit(const LT *op) override { return ordered(op, Opaque::LT); }
    Expr visit(const LE *op) override { return ordered(op, Opaque::LE); }
    Expr visit(const GT *op) override { return ordered(op, Opaque::GT); }
    Expr visit(const GE *op) override { return ordered(op, Opaque::GE); }
    Expr visit(const Cast *op) override {
        if (op->value.type().is_float()) return opaque(op->type, Opaque::Cast, {op->value});
        return IRMutator::visit(op);
    }
};

/// Brings the hidden operations back.
class Unprotect : public IRMutator {
    using IRMutator::visit;
    Expr visit(const Call *op) override {
        if (op->call_type != Call::PureExtern || op->name.compare(0, opaque_prefix.size(), opaque_prefix) != 0) {
            return IRMutator::visit(op);
        }
        const std::string which = op->name.substr(opaque_prefix.size());
        std::vector<Expr> args;
        for (const Expr &a : op->args) args.push_back(mutate(a));
        if (which == "cast") return Cast::make(op->type, args[0]);
        const Expr &a = args[0], &b = args[1];
        if (which == "add") return Add::make(a, b);
        if (which == "sub") return Sub::make(a, b);
        if (which == "mul") return Mul::make(a, b);
        if (which == "div") return Div::make(a, b);
        if (which == "mod") return Mod::make(a, b);
        if (which == "min") return Min::make(a, b);
        if (which == "max") return Max::make(a, b);
        if (which == "eq") return EQ::make(a, b);
        if (which == "ne") return NE::make(a, b);
        if (which == "lt") return LT::make(a, b);
        if (which == "le") return LE::make(a, b);
        if (which == "gt") return GT::make(a, b);
        return GE::make(a, b);
    }
};

/// Whether a let of float value `e` is one Halide's simplifier substitutes
/// into its uses, and would have had its operations not been hidden from it:
/// peeling operations whose one operand is a variable or a constant reaches
/// a variable or a constant (x + y * z does; x * y + z * w does not).
bool halide_would_substitute(Expr e) {
    if (!e.type().is_float()) return false;
    auto leaf = [](const Expr &x) { return x.as<Variable>() || is_const(x); };
    while (!leaf(e)) {
        Expr a, b;
        bool commutes = false;
        if (const Add *op = e.as<Add>()) a = op->a, b = op->b, commutes = true;
        else if (const Mul *op = e.as<Mul>()) a = op->a, b = op->b, commutes = true;
        else if (const Min *op = e.as<Min>()) a = op->a, b = op->b, commutes = true;
        else if (const Max *op = e.as<Max>()) a = op->a, b = op->b, commutes = true;
        else if (const Sub *op = e.as<Sub>()) a = op->a, b = op->b;
        else if (const Div *op = e.as<Div>()) a = op->a, b = op->b;
        else return false;
        if (leaf(b)) e = a;
        else if (commutes && leaf(a)) e = b;
        else return false;
    }
    return true;
}

/// Substitutes such lets into their uses, as Halide's simplifier does for the
/// arithmetic it sees (values are the same, evaluated where used).
class InlineArithmeticLets : public IRMutator {
    using IRMutator::visit;
    std::map<std::string, Expr> replacements;

    Expr visit(const Variable *op) override {
        auto it = replacements.find(op->name);
        return it == replacements.end() ? Expr(op) : it->second;
    }

    Stmt visit(const LetStmt *op) override {
        // Long chains of lets: walked in a loop, rebuilt innermost first.
        // A name bound again (peeled iterations) shadows the outer binding in
        // its body only: the replacements in force are restored after.
        const std::map<std::string, Expr> outer = replacements;
        std::vector<std::pair<std::string, Expr>> kept;
        Stmt s = op;
        while (const LetStmt *let = s.as<LetStmt>()) {
            Expr value = mutate(let->value);
            if (halide_would_substitute(value)) {
                replacements[let->name] = value;
            } else {
                replacements.erase(let->name);
                kept.emplace_back(let->name, value);
            }
            s = let->body;
        }
        Stmt body = mutate(s);
        replacements = outer;
        for (size_t i = kept.size(); i-- > 0;) body = LetStmt::make(kept[i].first, kept[i].second, body);
        return body;
    }
};

}  // namespace

Expr simplify_exact(const Expr &e) {
    if (!e.defined()) return e;
    const IndexArithmetic indices{Stmt()};
    return Unprotect().mutate(simplify(Protect(indices).mutate(e)));
}

Stmt simplify_exact(const Stmt &s) {
    if (!s.defined()) return s;
    const IndexArithmetic indices(s);
    return InlineArithmeticLets().mutate(Unprotect().mutate(simplify(Protect(indices).mutate(s))));
}

}  // namespace pulse
