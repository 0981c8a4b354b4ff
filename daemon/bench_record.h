// bench_record: what every `megatts bench` measurement shares: the median of a run's
// timings, and the fields that identify a recorded result (bench/RESULTS.md, --json):
// what was measured, on which device and driver, from which commit, on which date.
//
// Contract: median() of an empty vector is 0; today() is the UTC date as YYYY-MM-DD;
// bench_record() returns a JSON object with those fields for a GPU of this machine, to which a
// benchmark adds its figures (bench_record_of(): the device and versions as given, for a
// benchmark that measured a server, daemon/engine_identity.h); write_json() writes it (2-space
// indent) and reports nothing on failure, as the printed table is the primary output.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/cuda/cuda_probe.h"

namespace megatts {

double median(std::vector<double> v);

std::string today();

nlohmann::json bench_record(const std::string& bench, const cuda_report& report, const cuda_device_info& device,
                            const std::string& model);

nlohmann::json bench_record_of(const std::string& bench, const std::string& device, const std::string& driver,
                               const std::string& runtime, const std::string& model);

void write_json(const std::string& path, const nlohmann::json& doc);

}  // namespace megatts
