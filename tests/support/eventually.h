// eventually: waits, polling every millisecond, until a condition another thread makes true
// holds, or a generous deadline passes (20 s: a sanitizer build on two cores is slow, a hang
// must still end). Tests wait on what the code under test shows, never on a fixed sleep.
#pragma once

#include <chrono>
#include <thread>

namespace megatts::test {

template <class Pred>
bool eventually(Pred holds, std::chrono::milliseconds deadline = std::chrono::seconds(20)) {
    const auto until = std::chrono::steady_clock::now() + deadline;
    while (!holds()) {
        if (std::chrono::steady_clock::now() >= until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

}  // namespace megatts::test
