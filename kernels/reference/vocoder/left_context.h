// left_context: the last `rows` input rows a causal op saw, kept between the calls of
// a stream so that each call sees its input with the history in front of it.
//
// Contract: extend(input) returns [context rows; input rows] as one contiguous array
// of (rows + n) * width floats, valid until the next extend(); the context is then
// the last `rows` rows of that array. Before the first call the context is zeros,
// which is the zero left padding the whole-utterance computation applies. `input`
// must not point into the returned array of a previous call. Single-threaded; no
// errors.
#pragma once

#include <span>
#include <vector>

namespace megatts::ref {

class left_context {
public:
    left_context(int rows, int width);

    std::span<const float> extend(std::span<const float> input);

private:
    int rows_;
    int width_;
    std::vector<float> buf_;  // the last extend()'s result; its tail is the context
};

}  // namespace megatts::ref
