#include "daemon/bench_record.h"

#include <algorithm>
#include <ctime>
#include <fstream>

#include "daemon/build_info.h"

namespace megatts {

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
    return v[v.size() / 2];
}

std::string today() {
    const std::time_t now = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
    return buf;
}

nlohmann::json bench_record_of(const std::string& bench, const std::string& device, const std::string& driver,
                               const std::string& runtime, const std::string& model) {
    return {{"bench", bench},     {"date", today()},          {"device", device}, {"driver_cuda", driver},
            {"runtime_cuda", runtime}, {"commit", MEGATTS_GIT_COMMIT}, {"model", model}};
}

nlohmann::json bench_record(const std::string& bench, const cuda_report& report, const cuda_device_info& device,
                            const std::string& model) {
    return bench_record_of(bench, device.name, format_cuda_version(report.driver_version),
                           format_cuda_version(report.runtime_version), model);
}

void write_json(const std::string& path, const nlohmann::json& doc) { std::ofstream(path) << doc.dump(2) << "\n"; }

}  // namespace megatts
