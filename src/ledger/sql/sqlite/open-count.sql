SELECT n FROM counters WHERE name = 'open'
