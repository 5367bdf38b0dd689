// A whole comparison in words, on a fixed comparison: the CLI's table and text, the Markdown for a pull
// request (escaped), the JUnit report (its structure, its counts and XML escaping), the gate's lines
// and the sample-size advice, whose figure is checked against the formula worked by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Comparison, CompareRow } from '../../src/engine/analysis/compare';
import type { ComparableProblem } from '../../src/engine/analysis/comparable';
import { applyGate, parseGate } from '../../src/engine/analysis/compareGate';
import {
  adviceLines,
  adviceOf,
  compareTable,
  comparisonJunit,
  comparisonMarkdown,
  comparisonText,
  gateLines,
  markdownText,
  methodLine,
  xmlText,
} from '../../src/present/compareText';
import type { ComparisonView, GateOutcome } from '../../src/present/compareText';

const samples = { base: 100, next: 100 };

const ROWS: readonly CompareRow[] = [
  // slower: the whole interval above 0
  { key: 'ttft.p50', metric: 'ttft', stat: 'p50', unit: 'ms', base: 40, next: 44, diff: 4, diffPct: 10, ci: [2, 6], ciPct: [5, 15], sePct: 2.5, mdePct: 7, verdict: 'slower', samples },
  // no difference, and these samples would miss a 5% change (mde 11.2%)
  { key: 'ttft.p90', metric: 'ttft', stat: 'p90', unit: 'ms', base: 50, next: 51, diff: 1, diffPct: 2, ci: [-3, 5], ciPct: [-6, 10], sePct: 4, mdePct: 11.2, verdict: 'no-difference', samples },
  { key: 'ttft.p99', metric: 'ttft', stat: 'p99', unit: 'ms', base: 60, next: 61, diff: 1, diffPct: 1 + 2 / 3, sePct: 6, verdict: 'too-few', needs: 500, samples },
  // no difference, but these samples detect 3.1%: no advice
  { key: 'tpot.p50', metric: 'tpot', stat: 'p50', unit: 'ms', base: 10, next: 10.05, diff: 0.05, diffPct: 0.5, ci: [-0.1, 0.2], ciPct: [-1, 2], sePct: 1.1, mdePct: 3.1, verdict: 'no-difference', samples },
  { key: 'itl.p50', metric: 'itl', stat: 'p50', unit: 'ms', verdict: 'absent', samples: { base: 0, next: 0 } },
  // throughput up: faster
  { key: 'throughput', metric: 'throughput', stat: 'value', unit: 'tok/s', base: 800, next: 880, diff: 80, diffPct: 10, ci: [40, 120], ciPct: [5, 15], sePct: 2.5, mdePct: 7, verdict: 'faster', samples },
];

const COMPARISON: Comparison = {
  base: { runId: 'run-a', startedAt: '2025-03-01T10:14:03.123Z', requests: 100, groups: 1 },
  next: { runId: 'run-b', startedAt: '2025-03-01T10:20:00.000Z', requests: 100, groups: 1 },
  method: { resamples: 2000, confidence: 0.95, seed: 7, resampling: 'requests', minTail: 5 },
  rows: ROWS,
};

const WARN: ComparableProblem = { kind: 'model', severity: 'warn', message: 'the model differs: BASE m1, NEW m2' };

function view(over: Partial<ComparisonView> = {}): ComparisonView {
  return { baseName: 'base.json', nextName: 'new.json', problems: [WARN], sections: [{ comparison: COMPARISON }], detectPct: 5, ...over };
}

function gateOf(spec: string): GateOutcome {
  const { results, skipped } = applyGate(COMPARISON, parseGate(spec));
  const tag = (result: (typeof results)[number]) => ({ result, row: ROWS.find((r) => r.key === result.key)! });
  return { spec, results: results.map(tag), skipped: skipped.map(tag) };
}

test('the text table: a header, one row per figure, names and words left, figures right', () => {
  assert.deepEqual(compareTable(ROWS), [
    '                      BASE        NEW            Δ     Δ %  95% CI of Δ %    Verdict',
    'TTFT p50             40 ms      44 ms        +4 ms  +10.0%  +5.0% to +15.0%  slower',
    'TTFT p90             50 ms      51 ms        +1 ms   +2.0%  −6.0% to +10.0%  no difference',
    'TTFT p99             60 ms      61 ms        +1 ms   +1.7%  –                too few samples',
    'TPOT p50             10 ms    10.1 ms     +0.05 ms   +0.5%  −1.0% to +2.0%   no difference',
    'ITL p50                  –          –            –       –  –                not in both',
    'Output tokens/s  800 tok/s  880 tok/s  +80.0 tok/s  +10.0%  +5.0% to +15.0%  faster',
  ]);
});

test('a difference too small to print with a sign is "≈ 0 ms", not "−< 0.01 ms"', () => {
  const tiny: CompareRow = { ...ROWS[3]!, next: 9.999, diff: -0.001, diffPct: -0.01 };
  assert.match(compareTable([tiny])[1]!, /10 ms\s+10 ms\s+≈ 0 ms\s+\+0\.0%/);
});

