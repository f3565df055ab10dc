SELECT {columns} FROM {s}.intents WHERE callback_token = $1
