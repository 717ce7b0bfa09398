// The state behind the language's handles. Funcs are shared handles (like
// Halide's); the UREs merged into one loop nest share one UreGroup, which holds
// the bounds and the schedule.
#ifndef PULSE_FUNC_CONTENTS_H
#define PULSE_FUNC_CONTENTS_H

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/UreProgram.h"
#include "pulse/pulse.h"

namespace pulse {
namespace internal {

struct FuncContents {
    std::string name;
    Place place = Place::Host;
    bool declared = false;               ///< type and args given at construction (a recurrence Func)
    Type type;
    std::vector<std::string> args;       ///< declared or, for outputs, taken from the definition
    Expr value;                          ///< the definition; undefined until F(args) = value
    /// Outputs defined at affine indices (`Out(b*C + c, r) = ...`): the element
    /// written; empty when the arguments are plain variables.
    std::vector<Expr> index;
    /// An output given an update after its pure definition (`Best(b) = 0;
    /// Best(b) = max(Best(b), e);`): the operator and the pure definition's
    /// value; `value` is then the update's operand e.
    std::optional<ir::Reduction> reduction;
    std::shared_ptr<UreGroup> group;     ///< the loop nest this Func belongs to
};

struct UreGroup {
    std::vector<std::shared_ptr<FuncContents>> funcs;        ///< merge order; funcs[0] owns the nest
    std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> bounds;  ///< var -> (min, extent), as given
    /// `set_bounds(var, min, extent)` with a min or extent that uses other loops.
    struct DependentBound {
        std::string var;
        Expr min, extent;
    };
    std::vector<DependentBound> dependent_bounds;
    std::vector<Expr> constraints;                           ///< `where(...)` conditions, as given
    std::vector<std::string> loop_names;                     ///< current loops, innermost first (after tile/reorder)
    ir::Schedule schedule;
    std::string owner() const { return funcs.empty() ? "?" : funcs[0]->name; }
};

}  // namespace internal
}  // namespace pulse

#endif
