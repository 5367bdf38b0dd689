// The run form's traffic: single prompts (the form's own fields, synthetic or a dataset's), a sweep,
// conversations (synthetic chats, or a dataset's read with --multi-turn), a trace replay or a ramp. Each kind shows its own fields,
// checked as the CLI checks its flag (the options table: --sessions, --think-time, --trace-speed,
// --chat's and --ramp's forms), and is read as the CLI's Traffic flags (SidebarTraffic), which the
// host turns into option values through src/jobs/presets.ts. Browser code only.
import type { SidebarFilePurpose, SidebarSweep, SidebarTraffic, SidebarTrafficDefaults } from '../../src/shared/protocol';
import { inputProblem, option as optionSpec, parseValueList } from '../../src/jobs/options';
import { button, numberField, selectField, textField, type NumberField } from './controls';

/** `prompts`: single prompts from a dataset file (--dataset F); `sweep`: one point per value of an axis. */
export type WorkloadKind = 'single' | 'prompts' | 'sweep' | SidebarTraffic['kind'];
/** The form's own fields (SidebarWorkload's numbers). */
export type BaseField = 'concurrency' | 'requests' | 'maxTokens' | 'promptTokens';

/** Which of the form's own fields each kind uses: those whose flags the CLI takes beside the kind's own (a trace gives its own load and lengths). */
export const BASE_FIELDS: Readonly<Record<WorkloadKind, readonly BaseField[]>> = {
  single: ['concurrency', 'requests', 'maxTokens', 'promptTokens'],
  // a dataset's prompts have their own lengths, in and out (a ShareGPT reply's length, a line's max_tokens), as the CLI's --dataset
  prompts: ['concurrency', 'requests'],
  // the requests of each point; the concurrency is what a concurrency sweep varies (one at a time otherwise, as the CLI)
  sweep: ['requests', 'maxTokens', 'promptTokens'],
  chat: ['concurrency'],
  dataset: ['concurrency'],
  trace: [],
  ramp: ['requests', 'maxTokens', 'promptTokens'],
};

const KINDS: readonly (readonly [WorkloadKind, string])[] = [
  ['single', 'Single prompts'],
  ['prompts', 'Prompts from a dataset'],
  ['sweep', 'Sweep'],
  ['chat', 'Conversations'],
  ['dataset', 'Conversations from a file'],
  ['trace', 'Trace replay'],
  ['ramp', 'Ramp'],
];

/** A problem with a control: it is marked and takes the focus. */
export interface FormProblem { readonly control: HTMLInputElement | HTMLSelectElement; readonly message: string }

type NumberKey = 'sessions' | 'datasetSessions' | 'turns' | 'userTokens' | 'replyTokens' | 'thinkTime' | 'traceSpeed' | 'rampFrom' | 'rampTo';
const LABELS: Record<NumberKey, string> = {
  sessions: 'Sessions', datasetSessions: 'Sessions (blank: all)', turns: 'Turns', userTokens: 'User tokens', replyTokens: 'Reply tokens', thinkTime: 'Think time (ms)',
  traceSpeed: 'Speed (×)', rampFrom: 'From (req/s)', rampTo: 'To (req/s)',
};
/** The fields each kind shows, in order. */
const SHOWN: Readonly<Record<WorkloadKind, readonly (NumberKey | 'shape' | 'datasetFile' | 'traceFile' | 'promptsFile' | 'sweepAxis' | 'sweepValues')[]>> = {
  single: [],
  prompts: ['promptsFile'],
  sweep: ['sweepAxis', 'sweepValues'],
  chat: ['sessions', 'turns', 'userTokens', 'replyTokens', 'thinkTime'],
  dataset: ['datasetFile', 'datasetSessions', 'thinkTime'],
  trace: ['traceFile', 'traceSpeed'],
  ramp: ['shape', 'rampFrom', 'rampTo'],
};

const lower = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);

