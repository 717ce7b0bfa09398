// Unit tests of the CPU emulation of CM (runtime/cm_emu/cm/cm.h): each
// operation that the CM backend emits, checked against the CM language's
// semantics element by element.
#include <catch2/catch.hpp>

#include <cm/cm.h>

#include <cmath>

namespace {

template<typename V>
std::vector<double> elements(const V &v) {
    std::vector<double> r;
    for (int i = 0; i < v.n_elems(); i++) r.push_back((double)v(i));
    return r;
}

vector<int, 8> iota8() {
    const int init[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    return vector<int, 8>(init);
}

}  // namespace

TEST_CASE("cm: vector construction, broadcast and conversion", "[cm_emu]") {
    vector<int, 8> a = iota8();
    CHECK(elements(a) == std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7});
    vector<float, 4> b = 2.5f;
    CHECK(elements(b) == std::vector<double>{2.5, 2.5, 2.5, 2.5});
    vector<float, 8> c = a;  // element-wise conversion
    CHECK(c(7) == 7.0f);
    vector<float, 4> poisoned;  // never written: poison, not zero
    CHECK(std::isnan(poisoned(0)));
    CHECK(a[3] == 3);
}

TEST_CASE("cm: select regions with offset and stride", "[cm_emu]") {
    vector<int, 8> a = iota8();
    CHECK(elements(a.select<4, 1>(2)) == std::vector<double>{2, 3, 4, 5});
    CHECK(elements(a.select<4, 2>(1)) == std::vector<double>{1, 3, 5, 7});
    CHECK(elements(a.select<2, 3>(0)) == std::vector<double>{0, 3});
    // A region of a region composes offsets and strides.
    CHECK(elements(a.select<4, 2>(0).select<2, 2>(1)) == std::vector<double>{2, 6});
}

TEST_CASE("cm: assignment through a region writes the underlying vector", "[cm_emu]") {
    vector<int, 8> a = iota8();
    a.select<4, 2>(0) = 9;
    CHECK(elements(a) == std::vector<double>{9, 1, 9, 3, 9, 5, 9, 7});
    vector<int, 8> b = iota8();
    vector<int, 8> c = 0;
    // The lane shift that the CM backend emits for a tap with dp = 3.
    c.select<5, 1>(3) = b.select<5, 1>(0);
    CHECK(elements(c) == std::vector<double>{0, 0, 0, 0, 1, 2, 3, 4});
    // dp = -2: the other way.
    vector<int, 8> d = 0;
    d.select<6, 1>(0) = b.select<6, 1>(2);
    CHECK(elements(d) == std::vector<double>{2, 3, 4, 5, 6, 7, 0, 0});
    // Overlapping source and destination: the source is read first.
    vector<int, 8> e = iota8();
    e.select<7, 1>(1) = e.select<7, 1>(0);
    CHECK(elements(e) == std::vector<double>{0, 0, 1, 2, 3, 4, 5, 6});
    // Compound assignment through a region.
    vector<int, 8> f = iota8();
    f.select<2, 4>(1) += 10;
    CHECK(elements(f) == std::vector<double>{0, 11, 2, 3, 4, 15, 6, 7});
}

TEST_CASE("cm: matrix rows and 2-D regions", "[cm_emu]") {
    matrix<float, 3, 4> m = 0.0f;
    m.row(1) = 1.0f;
    m(2, 3) = 5.0f;
    CHECK(m(1, 0) == 1.0f);
    CHECK(m(0, 0) == 0.0f);
    // History shift: rows 1..2 take rows 0..1 (overlapping).
    m.select<2, 1, 4, 1>(1, 0) = m.select<2, 1, 4, 1>(0, 0);
    CHECK(elements(m.row(0)) == std::vector<double>{0, 0, 0, 0});
    CHECK(elements(m.row(1)) == std::vector<double>{0, 0, 0, 0});
    CHECK(elements(m.row(2)) == std::vector<double>{1, 1, 1, 1});
    m.row(0) = iota8().select<4, 2>(0);
    CHECK(elements(m.row(0)) == std::vector<double>{0, 2, 4, 6});
    CHECK(elements(m.row(0).select<2, 1>(2)) == std::vector<double>{4, 6});
    // A column, through a strided 2-D region.
    matrix_ref<float, 3, 1> column = m.select<3, 1, 1, 1>(0, 1);
    column = 7.0f;
    CHECK(m(0, 1) == 7.0f);
    CHECK(m(2, 1) == 7.0f);
    CHECK(m(2, 0) == 1.0f);
}

TEST_CASE("cm: replicate", "[cm_emu]") {
    vector<int, 8> a = iota8();
    vector<int, 4> one = a.replicate<4, 1>(5);  // broadcast of element 5
    CHECK(elements(one) == std::vector<double>{5, 5, 5, 5});
    CHECK(elements(a.replicate<2, 2>(3)) == std::vector<double>{3, 4, 3, 4});
    CHECK(elements(a.replicate<2, 4, 2>(1)) == std::vector<double>{1, 2, 5, 6});
    CHECK(elements(a.replicate<2, 1, 2, 3>(0)) == std::vector<double>{0, 3, 1, 4});
    CHECK(elements(a.select<2, 1>(6).replicate<3>()) == std::vector<double>{6, 7, 6, 7, 6, 7});
}

