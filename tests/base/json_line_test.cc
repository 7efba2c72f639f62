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

TEST(JsonLineTest, CsvHasAColumnPerScalarAndFlattensObjects) {
  JsonLine inner;
  inner.Add("commits", uint64_t{7}).Add("p99_us", 12.5);
  JsonLine j;
  j.Add("bench", "tpcc")
      .Add("mix", "50,50")
      .Add("quote", "say \"hi\"")
      .Add("ok", false)
      .Add("nan", std::nan(""))
      .AddObject("new_order", inner)
      .AddRaw("by_node", "[1,2]");
  EXPECT_EQ(j.str(),
            R"({"bench":"tpcc","mix":"50,50","quote":"say \"hi\"","ok":false,)"
            R"("nan":null,"new_order":{"commits":7,"p99_us":12.5},)"
            R"("by_node":[1,2]})");
  EXPECT_EQ(j.CsvHeader(),
            "bench,mix,quote,ok,nan,new_order.commits,new_order.p99_us");
  EXPECT_EQ(j.CsvRow(), R"(tpcc,"50,50","say ""hi""",false,,7,12.5)");
}

}  // namespace
}  // namespace strand
