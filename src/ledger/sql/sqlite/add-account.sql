INSERT INTO accounts (name) VALUES (?) RETURNING id
