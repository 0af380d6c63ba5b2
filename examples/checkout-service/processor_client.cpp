#include "processor_client.hpp"

#include <httplib.h>

#include <cstdio>

#include "metrics.hpp"

namespace checkout {
namespace {

std::string duration_text(std::chrono::milliseconds d) {
  return d.count() % 1000 == 0 ? std::to_string(d.count() / 1000) + " s" : std::to_string(d.count()) + " ms";
}

}  // namespace

ProcessorClient::ProcessorClient(std::string base_url, std::chrono::milliseconds timeout, Metrics* metrics)
    : base_url_(std::move(base_url)), timeout_(timeout), metrics_(metrics) {}

ProcessorAnswer ProcessorClient::call(const std::string& method, const std::string& path,
                                      const std::string& idempotency_key, const std::string& body) const {
  ProcessorAnswer a = send(method, path, idempotency_key, body);
  if (metrics_ != nullptr) {
    static const char* const kResults[] = {"done", "refused", "unavailable", "timed_out"};
    metrics_->processor_call(method + " " + path.substr(0, path.find('?')), kResults[static_cast<int>(a.kind)]);
  }
  return a;
}

ProcessorAnswer ProcessorClient::send(const std::string& method, const std::string& path,
                                      const std::string& idempotency_key, const std::string& body) const {
  httplib::Client http(base_url_);  // one per call: httplib's client is not shared across threads
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(timeout_);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(timeout_ - seconds);
  http.set_connection_timeout(seconds.count(), micros.count());
  http.set_read_timeout(seconds.count(), micros.count());
  http.set_write_timeout(seconds.count(), micros.count());
  httplib::Headers headers;
  if (!idempotency_key.empty()) headers.emplace("Idempotency-Key", idempotency_key);
  const httplib::Result res =
      method == "GET" ? http.Get(path.c_str(), headers) : http.Post(path.c_str(), headers, body, "application/json");
  ProcessorAnswer a;
  if (!res) {
    // cpp-httplib's name for the failure ("Read", "Connection") is for the log, not for the caller.
    std::fprintf(stderr, "checkout-service: payment processor %s %s: %s\n", method.c_str(), path.c_str(),
                 httplib::to_string(res.error()).c_str());
    if (res.error() == httplib::Error::Read) {
      // Sent, then no answer in time (or the connection broke while waiting): it may have acted.
      a.kind = ProcessorAnswer::Kind::timed_out;
      a.error = "the payment processor did not answer within " + duration_text(timeout_) + "; it may have acted on the request";
    } else {
      a.kind = ProcessorAnswer::Kind::unavailable;
      a.error = res.error() == httplib::Error::Connection ? "the payment processor could not be reached"
                : res.error() == httplib::Error::Write     ? "the request could not be sent to the payment processor"
                                                           : "the payment processor could not be called";
    }
    return a;
  }
  a.status = res->status;
  a.body = nlohmann::json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  if (res->status >= 200 && res->status < 300 && !a.body.is_discarded()) {
    a.kind = ProcessorAnswer::Kind::done;
  } else if (res->status >= 400 && res->status < 500 && res->status != 408 && res->status != 429) {
    a.kind = ProcessorAnswer::Kind::refused;
  } else {
    a.kind = ProcessorAnswer::Kind::unavailable;
    a.error = "the payment processor answered " + std::to_string(res->status);
  }
  return a;
}

ProcessorAnswer ProcessorClient::charge(const std::string& idempotency_key, long amount_cents,
                                        const std::string& currency, const std::string& source,
                                        const nlohmann::json& metadata) const {
  const nlohmann::json body = {
      {"amount_cents", amount_cents}, {"currency", currency}, {"source", source}, {"metadata", metadata}};
  return call("POST", "/v1/charges", idempotency_key, body.dump());
}

namespace {

// The first element of a list answer; null when the list is empty.
ProcessorAnswer first_of(ProcessorAnswer a) {
  if (a.kind != ProcessorAnswer::Kind::done) return a;
  const nlohmann::json data = a.body.value("data", nlohmann::json::array());
  a.body = data.empty() ? nlohmann::json() : data.at(0);
  return a;
}

}  // namespace

ProcessorAnswer ProcessorClient::find_charge(const std::string& idempotency_key) const {
  return first_of(call("GET", "/v1/charges?idempotency_key=" + httplib::detail::encode_query_param(idempotency_key), "", ""));
}

ProcessorAnswer ProcessorClient::find_refund(const std::string& idempotency_key) const {
  return first_of(call("GET", "/v1/refunds?idempotency_key=" + httplib::detail::encode_query_param(idempotency_key), "", ""));
}

ProcessorAnswer ProcessorClient::refund(const std::string& idempotency_key, const std::string& charge_id,
                                        long amount_cents) const {
  const nlohmann::json body = {{"charge", charge_id}, {"amount_cents", amount_cents}};
  return call("POST", "/v1/refunds", idempotency_key, body.dump());
}

}  // namespace checkout
