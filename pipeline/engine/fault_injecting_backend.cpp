#include "pipeline/engine/fault_injecting_backend.h"

#include <string>

namespace megatts {
namespace {

class fault_injecting_backend final : public engine_backend {
public:
    fault_injecting_backend(std::unique_ptr<engine_backend> inner, int fail_at)
        : inner_(std::move(inner)), fail_at_(fail_at) {}

    std::string_view name() const override { return inner_->name(); }
    backend_limits limits() const override { return inner_->limits(); }
    result<void> open(int slot, std::span<const prompt_row> prompt, const ref::generation_options& options) override {
        return inner_->open(slot, prompt, options);
    }
    result<void> generate(std::span<const generate_item> items, std::span<std::optional<ref::frame_codes>> out,
                          const std::function<void()>& meanwhile) override {
        if (++calls_ >= fail_at_) {
            failed_ = true;
            return make_error(error_kind::unavailable,
                              "injected fault at generate() call " + std::to_string(calls_) + " (--inject-engine-fault)");
        }
        return inner_->generate(items, out, meanwhile);
    }
    result<void> start_vocode(std::span<const vocode_item> items) override { return inner_->start_vocode(items); }
    result<void> finish_vocode(std::span<std::vector<float>> out) override { return inner_->finish_vocode(out); }
    void release(int slot) override { inner_->release(slot); }
    bool failed() const override { return failed_ || inner_->failed(); }

private:
    std::unique_ptr<engine_backend> inner_;
    int fail_at_;
    int calls_ = 0;
    bool failed_ = false;
};

}  // namespace

std::unique_ptr<engine_backend> inject_fault(std::unique_ptr<engine_backend> inner, int fail_at_generate) {
    return std::make_unique<fault_injecting_backend>(std::move(inner), fail_at_generate);
}

}  // namespace megatts
