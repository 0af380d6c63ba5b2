// The HTTP API (README.md here): /v1/* behaves like a real processor, /_control/* is test-only.
#pragma once

#include <httplib.h>

#include <string>

#include "connection_pool.hpp"
#include "faults.hpp"
#include "http_support.hpp"

namespace processor {

// What the routes need: the database, the armed faults and where this processor is reachable.
struct Context {
  ConnectionPool& pool;
  FaultPlan& faults;
  std::string base_url;
};

// /v1/charges, /v1/refunds and /health.
void add_payment_routes(httplib::Server& server, Context& context);

// /_control/faults and /_control/reset.
void add_control_routes(httplib::Server& server, Context& context);

}  // namespace processor
