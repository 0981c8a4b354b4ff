#include "daemon/config/config_loader.h"

#include <array>
#include <fstream>
#include <initializer_list>
#include <sstream>

#include <toml++/toml.h>

namespace megatts {
namespace {

// What the appliers below need besides the value: the source for messages, and where relative
// paths start.
struct load_context {
    std::string source;
    std::filesystem::path base_dir;

    error fail(std::string_view key, std::string_view why) const {
        return make_error(error_kind::invalid_input,
                          source + ": '" + std::string(key) + "': " + std::string(why));
    }
};

std::string type_name(const toml::node& value) {
    std::ostringstream out;
    out << value.type();
    return out.str();
}

result<std::int64_t> read_integer(const toml::node& value, std::string_view key, const load_context& ctx,
                                  std::int64_t min, std::int64_t max) {
    const auto* integer = value.as_integer();
    if (!integer) return ctx.fail(key, "expected an integer, got " + type_name(value));
    const std::int64_t v = integer->get();
    if (v < min || v > max)
        return ctx.fail(key, std::to_string(v) + " is out of range " + std::to_string(min) + ".." +
                                 std::to_string(max));
    return v;
}

result<std::string> read_string(const toml::node& value, std::string_view key, const load_context& ctx) {
    const auto* text = value.as_string();
    if (!text) return ctx.fail(key, "expected a string, got " + type_name(value));
    return text->get();
}

result<std::string> read_choice(const toml::node& value, std::string_view key, const load_context& ctx,
                                std::initializer_list<std::string_view> choices) {
    auto text = read_string(value, key, ctx);
    if (!text) return text.err();
    std::string allowed;
    for (auto choice : choices) {
        if (*text == choice) return text;
        allowed += (allowed.empty() ? "" : ", ") + std::string(choice);
    }
    return ctx.fail(key, "'" + *text + "' is not one of " + allowed);
}

result<std::string> read_path(const toml::node& value, std::string_view key, const load_context& ctx) {
    auto text = read_string(value, key, ctx);
    if (!text || text->empty()) return text;
    const std::filesystem::path path(*text);
    return (path.is_absolute() ? path : ctx.base_dir / path).lexically_normal().string();
}

// Stores an integer key into an int member after the range check.
template <class Member>
result<void> store_integer(const toml::node& value, std::string_view key, const load_context& ctx,
                           std::int64_t min, std::int64_t max, Member& out) {
    auto v = read_integer(value, key, ctx, min, max);
    if (!v) return v.err();
    out = static_cast<Member>(*v);
    return {};
}

template <class T>
result<void> store(result<T> v, T& out) {
    if (!v) return v.err();
    out = std::move(*v);
    return {};
}

using applier = result<void> (*)(const toml::node&, std::string_view, const load_context&, server_config&);

struct config_key {
    std::string_view name;  // "section.key", as written in the file
    applier apply;
};

// One row per key of configs/megatts.toml, in its order. The ranges keep a typo from starting a
// server that cannot work (a 0 ms queue, a 1-byte message limit), not from tuning.
constexpr auto config_keys = std::to_array<config_key>({
    {"server.listen",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) -> result<void> {
         auto text = read_string(v, k, c);
         if (!text) return text.err();
         auto address = parse_listen_address(*text);
         if (!address) return c.fail(k, address.err().message);
         o.server.listen = *address;
         return {};
     }},
    {"server.threads",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store_integer(v, k, c, 0, 256, o.server.threads);
     }},
    {"server.web_root",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store(read_path(v, k, c), o.server.web_root);
     }},
    {"server.max_sessions",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store_integer(v, k, c, 1, 100000, o.server.max_sessions);
     }},
    {"server.drain_timeout_s",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store_integer(v, k, c, 0, 3600, o.server.drain_timeout_s);
     }},
    {"server.start_timeout_s",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store_integer(v, k, c, 1, 86400, o.server.start_timeout_s);
     }},
    {"server.trace_dir",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store(read_path(v, k, c), o.server.trace_dir);
     }},
    {"server.trace_max_files",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store_integer(v, k, c, 1, 1000000, o.server.trace_max_files);
     }},
    {"model.dir",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store(read_path(v, k, c), o.model.dir);
     }},
    {"model.backend",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store(read_choice(v, k, c, {"cpu", "cuda"}), o.model.backend);
     }},
    {"model.warmup_text",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) -> result<void> {
         auto text = read_string(v, k, c);
         if (!text) return text.err();
         if (text->empty()) return c.fail(k, "must not be empty: readiness needs one real utterance");
         o.model.warmup_text = *text;
         return {};
     }},
    {"model.vocoder_precision",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store(read_choice(v, k, c, {"tf32", "f32"}), o.model.vocoder_precision);
     }},
    {"engine.slots",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store_integer(v, k, c, 1, 1024, o.engine.slots);
     }},
    {"engine.max_positions",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store_integer(v, k, c, 256, 65536, o.engine.max_positions);
     }},
    {"engine.lead_ms",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store_integer(v, k, c, 0, 600000, o.engine.lead_ms);
     }},
    {"engine.first_audio_yield_ms",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store_integer(v, k, c, 0, 600000, o.engine.first_audio_yield_ms);
     }},
    {"engine.join_lead_ms",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store_integer(v, k, c, 0, 600000, o.engine.join_lead_ms);
     }},
    {"engine.max_batch",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store_integer(v, k, c, 0, 1024, o.engine.max_batch);
     }},
    {"engine.choice_margin_us",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store_integer(v, k, c, 0, 100000, o.engine.choice_margin_us);
     }},
    {"limits.max_text_bytes",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store_integer(v, k, c, 1, 1 << 20, o.limits.max_text_bytes);
     }},
    {"limits.max_message_bytes",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store_integer(v, k, c, 1024, 16 << 20, o.limits.max_message_bytes);
     }},
    {"limits.queued_utterances",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store_integer(v, k, c, 0, 64, o.limits.queued_utterances);
     }},
    {"limits.input_queue_messages",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store_integer(v, k, c, 4, 65536, o.limits.input_queue_messages);
     }},
    {"limits.idle_timeout_s",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store_integer(v, k, c, 1, 86400, o.limits.idle_timeout_s);
     }},
    {"limits.keepalive_timeout_s",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store_integer(v, k, c, 2, 3600, o.limits.keepalive_timeout_s);
     }},
    {"limits.max_errors",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store_integer(v, k, c, 1, 100000, o.limits.max_errors);
     }},
    {"send_queue.soft_ms",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store_integer(v, k, c, 80, 600000, o.send_queue.soft_ms);
     }},
    {"send_queue.hard_ms",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store_integer(v, k, c, 160, 600000, o.send_queue.hard_ms);
     }},
    {"send_queue.stall_timeout_ms",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store_integer(v, k, c, 100, 600000, o.send_queue.stall_timeout_ms);
     }},
    {"send_queue.max_events",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store_integer(v, k, c, 8, 4096, o.send_queue.max_events);
     }},
    {"send_queue.socket_buffer_bytes",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store_integer(v, k, c, 0, 16 << 20, o.send_queue.socket_buffer_bytes);
     }},
    {"opus.frame_ms",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) -> result<void> {
         auto ms = read_integer(v, k, c, 10, 20);
         if (!ms) return ms.err();
         if (*ms != 10 && *ms != 20) return c.fail(k, "must be 10 or 20");
         o.opus.frame_ms = static_cast<int>(*ms);
         return {};
     }},
    {"log.level",
     [](const toml::node& v, std::string_view k, const load_context& c, server_config& o) {
         return store(read_choice(v, k, c, {"trace", "debug", "info", "warn", "error", "off"}), o.log.level);
     }},
});

