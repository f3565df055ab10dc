UPDATE payouts_paused SET line = ? WHERE only_row = 1
