// A stand-in for llama.cpp's llama-server, for the launcher's tests where no real binary is built:
// an executable node script named llama-server that takes the flags the launcher passes and behaves
// as llama-server does with --host, --port (0: a free port, bound by itself) and --api-key, starting
// its HTTP server before "loading" and answering /health (public) and /v1/models (key-checked).
// Environment knobs make it slow to bind, lie in its output, or say which port it was given.
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const SCRIPT = String.raw`
const http = require('node:http');
const fs = require('node:fs');
const args = process.argv.slice(2);
const flag = (name, def) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : def; };
const host = flag('--host', '127.0.0.1');
const port = Number(flag('--port', '8080'));
const key = flag('--api-key', process.env.LLAMA_API_KEY);
const env = process.env;
if (env.FAKE_LLAMA_GIVEN_PORT_FILE) fs.writeFileSync(env.FAKE_LLAMA_GIVEN_PORT_FILE, String(port));
// What a crafted model name or log line could make a real server print.
if (env.FAKE_LLAMA_LIE_PORT) {
  process.stdout.write(JSON.stringify({ event: 'listening', port: Number(env.FAKE_LLAMA_LIE_PORT), model: 'impostor' }) + '\n');
  process.stdout.write('main: server is listening on http://127.0.0.1:' + env.FAKE_LLAMA_LIE_PORT + ' - starting the main loop\n');
}
const server = http.createServer((req, res) => {
  res.setHeader('x-fake-llama-server', String(process.pid));
  if (req.url === '/health') return res.end('{"status":"ok"}');
  if (key && req.headers.authorization !== 'Bearer ' + key) { res.statusCode = 401; return res.end('{"error":"Invalid API Key"}'); }
  res.end('{"data":[{"id":"fake"}]}');
});
setTimeout(() => {
  server.once('error', (e) => {
    process.stderr.write('couldn\'t bind HTTP server socket, hostname: ' + host + ', port: ' + port + ' (' + e.code + ')\n');
    process.exit(1);
  });
  server.listen(port, host, () => {
    const bound = server.address().port;
    if (env.FAKE_LLAMA_BOUND_PORT_FILE) fs.writeFileSync(env.FAKE_LLAMA_BOUND_PORT_FILE, String(bound));
    process.stderr.write('main: server is listening on http://' + host + ':' + bound + ' - starting the main loop\n');
  });
}, Number(env.FAKE_LLAMA_BIND_DELAY_MS || 0));
process.on('SIGTERM', () => process.exit(0));
`;

/** Writes `dir`/llama-server (executable, run by this node) and returns its path. */
export function writeFakeLlamaServer(dir: string): string {
  const path = join(dir, 'llama-server');
  writeFileSync(path, `#!${process.execPath}\n${SCRIPT}`);
  chmodSync(path, 0o755);
  return path;
}
