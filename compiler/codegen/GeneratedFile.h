// A file a printer generates: its name, relative to the output directory
// (it may name a subfolder), and its text. Printers return them as values;
// the driver writes them.
#ifndef PULSE_CODEGEN_GENERATED_FILE_H
#define PULSE_CODEGEN_GENERATED_FILE_H

#include <string>

namespace pulse {

struct GeneratedFile {
    std::string name;
    std::string text;
};

}  // namespace pulse

#endif
