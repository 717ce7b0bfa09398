template <typename T> T poison() {
    return std::numeric_limits<T>::has_quiet_NaN ? std::numeric_limits<T>::quiet_NaN() : (T)0x7A7A7A7A;
}
static double random_nonzero(std::mt19937 &rng, bool real) {
    if (real) {
        double v = std::uniform_real_distribution<double>(0.1, 1.0)(rng);
        return rng() % 2 ? v : -v;
    }
    int v = std::uniform_int_distribution<int>(1, 9)(rng);
    return rng() % 2 ? v : -v;
}
// First element where `got` differs from `expected` (relative tolerance 1e-4
// for floating point: the kernel may contract a * b + c into one rounding).
template <typename T>
static bool compare(const char *what, const std::vector<T> &got, const std::vector<T> &expected) {
    for (size_t i = 0; i < got.size(); i++) {
        double g = (double)got[i], e = (double)expected[i];
        bool same = std::isnan(e) ? std::isnan(g) : std::fabs(g - e) <= 1e-4 * std::max(1.0, std::fabs(e));
        if (!same) {
            std::printf("FAIL: %s[%zu] = %.9g, expected %.9g\n", what, i, g, e);
            return false;
        }
    }
    return true;
}
