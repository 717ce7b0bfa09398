// main() of every spec program (like Halide's GenGen.cpp): the spec files
// register their specs, and the shared driver gives them one command line.
#include "Generator.h"

int main(int argc, char **argv) { return pulse::generator_main(argc, argv); }
