// `crash-workload --subreaper CMD ARGS...`: runs CMD (scripts/crash.sh) as a child subreaper, so
// the processes a SIGKILLed postmaster leaves behind are re-parented to it and reaped, instead of
// to a PID 1 that may never reap them (a container's init): no zombie per crash, and a killed
// process is gone (kill -0 fails) once it has died.
#pragma once

namespace crash {

// Returns only when it could not exec (an exit status).
int exec_as_subreaper(char** command);

}  // namespace crash
