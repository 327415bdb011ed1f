/**
 * A bare express app: the ceiling to compare the service with. The bench gives it, once, the
 * exact bytes a service route answered (PUT /reference/NAME); then GET /bare/NAME and
 * POST /bare/NAME (which parses a JSON body, as the service does) answer those bytes.
 * Prints {"url": …} on stdout once listening on 127.0.0.1.
 */
import express from 'express';

const references = new Map<string, Buffer>();
const app = express();
app.put('/reference/:name', express.raw({ type: () => true, limit: '10mb' }), (req, res) => {
  references.set(req.params.name, req.body as Buffer);
  res.status(204).end();
});
function answer(req: express.Request, res: express.Response) {
  const body = references.get(req.params.name as string);
  if (body === undefined) return void res.status(404).end();
  res.status(200).type('application/json').send(body);
}
app.get('/bare/:name', answer);
app.post('/bare/:name', express.json(), answer);
const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object') process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${address.port}` })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
