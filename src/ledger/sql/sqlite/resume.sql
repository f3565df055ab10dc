DELETE FROM payouts_paused
