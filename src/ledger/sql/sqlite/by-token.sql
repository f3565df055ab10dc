SELECT {columns} FROM intents WHERE callback_token = ?
