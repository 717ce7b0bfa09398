// Specs whose C++ is wrong in ways only Halide sees while the spec is built;
// the generator names the spec, says what Halide found and how to fix it
// (test/CMakeLists.txt checks the messages).
#include "pulse/pulse.h"

using namespace pulse;

namespace {

/// A select whose branches are float32 and int32.
Spec mistyped_select(const Params &) {
    Var i("i"), j("j"), s("s"), t("t");
    Input x(Float(32), 1, "x");
    Func A(Float(32), {i, j}, Place::Device, "A"), Out(Place::Device, "Out");
    A(i, j) = select(j == 0, x(i), cast<int>(x(i)) + j);
    Out(i) = select(j == 3, A(i, j));
    A.merge_ures(Out).set_bounds(i, 0, 8, j, 0, 4);
    A.space_time_transform({i, j}, {s, t}, {1, 0, /**/ 1, 1});
    return Spec{Out, {x}};
}

}  // namespace

PULSE_REGISTER_SPEC("mistyped_select", "a select of a float32 and an int32 branch", mistyped_select);
