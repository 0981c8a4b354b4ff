// device_trap: makes the process's CUDA context fail the way a real device fault does: a
// kernel that executes a trap instruction, after which every CUDA call of the process fails
// (a sticky error). The gpu suite uses it to drive the engine's FAILED path with a true CUDA
// error rather than a simulated one (fault_injecting_backend.h does that without a GPU).
//
// Contract: call from any thread once the context exists; returns the error the trap left
// (the name cudaGetErrorName gives), or "none" when the launch somehow did not fail. The
// context is unusable afterwards: run it last in its process.
#pragma once

#include <string>

namespace megatts::test {

std::string trap_device();

}  // namespace megatts::test
