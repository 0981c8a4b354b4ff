// fault_injecting_backend: a backend that is the one it wraps until its Nth generate(), which
// fails as a CUDA error does: error_kind::unavailable, and failed() true from then on. It
// exists to test the engine's FAILED path without a GPU: the unit tests, and the e2e suite
// through `megatts serve --inject-engine-fault N` (a testing option, hidden from --help).
//
// Contract: engine_backend.h; n >= 1 counts generate() calls from the first.
#pragma once

#include <memory>

#include "pipeline/engine/engine_backend.h"

namespace megatts {

std::unique_ptr<engine_backend> inject_fault(std::unique_ptr<engine_backend> inner, int fail_at_generate);

}  // namespace megatts
