/** A bare express route answering a fixed JSON body: the ceiling to compare the API with. */
import express from 'express';

const size = Number(process.argv[2] ?? 1500);
const body = { data: { padding: 'x'.repeat(Math.max(0, size - 24)) } };
const app = express();
app.get('/bare', (_req, res) => void res.json(body));
const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object') process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${address.port}` })}\n`);
});