const config_key* find_key(std::string_view name) {
    for (const auto& key : config_keys)
        if (key.name == name) return &key;
    return nullptr;
}

// Rules that tie two keys together; checked once every key is read.
result<void> check_consistency(const server_config& c, const load_context& ctx) {
    if (c.send_queue.hard_ms <= c.send_queue.soft_ms)
        return ctx.fail("send_queue.hard_ms", "must be larger than send_queue.soft_ms (" +
                                                  std::to_string(c.send_queue.soft_ms) + ")");
    if (c.limits.max_message_bytes <= c.limits.max_text_bytes)
        return ctx.fail("limits.max_message_bytes",
                        "must be larger than limits.max_text_bytes (" + std::to_string(c.limits.max_text_bytes) +
                            "), or a whole text could not be sent in one message");
    return {};
}

}  // namespace

result<server_config> parse_server_config(std::string_view toml_text, const std::string& source_name,
                                          const std::filesystem::path& base_dir) {
    const load_context ctx{source_name, base_dir};
    toml::table root;
    try {
        root = toml::parse(toml_text, source_name);
    } catch (const toml::parse_error& e) {
        const auto& where = e.source().begin;
        return make_error(error_kind::invalid_input, source_name + ":" + std::to_string(where.line) + ":" +
                                                         std::to_string(where.column) + ": " +
                                                         std::string(e.description()));
    }
    server_config config;
    for (const auto& [section_name, section] : root) {
        const auto* table = section.as_table();
        if (!table) return ctx.fail(section_name.str(), "expected a [section], got " + type_name(section));
        for (const auto& [key_name, value] : *table) {
            const std::string name = std::string(section_name.str()) + "." + std::string(key_name.str());
            const auto* key = find_key(name);
            if (!key) return ctx.fail(name, "unknown key");
            MEGATTS_TRY(key->apply(value, name, ctx, config));
        }
    }
    MEGATTS_TRY(check_consistency(config, ctx));
    return config;
}

result<server_config> load_server_config(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return make_error(error_kind::not_found, path.string() + ": cannot open the config file");
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) return make_error(error_kind::io, path.string() + ": read failed");
    return parse_server_config(text.str(), path.string(), path.parent_path());
}

}  // namespace megatts
