// POST /v1/payments/{payment_id}/refunds (the refund contract, ../shared/reference/004): scope
// tenant + caller + payment + key; 201 once, the same bytes on replay; a refund the order's state
// machine does not allow (a shipped order) is refused, and that refusal is replayed too.
#include <cstdlib>
#include <regex>

#include <nlohmann/json.hpp>

#include "bodies.hpp"
#include "http_glue.hpp"
#include "service.hpp"

namespace checkout {
namespace {

bool uuid_v4(const std::string& s) {
  static const std::regex v4("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
  return std::regex_match(s, v4);
}

}  // namespace

void Service::refund(const httplib::Request& req, httplib::Response& res) {
  const auto who = authenticate(req, res, config_.token_secret);
  if (!who) return;
  const std::string payment_id = req.matches[1];
  if (!uuid_v4(payment_id)) {
    return send(problem(400, "ERR_REQUEST_INVALID", "Invalid request", "payment_id must be a lower-case UUIDv4",
                        idem::Stored::no),
                res);
  }
  const auto body = parse_refund(req.body);
  if (const auto* bad = std::get_if<idem::Response>(&body)) return send(*bad, res);
  const auto keyed = idem_request(*who, req, "/v1/payments/" + payment_id + "/refunds", "refund");
  if (const auto* bad = std::get_if<idem::Response>(&keyed)) return send(*bad, res);
  const idem::Request& request = std::get<idem::Request>(keyed);
  auto begun = client_.begin(request);
  if (const auto* early = std::get_if<idem::Response>(&begun)) return send(*early, res);
  const bool crash = config_.faults && req.get_header_value("X-Demo-Fault") == "crash-after-refund";
  send(refund_with(std::get<idem::Lease>(begun), request, payment_id, std::get<RefundBody>(body), crash), res);
}

idem::Response Service::refund_with(idem::Lease& lease, const idem::Request& request, const std::string& payment_id,
                                    const RefundBody& body, bool crash_after_refund) {
  const auto rows = client_.query(
      "SELECT order_id, charge_id, currency, amount_cents - refunded_cents, status"
      " FROM orders WHERE payment_id = $1::uuid AND tenant_id = $2",
      {payment_id, request.tenant});
  // Deterministic refusals are this request's answer: completed, and replayed to every retry.
  const auto refuse = [&](int status, const std::string& code, const std::string& title, const std::string& detail) {
    idem::Audit audit;
    audit.order_id = rows.empty() ? std::nullopt : rows.at(0).at(0);
    audit.handler_called = false;
    audit.local_status = "refused";
    return lease.complete(problem(status, code, title, detail, idem::Stored::yes), audit);
  };
  if (rows.empty()) return refuse(404, "ERR_PAYMENT_NOT_FOUND", "Payment not found", "no payment " + payment_id);
  // Asked in a statement of its own, never inside the query on orders: on Citus that query runs on
  // the shard, where the machine's read inside it is refused (docs/citus.md).
  const auto may_be_refunded = [&](const std::string& status) {
    return client_.query("SELECT idem.can_transition('order', $1, 'refunded')", {status}).at(0).at(0).value() == "t";
  };
  const std::string order_id = rows[0][0].value();
  const std::string charge_id = rows[0][1].value();
  const std::string processor_key = lease.handler_key();

  // A resume after the processor was called: what the processor did decides, not what the order
  // looks like now (it may have shipped since; the money has left either way).
  nlohmann::json refund;
  if (lease.resumed() && lease.recovery_point()) {
    const ProcessorAnswer found = processor_.find_refund(processor_key);
    if (found.kind != ProcessorAnswer::Kind::done) return released(lease, found);
    refund = found.body;
  }
  if (refund.is_null()) {
    if (!may_be_refunded(rows[0][4].value())) {
      return refuse(409, "ERR_INVALID_TRANSITION", "Invalid transition",
                    "order " + order_id + " is " + rows[0][4].value() + ": the order machine allows no refund from there");
    }
    if (body.currency != rows[0][2].value()) {
      return refuse(400, "ERR_REFUND_CURRENCY", "Wrong currency", "the payment is in " + rows[0][2].value());
    }
    const long refundable = std::stol(rows[0][3].value());
    if (body.amount_cents > refundable) {
      return refuse(400, "ERR_REFUND_EXCEEDS_PAYMENT", "Refund exceeds payment",
                    std::to_string(refundable) + " cents are left to refund");
    }
    if (!lease.resumed() || !lease.recovery_point()) lease.checkpoint("refunding", std::nullopt, /*handler_called=*/false);
    // The processor refuses a refund beyond what is left of the charge, whatever raced us here.
    const ProcessorAnswer a = processor_.refund(processor_key, charge_id, body.amount_cents);
    if (a.kind == ProcessorAnswer::Kind::unavailable || a.kind == ProcessorAnswer::Kind::timed_out) {
      return released(lease, a);
    }
    if (a.kind == ProcessorAnswer::Kind::refused) {
      const std::string code = a.body.value("error", nlohmann::json::object()).value("code", std::string("refused"));
      return refuse(400, "ERR_REFUND_REFUSED", "Refund refused", "the processor answered " + code);
    }
    refund = a.body;
    if (crash_after_refund) std::_Exit(70);  // the test's crash: refunded, nothing recorded after
  }
  const std::string refund_id = refund.value("id", std::string());
  lease.checkpoint("refunded", nlohmann::json{{"refund_id", refund_id}, {"charge_id", charge_id}}.dump());
  return lease.complete([&](idem::Attempt& t) {
    // The order as it is now, locked: concurrent refunds of one payment add up here, one after
    // the other, and whichever brings the total to the amount moves the order to refunded.
    const auto now = t.exec(
        "SELECT status, amount_cents - refunded_cents - $2 FROM orders WHERE tenant_id = $3 AND order_id = $1 FOR UPDATE",
        {order_id, std::to_string(body.amount_cents), request.tenant});
    const std::string status = now.at(0).at(0).value();
    const bool fully = std::stol(now.at(0).at(1).value()) <= 0;
    const bool can_move = t.exec("SELECT idem.can_transition('order', $1, 'refunded')", {status}).at(0).at(0).value() == "t";
    t.exec("INSERT INTO refunds (refund_id, payment_id, tenant_id, amount_cents, currency, reason)"
           " VALUES ($1, $2::uuid, $3, $4, $5, $6)",
           {refund_id, payment_id, request.tenant, std::to_string(body.amount_cents), body.currency, body.reason});
    t.exec(std::string("UPDATE orders SET refunded_cents = refunded_cents + $2") +
               (fully && can_move ? ", status = 'refunded'" : "") + " WHERE tenant_id = $3 AND order_id = $1",
           {order_id, std::to_string(body.amount_cents), request.tenant});
    // A refund the processor made after the order moved on (it shipped meanwhile) is recorded as
    // it happened; the order keeps its state, and the audit says so for the operator.
    const std::string order_status = fully && can_move ? "refunded" : status;
    const std::string local_status = !fully ? "partially_refunded" : can_move ? "refunded" : "refunded_while_" + status;
    t.record({order_id,
              nlohmann::json{{"refund_id", refund_id}, {"charge_id", charge_id}, {"amount_cents", body.amount_cents},
                             {"currency", body.currency}}.dump(),
              local_status, true});
    const nlohmann::json out = {{"id", refund_id},
                                {"object", "refund"},
                                {"payment_id", payment_id},
                                {"order_id", order_id},
                                {"order_status", order_status},
                                {"amount_cents", body.amount_cents},
                                {"currency", body.currency},
                                {"reason", body.reason},
                                {"status", "succeeded"}};
    return json_response(201, out.dump(), "/v1/payments/" + payment_id + "/refunds/" + refund_id);
  });
}

}  // namespace checkout
