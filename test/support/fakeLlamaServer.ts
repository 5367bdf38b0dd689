// A stand-in for llama.cpp's llama-server, for the launcher's tests where no real binary is built:
// an executable node script named llama-server that takes the flags the launcher passes and behaves
// as llama-server does with --host, --port (0: a free port, bound by itself) and --api-key, starting
// its HTTP server before "loading" and answering /health (public) and /v1/models (key-checked).
// Environment knobs make it slow to bind, lie in its output, or say which port it was given. With
// `streamItlMs` it also serves what a run needs: /v1/models listing its --alias, /props with its -np
// slots, and /v1/chat/completions streamed (max_tokens chunks, one every streamItlMs ms), as the UI
// tests' local server (test/host/uiFlows.ts), where the bundled backend is not in the VSIX.
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
const alias = flag('--alias', 'fake');
const slots = Number(flag('-np', '1'));
let seq = 0;
function stream(req, res) {
  let body = '';
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    let j = {};
    try { j = JSON.parse(body); } catch {}
    const n = Math.max(1, Math.min(Number(j.max_tokens || j.max_completion_tokens || 16), 4096));
    const id = 'chatcmpl-' + (++seq);
    const send = (o) => res.write('data: ' + JSON.stringify(o) + '\n\n');
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let i = 0;
    const tick = () => {
      if (res.destroyed) return;
      if (i < n) { send({ id, object: 'chat.completion.chunk', model: alias, choices: [{ index: 0, delta: { content: 'tok' + i + ' ' }, finish_reason: null }] }); i++; setTimeout(tick, STREAM_ITL_MS); return; }
      send({ id, object: 'chat.completion.chunk', model: alias, choices: [{ index: 0, delta: {}, finish_reason: 'length' }] });
      if (j.stream_options && j.stream_options.include_usage) send({ id, object: 'chat.completion.chunk', model: alias, choices: [], usage: { prompt_tokens: 8, completion_tokens: n, total_tokens: n + 8 } });
      res.end('data: [DONE]\n\n');
    };
    setTimeout(tick, STREAM_ITL_MS);
  });
}
const server = http.createServer((req, res) => {
  res.setHeader('x-fake-llama-server', String(process.pid));
  if (req.url === '/health') return res.end('{"status":"ok"}');
  if (STREAM_ITL_MS > 0) {
    if (req.method === 'POST' && req.url === '/v1/chat/completions') return stream(req, res);
    if (req.url === '/v1/models') return res.end(JSON.stringify({ data: [{ id: alias }] }));
    if (req.url === '/props') return res.end(JSON.stringify({ total_slots: slots }));
    if (req.url !== '/') { res.statusCode = 404; return res.end('{"error":"not found"}'); }
  }
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

/**
 * Writes `dir`/llama-server (executable, run by this node) and returns its path. `streamItlMs`: it
 * also streams chat completions, a chunk every that many ms (see the top of this file).
 */
export function writeFakeLlamaServer(dir: string, options: { readonly streamItlMs?: number } = {}): string {
  const path = join(dir, 'llama-server');
  writeFileSync(path, `#!${process.execPath}\nconst STREAM_ITL_MS = ${Math.max(0, Math.floor(options.streamItlMs ?? 0))};\n${SCRIPT}`);
  chmodSync(path, 0o755);
  return path;
}
