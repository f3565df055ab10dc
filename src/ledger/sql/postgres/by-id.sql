SELECT {columns} FROM {s}.intents WHERE id = $1
