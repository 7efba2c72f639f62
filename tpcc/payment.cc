#include "tpcc/payment.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"

namespace strand::tpcc {

std::string RunLastName(Random& r, const Scale& scale) {
  return LastName(r.NURand(255, 0, std::min(999, scale.customers - 1)));
}

PaymentInput MakePaymentInput(Random& r, const Scale& scale, int w,
                              int warehouses, int32_t now) {
  PaymentInput in;
  in.w = w;
  in.d = r.Uniform(1, scale.districts);
  if (warehouses > 1 && r.Percent(15)) {
    const int other = r.Uniform(1, warehouses - 1);
    in.c_w = other >= w ? other + 1 : other;
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

absl::StatusOr<engine::ProcedureId> RegisterPayment(engine::Engine& engine,
                                                    const Tables& t) {
  return engine.RegisterProcedure(
      "tpcc_payment",
      std::function<absl::StatusOr<PaymentOutput>(txn::Txn&, PaymentInput)>(
          [t](txn::Txn& txn,
              const PaymentInput& in) -> absl::StatusOr<PaymentOutput> {
            PaymentOutput out;
            // The customer first, and its row prefetched: one cold row of
            // 30,000 per warehouse, it loads during the updates of the
            // (hot) warehouse and district rows.
            TPCC_ASSIGN_OR_RETURN(
                const storage::TupleAddress ca,
                FindCustomer(txn, t, in.c_w, in.c_d, in.customer));
            txn.Prefetch(t.customer, absl::MakeConstSpan(&ca, 1));
            TPCC_ASSIGN_OR_RETURN(
                auto wa, txn.Lookup(t.warehouse_pk, WarehouseKey(in.w)));
            TPCC_ASSIGN_OR_RETURN(storage::TupleBuffer * wr,
                                  txn.Modify(t.warehouse, wa));
            wr->SetDecimal(
                warehouse::kYtd,
                wr->view().GetDecimal(warehouse::kYtd) + in.amount_cents);
            TPCC_ASSIGN_OR_RETURN(
                auto da, txn.Lookup(t.district_pk, DistrictKey(in.w, in.d)));
            TPCC_ASSIGN_OR_RETURN(storage::TupleBuffer * dr,
                                  txn.Modify(t.district, da));
            dr->SetDecimal(
                district::kYtd,
                dr->view().GetDecimal(district::kYtd) + in.amount_cents);
            TPCC_ASSIGN_OR_RETURN(storage::TupleBuffer * c,
                                  txn.Modify(t.customer, ca));
            const storage::TupleView cv = c->view();
            out.c_id = cv.GetInt(customer::kId);
            out.c_balance_cents =
                cv.GetDecimal(customer::kBalance) - in.amount_cents;
            c->SetDecimal(customer::kBalance, out.c_balance_cents);
            c->SetDecimal(
                customer::kYtdPayment,
                cv.GetDecimal(customer::kYtdPayment) + in.amount_cents);
            c->SetInt(customer::kPaymentCnt,
                      cv.GetInt(customer::kPaymentCnt) + 1);
            out.bad_credit = cv.GetChars(customer::kCredit) == "BC";
            if (out.bad_credit) {
              // H_AMOUNT as a decimal: 1205 cents is "12.05".
              std::string data = absl::StrCat(
                  absl::StrFormat("%d %d %d %d %d %d.%02d|", out.c_id, in.c_d,
                                  in.c_w, in.d, in.w, in.amount_cents / 100,
                                  in.amount_cents % 100),
                  std::string(cv.GetChars(customer::kData)));
              data.resize(std::min<size_t>(data.size(), 500));
              c->SetChars(customer::kData, data);
            }
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
            TPCC_RETURN_IF_ERROR(txn.Insert(t.history, h).status());
            return out;
          }));
}

}  // namespace strand::tpcc
