// Buffer coordinates (innermost first) -> offset in a C array whose extents
// after the first are `inner` (outermost first); -1 if C could not address it.
int64_t c_offset(const int *pos, int dims, const std::vector<int64_t> &inner) {
    int64_t f = 0;
    for (int k = 0; k < dims; k++) {
        const int c = pos[dims - 1 - k];
        if (c < 0 || (k > 0 && c >= inner[k - 1])) return -1;
        f = (k == 0 ? 0 : f * inner[k - 1]) + c;
    }
    return f;
}

template<typename T>
std::vector<T> c_array(const pulse::Buffers &buffers, const char *name, const std::vector<int64_t> &inner) {
    auto it = buffers.find(name);
    if (it == buffers.end()) return std::vector<T>(1, T(0));  // never read by the spec
    Halide::Buffer<T> b = it->second.as<T>();
    int64_t size = 1;
    b.for_each_element([&](const int *pos) { size = std::max(size, c_offset(pos, b.dimensions(), inner) + 1); });
    std::vector<T> a(size, T(0));
    b.for_each_element([&](const int *pos) {
        // The region counts reads under a select everywhere, so it may reach
        // past the C array (a[i - 1] at i == 0 where C never reads it). An
        // element the spec did read there would change its output: compare catches it.
        const int64_t f = c_offset(pos, b.dimensions(), inner);
        if (f >= 0) a[f] = b(pos);
    });
    return a;
}

template<typename T> T unwritten() { return std::numeric_limits<T>::has_quiet_NaN ? std::numeric_limits<T>::quiet_NaN() : std::numeric_limits<T>::min(); }
template<typename T> bool is_unwritten(T v) { return std::numeric_limits<T>::has_quiet_NaN ? std::isnan((double)v) : v == std::numeric_limits<T>::min(); }

// The C output, sized from the spec's buffer with room to spare, marked unwritten.
template<typename T>
std::vector<T> c_output(const pulse::Buffers &outputs, const char *name, const std::vector<int64_t> &inner) {
    Halide::Buffer<T> b = outputs.at(name).as<T>();
    int64_t size = 1;
    b.for_each_element([&](const int *pos) { size = std::max(size, c_offset(pos, b.dimensions(), inner) + 1); });
    return std::vector<T>(2 * size + 64, unwritten<T>());
}

// Every element the spec computes equals C's, and C wrote no other element.
template<typename T>
int compare(const pulse::Buffers &outputs, const char *name, const std::vector<T> &c, const std::vector<int64_t> &inner) {
    Halide::Buffer<T> b = outputs.at(name).as<T>();
    int64_t compared = 0, wrong = 0, written = 0;
    b.for_each_element([&](const int *pos) {
        const int64_t f = c_offset(pos, b.dimensions(), inner);
        compared++;
        if (f >= 0 && (size_t)f < c.size() && c[f] == b(pos)) return;
        if (wrong++ == 0) {
            std::printf("output %s: element %lld: spec %.9g, C %.9g\n", name, (long long)f, (double)b(pos),
                        f >= 0 && (size_t)f < c.size() ? (double)c[f] : 0.0);
        }
    });
    for (T v : c) written += !is_unwritten(v);
    if (written != compared) {
        std::printf("output %s: C wrote %lld elements, the spec computes %lld\n", name, (long long)written, (long long)compared);
        wrong++;
    }
    if (compared == 0) wrong++;
    std::printf("output %s: %lld elements, %lld differ\n", name, (long long)compared, (long long)wrong);
    return wrong == 0 ? 0 : 1;
}
