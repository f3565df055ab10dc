SELECT taken FROM seat_counts WHERE group_id = ?
