// The libpqxx side of pq.hpp: connections, transactions at a chosen isolation level, parameters
// as text, and every pqxx exception turned into a DbError carrying its SQLSTATE.
#include "tests/integration/pq.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <pqxx/pqxx>

namespace idem::it {
namespace {

std::string sqlstate_of_pqxx(const std::exception& e) {
  // 6.4 raises these two for 40001/40P01 and they are not sql_error: recognise them by type.
  if (dynamic_cast<const pqxx::serialization_failure*>(&e)) return "40001";
  if (dynamic_cast<const pqxx::deadlock_detected*>(&e)) return "40P01";
  if (dynamic_cast<const pqxx::statement_completion_unknown*>(&e)) return "40003";
  if (dynamic_cast<const pqxx::transaction_rollback*>(&e)) return "40000";
  if (auto* s = dynamic_cast<const pqxx::sql_error*>(&e)) return s->sqlstate();
  if (dynamic_cast<const pqxx::broken_connection*>(&e)) return "08006";
  return "";
}

// Runs f, turning whatever pqxx throws into a DbError.
template <typename F>
auto guarded(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const DbError&) {
    throw;
  } catch (const pqxx::in_doubt_error& e) {
    throw DbError("", e.what(), /*in_doubt=*/true);
  } catch (const std::exception& e) {
    throw DbError(sqlstate_of_pqxx(e), e.what());
  }
}

Result to_result(const pqxx::result& r) {
  std::vector<std::string> columns;
  for (pqxx::row::size_type c = 0; c < r.columns(); ++c) columns.emplace_back(r.column_name(c));
  std::vector<std::vector<Param>> rows;
  rows.reserve(r.size());
  for (const auto& row : r) {
    std::vector<Param> cells;
    cells.reserve(row.size());
    for (const auto& field : row) {
      if (field.is_null()) {
        cells.emplace_back(std::nullopt);
      } else {
        cells.emplace_back(std::string(field.c_str(), field.size()));
      }
    }
    rows.push_back(std::move(cells));
  }
  return Result(std::move(columns), std::move(rows));
}

// Text parameters never contain NUL (bytea goes as hex), so C strings carry them whole.
std::vector<const char*> pointers(const Params& params) {
  std::vector<const char*> out;
  out.reserve(params.size());
  for (const auto& p : params) out.push_back(p ? p->c_str() : nullptr);
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  throw std::runtime_error(std::string("bytea_bytes: not a hex digit: ") + c);
}

}  // namespace

std::string sqlstate_of(const std::exception& e) {
  if (auto* d = dynamic_cast<const DbError*>(&e)) return d->sqlstate();
  return sqlstate_of_pqxx(e);
}

bool is_retryable(const std::exception& e) {
  const std::string state = sqlstate_of(e);
  return state == "40001" || state == "40P01";
}

Param bytea_param(std::string_view bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\\x";
  out.reserve(2 + 2 * bytes.size());
  for (unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 0xF];
  }
  return out;
}

std::string bytea_bytes(const std::string& text) {
  if (text.size() < 2 || text[0] != '\\' || text[1] != 'x' || text.size() % 2 != 0) {
    throw std::runtime_error("bytea_bytes: not bytea hex output: " + text.substr(0, 40));
  }
  std::string out;
  out.reserve(text.size() / 2 - 1);
  for (std::size_t i = 2; i < text.size(); i += 2) {
    out += static_cast<char>(hex_digit(text[i]) * 16 + hex_digit(text[i + 1]));
  }
  return out;
}

const Param& Result::cell(std::size_t row, const std::string& column) const {
  if (row >= rows_.size()) throw std::out_of_range("Result: no row " + std::to_string(row));
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    if (columns_[c] == column) return rows_[row][c];
  }
  throw std::out_of_range("Result: no column " + column);
}

bool Result::is_null(std::size_t row, const std::string& column) const {
  return !cell(row, column).has_value();
}

std::string Result::text(std::size_t row, const std::string& column) const {
  const Param& v = cell(row, column);
  if (!v) throw std::runtime_error("Result: column " + column + " is NULL");
  return *v;
}

int Result::integer(std::size_t row, const std::string& column) const {
  return std::stoi(text(row, column));
}

std::string Result::bytes(std::size_t row, const std::string& column) const {
  return bytea_bytes(text(row, column));
}

