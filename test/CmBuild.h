// Building emitted CM emulation harnesses for the tests.
#ifndef PULSE_TEST_CM_BUILD_H
#define PULSE_TEST_CM_BUILD_H

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "codegen/CodeGenCM.h"
#include "Emit.h"

namespace pulse::test {

/// Compiles the harnesses NAME_emu.cpp in `dir` into NAME_emu, two at a time
/// (make -j2; with `keep_going`, past a failure); returns make's status, its output in `log`.
inline int build_cm_emulations(const std::filesystem::path &dir, const std::vector<std::string> &names, std::string *log,
                               bool keep_going = false) {
    std::ofstream make(dir / "Makefile");
    make << "all:";
    for (const std::string &n : names) make << " " << n << "_emu";
    make << "\n";
    for (const std::string &n : names) {
        make << n << "_emu: " << n << "_emu.cpp\n\t"
             << cm_emulation_compile_command((dir / (n + "_emu.cpp")).string(), (dir / (n + "_emu")).string()) << "\n";
    }
    make.close();
    return run_command(std::string("make -s ") + (keep_going ? "-k " : "") + "-j2 -C '" + dir.string() + "' 2>&1", log);
}

}  // namespace pulse::test

#endif
