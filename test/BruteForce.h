// The space-time transform's three conditions decided by enumerating the
// bounded domain, independently of isl: the oracle the validator is checked
// against by the random tests.
#ifndef PULSE_TEST_BRUTE_FORCE_H
#define PULSE_TEST_BRUTE_FORCE_H

#include <string>
#include <vector>

#include "analysis/Validate.h"
#include "ir/UreProgram.h"

namespace pulse::test {

/// What brute force (or the validator) says about one transform.
enum class Verdict { Accept, CrossesInstances, Processor, Data };

const char *verdict_name(Verdict v);

/// Brute-force facts about one dependence.
struct BruteDependence {
    bool taken = false;
    int64_t dp = 0, dt = 0;
};

struct BruteResult {
    Verdict verdict = Verdict::Accept;
    const ir::Dependence *culprit = nullptr;  ///< the dependence rejected by the instance or data check
    std::vector<BruteDependence> dependences;
};

/// Decides the three conditions by enumerating the bounded domain, in the
/// order the validator reports them: instance crossing (for every dependence,
/// taken or not), processor availability, data availability.
BruteResult brute_force(const ir::UreProgram &program);

/// The validator's verdict on `program`'s transform, and what it returned or said.
struct ValidatorResult {
    Verdict verdict = Verdict::Accept;
    std::string message;                    ///< the rejection
    const ir::Dependence *dependence = nullptr;  ///< the dependence a data-availability rejection names
    std::vector<DependenceTiming> timings;  ///< when accepted
};
/// Throws std::logic_error on a rejection that is none of the three conditions.
ValidatorResult run_validator(const ir::UreProgram &program);

/// "" if the validator and brute force agree on `program`'s transform (the same
/// verdict, the same rejected dependence, the same timing of every dependence
/// when both accept), else what differs.
std::string compare_with_brute_force(const ir::UreProgram &program, const BruteResult &brute, const ValidatorResult &validator);

}  // namespace pulse::test

#endif
