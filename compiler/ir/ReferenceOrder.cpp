#include "ir/ReferenceOrder.h"

#include <algorithm>
#include <numeric>

namespace pulse {

namespace {

struct Conflict {
    const ir::Dependence *up = nullptr, *down = nullptr;
    int loop = -1;
};

/// Directions for `nesting` (outermost first) that make every dependence
/// lexicographically positive, or the first conflict.
bool directions_for(const ir::UreProgram &p, const std::vector<int> &nesting, std::vector<int> &direction,
                    Conflict &conflict) {
    direction.assign(p.loops.size(), 1);
    std::vector<bool> carried(p.dependences.size(), false);
    for (int level : nesting) {
        const ir::Dependence *up = nullptr, *down = nullptr;
        for (size_t i = 0; i < p.dependences.size(); i++) {
            if (carried[i]) continue;
            int64_t d = p.dependences[i].distance[level];
            if (d > 0 && !up) up = &p.dependences[i];
            if (d < 0 && !down) down = &p.dependences[i];
        }
        if (up && down) {
            conflict = Conflict{up, down, level};
            return false;
        }
        direction[level] = down ? -1 : 1;
        for (size_t i = 0; i < p.dependences.size(); i++) {
            if (p.dependences[i].distance[level] != 0) carried[i] = true;
        }
    }
    return true;
}

}  // namespace

void compute_reference_order(ir::UreProgram &p) {
    std::vector<int> declared(p.loops.size());
    std::iota(declared.rbegin(), declared.rend(), 0);  // outermost is the last loop
    std::vector<int> direction;
    Conflict first_conflict;
    if (directions_for(p, declared, direction, first_conflict)) {
        p.reference_nesting = declared;
        p.reference_direction = direction;
        return;
    }
    // Other nestings, closest to the declared one first (fewest swapped pairs).
    std::vector<int> candidate(declared.begin(), declared.end());
    std::sort(candidate.begin(), candidate.end());
    std::vector<std::pair<int, std::vector<int>>> ranked;
    do {
        int inversions = 0;
        for (size_t a = 0; a < candidate.size(); a++) {
            for (size_t b = a + 1; b < candidate.size(); b++) inversions += candidate[a] < candidate[b];
        }
        ranked.push_back({inversions, candidate});
    } while (std::next_permutation(candidate.begin(), candidate.end()));
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto &x, const auto &y) { return x.first < y.first; });
    for (const auto &r : ranked) {
        Conflict ignored;
        if (directions_for(p, r.second, direction, ignored)) {
            p.reference_nesting = r.second;
            p.reference_direction = direction;
            return;
        }
    }
    refuse(Refusal::NoSequentialOrder, p.name, "no sequential order computes the UREs of ", p.name, ": loop '", p.loops[first_conflict.loop].var,
                  "' must run upwards for ", first_conflict.up->consumer, " <- ", first_conflict.up->call_text,
                  " and downwards for ", first_conflict.down->consumer, " <- ", first_conflict.down->call_text,
                  ", and no other nesting of the loops orders every dependence");
}

std::string reference_order_text(const ir::UreProgram &p) {
    std::string s;
    for (size_t k = 0; k < p.reference_nesting.size(); k++) {
        int l = p.reference_nesting[k];
        s += (k ? ", " : "") + std::string("for ") + p.loops[l].var + (p.reference_direction[l] > 0 ? " up" : " down");
    }
    return s;
}

}  // namespace pulse
