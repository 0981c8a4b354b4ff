// eventually: waits until a condition another thread (or process) makes true holds, polling it
// every `interval`, or until `deadline` passes (by default a generous 20 s: a sanitizer build on
// two cores is slow, and a hang must still end). Tests wait on what the code under test shows,
// never on a fixed sleep. A condition that costs a request (a /metrics fetch) wants a longer
// interval than the default millisecond.
#pragma once

#include <chrono>
#include <thread>

namespace megatts::test {

template <class Pred>
bool eventually(Pred holds, std::chrono::milliseconds deadline = std::chrono::seconds(20),
                std::chrono::milliseconds interval = std::chrono::milliseconds(1)) {
    const auto until = std::chrono::steady_clock::now() + deadline;
    while (!holds()) {
        if (std::chrono::steady_clock::now() >= until) return false;
        std::this_thread::sleep_for(interval);
    }
    return true;
}

}  // namespace megatts::test
