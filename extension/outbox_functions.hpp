// The outbox's commit-time sequencing (extension/outbox_functions.cpp), registered by _PG_init.
#pragma once

#include "extension/pg/postgres.hpp"

namespace idem {

// XactCallback: at PRE_COMMIT / PRE_PREPARE of a transaction that called idem.emit, lock its
// groups and draw their commit positions.
void sequence_outbox_at_commit(XactEvent event, void* arg);

}  // namespace idem