test('the text: the sides, the notes before the figures, the table, the sentences, the advice, the method, the gate', () => {
  const text = comparisonText(view({ gate: gateOf('5%') }));
  const lines = text.split('\n');
  assert.equal(lines[0], 'BASE  base.json: run run-a, started 2025-03-01 10:14:03Z, 100 requests');
  assert.equal(lines[1], 'NEW   new.json: run run-b, started 2025-03-01 10:20:00Z, 100 requests');
  assert.equal(lines[3], 'Note: the model differs: BASE m1, NEW m2');
  assert.equal(lines[5], compareTable(ROWS)[0]);
  const after = lines.slice(5 + ROWS.length + 1);
  assert.deepEqual(after.slice(0, 13), [
    '',
    // the sentences: a verdict either way, or too few samples; not the rows with no difference (the advice speaks of those)
    'TTFT p50 10.0% slower, 95% CI 5.0–15.0%',
    'TTFT p99: too few samples to judge (p99 needs 500 a side; BASE has 100)',
    'Output tokens/s 10.0% faster, 95% CI 5.0–15.0%',
    '',
    'Where no difference was detected, a 5% change could have been missed; to detect one (--detect), each side needs about:',
    // TPOT p50 detects 3.1% already: not listed
    '  TTFT p90: 503 requests (100 requests detect 11.2% or more)',
    '',
    methodLine(COMPARISON.method),
    '',
    'Regression gate (--fail-on-regression 5%): passed: none of 4 figures is slower by more than the threshold',
    '  Not gated, as they cannot be judged: TTFT p99, ITL p50',
    '',
  ]);
  assert.equal(after.length, 13);
});

test('the sample-size advice: requests a side from the row\'s own error, as the formula worked by hand gives', () => {
  // se 4% at 100 a side: σ² = 16 / (1/100 + 1/100) = 800; m = 2σ²(1.95996 + 0.84162)² / 5² = 1600 × 7.84888 / 25 = 502.3 → 503
  const advice = adviceOf(COMPARISON, 5);
  assert.deepEqual(advice.map((a) => [a.key, a.requests]), [['ttft.p90', 503], ['tpot.p50', undefined]]);
  // asking for 20%: se 4% already detects it (11.2%), so no line at all
  assert.deepEqual(adviceLines(COMPARISON, 20), []);
});

test('the method in one line: resamples, what is resampled, the seed; the drift between runs said when it is not in the interval', () => {
  assert.equal(
    methodLine(COMPARISON.method),
    'Method: percentile bootstrap of the difference, 2,000 resamples (requests resampled, seed 7), 95% intervals; a percentile is judged only with 5 values beyond it on each side; ' +
      'drift between runs is not in the interval (one repetition a side: use run --repeat or ab).',
  );
  const repeated = methodLine({ ...COMPARISON.method, resampling: 'repetitions, then requests' });
  assert.match(repeated, /repetitions resampled, then requests within them/);
  assert.doesNotMatch(repeated, /drift/);
});

test('the gate in words: a failure with its reason; a figure named that cannot be judged, with what to do', () => {
  assert.deepEqual(gateLines(gateOf('ttft.p50=4%,throughput=2')), [
    'Regression gate (--fail-on-regression ttft.p50=4%,throughput=2): FAILED: 1 of 2 figures slower by more than the threshold',
    '  TTFT p50: 95% CI +5.0% to +15.0%, above +4%',
  ]);
  assert.deepEqual(gateLines(gateOf('ttft.p99=10%')), [
    'Regression gate (--fail-on-regression ttft.p99=10%): cannot be applied: 1 figure named in it cannot be judged',
    '  TTFT p99: cannot be judged: it needs at least 500 requests a side and has 100; measure more (run --requests 500 or more), ' +
      'or gate a figure these runs can judge (a lower percentile, or the mean)',
  ]);
});

