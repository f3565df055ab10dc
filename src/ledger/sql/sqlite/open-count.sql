-- The game's open intents, matches aside, as the triggers keep them.
SELECT n FROM counters WHERE name = 'open'
