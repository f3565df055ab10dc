-- The game's open intents, that move money, as the triggers keep them.
SELECT n FROM counters WHERE name = 'open'
