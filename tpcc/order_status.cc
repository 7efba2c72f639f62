#include "tpcc/order_status.h"

#include "tpcc/payment.h"

namespace strand::tpcc {

OrderStatusInput MakeOrderStatusInput(Random& r, const Scale& scale, int w) {
  OrderStatusInput in;
  in.w = w;
  in.d = r.Uniform(1, scale.districts);
  if (r.Percent(60)) {
    in.customer.last = RunLastName(r, scale);
  } else {
    in.customer.c_id = r.NURand(1023, 1, scale.customers);
  }
  return in;
}

absl::StatusOr<engine::ProcedureId> RegisterOrderStatus(engine::Engine& engine,
                                                        const Tables& t) {
  return engine.RegisterProcedure(
      "tpcc_order_status",
      std::function<absl::StatusOr<OrderStatusOutput>(txn::Txn&,
                                                      OrderStatusInput)>(
          [t](txn::Txn& txn,
              const OrderStatusInput& in) -> absl::StatusOr<OrderStatusOutput> {
            OrderStatusOutput out;
            STRAND_ASSIGN_OR_RETURN(
                auto ca, FindCustomer(txn, t, in.w, in.d, in.customer));
            STRAND_ASSIGN_OR_RETURN(auto c, txn.Read(t.customer, ca));
            out.c_id = c.GetInt(customer::kId);
            out.c_balance_cents = c.GetDecimal(customer::kBalance);
            storage::TupleAddress oa;
            STRAND_RETURN_IF_ERROR(txn.Scan(
                t.order_by_customer, OrderCustomerKey(in.w, in.d, out.c_id, 0),
                OrderCustomerKey(in.w, in.d, out.c_id, -1), /*forward=*/false,
                /*limit=*/1, [&](std::string_view, storage::TupleAddress a) {
                  oa = a;
                  return false;
                }));
            if (oa.is_null()) return out;
            STRAND_ASSIGN_OR_RETURN(auto o, txn.Read(t.order, oa));
            out.o_id = o.GetInt(order::kId);
            out.carrier_id = o.GetInt(order::kCarrierId);
            std::vector<storage::TupleAddress> lines;
            STRAND_RETURN_IF_ERROR(
                txn.Scan(t.order_line_pk, OrderLineKey(in.w, in.d, out.o_id, 0),
                         OrderLineKey(in.w, in.d, out.o_id, 255),
                         /*forward=*/true, Scale::kMaxOrderLines,
                         [&](std::string_view, storage::TupleAddress a) {
                           lines.push_back(a);
                           return true;
                         }));
            for (storage::TupleAddress a : lines) {
              STRAND_ASSIGN_OR_RETURN(auto ol, txn.Read(t.order_line, a));
              ++out.lines;
              out.amount_cents += ol.GetDecimal(order_line::kAmount);
              out.delivered_lines += ol.GetInt(order_line::kDeliveryD) != 0;
            }
            return out;
          }));
}

}  // namespace strand::tpcc
