#include "base/json_line.h"

#include <cmath>

#include "gtest/gtest.h"

namespace strand {
namespace {

TEST(JsonLineTest, BuildsOneFlatObject) {
  JsonLine j;
  j.Add("name", "tpcc").Add("threads", 2).Add("ok", true).Add("ratio", 0.5);
  EXPECT_EQ(j.str(), R"({"name":"tpcc","threads":2,"ok":true,"ratio":0.5})");
}

TEST(JsonLineTest, EscapesStringsAndRejectsNonFiniteNumbers) {
  JsonLine j;
  j.Add("s", "a\"b\\c\nd").Add("nan", std::nan("")).AddRaw("o", "{\"x\":1}");
  EXPECT_EQ(j.str(), R"({"s":"a\"b\\c\nd","nan":null,"o":{"x":1}})");
  EXPECT_EQ(JsonQuote(std::string(1, '\x01')), "\"\\u0001\"");
}

}  // namespace
}  // namespace strand
