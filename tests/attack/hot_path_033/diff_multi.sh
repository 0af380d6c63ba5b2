#!/usr/bin/env bash
# ../hot_path/diff_multi.sh with this folder's database names (atk033_*).
ATTACK_PREFIX=atk033 exec "$(dirname "$0")/../hot_path/diff_multi.sh" "$@"
