// stage_chain: stages wired in a line (pipecat's Pipeline, kept static): a frame pushed in runs
// through stage 0, whatever stage 0 emits through stage 1, and so on; what the last stage
// emits reaches the chain's sink. Depth-first, so a frame and everything it causes leave the
// chain before push() returns, in order.
//
// Contract: built once per utterance on its session's strand; push() on that strand only (as
// stage.h). No queue between stages: the chain runs inside one strand turn, so nothing can
// pile up between them. The sink must not push into the same chain.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "pipeline/graph/stage.h"

namespace megatts {

class stage_chain {
public:
    using sink = std::function<void(frame)>;

    stage_chain(std::vector<std::unique_ptr<stage>> stages, sink out);
    stage_chain(const stage_chain&) = delete;
    stage_chain& operator=(const stage_chain&) = delete;

    void push(frame f);

private:
    // Feeds what stage `index - 1` emits into stage `index`, or into the sink past the end.
    class link final : public frame_emitter {
    public:
        link(stage_chain& chain, std::size_t index) : chain_(&chain), index_(index) {}
        void emit(frame f) override { chain_->run(index_, std::move(f)); }

    private:
        stage_chain* chain_;
        std::size_t index_;
    };

    void run(std::size_t index, frame f);

    std::vector<std::unique_ptr<stage>> stages_;
    std::vector<link> links_;  // links_[i] receives stage i's output
    sink out_;
};

}  // namespace megatts
