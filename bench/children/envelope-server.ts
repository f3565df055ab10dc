/**
 * The minimal loopback service of the client benchmark: a node:http server that answers every
 * request with one fixed withdrawal-request envelope, precomputed, so that its own cost per
 * request is as small as node:http allows. Prints `{"url": ...}` once listening.
 */
import { createServer } from 'node:http';

const lnurl =
  'LNURL1DP68GUP69UHNZV3H9CCZUVPWXYARXVPSXQHKZURF9AKXUATJD3CQCC3ZXQ6NXVE4XV6RGDRZX5CRSVRY8QMRWERXX33RQCTPVYCNWVEJVYUXZC3SXGCXVE35X43NYVPJ8Q6NZCNZV5ENWEP4X5EXGV3JXSEJ6VSTXQEU6';
const envelope = {
  success: true,
  message: 'Fetched Withdrawal Request.',
  data: {
    id: '5d6e7b2c-3a6f-4b8e-9f4d-2a1c0e9b8f71',
    unit: 'msats',
    amount: '50000',
    status: 'pending',
    description: 'Winner of round 12',
    createdAt: '2025-01-01T00:00:00.000Z',
    expiresAt: '2025-01-01T00:05:00.000Z',
    internalId: 'player-42',
    callbackUrl: 'https://game.example.com/lightning/callbacks/3q2x8Zk1mFv9RrT0bLwQyH4nJcE7uA5s',
    fee: null,
    invoice: {
      request: lnurl,
      uri: `lightning:${lnurl}`,
      fastRequest: lnurl,
      fastUri: `lightning:${lnurl}`,
    },
  },
};
const body = Buffer.from(JSON.stringify(envelope));
const headers = {
  'content-type': 'application/json; charset=utf-8',
  'content-length': String(body.length),
};

const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  // Drain whatever came (GETs carry nothing), then answer the same bytes every time.
  req.resume();
  res.writeHead(200, headers);
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('no address');
  process.stdout.write(
    `${JSON.stringify({ url: `http://127.0.0.1:${address.port}`, bytes: body.length })}\n`,
  );
});
process.on('SIGTERM', () => process.exit(0));
