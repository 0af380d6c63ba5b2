// A PostgreSQL error caught while C++ frames were live, carried as a C++ exception until those
// frames are gone; the boundary (boundary.hpp) re-raises it unchanged (same SQLSTATE and text).
#pragma once

#include <exception>

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

// Runs `f` (which calls PostgreSQL and must itself hold nothing with a destructor and throw no C++
// exception) so that an elog(ERROR) inside it becomes a PgError thrown from here. This is
// PG_TRY/PG_CATCH spelled for C++: the saved stacks are restored before anything is thrown.
template <typename F>
auto guarded(F&& f) -> decltype(f()) {
  sigjmp_buf* const saved_stack = PG_exception_stack;
  ErrorContextCallback* const saved_context = error_context_stack;
  const MemoryContext saved_memory = CurrentMemoryContext;
  sigjmp_buf local;
  if (sigsetjmp(local, 0) == 0) {
    PG_exception_stack = &local;
    // f must not throw, but if it ever did, PostgreSQL must not keep a pointer to this frame's
    // jump buffer: restore, then let it propagate. (No RAII guard here: a longjmp back to
    // `local` would skip its destructor.)
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

}  // namespace idem::pg
