-- pg_idempotency 0.1.0. Built by concatenating sql/0.1.0/*.sql in name order (see Makefile).
\echo Use "CREATE EXTENSION pg_idempotency" to load this file. \quit
