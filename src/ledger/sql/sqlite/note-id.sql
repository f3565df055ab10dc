SELECT id FROM notes WHERE text = ?
