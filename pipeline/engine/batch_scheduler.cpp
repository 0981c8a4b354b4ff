#include "pipeline/engine/batch_scheduler.h"

#include <algorithm>

namespace megatts {

bool lead_limited(const batch_candidate& c, const batch_policy& policy) {
    return c.paced && policy.lead_limit.count() > 0 && c.lead >= policy.lead_limit;
}

bool calls_for_step(const batch_candidate& c, const batch_policy& policy) {
    // join_lead is a lead below the lead limit: without a limit, nothing holds a job back.
    const bool held = c.paced && policy.lead_limit.count() > 0 && policy.join_lead.count() > 0;
    return c.first_frame || !held || c.lead < policy.join_lead;
}

std::vector<std::size_t> pick_batch(std::span<const batch_candidate> candidates, const batch_policy& policy) {
    std::vector<std::size_t> order;
    bool first_frames = false;
    bool called = false;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        if (lead_limited(candidates[i], policy)) continue;
        order.push_back(i);
        first_frames |= candidates[i].first_frame;
        called |= calls_for_step(candidates[i], policy);
    }
    if (!called) return {};
    if (first_frames && policy.yield_lead.count() > 0 && static_cast<int>(order.size()) <= policy.max_batch) {
        std::erase_if(order, [&](std::size_t i) {
            return !candidates[i].first_frame && candidates[i].lead >= policy.yield_lead;
        });
    }
    // Stable: arrival order breaks ties, and first frames keep theirs.
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const auto& x = candidates[a];
        const auto& y = candidates[b];
        if (x.first_frame != y.first_frame) return x.first_frame;
        if (x.first_frame) return false;
        return x.lead < y.lead;
    });
    std::vector<std::size_t> batch;
    int rows = 0;
    for (auto i : order) {
        if (static_cast<int>(batch.size()) == policy.max_batch) break;
        const int r = candidates[i].rows;
        if (policy.max_rows > 0 && rows + r > policy.max_rows) continue;
        rows += r;
        batch.push_back(i);
    }
    return batch;
}

}  // namespace megatts
