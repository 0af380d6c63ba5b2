// What the Citus client programs (tests/citus/*.cpp) share: a named check of an exact value,
// counted for the closing line, and a request of the demo's shape.
#pragma once

#include <iostream>
#include <string>

#include "idem/client.hpp"

namespace citus_checks {

inline int checks = 0, fails = 0;

inline void check(const std::string& name, const std::string& want, const std::string& got) {
  ++checks;
  if (want == got) {
    std::cout << "ok: " << name << '\n';
  } else {
    ++fails;
    std::cout << "FAILED: " << name << ": want '" << want << "', got '" << got << "'\n";
  }
}

// The closing line citus_test.sh reads, and the exit status.
inline int finish(const char* program) {
  std::cout << program << ": " << checks - fails << " of " << checks << " checks passed\n";
  return fails == 0 ? 0 : 1;
}

inline idem::Request request(const std::string& tenant, const std::string& key, const std::string& body) {
  idem::Request r;
  r.tenant = tenant;
  r.caller = "client-citus";
  r.method = "POST";
  r.route = "/v1/orders";
  r.idempotency_key = key;
  r.body = body;
  return r;
}

// One idempotent request whose attempt emits one event on the topic.
inline void emit(idem::Client& client, const std::string& topic, const std::string& tenant, const std::string& key,
                 const std::string& payload) {
  client.run(request(tenant, key, "{}"), [&](idem::Attempt& a) {
    a.emit(topic, payload);
    idem::Response r;
    r.status = 201;
    return r;
  });
}

}  // namespace citus_checks
