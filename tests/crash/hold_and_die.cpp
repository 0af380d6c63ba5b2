// The holder that dies holding its lease (hold_and_die.hpp).
#include "hold_and_die.hpp"

#include <unistd.h>

#include <cstdio>
#include <variant>

#include "idem/client.hpp"
#include "orders.hpp"
#include "responses.hpp"

namespace crash {

int hold_and_die(const std::string& url, const std::string& key_name, std::chrono::milliseconds lease_ms) {
  idem::ClientOptions options;
  options.lease = lease_ms;
  idem::Client client(url, options);
  const KeySpec key{key_name, Mode::lease, 0, true};
  try {
    auto begun = client.begin(request_for(key));
    if (const auto* early = std::get_if<idem::Response>(&begun)) {
      std::fprintf(stderr, "crash-workload --hold-and-die: %s was not acquired: %s\n", key_name.c_str(),
                   describe(*early).c_str());
      return 1;
    }
    idem::Lease& lease = std::get<idem::Lease>(begun);
    if (lease.resumed()) {
      std::fprintf(stderr, "crash-workload --hold-and-die: %s is not a fresh key (resumed)\n", key_name.c_str());
      return 1;
    }
    lease.checkpoint(kChargedPoint, charge_data(key), true);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "crash-workload --hold-and-die: %s: %s\n", key_name.c_str(), e.what());
    return 1;
  }
  std::printf("held %s until %lld ms after its checkpoint\n", key_name.c_str(),
              static_cast<long long>(lease_ms.count()));
  std::fflush(stdout);
  // Like a process killed between two steps: no complete, no release, no destructors; the
  // kernel closes the connections.
  _exit(0);
}

}  // namespace crash