const char* isolation_name(Isolation level) {
  switch (level) {
    case Isolation::read_committed: return "READ COMMITTED";
    case Isolation::repeatable_read: return "REPEATABLE READ";
    case Isolation::serializable: return "SERIALIZABLE";
  }
  return "?";
}

struct Transaction::Impl {
  std::unique_ptr<pqxx::dbtransaction> tx;
};

Transaction::Transaction(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Transaction::~Transaction() {
  try {
    impl_->tx.reset();  // pqxx rolls back an open transaction here
  } catch (...) {
  }
}

Result Transaction::exec(const std::string& sql, const Params& params) {
  return guarded([&] {
    const auto ptrs = pointers(params);
    return to_result(impl_->tx->exec_params(sql, pqxx::prepare::make_dynamic_params(ptrs)));
  });
}

Result Transaction::exec_prepared(const std::string& name, const Params& params) {
  return guarded([&] {
    const auto ptrs = pointers(params);
    return to_result(impl_->tx->exec_prepared(name, pqxx::prepare::make_dynamic_params(ptrs)));
  });
}

void Transaction::commit() {
  guarded([&] { impl_->tx->commit(); });
}

void Transaction::abort() {
  guarded([&] { impl_->tx->abort(); });
}

struct Connection::Impl {
  explicit Impl(const std::string& url) : conn(url) {}
  pqxx::connection conn;
};

Connection::Connection(const std::string& url)
    : impl_(guarded([&] { return std::make_unique<Impl>(url); })) {}

Connection::~Connection() = default;

void Connection::prepare(const std::string& name, const std::string& sql) {
  guarded([&] {
    impl_->conn.prepare(name, sql);
    impl_->conn.prepare_now(name);  // a typo fails here, not in the middle of a run
  });
}

Result Connection::exec(const std::string& sql, const Params& params) {
  return guarded([&] {
    pqxx::nontransaction tx(impl_->conn);
    const auto ptrs = pointers(params);
    return to_result(tx.exec_params(sql, pqxx::prepare::make_dynamic_params(ptrs)));
  });
}

std::unique_ptr<Transaction> Connection::begin(Isolation level) {
  return guarded([&] {
    auto impl = std::make_unique<Transaction::Impl>();
    switch (level) {
      case Isolation::read_committed:
        impl->tx = std::make_unique<pqxx::transaction<pqxx::read_committed>>(impl_->conn);
        break;
      case Isolation::repeatable_read:
        impl->tx = std::make_unique<pqxx::transaction<pqxx::repeatable_read>>(impl_->conn);
        break;
      case Isolation::serializable:
        impl->tx = std::make_unique<pqxx::transaction<pqxx::serializable>>(impl_->conn);
        break;
    }
    return std::unique_ptr<Transaction>(new Transaction(std::move(impl)));
  });
}

std::string test_url() {
  const char* url = std::getenv("IDEM_TEST_URL");
  if (url == nullptr || *url == '\0') {
    throw std::runtime_error(
        "IDEM_TEST_URL is not set: export it to a libpq URI of a PostgreSQL 15 server with "
        "pg_idempotency installed, e.g. IDEM_TEST_URL=$(scripts/pg.sh url)");
  }
  return url;
}

std::string url_with_database(const std::string& url, const std::string& database) {
  const auto scheme = url.find("://");
  if (scheme == std::string::npos) {
    throw std::runtime_error("IDEM_TEST_URL must be a URI (postgresql://...), got " + url);
  }
  const auto query = url.find('?', scheme + 3);
  const auto authority_end = url.find('/', scheme + 3);
  const std::string tail = query == std::string::npos ? "" : url.substr(query);
  const auto stop = std::min(authority_end, query);
  return url.substr(0, stop) + "/" + database + tail;
}

ScratchDatabase::ScratchDatabase() : admin_url_(test_url()) {
  static std::atomic<int> counter{0};
  name_ = "idem_it_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
  url_ = url_with_database(admin_url_, name_);
  Connection admin(admin_url_);
  admin.exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
  admin.exec("CREATE DATABASE " + name_);
  Connection db(url_);
  db.exec("CREATE EXTENSION pg_idempotency");
}

ScratchDatabase::~ScratchDatabase() {
  try {
    Connection admin(admin_url_);
    admin.exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
  } catch (...) {
    // A leftover idem_it_* database is harmless; a throwing destructor is not.
  }
}

}  // namespace idem::it
