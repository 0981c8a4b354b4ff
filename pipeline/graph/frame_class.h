// frame_class: the three classes of frames (DESIGN.md §1, after pipecat). The class, not the
// type, decides how queues treat a frame:
//   data     ordered; dropped when its epoch is stale (cancelled)
//   control  ordered with data; also dropped when stale, since every control frame here
//            belongs to one utterance (start, end of text, end of audio) and a cancelled
//            utterance's lifecycle is as void as its data
//   system   bypasses the ordered lane, served first, never dropped (cancel, error, marks)
//
// Contract: compile-time data; any thread.
#pragma once

namespace megatts {

enum class frame_class { data, control, system };

}  // namespace megatts
