#include "daemon/http/static_path.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "daemon/http/mime_type.h"

namespace megatts {
namespace {

namespace fs = std::filesystem;

// A web root with a page, a module, a directory, and links in and out of it.
struct web_tree {
    fs::path base = fs::temp_directory_path() / "megatts-test-static";
    fs::path root;

    web_tree() {
        fs::remove_all(base);
        fs::create_directories(base / "web" / "js");
        fs::create_directories(base / "web" / "empty");
        std::ofstream(base / "web" / "index.html") << "page";
        std::ofstream(base / "web" / "js" / "app.js") << "module";
        std::ofstream(base / "web" / "js" / "index.html") << "sub page";
        std::ofstream(base / "web" / "a b.txt") << "spaced";
        std::ofstream(base / "secret.txt") << "secret";
        fs::create_directories(base / "web-other");
        std::ofstream(base / "web-other" / "x.txt") << "sibling with a common prefix";
        fs::create_symlink(base / "secret.txt", base / "web" / "out.txt");
        fs::create_symlink(base / "web" / "js" / "app.js", base / "web" / "in.js");
        fs::create_directory_symlink(base, base / "web" / "up");
        root = fs::canonical(base / "web");
    }
    ~web_tree() { fs::remove_all(base); }
};

TEST_CASE("static targets map to files inside the root", "[static]") {
    web_tree t;
    CHECK(*resolve_static_path(t.root, "/") == t.root / "index.html");
    CHECK(*resolve_static_path(t.root, "/index.html") == t.root / "index.html");
    CHECK(*resolve_static_path(t.root, "/js/app.js?v=3#top") == t.root / "js" / "app.js");
    CHECK(*resolve_static_path(t.root, "/js/") == t.root / "js" / "index.html");
    CHECK(*resolve_static_path(t.root, "/a%20b.txt") == t.root / "a b.txt");
    CHECK(*resolve_static_path(t.root, "/in.js") == t.root / "js" / "app.js");  // a link that stays inside
}

TEST_CASE("every way out of the root, and every non-file, is not_found", "[static]") {
    web_tree t;
    for (const char* target :
         {"/../secret.txt", "/js/../../secret.txt", "/%2e%2e/secret.txt", "/%2E%2E%2Fsecret.txt", "/js/%2e%2e/index.html",
          "/./index.html", "/..%5csecret.txt", "/\\..\\secret.txt", "/out.txt", "/up/secret.txt",
          "/../web-other/x.txt", "/empty/", "/js", "/missing.html", "/%00", "/index.html%00.js", "/%zz", "/%4",
          "index.html", "", "http://example.com/index.html"}) {
        INFO(target);
        const auto r = resolve_static_path(t.root, target);
        CHECK_FALSE(r.ok());
        if (!r.ok()) CHECK(r.err().kind == error_kind::not_found);
    }
}

TEST_CASE("percent-decoding", "[static]") {
    CHECK(*percent_decode("/a%20b%2Fc") == "/a b/c");
    CHECK(*percent_decode("%C3%A9") == "\xC3\xA9");
    CHECK_FALSE(percent_decode("%").ok());
    CHECK_FALSE(percent_decode("%2").ok());
    CHECK_FALSE(percent_decode("%g0").ok());
    CHECK_FALSE(percent_decode("%00").ok());
}

TEST_CASE("MIME types: the page's file kinds, case-insensitive, octet-stream otherwise", "[static]") {
    CHECK(mime_type(".html") == "text/html; charset=utf-8");
    CHECK(mime_type(".HTML") == "text/html; charset=utf-8");
    CHECK(mime_type(".js") == "text/javascript; charset=utf-8");
    CHECK(mime_type(".mjs") == "text/javascript; charset=utf-8");
    CHECK(mime_type(".css") == "text/css; charset=utf-8");
    CHECK(mime_type(".json") == "application/json");
    CHECK(mime_type(".svg") == "image/svg+xml");
    CHECK(mime_type(".png") == "image/png");
    CHECK(mime_type(".wasm") == "application/wasm");
    CHECK(mime_type(".ico") == "image/vnd.microsoft.icon");
    CHECK(mime_type(".exe") == "application/octet-stream");
    CHECK(mime_type("") == "application/octet-stream");
}

}  // namespace
}  // namespace megatts
