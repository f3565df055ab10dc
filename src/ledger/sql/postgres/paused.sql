SELECT {lines} FROM {s}.operator_log
WHERE seq = (SELECT line FROM {s}.payouts_paused)
