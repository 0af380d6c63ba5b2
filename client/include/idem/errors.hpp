// The exceptions of the client library: one class per error a service branches on, each carrying
// our stable error name (docs/errors.md) and the SQLSTATE the server raised it with.
// The base is idem::ClientError, not idem::Error: core/ already defines idem::Error (the
// extension's error type), and two classes of one name in one program would break catch.
#pragma once

#include <stdexcept>
#include <string>

namespace idem {

class ClientError : public std::runtime_error {
 public:
  // name: ERR_... (ours) or a client-side name; sqlstate: five characters, "" when none.
  // detail: the message without the name; what() is "<name>: <detail>".
  ClientError(std::string name, std::string sqlstate, std::string detail, std::string hint = {});
  const std::string& name() const noexcept { return name_; }
  const std::string& sqlstate() const noexcept { return sqlstate_; }
  const std::string& detail() const noexcept { return detail_; }
  const std::string& hint() const noexcept { return hint_; }

 private:
  std::string name_;
  std::string sqlstate_;
  std::string detail_;
  std::string hint_;
};

// Our IK0xx errors, raised by the server or found by the client's own checks.
#define IDEM_CLIENT_ERROR(Class)                            \
  class Class : public ClientError {                        \
   public:                                                  \
    using ClientError::ClientError;                         \
  }
IDEM_CLIENT_ERROR(KeyMissing);          // ERR_IDEMPOTENCY_KEY_MISSING       IK001
IDEM_CLIENT_ERROR(KeyInvalid);          // ERR_IDEMPOTENCY_KEY_INVALID       IK002
IDEM_CLIENT_ERROR(InProgress);          // ERR_IDEMPOTENCY_IN_PROGRESS       IK003
IDEM_CLIENT_ERROR(PayloadMismatch);     // ERR_IDEMPOTENCY_PAYLOAD_MISMATCH  IK004
IDEM_CLIENT_ERROR(LeaseLost);           // ERR_LEASE_LOST                    IK005
IDEM_CLIENT_ERROR(InvalidTransition);   // ERR_INVALID_TRANSITION            IK006
IDEM_CLIENT_ERROR(NonAtomicStore);      // ERR_NON_ATOMIC_IDEMPOTENCY_STORE  IK007
IDEM_CLIENT_ERROR(InvalidPayload);      // IK009 number precision, IK010 JSON, IK013 too large
IDEM_CLIENT_ERROR(InvalidArgument);     // IK011 JSON pointer, IK012 argument
IDEM_CLIENT_ERROR(TenantForbidden);     // ERR_TENANT_FORBIDDEN              IK024 (a role bound to other tenants)
// Any other SQLSTATE (ours or PostgreSQL's: 40001, 42501, 23505, ...).
IDEM_CLIENT_ERROR(DatabaseError);
// The connection broke before COMMIT was sent: nothing was committed, a retry is safe.
IDEM_CLIENT_ERROR(ConnectionLost);      // 08006
// No pooled connection within ClientOptions::acquire_timeout.
IDEM_CLIENT_ERROR(PoolTimeout);         // ERR_CLIENT_POOL_TIMEOUT, no SQLSTATE
#undef IDEM_CLIENT_ERROR

// The connection broke while COMMIT was on its way: the transaction may or may not have
// committed. Never swallowed; retrying with the same key answers replay or runs it (once).
class OutcomeUnknown : public ClientError {
 public:
  explicit OutcomeUnknown(std::string cause);
  const std::string& cause() const noexcept { return cause_; }

 private:
  std::string cause_;
};

// Throws the class that `sqlstate` maps to (IK001 -> KeyMissing, ..., else DatabaseError).
// message: the server's primary message ("ERR_LEASE_LOST: ..."), its name prefix stripped here.
[[noreturn]] void throw_for_sqlstate(const std::string& sqlstate, const std::string& message,
                                     const std::string& hint = {});

}  // namespace idem
