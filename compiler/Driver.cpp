#include "Driver.h"

namespace pulse {

const char *driver_usage_text() { return ""; }

bool parse_driver_flag(const std::string &, int &, int, char **, DriverActions &) { return false; }

int run_driver_actions(const std::string &, const Spec &, const DriverActions &, uint32_t) { return 0; }

}  // namespace pulse
