SELECT class, unit, balance FROM class_balances ORDER BY class, unit