type SweepAxis = SidebarSweep['axis'];
const AXES: readonly (readonly [SweepAxis, string])[] = [['concurrency', 'Concurrency'], ['rate', 'Request rate (req/s)'], ['promptTokens', 'Prompt length (tokens)']];
/** What a file field is, in its Browse… button's name and its problem. */
const FILE_WORDS: Readonly<Record<SidebarFilePurpose, string>> = { dataset: 'conversations file', trace: 'trace', prompts: 'dataset' };

export class TrafficForm {
  /** The kind picker, above the fields. */
  readonly kindField: { readonly wrap: HTMLElement; readonly input: HTMLSelectElement };
  /** The kind's own fields, for the form's grid. */
  readonly wraps: readonly HTMLElement[];
  readonly #numbers: Record<NumberKey, NumberField>;
  readonly #shape: { readonly wrap: HTMLElement; readonly input: HTMLSelectElement };
  readonly #files: Record<SidebarFilePurpose, { readonly wrap: HTMLElement; readonly input: HTMLInputElement; readonly browse: HTMLButtonElement }>;
  readonly #axis: { readonly wrap: HTMLElement; readonly input: HTMLSelectElement };
  readonly #values: { readonly wrap: HTMLElement; readonly input: HTMLInputElement };
  /** Each axis's values as last typed (the defaults until then): switching the axis and back keeps them. */
  readonly #axisValues = new Map<SweepAxis, string>();

  constructor(onBrowse: (purpose: SidebarFilePurpose) => void) {
    this.kindField = selectField('workload-kind', 'Workload', KINDS);
    const decimal = (k: NumberKey) => k === 'traceSpeed' || k === 'rampFrom' || k === 'rampTo' || k === 'thinkTime';
    this.#numbers = Object.fromEntries((Object.keys(LABELS) as NumberKey[]).map((k) => [k, numberField(k, LABELS[k], 1, 0, Number.MAX_SAFE_INTEGER, decimal(k))])) as Record<NumberKey, NumberField>;
    for (const [k, key] of [['sessions', 'sessions'], ['datasetSessions', 'sessions'], ['thinkTime', 'thinkTime'], ['rampFrom', 'rate'], ['rampTo', 'rate']] as const) {
      const o = optionSpec(key);
      this.#numbers[k].input.min = String(o.min ?? 0);
      if (o.max !== undefined) this.#numbers[k].input.max = String(o.max);
    }
    this.#shape = selectField('ramp-shape', 'Ramp', [['linear', 'Linear'], ['exponential', 'Exponential']]);
    const file = (purpose: SidebarFilePurpose, label: string) => {
      const f = textField(`${purpose}-file`, label);
      f.wrap.classList.add('wide');
      const browse = button('Browse…', 'secondary', `Browse… for the ${FILE_WORDS[purpose]}`);
      browse.dataset.focus = `browse-${purpose}`;
      browse.addEventListener('click', () => onBrowse(purpose));
      const row = document.createElement('div');
      row.className = 'file-row';
      row.append(f.input, browse);
      f.wrap.append(row);
      return { wrap: f.wrap, input: f.input, browse };
    };
    this.#files = {
      dataset: file('dataset', 'Conversations file (JSON Lines)'), trace: file('trace', 'Trace (Mooncake JSONL or Azure CSV)'),
      prompts: file('prompts', 'Dataset (JSON Lines or JSON: prompt, messages or ShareGPT)'),
    };
    this.#axis = selectField('sweep-axis', 'Sweep over', AXES);
    this.#values = textField('sweep-values', 'Values (comma-separated)');
    this.#values.wrap.classList.add('wide');
    this.#values.input.addEventListener('input', () => this.#axisValues.set(this.sweepAxis(), this.#values.input.value));
    this.#axis.input.addEventListener('change', () => { this.#values.input.value = this.#axisValues.get(this.sweepAxis()) ?? ''; });
    this.wraps = [this.#files.prompts.wrap, this.#axis.wrap, this.#values.wrap, this.#files.dataset.wrap, this.#files.trace.wrap, this.#shape.wrap, ...Object.values(this.#numbers).map((f) => f.wrap)];
  }

  /** The sweep's axis (the form hides the prompt length when it is what is swept). */
  sweepAxis(): SweepAxis {
    return this.#axis.input.value as SweepAxis;
  }

