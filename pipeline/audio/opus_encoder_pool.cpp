#include "pipeline/audio/opus_encoder_pool.h"

namespace megatts {

opus_encoder_pool::opus_encoder_pool(std::size_t capacity) : capacity_(capacity) { idle_.reserve(capacity); }

opus_encoder_pool::~opus_encoder_pool() {
    for (OpusEncoder* e : idle_) opus_encoder_destroy(e);
}

OpusEncoder* opus_encoder_pool::take() {
    std::lock_guard lock(mutex_);
    if (idle_.empty()) return nullptr;
    OpusEncoder* e = idle_.back();
    idle_.pop_back();
    return e;
}

void opus_encoder_pool::give_back(OpusEncoder* encoder) {
    // A reset that fails leaves an encoder in an unknown state: it is not kept.
    if (opus_encoder_ctl(encoder, OPUS_RESET_STATE) == OPUS_OK) {
        std::lock_guard lock(mutex_);
        if (idle_.size() < capacity_) {
            idle_.push_back(encoder);
            return;
        }
    }
    opus_encoder_destroy(encoder);
}

std::size_t opus_encoder_pool::idle() const {
    std::lock_guard lock(mutex_);
    return idle_.size();
}

}  // namespace megatts
