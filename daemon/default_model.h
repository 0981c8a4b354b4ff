// default_model: where the embedded default checkpoint lives (a tiny random model
// that the build makes with make-checkpoint), and how to tell a synthetic model.
//
// Contract: default_model_dir() is fixed at build time. is_synthetic_model() reads
// the synthetic marker make-checkpoint writes into config.json; a real
// checkpoint has none. Never fails: an unreadable config counts as not synthetic.
#pragma once

#include <string>

namespace megatts {

std::string default_model_dir();
bool is_synthetic_model(const std::string& model_dir);

}  // namespace megatts
