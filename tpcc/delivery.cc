#include "tpcc/delivery.h"

#include <vector>

#include "tpcc/procedure_util.h"

namespace strand::tpcc {

DeliveryInput MakeDeliveryInput(Random& r, int w, int32_t now) {
  return {w, static_cast<int>(r.Uniform(1, 10)), now};
}

absl::StatusOr<engine::ProcedureId> RegisterDelivery(engine::Engine& engine,
                                                     const Tables& t,
                                                     const Scale& scale) {
  const int districts = scale.districts;
  return engine.RegisterProcedure(
      "tpcc_delivery",
      std::function<absl::StatusOr<DeliveryOutput>(txn::Txn&, DeliveryInput)>(
          [t, districts](txn::Txn& txn, const DeliveryInput& in)
              -> absl::StatusOr<DeliveryOutput> {
            DeliveryOutput out;
            out.o_ids.assign(districts, 0);
            for (int d = 1; d <= districts; ++d) {
              std::string no_key;
              storage::TupleAddress noa;
              STRAND_RETURN_IF_ERROR(txn.Scan(
                  t.new_order_pk, NewOrderKey(in.w, d, 0),
                  NewOrderKey(in.w, d, -1), /*forward=*/true, /*limit=*/1,
                  [&](std::string_view key, storage::TupleAddress a) {
                    no_key = key;
                    noa = a;
                    return false;
                  }));
              if (noa.is_null()) {
                ++out.skipped;
                continue;
              }
              auto no = txn.Read(t.new_order, noa);
              absl::Status del =
                  no.ok() ? txn.Delete(t.new_order, noa) : no.status();
              if (absl::IsNotFound(del)) {
                // Another delivery took it after our scan: try again.
                txn.Abort(txn::AbortReason::kConflict);
                return absl::AbortedError("new-order row delivered meanwhile");
              }
              STRAND_RETURN_IF_ERROR(del);
              const int o_id = no->GetInt(new_order::kOId);
              STRAND_RETURN_IF_ERROR(
                  txn.RemoveIndexEntry(t.new_order_pk, no_key, noa));
              STRAND_ASSIGN_OR_RETURN(
                  auto oa, txn.Lookup(t.order_pk, OrderKey(in.w, d, o_id)));
              STRAND_ASSIGN_OR_RETURN(storage::TupleBuffer * o,
                                      txn.Modify(t.order, oa));
              o->SetInt(order::kCarrierId, in.carrier_id);
              const int c_id = o->view().GetInt(order::kCId);
              std::vector<storage::TupleAddress> lines;
              STRAND_RETURN_IF_ERROR(
                  txn.Scan(t.order_line_pk, OrderLineKey(in.w, d, o_id, 0),
                           OrderLineKey(in.w, d, o_id, 255), /*forward=*/true,
                           Scale::kMaxOrderLines,
                           [&](std::string_view, storage::TupleAddress a) {
                             lines.push_back(a);
                             return true;
                           }));
              int64_t amount = 0;
              for (storage::TupleAddress a : lines) {
                STRAND_ASSIGN_OR_RETURN(storage::TupleBuffer * ol,
                                        txn.Modify(t.order_line, a));
                ol->SetInt(order_line::kDeliveryD, in.date);
                amount += ol->view().GetDecimal(order_line::kAmount);
              }
              STRAND_ASSIGN_OR_RETURN(
                  auto ca,
                  txn.Lookup(t.customer_pk, CustomerKey(in.w, d, c_id)));
              STRAND_ASSIGN_OR_RETURN(storage::TupleBuffer * c,
                                      txn.Modify(t.customer, ca));
              c->SetDecimal(customer::kBalance,
                            c->view().GetDecimal(customer::kBalance) + amount);
              c->SetInt(customer::kDeliveryCnt,
                        c->view().GetInt(customer::kDeliveryCnt) + 1);
              ++out.delivered;
              out.o_ids[d - 1] = o_id;
            }
            return out;
          }));
}

}  // namespace strand::tpcc
