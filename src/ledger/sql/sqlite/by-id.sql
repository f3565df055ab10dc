SELECT {columns} FROM intents WHERE id = ?
