SELECT {columns} FROM {s}.intents WHERE id = $1 AND last_call = $2
