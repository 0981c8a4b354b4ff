// tensor_compare: the golden error measure, max|x - ref| / max|ref| over finite
// entries, with -inf required at the same places; and a Catch2 check that prints
// the worst element when it fails.
#pragma once

#include <cmath>
#include <limits>
#include <span>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

namespace megatts::test {

struct compare_result {
    double rel = 0.0;          // max abs error over max |ref|
    std::size_t worst = 0;     // index of the largest abs error
    bool inf_mismatch = false; // -inf (or NaN) placement differs
    std::size_t size_mismatch = 0;
};

inline compare_result compare(std::span<const float> x, std::span<const float> ref) {
    compare_result r;
    if (x.size() != ref.size()) {
        r.size_mismatch = x.size() + 1;
        return r;
    }
    double max_ref = 0.0, max_err = 0.0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        bool fin_x = std::isfinite(x[i]), fin_r = std::isfinite(ref[i]);
        if (fin_x != fin_r || (!fin_r && x[i] != ref[i])) {
            r.inf_mismatch = true;
            r.worst = i;
            continue;
        }
        if (!fin_r) continue;
        max_ref = std::max(max_ref, std::abs(static_cast<double>(ref[i])));
        double e = std::abs(static_cast<double>(x[i]) - ref[i]);
        if (e > max_err) max_err = e, r.worst = i;
    }
    r.rel = max_ref > 0 ? max_err / max_ref : max_err;
    return r;
}

inline void check_close(const std::string& what, std::span<const float> x, std::span<const float> ref,
                        double tolerance) {
    auto r = compare(x, ref);
    std::ostringstream msg;
    msg << what << ": size " << x.size() << " vs " << ref.size() << ", rel error " << r.rel;
    if (!x.empty() && x.size() == ref.size())
        msg << ", worst [" << r.worst << "] " << x[r.worst] << " vs " << ref[r.worst];
    INFO(msg.str());
    CHECK(r.size_mismatch == 0);
    CHECK_FALSE(r.inf_mismatch);
    CHECK(r.rel <= tolerance);
}

}  // namespace megatts::test
