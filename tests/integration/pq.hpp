// Database access for the integration tests: the one place that knows libpqxx (6.4 on Debian 12).
// Only pq.cpp includes pqxx, so a move to libpqxx 7.x touches that file alone.
#pragma once

#include <cstddef>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace idem::it {

// Every database error reaches the tests as this, with the server's SQLSTATE ("" when unknown).
class DbError : public std::runtime_error {
 public:
  DbError(std::string sqlstate, const std::string& message, bool in_doubt = false)
      : std::runtime_error(message), sqlstate_(std::move(sqlstate)), in_doubt_(in_doubt) {}
  const std::string& sqlstate() const noexcept { return sqlstate_; }
  // The commit's outcome is unknown (the connection broke during COMMIT).
  bool in_doubt() const noexcept { return in_doubt_; }

 private:
  std::string sqlstate_;
  bool in_doubt_;
};

// SQLSTATE of any exception: DbError, or a pqxx type (serialization_failure and deadlock_detected
// carry no sqlstate() in 6.4, so they are recognised by type). "" when there is none.
std::string sqlstate_of(const std::exception& e);

// Serialization failure (40001) or deadlock (40P01): run the whole transaction again.
bool is_retryable(const std::exception& e);

// Statement parameters travel as text; std::nullopt is SQL NULL.
using Param = std::optional<std::string>;
using Params = std::vector<Param>;

// bytea in text format: "\x" and lower-case hex, so any byte (including 0) survives the trip.
Param bytea_param(std::string_view bytes);
// The raw bytes of a bytea column read in text format ("\x...").
std::string bytea_bytes(const std::string& text);

// A result read out in full: text cells, NULL as std::nullopt.
class Result {
 public:
  Result(std::vector<std::string> columns, std::vector<std::vector<Param>> rows)
      : columns_(std::move(columns)), rows_(std::move(rows)) {}
  std::size_t size() const noexcept { return rows_.size(); }
  bool is_null(std::size_t row, const std::string& column) const;
  // The cell as text; throws when it is NULL.
  std::string text(std::size_t row, const std::string& column) const;
  int integer(std::size_t row, const std::string& column) const;
  // A bytea cell decoded to its raw bytes.
  std::string bytes(std::size_t row, const std::string& column) const;

 private:
  const Param& cell(std::size_t row, const std::string& column) const;
  std::vector<std::string> columns_;
  std::vector<std::vector<Param>> rows_;
};

enum class Isolation { read_committed, repeatable_read, serializable };
const char* isolation_name(Isolation level);

class Connection;

// One transaction on one connection. Destroying it without commit() rolls back.
class Transaction {
 public:
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  Result exec(const std::string& sql, const Params& params = {});
  Result exec_prepared(const std::string& name, const Params& params = {});
  void commit();
  void abort();

 private:
  friend class Connection;
  struct Impl;
  explicit Transaction(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// One connection, used by one thread only.
class Connection {
 public:
  explicit Connection(const std::string& url);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Prepared once per connection, executed by name in any later transaction.
  void prepare(const std::string& name, const std::string& sql);
  // A statement in its own transaction (autocommit), e.g. CREATE DATABASE.
  Result exec(const std::string& sql, const Params& params = {});
  std::unique_ptr<Transaction> begin(Isolation level = Isolation::read_committed);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The server under test: IDEM_TEST_URL, or a DbError-free std::runtime_error when it is unset
// (the tests fail rather than skip without a database).
std::string test_url();
// `url` with its database name replaced (libpq URI form, postgresql://...).
std::string url_with_database(const std::string& url, const std::string& database);

// A database of its own for one test, with the extension created; dropped on destruction.
class ScratchDatabase {
 public:
  ScratchDatabase();
  ~ScratchDatabase();
  ScratchDatabase(const ScratchDatabase&) = delete;
  ScratchDatabase& operator=(const ScratchDatabase&) = delete;

  const std::string& name() const noexcept { return name_; }
  const std::string& url() const noexcept { return url_; }

 private:
  std::string admin_url_;
  std::string name_;
  std::string url_;
};

}  // namespace idem::it
