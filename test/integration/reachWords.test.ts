// Check reachability as the sidebar says it (src/engine/transport/detect.ts checkReach, in words by
// src/present/endpointText.ts reachText), against real sockets on 127.0.0.1: a server that answers
// (any status) is reachable, with the time its answer took; a port nothing listens on is "connection
// refused"; a server that never answers is "no answer within"; a string that is no URL says so.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { test } from 'node:test';
import { checkReach } from '../../src/engine/transport/detect';
import { reachText } from '../../src/present/endpointText';
import { closerOf, listenOnLoopback } from '../support/listen';

test('a server that answers, even 404, is reachable, with the time its answer took', async () => {
  const server = createServer((_req, res) => { setTimeout(() => res.writeHead(404).end('no route'), 30); });
  const { url, sockets } = await listenOnLoopback(server);
  try {
    const r = await checkReach(url, 3000);
    assert.equal(r.reachable, true);
    assert.ok(r.reachable && r.ms >= 25 && r.ms < 3000, `the answer's time: ${JSON.stringify(r)}`);
    assert.match(reachText(r), /^reachable \(\d[\d.,]* ms\)$/);
  } finally {
    await closerOf(server, sockets)();
  }
});

test('a port nothing listens on: "connection refused"; a server that never answers: "no answer within"; no URL: said', async () => {
  // a port that was free a moment ago: bound, then closed
  const probe = createServer();
  const { url: deadUrl } = await listenOnLoopback(probe);
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const dead = await checkReach(deadUrl, 3000);
  assert.deepEqual([dead.reachable, !dead.reachable && dead.code], [false, 'ECONNREFUSED']);
  assert.equal(reachText(dead), `not reachable: cannot connect to ${deadUrl} (connection refused, nothing listens on that port; ECONNREFUSED)`);

  // accepts the connection, never answers
  const held = new Set<Socket>();
  const silent = createTcpServer((s) => { held.add(s); });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = silent.address() as AddressInfo;
    const quiet = await checkReach(`http://127.0.0.1:${port}`, 400);
    assert.equal(quiet.reachable, false);
    assert.equal(reachText(quiet, 400), 'not reachable: no answer within 400 ms');
  } finally {
    for (const s of held) s.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  }

  const bad = await checkReach('not a url', 1000);
  assert.equal(bad.reachable, false);
  assert.match(reachText(bad), /^not reachable: /);
});
