SELECT bench_claim_once_ack(:batch);
