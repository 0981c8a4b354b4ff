#include "pipeline/telemetry/ttfa_mark.h"

namespace megatts {

std::string_view ttfa_mark_name(ttfa_mark mark) {
    switch (mark) {
    case ttfa_mark::received: return "received";
    case ttfa_mark::tokenized: return "tokenized";
    case ttfa_mark::admitted: return "admitted";
    case ttfa_mark::prefill_done: return "prefill_done";
    case ttfa_mark::first_code0: return "first_code0";
    case ttfa_mark::first_frame: return "first_frame";
    case ttfa_mark::first_pcm: return "first_pcm";
    case ttfa_mark::first_packet: return "first_packet";
    case ttfa_mark::first_sent: return "first_sent";
    }
    return "unknown";
}

}  // namespace megatts
