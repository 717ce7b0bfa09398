// Pass: prove a space-time transform legal with isl, on the bounded domain.
#ifndef PULSE_VALIDATE_H
#define PULSE_VALIDATE_H

#include <map>
#include <memory>
#include <optional>

#include "ir/UreProgram.h"

namespace pulse {

/// The timing of one dependence under the transform.
struct DependenceTiming {
    const ir::Dependence *dependence = nullptr;
    int64_t dp = 0;  ///< lanes: P . d
    int64_t dt = 0;  ///< steps: s . d
    bool taken = true;  ///< false if the dependence is empty on the bounded domain (its branch never reads a domain point)
};

/// Which condition a transform fails, if any.
enum class VerdictKind {
    Valid,
    Shape,                 ///< the transform does not fit the nest (loops, rows, columns)
    CrossesInstances,      ///< a dependence moves along a loop outside the transform
    ProcessorAvailability, ///< two points run on one PE at one step
    DataAvailability,      ///< a value is read before (or in the step) it is computed
};
const char *to_string(VerdictKind kind);

/// The validator's finding as data: what failed and the witness. `message`
/// is the text validate_transform throws; nothing should parse it.
struct TransformVerdict {
    VerdictKind kind = VerdictKind::Valid;
    const ir::Dependence *dependence = nullptr;  ///< CrossesInstances, DataAvailability
    int64_t dp = 0, dt = 0;                      ///< DataAvailability: what the transform gives the dependence
    std::vector<int64_t> first, second;          ///< ProcessorAvailability: colliding points over the source loops
    std::string message;
    bool valid() const { return kind == VerdictKind::Valid; }
};

/// The verdict and, when the shape is right, the timing of every dependence.
struct TransformCheck {
    TransformVerdict verdict;
    std::vector<DependenceTiming> timings;
};

/// Checks many transforms of one program quickly: the isl model of the
/// domain and of every dependence is built once, and the injectivity of a
/// matrix is remembered (it does not depend on the dependences, so one memo
/// may serve programs that share loops, bounds and domain constraints).
class TransformChecker {
public:
    using CollisionMemo = std::map<std::vector<std::vector<int64_t>>, std::optional<std::pair<std::vector<int64_t>, std::vector<int64_t>>>>;
    /// `program` must outlive the checker; its dependences are modelled over
    /// `source_loops` (those of its own transform when empty).
    explicit TransformChecker(const ir::UreProgram &program, std::vector<std::string> source_loops = {});
    ~TransformChecker();
    TransformChecker(const TransformChecker &) = delete;
    TransformChecker &operator=(const TransformChecker &) = delete;
    /// The verdict on `transform` (its source loops must be the checker's).
    TransformCheck check(const ir::SpaceTimeTransform &transform, CollisionMemo *memo = nullptr) const;

private:
    struct Model;
    std::unique_ptr<Model> model;
};

/// The verdict on the program's own transform (which it must have).
TransformCheck check_transform(const ir::UreProgram &program);

/// Checks the transform of `program` (which must have one):
///  - every dependence lies within the transform's source loops (a nonzero
///    distance in another loop would cross array instances);
///  - data availability: dt >= 1 for a computed value, dt >= 0 for a copy
///    chain (dt = 0 with dp != 0 is a broadcast);
///  - processor availability: x -> (P x, s x) is injective on the bounded
///    domain (isl; a rejection names two colliding points).
/// Returns the timing of every dependence; throws CompileError naming the
/// condition, the URE, the dependence, dp/dt and the bounds otherwise
/// (the verdict's message).
std::vector<DependenceTiming> validate_transform(const ir::UreProgram &program);

}  // namespace pulse

#endif