test('Markdown: the gate first, the sides, the notes quoted, a table of seven columns, slower in bold; names escaped', () => {
  const md = comparisonMarkdown(view({ baseName: 'a|b<img src=x>*_`.json', gate: gateOf('ttft.p50=4%') }));
  const lines = md.split('\n');
  assert.equal(lines[0], '### Latency: new.json (NEW) vs a\\|b&lt;img src=x&gt;\\*\\_\\`.json (BASE)');
  assert.equal(lines[2], '❌ Regression gate (--fail-on-regression ttft.p50=4%): FAILED: 1 of 1 figure slower by more than the threshold');
  assert.equal(lines[4], '- TTFT p50: 95% CI +5.0% to +15.0%, above +4%');
  assert.ok(lines.includes('- BASE: a\\|b&lt;img src=x&gt;\\*\\_\\`.json: run run-a, started 2025-03-01 10:14:03Z, 100 requests'));
  assert.ok(lines.includes('> Note: the model differs: BASE m1, NEW m2'));
  const table = lines.filter((l) => l.startsWith('|'));
  assert.equal(table.length, 2 + ROWS.length);
  assert.equal(table[0], '| Figure | BASE | NEW | Δ | Δ % | 95% CI of Δ % | Verdict |');
  assert.equal(table[1], '|:---|---:|---:|---:|---:|:---|:---|');
  assert.equal(table[2], '| TTFT p50 | 40 ms | 44 ms | +4 ms | +10.0% | +5.0% to +15.0% | **slower** |');
  assert.equal(table[7], '| Output tokens/s | 800 tok/s | 880 tok/s | +80.0 tok/s | +10.0% | +5.0% to +15.0% | faster |');
  // every row has its seven cells: no name or figure broke the table
  for (const row of table) assert.equal(row.replace(/\\\|/g, '').split('|').length, 9, row);
  assert.ok(lines.includes('- TTFT p90: 503 requests (100 requests detect 11.2% or more)'));
  assert.ok(md.includes(`<sub>${methodLine(COMPARISON.method)}</sub>`));
  assert.match(comparisonMarkdown(view({ gate: gateOf('5%') })).split('\n')[2]!, /^✅ Regression gate .*: passed/);
  assert.match(comparisonMarkdown(view({ gate: gateOf('ttft.p99=5%') })).split('\n')[2]!, /^⚠️ Regression gate .*: cannot be applied/);
});

test('markdownText: one line, HTML and the markup characters inside a line escaped', () => {
  assert.equal(markdownText('a\nb\u001b[31m|c'), 'a b\\|c');
  assert.equal(markdownText('<script>&[x](y)'), '&lt;script&gt;&amp;\\[x\\](y)');
});

test('JUnit: a test case per gated figure; a failure, an error for a figure named that cannot be judged, a skip for one left out of a gate of all', () => {
  const named = comparisonJunit(view(), gateOf('ttft.p50=4%,ttft.p99=5%,tpot.p50=1'));
  assert.equal(
    named,
    [
      '<?xml version="1.0" encoding="UTF-8"?>',
      '<testsuites name="llm-profiler compare" tests="3" failures="1" errors="1" skipped="0">',
      '  <testsuite name="new.json vs base.json" tests="3" failures="1" errors="1" skipped="0">',
      '    <testcase classname="llm-profiler.compare" name="TTFT p50 not slower by more than 4%">',
      '      <failure type="regression" message="TTFT p50 10.0% slower, 95% CI 5.0–15.0%">95% CI +5.0% to +15.0%, above +4%</failure>',
      '    </testcase>',
      '    <testcase classname="llm-profiler.compare" name="TTFT p99 not slower by more than 5%">',
      '      <error type="cannot-judge" message="cannot be judged: it needs at least 500 requests a side and has 100; measure more (run --requests 500 or more), or gate a figure these runs can judge (a lower percentile, or the mean)"/>',
      '    </testcase>',
      '    <testcase classname="llm-profiler.compare" name="TPOT p50 not slower by more than 1%">',
      '      <system-out>TPOT p50: no difference we can detect (95% CI −1.0% to +2.0%; these samples detect changes of 3.1% or more). 95% CI −1.0% to +2.0%, not all above +1%</system-out>',
      '    </testcase>',
      '  </testsuite>',
      '</testsuites>',
      '',
    ].join('\n'),
  );
  const all = comparisonJunit(view(), gateOf('5%'));
  assert.match(all, /<testsuites name="llm-profiler compare" tests="6" failures="0" errors="0" skipped="2">/);
  assert.equal(all.match(/<testcase /g)!.length, 6);
  assert.match(all, /name="ITL p50 not slower by more than 5%">\n\s+<skipped message="cannot be judged: not in both runs; gate only figures both runs have"\/>/);
});

test('JUnit: sweep points are suites of their own; names escaped, characters XML cannot hold dropped', () => {
  const gate = gateOf('ttft.p50=4%');
  const points: GateOutcome = {
    spec: gate.spec,
    results: [{ ...gate.results[0]!, point: 'c=4' }, { ...gate.results[0]!, point: 'c=8' }],
    skipped: [],
  };
  const xml = comparisonJunit(view({ baseName: `a&b<"x">'y'\u0001\u0007.json` }), points);
  assert.match(xml, /<testsuite name="new\.json vs a&amp;b&lt;&quot;x&quot;&gt;&apos;y&apos;\.json at c=4" tests="1" failures="1" errors="0" skipped="0">/);
  assert.match(xml, /<testcase classname="llm-profiler\.compare\.c=8" /);
  assert.equal(xml.match(/<testsuite /g)!.length, 2);
  assert.ok(![...xml].some((c) => c.charCodeAt(0) < 9), 'no control character is left');
  assert.equal(xmlText('\ud800x\uffff'), 'x');
});
