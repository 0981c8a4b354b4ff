#include "daemon/default_model.h"

#include "pipeline/model/json_file.h"
#include "pipeline/model/random_checkpoint.h"

namespace megatts {

std::string default_model_dir() { return MEGATTS_DEFAULT_MODEL_DIR; }

bool is_synthetic_model(const std::string& model_dir) {
    auto config = json_file::read(model_dir + "/config.json");
    if (!config) return false;
    const auto* marker = config->find(synthetic_marker_key);
    return marker && marker->is_boolean() && marker->get<bool>();
}

}  // namespace megatts
