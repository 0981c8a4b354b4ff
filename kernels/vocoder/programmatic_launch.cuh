// programmatic_launch: the two halves of programmatic dependent launch (PDL), which
// lets a kernel of the vocoder start while its predecessor finishes, so launch
// latency and the start of its weight streaming overlap the predecessor's tail.
//
// Contract: every vocoder kernel calls wait_for_predecessor() before it reads any
// activation, state or scratch that an earlier kernel writes, and every block calls
// it (even one with no work), so a kernel never completes before its predecessor:
// completion stays transitive along the chain. Weights may be read before it; they
// never change after upload. allow_successor() may be called once the block's main
// work is issued. Without the launch attribute (or with no kernel before) both are
// no-ops, so the kernels run unchanged with PDL off.
#pragma once

namespace megatts::voc {

__device__ __forceinline__ void wait_for_predecessor() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

__device__ __forceinline__ void allow_successor() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }

}  // namespace megatts::voc
