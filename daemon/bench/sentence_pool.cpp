#include "daemon/bench/sentence_pool.h"

#include <algorithm>
#include <array>

namespace megatts::bench {
namespace {

constexpr std::array<pool_sentence, 24> k_pool = {{
    {"english", "Please hold while I transfer your call."},
    {"english", "Could you remind me to call the dentist tomorrow morning?"},
    {"english", "The train to the coast leaves at half past nine, so pack your bag tonight."},
    {"english", "Good morning! It is sunny and mild today, with a light breeze from the west."},
    {"english", "Your package has left the warehouse and should arrive on Thursday between noon and four."},
    {"english", "I read the whole report last night, and honestly, the second chapter is the strongest part of it."},
    {"english", "She planted tomatoes, basil and a row of sunflowers along the fence, and by August the whole "
                "garden smelled of summer."},
    {"english", "Turn left at the bakery, walk two blocks past the library, and the museum entrance will be on "
                "your right, just after the fountain."},
    {"english", "Our quarterly numbers look steady: revenue grew four percent, costs stayed flat, and the new "
                "support team cut average response times nearly in half."},
    {"english", "To reset the router, unplug it for thirty seconds, plug it back in, and wait until the light on "
                "the front turns solid green before you try again."},
    {"english", "When the storm finally passed, the village gathered on the hill to watch the river settle back "
                "between its banks, and for a long while nobody said a word."},
    {"english", "Imagine a library where every book you have ever wanted to read sits on a single shelf, in the "
                "order you would enjoy them most, waiting quietly for a rainy afternoon."},
    {"chinese", "请稍等，我帮您转接到客服部门。"},
    {"chinese", "今天天气很好，我们下午去公园散步吧。"},
    {"chinese", "非常感谢你昨天的帮助，没有你我肯定来不及完成。"},
    {"chinese", "请在下一个路口左转，然后直走大约三百米就到了。"},
    {"chinese", "您的快递已经从仓库发出，预计周四中午到四点之间送达。"},
    {"chinese", "会议改到明天上午十点，请大家提前十分钟到三楼的大会议室。"},
    {"chinese", "我昨晚把报告从头到尾读了一遍，觉得第二章写得最好，论证清楚，数据也很扎实。"},
    {"chinese", "如果路由器连不上网络，请先拔掉电源等三十秒，再重新插上，直到指示灯变成绿色。"},
    {"chinese", "这家小店的面条是老板每天早上亲手做的，汤头用骨头熬了整整一夜，所以味道特别浓。"},
    {"chinese", "本季度营收增长了百分之四，成本基本持平，新组建的客服团队把平均响应时间缩短了将近一半。"},
    {"chinese", "春天来了，山坡上的桃花一片一片地开，远远望去像是天边落下的一朵粉色的云，引得游人纷纷停下脚步拍照。"},
    {"chinese", "小时候每到夏天，外婆总会在院子里摆一张竹床，我们躺在上面数星星，听她讲那些怎么也讲不完的老故事，"
                "直到迷迷糊糊地睡着。"},
}};

constexpr double k_english_words_per_second = 2.5;
constexpr double k_chinese_characters_per_second = 4.0;

// Words: runs of bytes other than spaces.
int words(std::string_view text) {
    int n = 0;
    bool in_word = false;
    for (const char c : text) {
        const bool space = c == ' ';
        n += !space && !in_word;
        in_word = !space;
    }
    return n;
}

// CJK Unified Ideographs (U+4E00..U+9FFF) are the three-byte UTF-8 sequences led by 0xE4..0xE9;
// CJK and full-width punctuation (U+3000.., U+FF00..) lead with 0xE3 and 0xEF.
int ideographs(std::string_view text) {
    int n = 0;
    for (const char c : text) {
        const auto b = static_cast<unsigned char>(c);
        n += b >= 0xE4 && b <= 0xE9;
    }
    return n;
}

}  // namespace

double spoken_seconds(const pool_sentence& s) {
    return s.language == "chinese" ? ideographs(s.text) / k_chinese_characters_per_second
                                   : words(s.text) / k_english_words_per_second;
}

std::span<const pool_sentence> sentence_pool() { return k_pool; }

result<std::vector<pool_sentence>> sentences_in(std::span<const std::string> languages) {
    for (const auto& language : languages) {
        if (std::none_of(k_pool.begin(), k_pool.end(), [&](const pool_sentence& s) { return s.language == language; }))
            return make_error(error_kind::invalid_input,
                              "language '" + language + "': the sentence pool has english and chinese");
    }
    std::vector<pool_sentence> out;
    for (const auto& s : k_pool)
        if (std::find(languages.begin(), languages.end(), s.language) != languages.end()) out.push_back(s);
    return out;
}

}  // namespace megatts::bench
