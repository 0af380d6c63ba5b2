SELECT peer_consume(:batch);
