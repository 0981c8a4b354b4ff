// asio_strand: the pipeline's strand interface (pipeline/graph/strand.h) over an Asio strand of
// the server's io_context, so that a session's stages, its events and the handlers of its
// connection all run serialised on one strand, with no lock and no thread of their own.
//
// Contract: post() may be called from any thread and never runs the task inline (asio::post,
// not dispatch). Tasks run on the io_context's threads. The strand object may be destroyed
// while tasks are queued; they still run (Asio keeps the strand state alive).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>

#include "pipeline/graph/strand.h"

namespace megatts {

using io_strand = boost::asio::strand<boost::asio::io_context::executor_type>;

class asio_strand final : public strand {
public:
    explicit asio_strand(io_strand executor) : executor_(std::move(executor)) {}

    void post(strand_task task) override;

    const io_strand& executor() const { return executor_; }

private:
    io_strand executor_;
};

}  // namespace megatts
