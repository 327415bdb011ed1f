import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { expect } from 'chai';
import { postWithTimeout } from '../../../src/application/webhooks/http-post.js';

describe('postWithTimeout', () => {
  it('endpoints on one host do not wait for each other: twelve hanging requests leave a thirteenth its own connection', async () => {
    const hanging: http.ServerResponse[] = [];
    const server = http.createServer((request, response) => {
      if (request.url === '/fast') response.writeHead(204).end();
      else hanging.push(response);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const slow = Array.from({ length: 12 }, (_, index) => postWithTimeout(`${base}/slow-${index}`, {}, '{}', 5_000));
      while (hanging.length < 12) await new Promise((resolve) => setTimeout(resolve, 10));
      const fast = await postWithTimeout(`${base}/fast`, {}, '{}', 5_000);
      expect(fast).to.include({ statusCode: 204, error: null });
      for (const response of hanging) response.writeHead(503).end();
      expect((await Promise.all(slow)).map((outcome) => outcome.statusCode)).to.deep.equal(Array(12).fill(503));
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a request that gets no answer in time fails as timed out, and one to a closed port as refused', async () => {
    const server = http.createServer(() => {});
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const timedOut = await postWithTimeout(`http://127.0.0.1:${port}/`, {}, '{}', 100);
      expect(timedOut.statusCode).to.equal(null);
      expect(timedOut.error).to.equal('timed out after 100 ms');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    const refused = await postWithTimeout(`http://127.0.0.1:${port}/`, {}, '{}', 1_000);
    expect(refused.statusCode).to.equal(null);
    expect(refused.error).to.match(/^ECONNREFUSED/);
  });

  /** A raw TCP receiver: reads the request, then does what `answer` says with the socket. */
  async function rawReceiver(answer: (socket: net.Socket) => void) {
    const sockets = new Set<net.Socket>();
    const server = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.once('data', () => answer(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
      async close() {
        for (const socket of sockets) socket.destroy();
        await new Promise((resolve) => server.close(resolve));
      },
    };
  }

  it('a 101 Switching Protocols answer (with Upgrade) fails the attempt with its status, at once: it never hangs the lane', async () => {
    const receiver = await rawReceiver((socket) => socket.write('HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n'));
    try {
      const outcome = await postWithTimeout(receiver.url, {}, '{}', 2_000);
      expect(outcome).to.include({ statusCode: 101, error: 'HTTP 101' });
    } finally {
      await receiver.close();
    }
  });

  it('an answer with an endless body is read up to 64 KiB, then cut off: its status and the start of its body are kept', async () => {
    let sent = 0;
    const receiver = await rawReceiver((socket) => {
      socket.write('HTTP/1.1 500 Internal Server Error\r\ntransfer-encoding: chunked\r\nretry-after: 7\r\n\r\n');
      const chunk = 'x'.repeat(16 * 1024);
      const more = () => {
        while (!socket.destroyed && socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`)) sent += chunk.length;
        if (!socket.destroyed) socket.once('drain', more);
      };
      more();
    });
    try {
      const outcome = await postWithTimeout(receiver.url, {}, '{}', 10_000);
      expect(outcome).to.include({ statusCode: 500, retryAfter: '7', error: `HTTP 500: ${'x'.repeat(200)}` });
      // Settled when the cap was passed (at the timeout, the status would be lost), and no longer read.
      const atSettle = sent;
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(sent - atSettle).to.be.below(4 * 1024 * 1024);
    } finally {
      await receiver.close();
    }
  });

  /** Writes `piece` to the socket without end (until it is closed), as fast as it drains; `flooded.bytes` counts what it wrote. */
  const flooded = { bytes: 0 };
  const flood = (socket: net.Socket, piece: string) => {
    const more = () => {
      while (!socket.destroyed && socket.write(piece)) flooded.bytes += piece.length;
      if (!socket.destroyed) socket.once('drain', more);
    };
    more();
  };

  it('endless 103 Early Hints before any final answer count against the 64 KiB: the attempt fails as answering too much', async () => {
    const receiver = await rawReceiver((socket) => flood(socket, 'HTTP/1.1 103 Early Hints\r\nlink: </a.css>; rel=preload\r\n\r\n'));
    try {
      expect(await postWithTimeout(receiver.url, {}, '{}', 10_000)).to.include({ statusCode: null, error: 'answered more than 64 KiB before a final status' });
    } finally {
      await receiver.close();
    }
  });

  it('a 2xx whose chunks are padded with extensions counts its framing too: it is cut off at 64 KiB, delivered', async () => {
    const receiver = await rawReceiver((socket) => {
      socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n');
      flood(socket, `1;e=${'x'.repeat(8000)}\r\nx\r\n`);
    });
    try {
      flooded.bytes = 0;
      expect(await postWithTimeout(receiver.url, {}, '{}', 10_000)).to.include({ statusCode: 200, error: null });
      // Cut off at 64 KiB of the socket, not of the body (one byte a chunk): far less than a body cap lets through.
      expect(flooded.bytes).to.be.below(8 * 1024 * 1024);
    } finally {
      await receiver.close();
    }
  });

  it("a failure's body is kept to its first 200 characters, never half a character", async () => {
    const body = `a${'😀'.repeat(200)}`;
    const receiver = await rawReceiver((socket) =>
      socket.end(`HTTP/1.1 500 Internal Server Error\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`),
    );
    try {
      const outcome = await postWithTimeout(receiver.url, {}, '{}', 5_000);
      expect(outcome.error).to.equal(`HTTP 500: a${'😀'.repeat(199)}`);
    } finally {
      await receiver.close();
    }
  });

  it('a URL that cannot be parsed fails the attempt with the reason (the promise settles, it does not reject)', async () => {
    const outcome = await postWithTimeout('not a url', {}, '{}', 1_000);
    expect(outcome.statusCode).to.equal(null);
    expect(outcome.error).to.match(/Invalid URL/);
  });
});
