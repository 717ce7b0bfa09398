// The command line shared by every spec program: generator_main parses the
// flags (--help lists them) and runs the stages they ask for (Driver.h).
#ifndef PULSE_TOOLS_GENERATOR_H
#define PULSE_TOOLS_GENERATOR_H

namespace pulse {

/// The command line shared by every spec program (run `--help`); main() of
/// Pulse::generator_main calls it.
int generator_main(int argc, char **argv);

}  // namespace pulse

#endif
