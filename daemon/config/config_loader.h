// config_loader: reads the TOML configuration of `megatts serve` into a server_config.
//
// Contract: parsing starts from the built-in defaults (server_config{}) and overrides every key
// the text sets, so a file may set any subset. Every key of configs/megatts.toml is known; a
// key or section that is not, a value of the wrong TOML type (an integer where a string is
// due, a float where an integer is due), a value out of its range, and a TOML syntax error are
// all invalid_input errors whose message names the source and the key (or line:column). Relative
// paths (model.dir, server.web_root) are resolved against `base_dir`, the directory of the
// config file, so that a config works from any working directory; empty paths stay empty
// ("built in"). load_server_config also reports an unreadable file (not_found / io).
// Pure functions of their input; any thread; no blocking beyond reading the one file.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "daemon/config/server_config.h"
#include "kernels/common/result.h"

namespace megatts {

result<server_config> parse_server_config(std::string_view toml_text, const std::string& source_name,
                                          const std::filesystem::path& base_dir);

result<server_config> load_server_config(const std::filesystem::path& path);

}  // namespace megatts
