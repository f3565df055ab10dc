-- A create near the game's cap, after its insert, under the count lock: every stripe that takes
-- opens, in order. It waits for every create in flight to commit and none starts until it ends,
-- so the count it reads is exact. No deadlock: a create in flight holds only its own stripe and
-- its own shard of each house balance.
SELECT stripe FROM {s}.open_count WHERE stripe < {stripes} ORDER BY stripe FOR UPDATE
