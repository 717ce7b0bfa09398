// The reference interpreter: the oracle every lowering is checked against.
#ifndef PULSE_INTERPRETER_H
#define PULSE_INTERPRETER_H

#include "exec/Progress.h"
#include "ir/UreProgram.h"

namespace pulse {
namespace ir {

/// Runs the merged UREs on the CPU in the reference order (ReferenceOrder.h)
/// and returns each output Func's buffer by name. Each expression is compiled
/// once to closures (ExprCompiler.h).
///
/// Throws EvaluationError naming the URE and the point when a URE reads a value
/// its select left undefined, a point outside the domain, a value the order has
/// not computed yet, or an input outside its buffer; when an output element is
/// written twice or never. Under a data bound, an output element whose point
/// is past its instance's bound is not written: it holds poison() (a
/// reduction's element keeps its initial value). `progress`, if given, hears
/// the points done so far.
Buffers realize(const UreProgram &program, const Buffers &inputs, const Progress &progress = {});

/// Prints a point as `(c=3, q=0)`, outermost loop first.
std::string point_text(const UreProgram &program, const int64_t *coords);

/// Prints an output element as `(3, 0)`, first dimension first.
std::string element_text(const std::vector<int> &coords);

}  // namespace ir
}  // namespace pulse

#endif
