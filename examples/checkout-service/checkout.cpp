// POST /checkout/{session_id}/complete: charge once, record the order, emit its order_intent.
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "bodies.hpp"
#include "http_glue.hpp"
#include "service.hpp"

namespace checkout {
namespace {

// A declined card is the answer to this request: stored, and replayed to every retry.
idem::Response declined(idem::Lease& lease, const std::string& charge_id, const std::string& code) {
  idem::Audit audit;
  audit.handler_response = nlohmann::json{{"charge_id", charge_id}, {"error", code}}.dump();
  audit.local_status = "declined";
  return lease.complete(
      problem(402, "ERR_PAYMENT_DECLINED", "Payment declined", "the processor answered " + code, idem::Stored::yes), audit);
}

}  // namespace

void Service::checkout(const httplib::Request& req, httplib::Response& res) {
  const auto who = authenticate(req, res, config_.token_secret);
  if (!who) return;
  const std::string session_id = req.matches[1];
  const auto body = parse_checkout(req.body);
  if (const auto* bad = std::get_if<idem::Response>(&body)) return send(*bad, res);
  const auto keyed = idem_request(*who, req, "/checkout/" + session_id + "/complete", "create");
  if (const auto* bad = std::get_if<idem::Response>(&keyed)) return send(*bad, res);
  const idem::Request& request = std::get<idem::Request>(keyed);
  auto begun = client_.begin(request);
  if (const auto* early = std::get_if<idem::Response>(&begun)) return send(*early, res);  // replay, 409, 422, 400
  const bool crash = config_.faults && req.get_header_value("X-Demo-Fault") == "crash-after-charge";
  send(checkout_with(std::get<idem::Lease>(begun), request, session_id, std::get<CheckoutBody>(body), crash), res);
}

idem::Response Service::checkout_with(idem::Lease& lease, const idem::Request& request, const std::string& session_id,
                                      const CheckoutBody& body, bool crash_after_charge) {
  const std::string processor_key = lease.handler_key();
  nlohmann::json charge;
  if (lease.resumed() && lease.recovery_point()) {
    // An earlier attempt got as far as calling the processor: ask it before charging again.
    const ProcessorAnswer found = processor_.find_charge(processor_key);
    if (found.kind != ProcessorAnswer::Kind::done) return released(lease, found);
    charge = found.body;
  } else {
    lease.checkpoint("charging", std::nullopt, /*handler_called=*/false);
  }
  if (charge.is_null()) {
    const ProcessorAnswer a = processor_.charge(processor_key, body.amount_cents, body.currency, body.payment_method,
                                                {{"tenant", request.tenant}, {"session_id", session_id}});
    if (a.kind == ProcessorAnswer::Kind::unavailable || a.kind == ProcessorAnswer::Kind::timed_out) {
      return released(lease, a);
    }
    if (a.kind == ProcessorAnswer::Kind::refused) {
      const nlohmann::json error = a.body.value("error", nlohmann::json::object());
      return declined(lease, error.value("charge", std::string()), error.value("code", std::string("processor_refused")));
    }
    charge = a.body;
    if (crash_after_charge) std::_Exit(70);  // the demo's crash: charged, nothing recorded after
  }
  const std::string charge_id = charge.value("id", std::string());
  if (charge.value("status", std::string()) == "failed") return declined(lease, charge_id, "card_declined");
  lease.checkpoint("charged", nlohmann::json{{"charge_id", charge_id}}.dump());

  const bool needs_buyer = charge.value("status", std::string()) == "requires_action";
  return lease.complete([&](idem::Attempt& a) {
    const auto rows = a.exec(
        "INSERT INTO orders (order_id, tenant_id, session_id, payment_id, amount_cents, currency, charge_id, status)"
        " VALUES ('ord_' || left(encode(sha256(convert_to($1, 'UTF8')), 'hex'), 24), $2, $3, gen_random_uuid(),"
        " $4, $5, $6, 'created') RETURNING order_id, payment_id::text",
        {processor_key, request.tenant, session_id, std::to_string(body.amount_cents), body.currency, charge_id});
    const std::string order_id = rows.at(0).at(0).value();
    const std::string payment_id = rows.at(0).at(1).value();
    const std::string status = needs_buyer ? "created" : "confirmed";
    if (!needs_buyer) a.exec("UPDATE orders SET status = 'confirmed' WHERE tenant_id = $2 AND order_id = $1", {order_id, request.tenant});
    a.emit("order_intent",
           nlohmann::json{{"order_id", order_id}, {"tenant_id", request.tenant}, {"session_id", session_id},
                          {"idempotency_key", *request.idempotency_key}, {"payment_id", payment_id},
                          {"charge_id", charge_id}, {"amount_cents", body.amount_cents}, {"currency", body.currency},
                          {"status", status}}
               .dump(),
           order_id);
    // The amount beside the charge: idem.reconcile compares it with the processor's export.
    a.record({order_id,
              nlohmann::json{{"charge_id", charge_id}, {"amount_cents", body.amount_cents}, {"currency", body.currency}}.dump(),
              status, true});
    nlohmann::json out = {{"order_id", order_id}, {"payment_id", payment_id}, {"charge_id", charge_id},
                          {"status", status}, {"amount_cents", body.amount_cents}, {"currency", body.currency}};
    if (needs_buyer) {
      out["escalation"] = {{"reason", "buyer_action_required"},
                           {"continue_url", charge["next_action"]["redirect_to_url"].value("url", std::string())}};
    }
    return json_response(needs_buyer ? 202 : 201, out.dump(), "/v1/orders/" + order_id);
  });
}

}  // namespace checkout
