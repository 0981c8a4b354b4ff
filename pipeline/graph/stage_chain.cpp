#include "pipeline/graph/stage_chain.h"

#include <utility>

namespace megatts {

stage_chain::stage_chain(std::vector<std::unique_ptr<stage>> stages, sink out)
    : stages_(std::move(stages)), out_(std::move(out)) {
    links_.reserve(stages_.size());
    for (std::size_t i = 0; i < stages_.size(); ++i) links_.emplace_back(*this, i + 1);
}

void stage_chain::push(frame f) { run(0, std::move(f)); }

void stage_chain::run(std::size_t index, frame f) {
    if (index == stages_.size()) {
        out_(std::move(f));
        return;
    }
    stages_[index]->process(std::move(f), links_[index]);
}

}  // namespace megatts
