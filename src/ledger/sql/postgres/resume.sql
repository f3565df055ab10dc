DELETE FROM {s}.payouts_paused RETURNING line
