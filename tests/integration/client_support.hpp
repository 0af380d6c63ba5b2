// Shared by the client_* integration tests: a scratch database with an orders table and a
// topic, requests, and a counting handler.
#pragma once

#include <atomic>
#include <string>

#include "idem/client.hpp"
#include "tests/integration/pq.hpp"

namespace idem::it {

// A ScratchDatabase with `orders(id text primary key, amount int)` and topic `orders.created`.
class ClientDatabase {
 public:
  ClientDatabase() {
    Connection c(db_.url());
    c.exec("CREATE TABLE orders (id text PRIMARY KEY, amount integer NOT NULL)");
    c.exec("SELECT idem.create_topic('orders.created')");
  }
  const std::string& url() const { return db_.url(); }
  // `url` with application_name set, so a test can find (and terminate) the client's backends.
  std::string tagged_url(const std::string& application_name) const {
    return url() + (url().find('?') == std::string::npos ? "?" : "&") + "application_name=" + application_name;
  }
  long count(const std::string& sql) const {
    Connection c(db_.url());
    return std::stol(c.exec(sql).text(0, "count"));
  }

 private:
  ScratchDatabase db_;
};

inline Request order_request(const std::string& key, const std::string& body = R"({"amount":1999,"cart":"c_42"})") {
  Request r;
  r.tenant = "acme";
  r.caller = "checkout";
  r.method = "POST";
  r.route = "/v1/orders";
  r.idempotency_key = key;
  r.body = body;
  return r;
}

// The bytes a handler answers with: binary body (NUL, 0xFF, CR LF), repeated and ordered headers.
inline Response created_response(const std::string& order_id) {
  Response r;
  r.status = 201;
  r.headers = {{"Location", "/v1/orders/" + order_id},
               {"Content-Type", "application/octet-stream"},
               {"Set-Cookie", "a=1"},
               {"Set-Cookie", "b=2"}};
  r.body = std::string("order ", 6) + order_id + std::string("\0\xff\r\n\\x00", 8);
  return r;
}

// Inserts the order and answers created_response; counts its runs.
inline Client::Handler order_handler(std::atomic<int>& runs, const std::string& order_id) {
  return [&runs, order_id](Attempt& a) {
    ++runs;
    a.exec("INSERT INTO orders VALUES ($1, $2)", {order_id, "1999"});
    return created_response(order_id);
  };
}

inline std::vector<Header> with_replay_headers(std::vector<Header> h) {
  h.push_back({"X-Cache-Lookup", "IDEMPOTENT-HIT"});
  h.push_back({"Idempotent-Replayed", "true"});
  return h;
}

}  // namespace idem::it
