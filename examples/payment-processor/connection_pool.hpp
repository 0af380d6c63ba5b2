// A few libpqxx connections shared by the HTTP worker threads, one borrower at a time. A broken
// connection is dropped when returned and a new one opened on demand, so the processor survives
// a database restart.
#pragma once

#include <pqxx/pqxx>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace processor {

class ConnectionPool {
 public:
  using OnConnect = std::function<void(pqxx::connection&)>;

  ConnectionPool(std::string url, size_t size, OnConnect on_connect);

  // A borrowed connection; goes back to the pool when destroyed.
  class Lease {
   public:
    Lease(ConnectionPool& pool, std::unique_ptr<pqxx::connection> connection);
    Lease(Lease&&) = default;
    ~Lease();
    pqxx::connection& operator*() { return *connection_; }

   private:
    ConnectionPool* pool_;
    std::unique_ptr<pqxx::connection> connection_;
  };

  // Waits up to kAcquireTimeout for a free connection, then throws std::runtime_error.
  Lease acquire();

 private:
  static constexpr std::chrono::seconds kAcquireTimeout{10};

  void give_back(std::unique_ptr<pqxx::connection> connection);

  const std::string url_;
  const size_t size_;
  const OnConnect on_connect_;
  std::mutex mutex_;
  std::condition_variable returned_;
  std::vector<std::unique_ptr<pqxx::connection>> idle_;
  size_t open_ = 0;  // idle plus lent
};

// Runs f(tx) in one READ COMMITTED transaction on a pooled connection, commits, returns f's result.
template <class F>
auto in_transaction(ConnectionPool& pool, F&& f) {
  auto lease = pool.acquire();
  pqxx::work tx(*lease);
  auto result = f(tx);
  tx.commit();
  return result;
}

}  // namespace processor
