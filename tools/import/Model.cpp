#include "Model.h"

#include <algorithm>
#include <sstream>

namespace pulse_import {

Poly Poly::constant(int64_t c) {
    Poly p;
    if (c != 0) p.terms[{}] = c;
    return p;
}

Poly Poly::symbol(const std::string &name) {
    Poly p;
    p.terms[{name}] = 1;
    return p;
}

Poly Poly::operator+(const Poly &o) const {
    Poly r = *this;
    for (const auto &t : o.terms) {
        if ((r.terms[t.first] += t.second) == 0) r.terms.erase(t.first);
    }
    return r;
}

Poly Poly::operator-(const Poly &o) const { return *this + o * constant(-1); }

Poly Poly::operator*(const Poly &o) const {
    Poly r;
    for (const auto &a : terms) {
        for (const auto &b : o.terms) {
            std::vector<std::string> m = a.first;
            m.insert(m.end(), b.first.begin(), b.first.end());
            std::sort(m.begin(), m.end());
            if ((r.terms[m] += a.second * b.second) == 0) r.terms.erase(m);
        }
    }
    return r;
}

bool Poly::is_constant() const { return terms.empty() || (terms.size() == 1 && terms.begin()->first.empty()); }

int64_t Poly::constant_term() const {
    auto it = terms.find({});
    return it == terms.end() ? 0 : it->second;
}

int Poly::degree_in(const std::vector<std::string> &symbols) const {
    int d = 0;
    for (const auto &t : terms) {
        int n = 0;
        for (const auto &s : t.first) n += std::count(symbols.begin(), symbols.end(), s) > 0;
        d = std::max(d, n);
    }
    return d;
}

int Poly::degree() const {
    int d = 0;
    for (const auto &t : terms) d = std::max(d, (int)t.first.size());
    return d;
}

bool Poly::mentions(const std::string &symbol) const {
    for (const auto &t : terms) {
        if (std::count(t.first.begin(), t.first.end(), symbol)) return true;
    }
    return false;
}

int64_t Poly::evaluate(const std::map<std::string, int64_t> &values) const {
    int64_t sum = 0;
    for (const auto &t : terms) {
        int64_t m = t.second;
        for (const auto &s : t.first) m *= values.at(s);
        sum += m;
    }
    return sum;
}

namespace {
// Monomials with symbols first (in the order they are given), the constant last.
std::string print(const Poly &p, const std::function<std::string(const std::string &)> &name) {
    std::ostringstream os;
    bool first = true;
    auto emit = [&](const std::vector<std::string> &m, int64_t c) {
        int64_t mag = c < 0 ? -c : c;
        if (first) os << (c < 0 ? "-" : "");
        else os << (c < 0 ? " - " : " + ");
        first = false;
        std::string body;
        for (const auto &s : m) body += (body.empty() ? "" : " * ") + name(s);
        if (m.empty()) os << mag;
        else if (mag == 1) os << body;
        else os << mag << " * " << body;
    };
    for (const auto &t : p.terms) {
        if (!t.first.empty()) emit(t.first, t.second);
    }
    if (p.constant_term() != 0 || first) emit({}, p.constant_term());
    return os.str();
}
}  // namespace

std::string Poly::str(const std::map<std::string, std::string> &rename) const {
    return print(*this, [&](const std::string &s) {
        auto it = rename.find(s);
        return it == rename.end() ? s : "(" + it->second + ")";
    });
}

std::string Poly::isl(const std::vector<std::string> &params) const {
    return print(*this, [&](const std::string &s) {
        return (std::count(params.begin(), params.end(), s) ? "p_" : "v_") + s;
    });
}

const char *halide_type(CType t) {
    switch (t) {
    case CType::Int: return "Int(32)";
    case CType::Float: return "Float(32)";
    case CType::Double: return "Float(64)";
    case CType::Bool: return "Bool()";
    }
    return "";
}

const char *c_type(CType t) {
    switch (t) {
    case CType::Int: return "int";
    case CType::Float: return "float";
    case CType::Double: return "double";
    case CType::Bool: return "bool";
    }
    return "";
}

}  // namespace pulse_import
