-- The game's open intents, that move money: the stripes summed.
SELECT sum(n)::bigint AS open FROM {s}.open_count
