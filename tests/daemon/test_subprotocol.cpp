#include "daemon/protocol/subprotocol.h"

#include <catch2/catch.hpp>

namespace megatts {
namespace {

TEST_CASE("subprotocol offers: none, accepted among others, refused", "[protocol]") {
    CHECK(negotiate_subprotocol("") == subprotocol_offer::none);
    CHECK(negotiate_subprotocol("  ") == subprotocol_offer::none);
    CHECK(negotiate_subprotocol("megatts.v1") == subprotocol_offer::accepted);
    CHECK(negotiate_subprotocol("chat, megatts.v1") == subprotocol_offer::accepted);
    CHECK(negotiate_subprotocol("chat,megatts.v1 ,x") == subprotocol_offer::accepted);
    CHECK(negotiate_subprotocol("megatts.v2") == subprotocol_offer::refused);
    CHECK(negotiate_subprotocol("megatts.v1x, chat") == subprotocol_offer::refused);
    CHECK(negotiate_subprotocol("MEGATTS.V1") == subprotocol_offer::refused);
}

}  // namespace
}  // namespace megatts
