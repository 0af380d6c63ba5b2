SELECT bench_claim_ack(:batch);
