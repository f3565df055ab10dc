UPDATE seats SET intent = ? WHERE group_id = ? AND player_id = ?
