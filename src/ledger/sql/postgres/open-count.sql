-- The game's open intents, matches aside: the stripes summed.
SELECT sum(n)::bigint AS open FROM {s}.open_count
