// Which integer expressions of a kernel body (KernelIR.h), or of a URE or
// systolic expression, are index arithmetic: computed from loop variables,
// the lane and warp, buffer sizes and constants only, never from a value the
// spec computes or loads. Index arithmetic stays in range in every program
// the compiler accepts (docs/language.md), so Halide's simplifier may assume
// it never overflows and printers print it with C's operators (fast
// addressing); the rest follows the language's wrapping arithmetic
// (ExactSimplify.h, CodeGenC.h).
#ifndef PULSE_IR_INDEX_ARITHMETIC_H
#define PULSE_IR_INDEX_ARITHMETIC_H

#include <set>
#include <string>

#include "ir/KernelIR.h"

namespace pulse {

class IndexArithmetic {
public:
    explicit IndexArithmetic(const Halide::Internal::Stmt &body);
    /// No expression is index arithmetic: every integer expression follows
    /// the language's wrapping arithmetic (ExactSimplify.h's fallback where
    /// a value made of loop variables and constants alone overflows).
    static IndexArithmetic none();

    /// True if `e` is an integer expression of index variables (at least one)
    /// and constants: no load, no call, no register, no let that holds a
    /// computed value.
    bool is_index(const Halide::Expr &e) const;
    /// True if `e` reads a value: a load, a call (an input, a tap, a
    /// recurrence), a register, a let that holds a value, or a float
    /// converted to an integer. Free variables of an expression simplified
    /// on its own are loops, hence indices.
    bool reads_values(const Halide::Expr &e) const;

private:
    /// Whether a let bound to `e` holds a value (a float, or what reads one).
    bool holds_value(const Halide::Expr &e) const;
    /// Lets bound (anywhere, peeled iterations included) to a value that is
    /// not index arithmetic; every other variable (loops, lets of indices,
    /// the kernel's parameters) is an index.
    std::set<std::string> value_names;
    bool all_values = false;  ///< none()
};

}  // namespace pulse

#endif
