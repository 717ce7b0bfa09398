// The CM backend end to end: generated kernels run on the CPU emulation of CM
// and are compared with the emitted reference.
#include <catch2/catch.hpp>
