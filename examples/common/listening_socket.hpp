// Two fixes for the listening socket of Debian's cpp-httplib 0.11.4, a compiled library: its
// listen() backlog is fixed at 5 (CPPHTTPLIB_LISTEN_BACKLOG is read when the .so is built), so a
// burst of 50 connections finds the accept queue full; and it sets SO_REUSEPORT, so a second
// server on a port in use shares it silently.
#pragma once

namespace demo_common {

// False when a server already listens on host:port (IPv4; other hosts are left to httplib).
// Servers check this first and refuse: a second one would share the port silently (and answer
// half the requests with another secret).
bool port_is_free(const char* host, int port);

// Raises the backlog of this process's listening TCP socket on `port`; false if none is found.
bool widen_listen_backlog(int port, int backlog = 512);

}  // namespace demo_common
