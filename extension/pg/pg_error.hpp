// A PostgreSQL error caught while C++ frames were live, carried as a C++ exception until those
// frames are gone; the boundary (boundary.hpp) re-raises it unchanged (same SQLSTATE and text).
// The guards here wrap one PostgreSQL call each, so no C++ object ever lives inside a sigsetjmp
// region (scripts/check-guards.sh keeps it so).
#pragma once

#include <exception>
#include <type_traits>

#include "extension/pg/postgres.hpp"

namespace idem::pg {

class PgError : public std::exception {
 public:
  explicit PgError(ErrorData* data) noexcept : data_(data) {}
  ErrorData* data() const noexcept { return data_; }
  const char* what() const noexcept override { return data_ && data_->message ? data_->message : "PostgreSQL error"; }

 private:
  ErrorData* data_;  // palloc'd in the caller's memory context by CopyErrorData
};

namespace detail {

// PG_TRY/PG_CATCH spelled for C++: runs f, and turns an elog(ERROR) inside it into a PgError
// thrown from here, once the saved stacks are restored. f holds nothing with a destructor and
// throws nothing (a longjmp would skip the one, and the other would leave PostgreSQL pointing at
// this frame's jump buffer), which call() and guarded() check at compile time where they can.
template <typename F>
auto run(F& f) -> decltype(f()) {
  sigjmp_buf* const saved_stack = PG_exception_stack;
  ErrorContextCallback* const saved_context = error_context_stack;
  const MemoryContext saved_memory = CurrentMemoryContext;
  sigjmp_buf local;
  if (sigsetjmp(local, 0) == 0) {
    PG_exception_stack = &local;
    // If f ever threw after all (a nested guard's PgError), PostgreSQL must not keep a pointer to
    // this frame's jump buffer: restore, then let it propagate. (No RAII guard here: a longjmp
    // back to `local` would skip its destructor.)
    try {
      if constexpr (std::is_void_v<decltype(f())>) {
        f();
        PG_exception_stack = saved_stack;
        error_context_stack = saved_context;
        return;
      } else {
        auto result = f();
        PG_exception_stack = saved_stack;
        error_context_stack = saved_context;
        return result;
      }
    } catch (...) {
      PG_exception_stack = saved_stack;
      error_context_stack = saved_context;
      throw;
    }
  }
  PG_exception_stack = saved_stack;
  error_context_stack = saved_context;
  MemoryContextSwitchTo(saved_memory);  // CopyErrorData may not run in ErrorContext
  ErrorData* data = CopyErrorData();
  FlushErrorState();
  throw PgError(data);
}

template <typename T>
constexpr bool kPlain = std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>;

}  // namespace detail

// pg::call(SPI_execute_plan, plan, values, nulls, false, 1): one PostgreSQL function (or a
// plain-C helper of ours named ..._unsafe) called with plain arguments, as pg_duckdb's
// PostgresFunctionGuard(f, args...). An elog(ERROR) inside becomes a PgError.
template <typename F, typename... A>
auto call(F f, A... args) -> decltype(f(args...)) {
  static_assert(std::is_pointer_v<F> && std::is_function_v<std::remove_pointer_t<F>>,
                "pg::call takes a function pointer: a lambda goes to pg::guarded, one expression long");
  static_assert((detail::kPlain<A> && ...), "pg::call: an argument with a destructor would outlive a longjmp");
  using R = decltype(f(args...));
  static_assert(std::is_void_v<R> || detail::kPlain<R>, "pg::call: the result must be plain data");
  auto invoke = [&]() -> R { return f(args...); };
  return detail::run(invoke);
}

// pg::guarded([&] { return PG_GETARG_JSONB_P(n); }): for the one PostgreSQL call a function
// pointer cannot name (a macro). One expression, nothing constructed in it.
template <typename F>
auto guarded(F&& f) -> decltype(f()) {
  static_assert(std::is_trivially_destructible_v<std::remove_reference_t<F>>,
                "pg::guarded: the lambda captures something with a destructor");
  static_assert(std::is_void_v<decltype(f())> || detail::kPlain<decltype(f())>, "pg::guarded: the result must be plain data");
  return detail::run(f);
}

namespace detail {
inline void raise_unsafe(const char* message) { elog(ERROR, "%s", message); }
}  // namespace detail

// An internal error raised as elog(ERROR) raises it (SQLSTATE XX000, this text), from C++ code
// that runs outside any guard: it travels as a PgError to the boundary like any other.
[[noreturn]] inline void raise_internal(const char* message) {
  call(detail::raise_unsafe, message);
  __builtin_unreachable();
}

}  // namespace idem::pg
