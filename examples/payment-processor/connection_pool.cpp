// The connection pool; see connection_pool.hpp.
#include "connection_pool.hpp"

#include <poll.h>

#include <stdexcept>

namespace processor {
namespace {

// An idle connection has nothing to read: if its socket is readable, the server closed it (a
// restart, pg_terminate_backend) and using it would fail one request for nothing.
bool still_open(pqxx::connection& connection) {
  if (!connection.is_open()) return false;
  pollfd socket{connection.sock(), POLLIN, 0};
  return poll(&socket, 1, 0) == 0;
}

}  // namespace

ConnectionPool::ConnectionPool(std::string url, size_t size, OnConnect on_connect)
    : url_(std::move(url)), size_(size), on_connect_(std::move(on_connect)) {}

ConnectionPool::Lease::Lease(ConnectionPool& pool, std::unique_ptr<pqxx::connection> connection)
    : pool_(&pool), connection_(std::move(connection)) {}

ConnectionPool::Lease::~Lease() {
  if (connection_) pool_->give_back(std::move(connection_));
}

ConnectionPool::Lease ConnectionPool::acquire() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!returned_.wait_for(lock, kAcquireTimeout, [&] { return !idle_.empty() || open_ < size_; }))
    throw std::runtime_error("all database connections stayed busy for 10 s");
  while (!idle_.empty()) {
    auto connection = std::move(idle_.back());
    idle_.pop_back();
    if (still_open(*connection)) return Lease(*this, std::move(connection));
    --open_;
  }
  ++open_;
  lock.unlock();  // connecting takes a round trip or more: let others borrow meanwhile
  try {
    auto connection = std::make_unique<pqxx::connection>(url_);
    on_connect_(*connection);
    return Lease(*this, std::move(connection));
  } catch (...) {
    lock.lock();
    --open_;
    returned_.notify_one();
    throw;
  }
}

void ConnectionPool::give_back(std::unique_ptr<pqxx::connection> connection) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (connection->is_open()) idle_.push_back(std::move(connection));
  else --open_;  // broken: the next borrower opens a fresh one
  returned_.notify_one();
}

}  // namespace processor
