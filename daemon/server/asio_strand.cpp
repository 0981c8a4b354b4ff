#include "daemon/server/asio_strand.h"

#include <boost/asio/post.hpp>

namespace megatts {

void asio_strand::post(strand_task task) { boost::asio::post(executor_, std::move(task)); }

}  // namespace megatts
