// Debian's cpp-httplib 0.11.4 is a compiled library whose listen() backlog is fixed at 5
// (CPPHTTPLIB_LISTEN_BACKLOG is read when the .so is built), so a burst of 50 connections finds
// the accept queue full. Listening again on the bound socket with a larger backlog is allowed
// (listen(2) on a listening socket updates it); the socket is found by its port, as httplib does
// not expose it.
#pragma once

namespace demo_common {

// Raises the backlog of this process's listening TCP socket on `port`; false if none is found.
bool widen_listen_backlog(int port, int backlog = 512);

}  // namespace demo_common
