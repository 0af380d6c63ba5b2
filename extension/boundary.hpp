// The single C++ -> PostgreSQL error boundary. Every SQL-callable function is
//   IDEM_SQL_FUNCTION(idem_foo, idem::foo_impl)
// (below), which declares the symbol and calls idem::Invoke.
// Invoke runs the C++ body; any exception is turned into plain data inside the catch, the catch
// scope is left (so every destructor has run), and only then is ereport(ERROR) raised.
#pragma once

#include <cstring>
#include <new>

#include "core/error.hpp"
#include "extension/pg/pg_error.hpp"
#include "extension/pg/postgres.hpp"

namespace idem {

namespace boundary_detail {

struct Failure {
  char sqlstate[6] = "XX000";
  char message[1024] = {0};
  char hint[512] = {0};
  char detail[1024] = {0};
  char schema[NAMEDATALEN] = {0};  // the error fields of a StandardError (empty when unset)
  char table[NAMEDATALEN] = {0};
  char constraint[NAMEDATALEN] = {0};
  ErrorData* pg_error = nullptr;  // set when a PostgreSQL error is re-raised as it was
};

inline void copy_text(char* dst, std::size_t cap, const char* src) noexcept {
  if (src == nullptr) src = "";
  const std::size_t n = utf8_clip_length(src, std::strlen(src), cap - 1);
  std::memcpy(dst, src, n);
  dst[n] = '\0';
}

[[noreturn]] void raise(const Failure& failure);

}  // namespace boundary_detail

// The same boundary for a body that is not an SQL function (a transaction callback): returns
// what body returns, or raises its failure once every C++ frame of it is gone.
template <typename Body>
auto Guard(Body body) noexcept -> decltype(body()) {
  boundary_detail::Failure failure;
  try {
    return body();
  } catch (const Error& e) {
    boundary_detail::copy_text(failure.sqlstate, sizeof failure.sqlstate, error_sqlstate(e.code()));
    boundary_detail::copy_text(failure.message, sizeof failure.message, e.what());
    boundary_detail::copy_text(failure.hint, sizeof failure.hint, e.hint().c_str());
  } catch (const StandardError& e) {
    boundary_detail::copy_text(failure.sqlstate, sizeof failure.sqlstate, e.sqlstate());
    boundary_detail::copy_text(failure.message, sizeof failure.message, e.what());
    boundary_detail::copy_text(failure.detail, sizeof failure.detail, e.fields().detail.c_str());
    boundary_detail::copy_text(failure.schema, sizeof failure.schema, e.fields().schema.c_str());
    boundary_detail::copy_text(failure.table, sizeof failure.table, e.fields().table.c_str());
    boundary_detail::copy_text(failure.constraint, sizeof failure.constraint, e.fields().constraint.c_str());
  } catch (const pg::PgError& e) {
    failure.pg_error = e.data();
  } catch (const std::bad_alloc&) {
    boundary_detail::copy_text(failure.sqlstate, sizeof failure.sqlstate, error_sqlstate(ErrorCode::OutOfMemory));
    boundary_detail::copy_text(failure.message, sizeof failure.message, "ERR_OUT_OF_MEMORY: out of memory in pg_idempotency");
  } catch (const std::exception& e) {
    boundary_detail::copy_text(failure.sqlstate, sizeof failure.sqlstate, error_sqlstate(ErrorCode::Internal));
    char text[2 * sizeof failure.message];  // longer than the message: copy_text clips on a character
    snprintf(text, sizeof text, "ERR_INTERNAL: unexpected C++ exception: %s", e.what());
    boundary_detail::copy_text(failure.message, sizeof failure.message, text);
  } catch (...) {
    boundary_detail::copy_text(failure.sqlstate, sizeof failure.sqlstate, error_sqlstate(ErrorCode::Internal));
    boundary_detail::copy_text(failure.message, sizeof failure.message, "ERR_INTERNAL: unexpected non-standard C++ exception");
  }
  // Out of every catch scope: the exception object and all C++ frames of body are gone.
  boundary_detail::raise(failure);
}

template <typename Impl>
Datum Invoke(Impl impl, FunctionCallInfo fcinfo) noexcept {
  return Guard([&] { return impl(fcinfo); });
}

}  // namespace idem

// IDEM_SQL_FUNCTION(idem_foo, idem::foo): the C symbol the SQL definition names
// (AS 'MODULE_PATHNAME', 'idem_foo'), running idem::foo(FunctionCallInfo) through Invoke. The
// one way a function of ours becomes SQL-callable.
#define IDEM_SQL_FUNCTION(symbol, impl)                                                   \
  extern "C" {                                                                            \
  PG_FUNCTION_INFO_V1(symbol);                                                            \
  Datum symbol(PG_FUNCTION_ARGS) { return idem::Invoke(impl, fcinfo); }                   \
  }

namespace idem {

}  // namespace idem