TEST_CASE("cm: merge with vector and bit masks", "[cm_emu]") {
    vector<int, 8> a = iota8();
    vector<int, 8> b = -1;
    vector<ushort, 8> odd = (a % 2) == 1;
    vector<int, 8> r = 0;
    r.merge(a, b, odd);
    CHECK(elements(r) == std::vector<double>{-1, 1, -1, 3, -1, 5, -1, 7});
    vector<int, 8> s = a;
    s.merge(100, a < 3);
    CHECK(elements(s) == std::vector<double>{100, 100, 100, 3, 4, 5, 6, 7});
    vector<int, 8> t = 0;
    t.merge(a, 0x81);  // integer mask: bit i selects element i
    CHECK(elements(t) == std::vector<double>{0, 0, 0, 0, 0, 0, 0, 7});
    // merge into a region.
    vector<int, 8> u = 0;
    u.select<4, 1>(4).merge(a.select<4, 1>(0), a.select<4, 1>(0) >= 2);
    CHECK(elements(u) == std::vector<double>{0, 0, 0, 0, 0, 0, 2, 3});
}

TEST_CASE("cm: iselect gathers lanes by index", "[cm_emu]") {
    vector<int, 8> a = iota8() * 10;
    const ushort init[8] = {7, 0, 0, 3, 3, 3, 1, 6};
    vector<ushort, 8> index(init);
    CHECK(elements(a.iselect(index)) == std::vector<double>{70, 0, 0, 30, 30, 30, 10, 60});
    // Fewer indices than lanes, from a region.
    CHECK(elements(a.select<4, 2>(0).iselect(index.select<2, 1>(3))) == std::vector<double>{60, 60});
}

TEST_CASE("cm: arithmetic, comparisons and masks", "[cm_emu]") {
    vector<int, 8> a = iota8();
    vector<float, 8> f = a;
    vector<float, 8> g = f * 0.5f + 1.0f;
    CHECK(g(4) == 3.0f);
    auto h = a * 2 - a;  // int
    CHECK(elements(h) == elements(a));
    auto q = (a - 4) / 3;  // C division truncates towards zero
    CHECK(q(0) == -1);
    CHECK(q(7) == 1);
    auto m = (a > 2) & (a <= 5);
    CHECK(elements(m) == std::vector<double>{0, 0, 0, 1, 1, 1, 0, 0});
    vector<ushort, 8> mask = m;
    CHECK(mask.any() == 1);
    CHECK(mask.all() == 0);
    CHECK(((a >= 0).all()) == 1);
    auto neg = -f;
    CHECK(neg(3) == -3.0f);
    vector<float, 4> x = 1.0f;
    x += f.select<4, 2>(0);
    CHECK(elements(x) == std::vector<double>{1, 3, 5, 7});
    CHECK(elements(3 - a.select<3, 1>(0)) == std::vector<double>{3, 2, 1});
}

TEST_CASE("cm: block read and write with byte offsets", "[cm_emu]") {
    cm_emu::unbind_all();
    float in[12], out[12];
    for (int i = 0; i < 12; i++) in[i] = (float)(i + 1), out[i] = 0;
    SurfaceIndex sin = cm_emu::bind_buffer(in, sizeof in), sout = cm_emu::bind_buffer(out, sizeof out);
    vector<float, 8> v;
    read(sin, 16, v);  // elements 4..11
    CHECK(elements(v) == std::vector<double>{5, 6, 7, 8, 9, 10, 11, 12});
    // Past the end of the surface reads 0.
    vector<float, 8> w;
    read(sin, 32, w);
    CHECK(elements(w) == std::vector<double>{9, 10, 11, 12, 0, 0, 0, 0});
    write(sout, 32, w);  // the part past the end is dropped
    CHECK(out[8] == 9.0f);
    CHECK(out[11] == 12.0f);
    CHECK(out[0] == 0.0f);
    vector<float, 4> r;
    read(sin, 0, r.select<4, 1>(0));  // into a region
    CHECK(elements(r) == std::vector<double>{1, 2, 3, 4});
}

TEST_CASE("cm: scattered read and write with element offsets", "[cm_emu]") {
    cm_emu::unbind_all();
    int in[20], out[20];
    for (int i = 0; i < 20; i++) in[i] = 100 + i, out[i] = -1;
    SurfaceIndex sin = cm_emu::bind_buffer(in, sizeof in), sout = cm_emu::bind_buffer(out, sizeof out);
    const uint off_init[8] = {0, 3, 6, 9, 12, 15, 18, 0x40000000u};
    vector<uint, 8> off(off_init);
    vector<int, 8> v;
    read(sin, 1, off, v);  // global offset 1 element
    CHECK(elements(v) == std::vector<double>{101, 104, 107, 110, 113, 116, 119, 0});
    write(sout, 0, off, v);  // the out-of-bounds lane is dropped
    CHECK(out[0] == 101);
    CHECK(out[18] == 119);
    CHECK(out[1] == -1);
    // Into and out of regions of wider vectors (how 12 lanes are read as 8 + 8).
    vector<uint, 16> offs = 0x40000000u;
    const int lane[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    offs.select<12, 1>(0) = vector<int, 16>(lane).select<12, 1>(0);
    vector<int, 16> vals;
    read(sin, 0, offs.select<8, 1>(0), vals.select<8, 1>(0));
    read(sin, 0, offs.select<8, 1>(8), vals.select<8, 1>(8));
    CHECK(vals(11) == 111);
    CHECK(vals(12) == 0);
}

TEST_CASE("cm: thread ids of a launch", "[cm_emu]") {
    std::vector<int> seen;
    const uint groups[3] = {3, 2, 1}, local[3] = {2, 1, 1};
    cm_emu::launch(groups, local, [&] {
        seen.push_back((int)(cm_group_id(1) * cm_group_count(0) * cm_local_size(0) + cm_group_id(0) * cm_local_size(0) + cm_local_id(0)));
    });
    REQUIRE(seen.size() == 12);
    for (int i = 0; i < 12; i++) CHECK(seen[i] == i);
}
