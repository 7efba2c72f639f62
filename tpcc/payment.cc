#include "tpcc/payment.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "partition/fragment.h"

namespace strand::tpcc {

std::string RunLastName(Random& r, const Scale& scale) {
  return LastName(r.NURand(255, 0, std::min(999, scale.customers - 1)));
}

PaymentInput MakePaymentInput(Random& r, const Scale& scale, int w,
                              int warehouses, const RemotePolicy& remote,
                              int32_t now) {
  PaymentInput in;
  in.w = w;
  in.d = r.Uniform(1, scale.districts);
  const double remote_percent =
      remote.remote_payment_ratio < 0 ? 15 : 100 * remote.remote_payment_ratio;
  if (warehouses > 1 && r.Percent(remote_percent)) {
    in.c_w = RemoteWarehouse(r, w, warehouses, remote);
    in.c_d = r.Uniform(1, scale.districts);
  } else {
    in.c_w = w;
    in.c_d = in.d;
  }
  if (r.Percent(60)) {
    in.customer.last = RunLastName(r, scale);
  } else {
    in.customer.c_id = r.NURand(1023, 1, scale.customers);
  }
  in.amount_cents = r.Uniform(100, 500000);
  in.date = now;
  return in;
}

namespace {

struct CustomerPayment {
  int32_t c_id = 0;
  int64_t balance_cents = 0;
  bool bad_credit = false;
};

// The customer's side of a Payment (clause 2.5.2.2): its balance, YTD
// payment and count, and C_DATA for bad credit.
absl::StatusOr<CustomerPayment> PayCustomer(txn::Txn& txn, const Tables& t,
                                            const PaymentInput& in,
                                            storage::TupleAddress ca) {
  CustomerPayment out;
  STRAND_ASSIGN_OR_RETURN(storage::TupleBuffer * c, txn.Modify(t.customer, ca));
  const storage::TupleView cv = c->view();
  out.c_id = static_cast<int32_t>(cv.GetInt(customer::kId));
  out.balance_cents = cv.GetDecimal(customer::kBalance) - in.amount_cents;
  c->SetDecimal(customer::kBalance, out.balance_cents);
  c->SetDecimal(customer::kYtdPayment,
                cv.GetDecimal(customer::kYtdPayment) + in.amount_cents);
  c->SetInt(customer::kPaymentCnt, cv.GetInt(customer::kPaymentCnt) + 1);
  out.bad_credit = cv.GetChars(customer::kCredit) == "BC";
  if (out.bad_credit) {
    // H_AMOUNT as a decimal: 1205 cents is "12.05".
    std::string data = absl::StrCat(
        absl::StrFormat("%d %d %d %d %d %d.%02d|", out.c_id, in.c_d, in.c_w,
                        in.d, in.w, in.amount_cents / 100,
                        in.amount_cents % 100),
        std::string(cv.GetChars(customer::kData)));
    data.resize(std::min<size_t>(data.size(), 500));
    c->SetChars(customer::kData, data);
  }
  return out;
}

// A Payment's customer at another compute node's warehouse, paid there in
// partitioned mode (partition/fragment.h).
struct RemoteCustomerIn {
  int32_t w = 0, d = 0, c_w = 0, c_d = 0, c_id = 0;
  char last[24] = {};  // C_LAST (16 at most), NUL-padded
  int64_t amount_cents = 0;
};

absl::StatusOr<partition::Fragment<RemoteCustomerIn, CustomerPayment>>
RegisterRemoteCustomer(engine::Engine& engine, const Tables& t) {
  return engine.RegisterFragment<RemoteCustomerIn, CustomerPayment>(
      "tpcc_payment_customer",
      [t](txn::Txn& txn,
          const RemoteCustomerIn& r) -> absl::StatusOr<CustomerPayment> {
        PaymentInput in;
        in.w = r.w;
        in.d = r.d;
        in.c_w = r.c_w;
        in.c_d = r.c_d;
        in.customer.c_id = r.c_id;
        in.customer.last.assign(r.last, strnlen(r.last, sizeof(r.last)));
        in.amount_cents = r.amount_cents;
        STRAND_ASSIGN_OR_RETURN(
            const storage::TupleAddress ca,
            FindCustomer(txn, t, in.c_w, in.c_d, in.customer));
        return PayCustomer(txn, t, in, ca);
      });
}

}  // namespace

absl::StatusOr<engine::ProcedureId> RegisterPayment(engine::Engine& engine,
                                                    const Tables& t) {
  auto remote_customer = RegisterRemoteCustomer(engine, t);
  if (!remote_customer.ok()) return remote_customer.status();
  return engine.RegisterProcedure(
      "tpcc_payment",
      std::function<absl::StatusOr<PaymentOutput>(txn::Txn&, PaymentInput)>(
          [t, remote_customer = *remote_customer](
              txn::Txn& txn,
              const PaymentInput& in) -> absl::StatusOr<PaymentOutput> {
            PaymentOutput out;
            const txn::RemoteBranches* remote = txn.remote();
            // Partitioned mode, a customer of another node's warehouse:
            // paid there, first (its latches are held to the commit).
            std::optional<CustomerPayment> paid;
            storage::TupleAddress ca;
            if (remote != nullptr &&
                remote->OwnerOf(in.c_w) != remote->self()) {
              RemoteCustomerIn r;
              r.w = in.w;
              r.d = in.d;
              r.c_w = in.c_w;
              r.c_d = in.c_d;
              r.c_id = in.customer.c_id;
              std::memcpy(r.last, in.customer.last.data(),
                          std::min(in.customer.last.size(), sizeof(r.last)));
              r.amount_cents = in.amount_cents;
              STRAND_ASSIGN_OR_RETURN(
                  paid, partition::RunAt(txn, in.c_w, remote_customer, r));
            } else {
              // The customer first, and its row prefetched: one cold row
              // of 30,000 per warehouse, it loads during the updates of
              // the (hot) warehouse and district rows.
              STRAND_ASSIGN_OR_RETURN(
                  ca, FindCustomer(txn, t, in.c_w, in.c_d, in.customer));
              txn.Prefetch(t.customer, absl::MakeConstSpan(&ca, 1));
            }
            STRAND_ASSIGN_OR_RETURN(
                auto wa, txn.Lookup(t.warehouse_pk, WarehouseKey(in.w)));
            STRAND_ASSIGN_OR_RETURN(storage::TupleBuffer * wr,
                                    txn.Modify(t.warehouse, wa));
            wr->SetDecimal(
                warehouse::kYtd,
                wr->view().GetDecimal(warehouse::kYtd) + in.amount_cents);
            STRAND_ASSIGN_OR_RETURN(
                auto da, txn.Lookup(t.district_pk, DistrictKey(in.w, in.d)));
            STRAND_ASSIGN_OR_RETURN(storage::TupleBuffer * dr,
                                    txn.Modify(t.district, da));
            dr->SetDecimal(
                district::kYtd,
                dr->view().GetDecimal(district::kYtd) + in.amount_cents);
            if (!paid.has_value()) {
              STRAND_ASSIGN_OR_RETURN(paid, PayCustomer(txn, t, in, ca));
            }
            out.c_id = paid->c_id;
            out.c_balance_cents = paid->balance_cents;
            out.bad_credit = paid->bad_credit;
            storage::TupleBuffer h(*t.history_schema);
            h.SetInt(history::kCId, out.c_id);
            h.SetInt(history::kCDId, in.c_d);
            h.SetInt(history::kCWId, in.c_w);
            h.SetInt(history::kDId, in.d);
            h.SetInt(history::kWId, in.w);
            h.SetInt(history::kDate, in.date);
            h.SetDecimal(history::kAmount, in.amount_cents);
            h.SetChars(
                history::kData,
                absl::StrCat(
                    std::string(wr->view().GetChars(warehouse::kName)), "    ",
                    std::string(dr->view().GetChars(district::kName))));
            STRAND_RETURN_IF_ERROR(txn.Insert(t.history, h).status());
            return out;
          }));
}

}  // namespace strand::tpcc
