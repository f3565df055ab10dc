SELECT {lines} FROM operator_log
WHERE seq = (SELECT line FROM payouts_paused WHERE only_row = 1)
