// Schema: column layout, validation, typed access and serialization.

#include "storage/schema.h"

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
  t.SetChars(1, "abcdef");  // truncated to 4
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

TEST(SchemaTest, SerializeRoundTrips) {
  auto s = *Schema::Create({{"a", ColumnType::kInt64},
                            {"b", ColumnType::kChar, 300},
                            {"c", ColumnType::kDecimal, 0, 4}});
  auto back = Schema::Deserialize(s.Serialize());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(*back == s);
  EXPECT_FALSE(Schema::Deserialize("garbage").ok());
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
