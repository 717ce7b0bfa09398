// Analysis: the input elements the outputs' run-time extents need.
#ifndef PULSE_REQUIRED_INPUTS_H
#define PULSE_REQUIRED_INPUTS_H

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/KernelIR.h"
#include "ir/UreProgram.h"

namespace pulse {

/// Per input (by name), per dimension, the indices read by the points whose
/// values reach an output element inside the outputs' extents: those points
/// (each output's defined points whose index lies in its extents), and every
/// point a chain of dependences leads to from them (isl's transitive
/// closure: exact for the uniform dependences of most specs, larger where
/// isl approximates, never smaller). Reads of points that only feed output
/// elements outside the extents (an instance's tail past the last output)
/// are not required. The loops outside the array run as far as the outputs
/// reach. nullopt for a dimension whose range the outputs do not bound, and
/// for every dimension of a program on which isl would work too long.
std::map<std::string, std::vector<std::optional<kir::RequiredRange>>> required_input_ranges(const ir::UreProgram &program);

}  // namespace pulse

#endif
