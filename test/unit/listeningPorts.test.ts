// The kernel's word on which ports a process listens on (src/localServer/listeningPorts.ts): the
// /proc/net/tcp and lsof formats, and the live answer for this process and for another one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { listenersOf, parseLsofListeners, parseProcNetTcp } from '../../src/localServer/listeningPorts';

const TCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 41231 1 0000000000000000 100 0 0 10 0
   1: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1234 1 0000000000000000 100 0 0 10 0
   2: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000  1000        0 41299 1 0000000000000000 20 4 30 10 -1
`;
const TCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:1F91 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 5555 1 0000000000000000 100 0 0 10 0
   1: 0000000000000000FFFF00000100007F:1F92 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 5556 1 0000000000000000 100 0 0 10 0
`;

test('/proc/net/tcp and tcp6 rows: addresses in host byte order, ports, states, inodes', () => {
  assert.deepEqual(parseProcNetTcp(TCP, true), [
    { address: '127.0.0.1', port: 8080, inode: '41231', listening: true },
    { address: '0.0.0.0', port: 22, inode: '1234', listening: true },
    { address: '127.0.0.1', port: 8080, inode: '41299', listening: false },
  ]);
  assert.equal(parseProcNetTcp(TCP.replaceAll('0100007F:', '7F000001:'), false)[0]!.address, '127.0.0.1');
  assert.deepEqual(parseProcNetTcp(TCP6, true).map((r) => `${r.address}:${r.port}`), ['::1:8081', '::ffff:127.0.0.1:8082']);
});

test('lsof -F n output: IPv4, IPv6 in brackets, * for any address', () => {
  assert.deepEqual(parseLsofListeners('p123\nf5\nn127.0.0.1:8080\nf6\nn[::1]:8081\nf7\nn*:8082\n'), [
    { address: '127.0.0.1', port: 8080 },
    { address: '::1', port: 8081 },
    { address: '0.0.0.0', port: 8082 },
  ]);
});

test('live: a process\'s listeners and its children\'s are found, never its parent\'s', { skip: !existsSync('/proc/self/net/tcp') && 'no /proc' }, async () => {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  // A child that listens on its own port and stays: it is the other process.
  const child = spawn(process.execPath, ['-e', "require('net').createServer().listen(0,'127.0.0.1',function(){console.log(this.address().port)})"], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const childPort = Number(await new Promise<string>((r) => child.stdout.once('data', (b: Buffer) => r(b.toString().trim()))));
    // A process's tree: its own sockets and its children's.
    const mine = listenersOf(process.pid)!;
    assert.ok(mine.some((l) => l.address === '127.0.0.1' && l.port === port), JSON.stringify(mine));
    assert.ok(mine.some((l) => l.port === childPort), JSON.stringify(mine));
    // The child's: only its own, not its parent's.
    assert.deepEqual(listenersOf(child.pid!), [{ address: '127.0.0.1', port: childPort }]);
    assert.deepEqual(listenersOf(2 ** 22 + 17) ?? [], [], 'no such process: nothing');
  } finally {
    child.kill();
    server.close();
  }
});
