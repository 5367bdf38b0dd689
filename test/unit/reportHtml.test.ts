import { test } from 'node:test';
import assert from 'node:assert/strict';
import { reportHtml, type ReportInitialState } from '../../src/extension/webviewHtml';
import { fixtureRun } from '../support/fixtureRuns';

const base = { cspSource: 'https://file+.vscode-resource.vscode-cdn.net', nonce: 'AbCdEfGhIjKlMnOpQrStUv==', scriptUri: 'https://x/dist/webview/report.js', styleUri: 'https://x/media/report.css',
  clock: { locale: 'en-GB', timeZone: 'Europe/London' } };

function unescape(attr: string): string {
  return attr.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

test('a strict CSP: nothing by default, the one script by nonce, styles only from the webview source', () => {
  const html = reportHtml({ ...base, initialState: { kind: 'empty' } });
  const csp = unescape(/http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)![1]!);
  assert.match(csp, /^default-src 'none'; /);
  assert.match(csp, /script-src 'nonce-AbCdEfGhIjKlMnOpQrStUv=='/);
  assert.match(csp, /style-src https:\/\/file\+\.vscode-resource\.vscode-cdn\.net(;|$)/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
  assert.equal((html.match(/<script/g) ?? []).length, 1);
  assert.match(html, /<script nonce="AbCdEfGhIjKlMnOpQrStUv==" src="https:\/\/x\/dist\/webview\/report.js"><\/script>/);
  assert.match(html, /<link rel="stylesheet" href="https:\/\/x\/media\/report.css">/);
});

test('the initial state is escaped into a data- attribute and comes back intact', () => {
  const run = fixtureRun({ requests: 3 });
  const hostile = { ...run, endpoint: { ...run.endpoint, name: `</script><script>alert("x")</script> & 'quotes'` } };
  const state: ReportInitialState = { kind: 'run', run: hostile };
  const html = reportHtml({ ...base, initialState: state });
  assert.equal((html.match(/<script/g) ?? []).length, 1, 'no script smuggled in');
  const attr = /<body data-state="([^"]*)"/.exec(html)![1]!;
  assert.deepEqual(JSON.parse(unescape(attr)), JSON.parse(JSON.stringify(state)));
  // the host's locale and zone, which the page says times in (src/present/timeText.ts)
  assert.deepEqual(JSON.parse(unescape(/ data-clock="([^"]*)">/.exec(html)![1]!)), { locale: 'en-GB', timeZone: 'Europe/London' });
});

test('a weak nonce is refused', () => {
  assert.throws(() => reportHtml({ ...base, nonce: 'abc', initialState: { kind: 'empty' } }), /nonce/);
  assert.throws(() => reportHtml({ ...base, nonce: 'abc"def><script>xxxxxxxx', initialState: { kind: 'empty' } }), /nonce/);
});
