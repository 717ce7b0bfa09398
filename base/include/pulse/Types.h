// Small enums shared by the language and the compiler.
#ifndef PULSE_TYPES_H
#define PULSE_TYPES_H

#include <Halide.h>

#include <map>
#include <string>

namespace pulse {

/// Named buffers: inputs to realize, and the outputs it returns.
using Buffers = std::map<std::string, Halide::Buffer<>>;

/// Where a Func runs (paper Table 1).
enum class Place { Host, Device };

/// Where a staged copy of a Func or Input is kept (store_in).
enum class MemoryType { Register, Shared, Global };

const char *to_string(Place place);
const char *to_string(MemoryType memory);

}  // namespace pulse

#endif
