// A connection lost while COMMIT is on its way: run reports OutcomeUnknown, and the retry with the
// same key answers the replay (the COMMIT had landed) or runs the handler (it had not) — the
// business write is committed once either way. A TCP proxy between client and server cuts the
// connection at the COMMIT, before forwarding it or after the server's reply to it.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <thread>

#include "tests/integration/client_support.hpp"

namespace idem::it {
namespace {

enum class Cut { none, before_commit, after_commit_reply };

class CuttingProxy {
 public:
  explicit CuttingProxy(int server_port) : server_port_(server_port) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listen_fd_, 16) != 0) {
      throw std::runtime_error("proxy: cannot listen");
    }
    socklen_t len = sizeof a;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~CuttingProxy() {
    stopping_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    ::close(listen_fd_);
    acceptor_.join();
    std::lock_guard<std::mutex> lock(mutex_);
    for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
    for (auto& t : pumps_) t.join();
    for (int fd : fds_) ::close(fd);
  }
  int port() const { return port_; }
  void arm(Cut cut) { cut_ = cut; }
  bool fired() const { return fired_; }

 private:
  void accept_loop() {
    while (!stopping_) {
      const int client = ::accept(listen_fd_, nullptr, nullptr);
      if (client < 0) return;
      const int server = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      a.sin_port = htons(static_cast<uint16_t>(server_port_));
      if (::connect(server, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(client);
        ::close(server);
        continue;
      }
      std::lock_guard<std::mutex> lock(mutex_);
      fds_.push_back(client);
      fds_.push_back(server);
      auto awaiting_reply = std::make_shared<std::atomic<bool>>(false);
      pumps_.emplace_back([=] { to_server(client, server, *awaiting_reply); });
      pumps_.emplace_back([=] { to_client(server, client, *awaiting_reply); });
    }
  }

  void cut(int a, int b) {
    fired_ = true;
    cut_ = Cut::none;
    ::shutdown(a, SHUT_RDWR);
    ::shutdown(b, SHUT_RDWR);
  }

  void to_server(int client, int server, std::atomic<bool>& awaiting_reply) {
    // A simple-protocol Query message ending in COMMIT: "COMMIT\0" alone or, as run() sends
    // it, "EXECUTE idem_client_complete(...); COMMIT\0".
    static const std::string kCommit("COMMIT\0", 7);
    char buf[65536];
    for (;;) {
      const ssize_t n = ::recv(client, buf, sizeof buf, 0);
      if (n <= 0) break;
      const std::string chunk(buf, static_cast<std::size_t>(n));
      const bool commit = chunk.find(kCommit) != std::string::npos;
      if (commit && cut_ == Cut::before_commit) {
        cut(client, server);
        return;
      }
      if (commit && cut_ == Cut::after_commit_reply) awaiting_reply = true;
      if (::send(server, buf, static_cast<std::size_t>(n), MSG_NOSIGNAL) != n) break;
    }
    ::shutdown(server, SHUT_RDWR);
  }

  void to_client(int server, int client, std::atomic<bool>& awaiting_reply) {
    char buf[65536];
    for (;;) {
      const ssize_t n = ::recv(server, buf, sizeof buf, 0);
      if (n <= 0) break;
      if (awaiting_reply) {  // the server answered the COMMIT: it is durable, drop the answer
        cut(client, server);
        return;
      }
      if (::send(client, buf, static_cast<std::size_t>(n), MSG_NOSIGNAL) != n) break;
    }
    ::shutdown(client, SHUT_RDWR);
  }

  int server_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<Cut> cut_{Cut::none};
  std::atomic<bool> fired_{false};
  std::thread acceptor_;
  std::mutex mutex_;
  std::vector<int> fds_;
  std::vector<std::thread> pumps_;
};

// The port of a postgresql://user@host:port/db URI, and the URI with another port.
int port_of(const std::string& url) {
  const auto at = url.find('@');
  const auto colon = url.find(':', at);
  return std::stoi(url.substr(colon + 1, url.find('/', colon) - colon - 1));
}
std::string with_port(const std::string& url, int port) {
  const auto at = url.find('@');
  const auto colon = url.find(':', at);
  return url.substr(0, colon + 1) + std::to_string(port) + url.substr(url.find('/', colon));
}

const std::string kKey = "in-doubt-key-000000000001";

TEST(ClientInDoubt, ConnectionLostAfterTheCommitLandedRetryReplays) {
  ClientDatabase db;
  CuttingProxy proxy(port_of(db.url()));
  ClientOptions options;
  options.pool_size = 1;
  Client client(with_port(db.url(), proxy.port()), options);
  std::atomic<int> runs{0};
  proxy.arm(Cut::after_commit_reply);
  try {
    client.run(order_request(kKey), order_handler(runs, "ord_1"));
    FAIL() << "no exception";
  } catch (const OutcomeUnknown& e) {
    EXPECT_STREQ(e.what(), "ERR_CLIENT_OUTCOME_UNKNOWN: outcome unknown — retry with the same key");
    EXPECT_EQ(e.sqlstate(), "08007");
  }
  ASSERT_TRUE(proxy.fired());
  EXPECT_EQ(db.count("SELECT count(*) FROM orders"), 1);  // it had committed
  const Response retry = client.run(order_request(kKey), order_handler(runs, "ord_1"));
  EXPECT_EQ(retry.status, 201);
  EXPECT_EQ(retry.headers, with_replay_headers(created_response("ord_1").headers));
  EXPECT_EQ(retry.body, created_response("ord_1").body);
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(client.stats().connections_discarded, 1u);
}

TEST(ClientInDoubt, ConnectionLostBeforeTheCommitArrivedRetryRunsTheHandlerOnce) {
  ClientDatabase db;
  CuttingProxy proxy(port_of(db.url()));
  ClientOptions options;
  options.pool_size = 1;
  Client client(with_port(db.url(), proxy.port()), options);
  std::atomic<int> runs{0};
  proxy.arm(Cut::before_commit);
  EXPECT_THROW(client.run(order_request(kKey), order_handler(runs, "ord_1")), OutcomeUnknown);
  ASSERT_TRUE(proxy.fired());
  // The server rolls the orphaned transaction back once it sees the client gone; until then the
  // key is held by an open transaction (409).
  Response retry;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {
    retry = client.run(order_request(kKey), order_handler(runs, "ord_1"));
    if (retry.status != 409) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() < until);
  EXPECT_EQ(retry.status, 201);
  EXPECT_EQ(retry.headers, created_response("ord_1").headers);  // the handler's own: it ran now
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(db.count("SELECT count(*) FROM orders"), 1);  // committed once
  const Response replay = client.run(order_request(kKey), order_handler(runs, "ord_1"));
  EXPECT_EQ(replay.headers, with_replay_headers(created_response("ord_1").headers));
  EXPECT_EQ(runs, 2);
}

// The backend terminated while it runs the COMMIT (held there by a deferred constraint trigger
// that sleeps): the transaction is aborted, the client cannot know it.
TEST(ClientInDoubt, BackendTerminatedDuringCommitRetryRunsTheHandlerOnce) {
  ClientDatabase db;
  Connection admin(db.url());
  admin.exec(
      "CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS"
      " $$ BEGIN PERFORM pg_sleep(5); RETURN NULL; END $$");
  admin.exec(
      "CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON orders DEFERRABLE INITIALLY DEFERRED"
      " FOR EACH ROW WHEN (NEW.amount = 13) EXECUTE FUNCTION slow_commit()");
  ClientOptions options;
  options.pool_size = 1;
  Client client(db.tagged_url("idem_client_in_doubt"), options);
  int runs = 0;
  const auto handler = [&](Attempt& a) {
    a.exec("INSERT INTO orders VALUES ('ord_1', $1)", {std::to_string(++runs == 1 ? 13 : 1)});
    return created_response("ord_1");
  };
  std::thread killer([&] {
    Connection k(db.url());
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < until) {
      const Result r = k.exec(
          "SELECT count(pg_terminate_backend(pid)) AS count FROM pg_stat_activity"
          " WHERE application_name = 'idem_client_in_doubt' AND query LIKE '%; COMMIT' AND state = 'active'");
      if (r.text(0, "count") == "1") return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  EXPECT_THROW(client.run(order_request(kKey), handler), OutcomeUnknown);
  killer.join();
  EXPECT_EQ(db.count("SELECT count(*) FROM orders"), 0);
  const Response retry = client.run(order_request(kKey), handler);
  EXPECT_EQ(retry.status, 201);
  EXPECT_EQ(retry.headers, created_response("ord_1").headers);
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(db.count("SELECT count(*) FROM orders"), 1);
}

}  // namespace
}  // namespace idem::it
