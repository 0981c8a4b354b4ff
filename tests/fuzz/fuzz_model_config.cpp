// Fuzz target: a checkpoint's config files through model_config::parse and the tensor tables
// the loader derives from them (model_tensor_specs, vocoder_tensor_specs). The input holds up
// to three JSON documents separated by NUL bytes (which JSON text cannot contain): config.json,
// generation_config.json and speech_tokenizer/config.json; a document that is missing is the
// tiny test checkpoint's (tests/fixtures/tiny-cv06), so one document alone fuzzes config.json.
// Properties: never crashes; a failure names the file; an accepted config has positive
// dimensions, a vocoder that makes samples, and tensor tables whose shapes are all positive.
#include <array>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/model/json_file.h"
#include "pipeline/model/model_config.h"
#include "pipeline/model/tensor_names.h"
#include "tests/fuzz/fuzz_check.h"

using namespace megatts;

namespace {

constexpr std::array<const char*, 3> file_names = {"config.json", "generation_config.json",
                                                   "speech_tokenizer/config.json"};

const std::array<std::string, 3>& fixture_texts() {
    static const std::array<std::string, 3> texts = [] {
        std::array<std::string, 3> out;
        for (std::size_t i = 0; i < out.size(); ++i) {
            std::ifstream in(std::string(MEGATTS_FIXTURE_DIR "/tiny-cv06/") + file_names[i], std::ios::binary);
            FUZZ_CHECK(in.good(), "the fixture's config files exist");
            out[i].assign(std::istreambuf_iterator<char>(in), {});
        }
        return out;
    }();
    return texts;
}

bool positive_shapes(const std::vector<tensor_spec>& specs) {
    for (const auto& spec : specs)
        for (const auto d : spec.shape)
            if (d <= 0) return false;
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::array<std::string_view, 3> texts;
    for (std::size_t i = 0; i < texts.size(); ++i) texts[i] = fixture_texts()[i];
    std::string_view rest(reinterpret_cast<const char*>(data), size);
    for (std::size_t i = 0; i < texts.size() && !rest.empty(); ++i) {
        const auto nul = rest.find('\0');
        texts[i] = rest.substr(0, nul);
        rest = nul == std::string_view::npos ? std::string_view{} : rest.substr(nul + 1);
    }

    std::array<std::optional<json_file>, 3> files;
    for (std::size_t i = 0; i < files.size(); ++i) {
        auto parsed = json_file::parse(texts[i], file_names[i]);
        if (!parsed) {
            FUZZ_CHECK(parsed.err().message.starts_with(file_names[i]), "a JSON error names the file",
                       parsed.err().message);
            return 0;
        }
        files[i].emplace(std::move(*parsed));
    }
    const auto config = model_config::parse(*files[0], *files[1], *files[2]);
    if (!config) {
        const auto& message = config.err().message;
        FUZZ_CHECK(message.starts_with(file_names[0]) || message.starts_with(file_names[1]) ||
                       message.starts_with(file_names[2]),
                   "a config error names the file", message);
        return 0;
    }
    FUZZ_CHECK(config->talker.body.layers > 0 && config->talker.body.hidden > 0, "talker dimensions are positive");
    FUZZ_CHECK(config->vocoder.samples_per_frame() > 0, "the vocoder makes samples");
    FUZZ_CHECK(positive_shapes(model_tensor_specs(*config)), "model tensor shapes are positive");
    FUZZ_CHECK(positive_shapes(vocoder_tensor_specs(*config)), "vocoder tensor shapes are positive");
    return 0;
}
