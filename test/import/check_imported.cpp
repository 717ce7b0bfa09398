// check_imported SPEC [SEED [P=V]...]: runs the check pulse-import --emit-check
// wrote for SPEC: the original C function and the imported spec, at the given
// sizes (the spec's defaults otherwise), on the same random inputs (those
// --realize draws), every output element compared. Prints PASS or FAIL.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "pulse/pulse.h"

using Check = int (*)(unsigned seed, const pulse::Params &params);

namespace {
std::map<std::string, Check> &checks() {
    static std::map<std::string, Check> registry;
    return registry;
}
}  // namespace

bool pulse_import_register_check(const char *spec, Check check) {
    checks()[spec] = check;
    return true;
}

int main(int argc, char **argv) {
    if (argc < 2 || !checks().count(argv[1])) {
        std::fprintf(stderr, "usage: check_imported SPEC [SEED [P=V]...]; specs:");
        for (const auto &c : checks()) std::fprintf(stderr, " %s", c.first.c_str());
        std::fprintf(stderr, "\n");
        return 2;
    }
    const unsigned seed = argc > 2 ? (unsigned)std::strtoul(argv[2], nullptr, 10) : 1;
    pulse::Params params;
    std::string sizes;
    for (int i = 3; i < argc; i++) {
        const std::string kv = argv[i];
        const size_t eq = kv.find('=');
        if (eq == std::string::npos) {
            std::fprintf(stderr, "check_imported: expected P=V, not '%s'\n", argv[i]);
            return 2;
        }
        params.set(kv.substr(0, eq), std::stoll(kv.substr(eq + 1)));
        sizes += " " + kv;
    }
    try {
        const int failed = checks()[argv[1]](seed, params);
        for (const auto &unused : params.unused()) {
            std::printf("FAIL %s: no parameter %s\n", argv[1], unused.c_str());
            return 1;
        }
        std::printf("%s %s (seed %u%s)\n", failed ? "FAIL" : "PASS", argv[1], seed, sizes.c_str());
        return failed ? 1 : 0;
    } catch (const std::exception &e) {
        std::printf("FAIL %s: %s\n", argv[1], e.what());
        return 1;
    }
}
