-- One class's accounts holding msats, richest first, from a page's cursor (:balance, :name):
-- the class's names are one range of the accounts' unique index; a page sorts that range.
SELECT a.name AS account, b.unit, CAST(b.balance AS TEXT) AS balance
FROM accounts AS a JOIN balances AS b ON b.account = a.id
WHERE a.name >= :low AND a.name < :high AND b.unit = 'msats' AND b.balance <> 0
  AND (:balance IS NULL OR b.balance < :balance OR (b.balance = :balance AND a.name > :name))
ORDER BY b.balance DESC, a.name LIMIT :limit
