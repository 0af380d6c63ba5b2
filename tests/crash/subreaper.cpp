// The subreaper wrapper (subreaper.hpp).
#include "subreaper.hpp"

#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace crash {

int exec_as_subreaper(char** command) {
  if (!command || !command[0]) {
    std::fprintf(stderr, "crash-workload --subreaper: no command given\n");
    return 2;
  }
  // Kept across execve: the command itself becomes the subreaper.
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
    std::fprintf(stderr, "crash-workload --subreaper: prctl: %s\n", std::strerror(errno));
    return 1;
  }
  execvp(command[0], command);
  std::fprintf(stderr, "crash-workload --subreaper: cannot run %s: %s\n", command[0], std::strerror(errno));
  return 127;
}

}  // namespace crash
