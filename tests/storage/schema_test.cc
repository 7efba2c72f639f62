// Schema: column layout, validation, typed access and serialization.

#include "storage/schema.h"

#include <functional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/tuple_address.h"
#include "storage/tuple_header.h"

namespace strand::storage {
namespace {

TEST(SchemaTest, ColumnsFollowTheHeaderBackToBack) {
  auto s = Schema::Create({{"id", ColumnType::kInt32},
                           {"name", ColumnType::kChar, 10},
                           {"balance", ColumnType::kDecimal, 0, 2},
                           {"rate", ColumnType::kDouble},
                           {"big", ColumnType::kInt64}});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->column(0).offset, kTupleHeaderBytes);
  EXPECT_EQ(s->column(1).offset, kTupleHeaderBytes + 4);
  EXPECT_EQ(s->column(2).offset, kTupleHeaderBytes + 14);
  EXPECT_EQ(s->tuple_bytes(), kTupleHeaderBytes + 4 + 10 + 8 + 8 + 8);
  EXPECT_EQ(s->data_bytes(), 38u);
  EXPECT_EQ(*s->ColumnIndex("rate"), 3u);
  EXPECT_EQ(s->ColumnIndex("nope").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(SchemaTest, RejectsBadColumns) {
  EXPECT_FALSE(Schema::Create({}).ok());
  EXPECT_FALSE(
      Schema::Create({{"a", ColumnType::kInt32}, {"a", ColumnType::kInt64}})
          .ok());
  EXPECT_FALSE(Schema::Create({{"c", ColumnType::kChar, 0}}).ok());
  EXPECT_FALSE(
      Schema::Create({{std::string(32, 'x'), ColumnType::kInt32}}).ok());
  EXPECT_FALSE(Schema::Create({{"d", ColumnType::kDecimal, 0, 19}}).ok());
}

TEST(SchemaTest, TypedAccessRoundTrips) {
  auto s = *Schema::Create({{"i", ColumnType::kInt32},
                            {"c", ColumnType::kChar, 4},
                            {"m", ColumnType::kDecimal, 0, 2},
                            {"d", ColumnType::kDouble},
                            {"l", ColumnType::kInt64}});
  TupleBuffer t(s);
  t.SetInt(0, -7);
  t.SetChars(1, "abcd");  // the whole array, no NUL
  t.SetDecimal(2, 12345);
  t.SetDouble(3, 2.5);
  t.SetInt(4, int64_t{1} << 40);
  TupleView v = t.view();
  EXPECT_EQ(v.GetInt(0), -7);
  EXPECT_EQ(v.GetChars(1), "abcd");
  EXPECT_EQ(v.GetDecimal(2), 12345);
  EXPECT_EQ(v.GetDouble(3), 2.5);
  EXPECT_EQ(v.GetInt(4), int64_t{1} << 40);
  t.SetChars(1, "xy");
  EXPECT_EQ(t.view().GetChars(1), "xy");
}

TEST(SchemaTest, ColumnsByNameReadAndWriteWhatPositionsDo) {
  auto s = *Schema::Create({{"id", ColumnType::kInt32},
                            {"name", ColumnType::kChar, 8},
                            {"price", ColumnType::kDecimal, 4, 2},
                            {"rate", ColumnType::kDouble}});
  TupleBuffer t(s);
  t.SetInt("id", 42);
  t.SetChars("name", "pear");
  t.SetDecimal("price", 199);
  t.SetDouble("rate", 0.5);
  ASSERT_TRUE(t.status().ok()) << t.status();
  EXPECT_EQ(t.view().GetInt(0), 42);
  EXPECT_EQ(t.view().GetInt("id"), 42);
  EXPECT_EQ(t.view().GetChars("name"), "pear");
  EXPECT_EQ(t.view().GetDecimal("price"), 199);
  EXPECT_EQ(t.view().GetDouble("rate"), 0.5);
}

// Misuse of an accessor is kept as the buffer's first error, naming the
// column; the process goes on (these would have CHECK-failed before).
TEST(SchemaTest, MisuseIsAStatusNamingTheColumnNotADeath) {
  auto s = *Schema::Create({{"small", ColumnType::kInt8},
                            {"name", ColumnType::kChar, 4},
                            {"cents", ColumnType::kDecimal, 2, 2}});
  struct Case {
    const char* what;
    std::function<void(TupleBuffer&)> misuse;
    const char* message;
  };
  const Case cases[] = {
      {"int out of range", [](TupleBuffer& t) { t.SetInt(0, 300); },
       "300 does not fit column small (1-byte int8)"},
      {"decimal out of range",
       [](TupleBuffer& t) { t.SetDecimal("cents", 40000); },
       "40000 does not fit column cents (2-byte decimal)"},
      {"string too long", [](TupleBuffer& t) { t.SetChars(1, "abcde"); },
       "a string of 5 bytes does not fit column name (char of 4)"},
      {"wrong type", [](TupleBuffer& t) { t.SetInt(1, 1); },
       "SetInt on column name, which is char"},
      {"wrong type by name", [](TupleBuffer& t) { t.SetDouble("small", 1); },
       "SetDouble on column small, which is int8"},
      {"no such position", [](TupleBuffer& t) { t.SetInt(7, 1); },
       "SetInt(7): no such column, the row has 3"},
      {"no such name", [](TupleBuffer& t) { t.SetInt("nope", 1); },
       "SetInt(\"nope\"): the row has no column of that name"},
      {"read of the wrong type",
       [](TupleBuffer& t) { EXPECT_EQ(t.view().GetInt(1), 0); },
       "GetInt on column name, which is char"},
      {"read of no such column",
       [](TupleBuffer& t) { EXPECT_EQ(t.view().GetChars(9), ""); },
       "GetChars(9): no such column"},
  };
  for (const Case& c : cases) {
    TupleBuffer t(s);
    t.SetInt(0, 5);
    c.misuse(t);
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << c.what;
    EXPECT_THAT(std::string(t.status().message()),
                ::testing::HasSubstr(c.message))
        << c.what;
    // The misuse changed nothing, and the first error is the one kept.
    EXPECT_EQ(t.view().GetInt(0), 5) << c.what;
    t.SetInt(0, 1000);
    EXPECT_THAT(std::string(t.status().message()),
                ::testing::HasSubstr(c.message))
        << c.what;
  }
  // A view with nowhere to report reads 0 and logs: still no death.
  const std::vector<uint8_t> bytes(s.tuple_bytes(), 0);
  EXPECT_EQ(TupleView(s, bytes.data()).GetDouble(0), 0);
}

TEST(SchemaTest, SerializeRoundTrips) {
  auto s = *Schema::Create({{"a", ColumnType::kInt64},
                            {"b", ColumnType::kChar, 300},
                            {"c", ColumnType::kDecimal, 0, 4}});
  auto back = Schema::Deserialize(s.Serialize());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(*back == s);
  EXPECT_FALSE(Schema::Deserialize("garbage").ok());
}

TEST(SchemaTest, NarrowColumnsTakeTheirWidth) {
  auto s = Schema::Create({{"a", ColumnType::kInt8},
                           {"b", ColumnType::kInt16},
                           {"c", ColumnType::kDecimal, 4, 2},
                           {"d", ColumnType::kDecimal, 2, 4},
                           {"e", ColumnType::kDecimal, 0, 2},
                           {"f", ColumnType::kDecimal, 8, 2},
                           {"g", ColumnType::kInt16, 2}});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->column(0).length, 1u);
  EXPECT_EQ(s->column(1).offset, kTupleHeaderBytes + 1);
  EXPECT_EQ(s->column(1).length, 2u);
  EXPECT_EQ(s->column(2).length, 4u);
  EXPECT_EQ(s->column(3).length, 2u);
  EXPECT_EQ(s->column(4).length, 8u);  // a decimal's default width
  EXPECT_EQ(s->column(5).length, 8u);
  EXPECT_EQ(s->data_bytes(), 1u + 2 + 4 + 2 + 8 + 8 + 2);
  EXPECT_STREQ(ColumnTypeName(ColumnType::kInt8), "int8");
  EXPECT_STREQ(ColumnTypeName(ColumnType::kInt16), "int16");
}

TEST(SchemaTest, RejectsBadNarrowColumns) {
  // A decimal is 2, 4 or 8 bytes, with room for at least one unit.
  EXPECT_FALSE(Schema::Create({{"d", ColumnType::kDecimal, 3, 2}}).ok());
  EXPECT_FALSE(Schema::Create({{"d", ColumnType::kDecimal, 16, 2}}).ok());
  EXPECT_TRUE(Schema::Create({{"d", ColumnType::kDecimal, 4, 9}}).ok());
  EXPECT_FALSE(Schema::Create({{"d", ColumnType::kDecimal, 4, 10}}).ok());
  EXPECT_TRUE(Schema::Create({{"d", ColumnType::kDecimal, 2, 4}}).ok());
  EXPECT_FALSE(Schema::Create({{"d", ColumnType::kDecimal, 2, 5}}).ok());
  // A fixed-width type takes no other length.
  EXPECT_FALSE(Schema::Create({{"i", ColumnType::kInt8, 2}}).ok());
  EXPECT_FALSE(Schema::Create({{"i", ColumnType::kInt16, 4}}).ok());
  EXPECT_FALSE(Schema::Create({{"i", ColumnType::kInt32, 8}}).ok());
  EXPECT_FALSE(Schema::Create({{"x", static_cast<ColumnType>(0)}}).ok());
  EXPECT_FALSE(Schema::Create({{"x", static_cast<ColumnType>(8)}}).ok());
}

// A value the column's width cannot hold, or an accessor of another type,
// changes nothing and is kept as the buffer's error, naming the column.
TEST(SchemaTest, ValuesThatDoNotFitAndWrongTypesAreKeptAsErrors) {
  auto s = *Schema::Create({{"a", ColumnType::kInt8},
                            {"b", ColumnType::kInt16},
                            {"c", ColumnType::kDecimal, 4, 2},
                            {"n", ColumnType::kChar, 4}});
  struct Case {
    std::function<void(TupleBuffer&)> misuse;
    std::string message;
  };
  const Case cases[] = {
      {[](TupleBuffer& t) { t.SetInt(0, 128); }, "128 does not fit column a"},
      {[](TupleBuffer& t) { t.SetInt(1, -32769); },
       "-32769 does not fit column b"},
      {[](TupleBuffer& t) { t.SetDecimal(2, int64_t{1} << 31); },
       "does not fit column c"},
      {[](TupleBuffer& t) { t.SetInt(2, 1); }, "SetInt on column c"},
      {[](TupleBuffer& t) { t.SetDecimal(0, 1); }, "SetDecimal on column a"},
      {[](TupleBuffer& t) { (void)t.view().GetInt(3); }, "GetInt on column n"},
  };
  for (const Case& c : cases) {
    TupleBuffer t(s);
    c.misuse(t);
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument)
        << c.message;
    EXPECT_THAT(std::string(t.status().message()),
                ::testing::HasSubstr(c.message));
    EXPECT_EQ(t.view().GetInt(0), 0) << c.message;
    EXPECT_EQ(t.view().GetInt(1), 0) << c.message;
    EXPECT_EQ(t.view().GetDecimal(2), 0) << c.message;
  }
}

TEST(SchemaTest, NarrowValuesRoundTripAtTheirBounds) {
  auto s = *Schema::Create({{"a", ColumnType::kInt8},
                            {"b", ColumnType::kInt16},
                            {"c", ColumnType::kDecimal, 4, 2},
                            {"d", ColumnType::kDecimal, 2, 4},
                            {"z", ColumnType::kInt8}});
  TupleBuffer t(s);
  t.SetInt(4, 0x5a);  // a neighbour no write may touch
  for (int64_t a : {int64_t{INT8_MIN}, int64_t{-1}, int64_t{0}, int64_t{1},
                    int64_t{INT8_MAX}}) {
    t.SetInt(0, a);
    EXPECT_EQ(t.view().GetInt(0), a);
  }
  for (int64_t b : {int64_t{INT16_MIN}, int64_t{-1}, int64_t{INT16_MAX}}) {
    t.SetInt(1, b);
    EXPECT_EQ(t.view().GetInt(1), b);
  }
  for (int64_t c : {int64_t{INT32_MIN}, int64_t{-12345}, int64_t{INT32_MAX}}) {
    t.SetDecimal(2, c);
    EXPECT_EQ(t.view().GetDecimal(2), c);
  }
  for (int64_t d :
       {int64_t{INT16_MIN}, int64_t{-1}, int64_t{5000}, int64_t{INT16_MAX}}) {
    t.SetDecimal(3, d);
    EXPECT_EQ(t.view().GetDecimal(3), d);
  }
  EXPECT_EQ(t.view().GetInt(4), 0x5a);
  // The stored bytes are the value's own, in native order.
  t.SetInt(1, -2);
  EXPECT_EQ(t.data()[s.column(1).offset], 0xfe);
  EXPECT_EQ(t.data()[s.column(1).offset + 1], 0xff);
}

TEST(SchemaTest, NarrowTypesSerializeAndBadCodesAreRejected) {
  auto s = *Schema::Create({{"a", ColumnType::kInt8},
                            {"b", ColumnType::kInt16},
                            {"c", ColumnType::kDecimal, 4, 2},
                            {"d", ColumnType::kDecimal, 2, 4},
                            {"e", ColumnType::kDecimal, 0, 2}});
  const std::string bytes = s.Serialize();
  auto back = Schema::Deserialize(bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(*back == s);
  EXPECT_EQ(back->column(2).length, 4u);
  EXPECT_EQ(back->column(3).length, 2u);
  EXPECT_EQ(back->column(3).scale, 4u);
  // Record layout (schema.cc): 8 header bytes, then per column a 32-byte
  // name, the type code, the scale and a u16 length.
  constexpr size_t kRecord = 36, kType = 32, kLength = 34;
  for (uint8_t code : {0, 8, 99}) {
    std::string bad = bytes;
    bad[8 + kType] = static_cast<char>(code);
    EXPECT_FALSE(Schema::Deserialize(bad).ok()) << int{code};
  }
  std::string bad_width = bytes;
  bad_width[8 + 2 * kRecord + kLength] = 3;  // a 3-byte decimal
  EXPECT_FALSE(Schema::Deserialize(bad_width).ok());
  std::string bad_int = bytes;
  bad_int[8 + kLength] = 2;  // a 2-byte kInt8
  EXPECT_FALSE(Schema::Deserialize(bad_int).ok());
}

TEST(TupleAddressTest, EncodesGclAndSlotInEightBytes) {
  const rdma::GlobalAddress gcl(3, 0x10040);
  auto a = TupleAddress::Encode(gcl, 4095);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->gcl(), gcl);
  EXPECT_EQ(a->slot(), 4095u);
  EXPECT_EQ(TupleAddress::FromRaw(a->raw()), *a);
  EXPECT_FALSE(TupleAddress::Encode(gcl, 4096).ok());
  EXPECT_FALSE(TupleAddress::Encode(rdma::GlobalAddress(), 0).ok());
  EXPECT_FALSE(
      TupleAddress::Encode(rdma::GlobalAddress(0, uint64_t{1} << 45), 0).ok());
}

}  // namespace
}  // namespace strand::storage