  /** Every control of the traffic fields (for marking and clearing errors). */
  get controls(): (HTMLInputElement | HTMLSelectElement)[] {
    return [this.kindField.input, this.#shape.input, this.#files.dataset.input, this.#files.trace.input, this.#files.prompts.input, this.#axis.input, this.#values.input,
      ...Object.values(this.#numbers).map((f) => f.input)];
  }

  /** Fills the fields from the defaults, then from the workload last run (its kind selected): its traffic, its dataset of prompts, its sweep. */
  init(d: SidebarTrafficDefaults, last?: SidebarTraffic, other: { readonly dataset?: string; readonly sweep?: SidebarSweep } = {}): void {
    const n = this.#numbers;
    const set = (k: NumberKey, v: number | undefined) => { n[k].input.value = v === undefined ? '' : String(v); };
    set('sessions', d.chat.sessions);
    set('datasetSessions', undefined);
    set('turns', d.chat.turns);
    set('userTokens', d.chat.userTokens);
    set('replyTokens', d.chat.replyTokens);
    set('thinkTime', d.chat.thinkTimeMs);
    set('traceSpeed', d.traceSpeed);
    set('rampFrom', d.ramp.from);
    set('rampTo', d.ramp.to);
    this.#shape.input.value = d.ramp.shape;
    for (const [axis] of AXES) this.#axisValues.set(axis, d.sweep?.[axis]?.join(', ') ?? '');
    this.#values.input.value = this.#axisValues.get(this.sweepAxis()) ?? '';
    if (other.sweep) {
      this.kindField.input.value = 'sweep';
      this.#axis.input.value = other.sweep.axis;
      this.#axisValues.set(other.sweep.axis, other.sweep.values.join(', '));
      this.#values.input.value = other.sweep.values.join(', ');
    } else if (other.dataset !== undefined) {
      this.kindField.input.value = 'prompts';
      this.#files.prompts.input.value = other.dataset;
    }
    if (!last) return;
    this.kindField.input.value = last.kind;
    if (last.kind === 'chat') {
      set('sessions', last.sessions); set('turns', last.turns); set('userTokens', last.userTokens); set('replyTokens', last.replyTokens); set('thinkTime', last.thinkTimeMs);
    } else if (last.kind === 'dataset') {
      this.#files.dataset.input.value = last.path; set('datasetSessions', last.sessions); set('thinkTime', last.thinkTimeMs);
    } else if (last.kind === 'trace') {
      this.#files.trace.input.value = last.path; set('traceSpeed', last.speed);
    } else {
      this.#shape.input.value = last.shape; set('rampFrom', last.from); set('rampTo', last.to);
    }
  }

  kind(): WorkloadKind {
    return this.kindField.input.value as WorkloadKind;
  }

  /** Shows the current kind's fields (and hides the others'). */
  show(): WorkloadKind {
    const k = this.kind();
    const shown = new Set(SHOWN[k]);
    for (const key of Object.keys(this.#numbers) as NumberKey[]) this.#numbers[key].wrap.hidden = !shown.has(key);
    this.#shape.wrap.hidden = !shown.has('shape');
    this.#files.dataset.wrap.hidden = !shown.has('datasetFile');
    this.#files.trace.wrap.hidden = !shown.has('traceFile');
    this.#files.prompts.wrap.hidden = !shown.has('promptsFile');
    this.#axis.wrap.hidden = !shown.has('sweepAxis');
    this.#values.wrap.hidden = !shown.has('sweepValues');
    return k;
  }

  /** A file chosen in the host's dialog. */
  setFile(purpose: SidebarFilePurpose, path: string): void {
    this.#files[purpose].input.value = path;
    this.#files[purpose].input.dispatchEvent(new Event('input'));
  }

  /** The traffic as the CLI's flags give it (none for single prompts), a dataset of prompts, a sweep; or the first problem. */
  read(): { traffic?: SidebarTraffic; dataset?: string; sweep?: SidebarSweep } | FormProblem {
    const k = this.kind();
    if (k === 'single') return {};
    switch (k) {
      case 'prompts': {
        const path = this.#path('prompts');
        return typeof path === 'string' ? { dataset: path } : path;
      }
      case 'sweep': {
        const axis = this.sweepAxis();
        const r = parseValueList(axis, this.#values.input.value);
        if ('problem' in r) return { control: this.#values.input, message: `Values: ${r.problem}` };
        return { sweep: { axis, values: r.values } };
      }
      case 'chat': {
        const v = this.#numbersOf(['sessions', 'turns', 'userTokens', 'replyTokens', 'thinkTime']);
        if ('control' in v) return v;
        return { traffic: { kind: 'chat', sessions: v.sessions!, turns: v.turns!, userTokens: v.userTokens!, replyTokens: v.replyTokens!, thinkTimeMs: v.thinkTime! } };
      }
      case 'dataset': {
        const path = this.#path('dataset');
        if (typeof path !== 'string') return path;
        const v = this.#numbersOf(['datasetSessions', 'thinkTime'], ['datasetSessions']);
        if ('control' in v) return v;
        return { traffic: { kind: 'dataset', path, ...(v.datasetSessions !== undefined ? { sessions: v.datasetSessions } : {}), thinkTimeMs: v.thinkTime! } };
      }
      case 'trace': {
        const path = this.#path('trace');
        if (typeof path !== 'string') return path;
        const v = this.#numbersOf(['traceSpeed']);
        return 'control' in v ? v : { traffic: { kind: 'trace', path, speed: v.traceSpeed! } };
      }
      case 'ramp': {
        const v = this.#numbersOf(['rampFrom', 'rampTo']);
        if ('control' in v) return v;
        const shape = this.#shape.input.value as 'linear' | 'exponential';
        const problem = optionSpec('ramp').check?.(`${shape}:${v.rampFrom}-${v.rampTo}`);
        if (problem) return { control: this.#numbers.rampFrom.input, message: `Ramp: ${problem}` };
        return { traffic: { kind: 'ramp', shape, from: v.rampFrom!, to: v.rampTo! } };
      }
    }
  }

  #path(purpose: SidebarFilePurpose): string | FormProblem {
    const f = this.#files[purpose];
    const path = f.input.value.trim();
    const what = FILE_WORDS[purpose];
    if (path === '') return { control: f.input, message: `${what.charAt(0).toUpperCase()}${what.slice(1)}: choose a file (Browse…) or type its path` };
    return path;
  }

  /** The numbers of these fields, each checked as its flag; `optional` ones may be blank. */
  #numbersOf(keys: readonly NumberKey[], optional: readonly NumberKey[] = []): Partial<Record<NumberKey, number>> | FormProblem {
    const out: Partial<Record<NumberKey, number>> = {};
    for (const k of keys) {
      const input = this.#numbers[k].input;
      const text = input.value.trim();
      if (text === '' && optional.includes(k)) continue;
      const problem = numberProblem(k, text);
      if (problem) return { control: input, message: `${LABELS[k]}: ${problem}` };
      out[k] = Number(text);
    }
    return out;
  }
}

/** A field's value checked as its flag: --sessions, --think-time, --trace-speed, a rate; a --chat part by --chat's own check. */
function numberProblem(k: NumberKey, text: string): string | undefined {
  switch (k) {
    case 'turns': case 'userTokens': case 'replyTokens': {
      const part = `${k === 'turns' ? 'turns' : k === 'userTokens' ? 'user' : 'reply'}=${text}`;
      const problem = /^\d+$/.test(text) ? optionSpec('chat').check?.(part) : 'must be a whole number';
      return problem ? lower(problem.replace(/^must be turns=T,user=N,reply=M \((whole numbers ≥ 1)[^)]*\).*$/, 'must be a whole number ≥ 1')) : undefined;
    }
    case 'rampFrom': case 'rampTo': {
      const p = inputProblem('rate', text);
      return p ? lower(p) : undefined;
    }
    default: {
      const p = inputProblem(k === 'datasetSessions' ? 'sessions' : k, text);
      return p ? lower(p) : undefined;
    }
  }
}
