SELECT sum(n)::bigint AS open FROM {s}.open_count
